"""Tracking problems for the tests of losses along a trajectory (test_trajectory_loss.py,
test_torch_trajectory.py): the coarse damped beam pulled by two cables (no contact) and a soft
block resting in sticking contact on a floor pulled across its top, each with a marker, an
effector, knots of its cables and a loss of the run's states; `hat` is the knots' input
formula of docs/derivatives.md, written out again here."""

import numpy as np

import diffsoro
from conftest import REPO, SCENES

STEPS = 60
EVERY = 5
SAMPLED = list(range(EVERY, STEPS + 1, EVERY))

BEAM = """[simulation]
dt = 0.01
steps = 60
gravity = [0.0, 0.0, -9.81]

[[soft_body]]
name = "beam"
mesh = "../meshes/beam_1.msh"
law = "neo_hookean"
young_modulus = 1.0e6
poisson_ratio = 0.3
density = 1000.0
rayleigh_mass = 0.5
rayleigh_stiffness = 0.01
fixed_group = "clamp"

[[soft_body.cable]]
name = "pull"
points = [[0.0, 0.0, 0.004], [0.05, 0.0, 0.004], [0.095, 0.0, 0.004]]
force = 0.0

[[soft_body.cable]]
name = "side"
points = [[0.0, 0.003, 0.0], [0.095, 0.003, 0.0]]
force = 0.0

[[soft_body.marker]]
name = "mid"
position = [0.06, 0.002, 0.006]

[[soft_body.effector]]
name = "tip"
point = [0.1, 0.0, 0.0]
"""

BLOCK = """[simulation]
dt = 0.01
steps = 60
gravity = [0.0, 0.0, -9.81]

[contact]
friction = 0.9
tolerance = 1e-13
max_iterations = 50000

[[soft_body]]
name = "block"
mesh = "soft_block.msh"
law = "neo_hookean"
young_modulus = 1.0e5
poisson_ratio = 0.3
density = 1000.0
rayleigh_mass = 1.0
rayleigh_stiffness = 0.005

[[soft_body.cable]]
name = "pull"
points = [[0.019, 0.0, 0.019], [0.0, 0.0, 0.019], [-0.019, 0.0, 0.019]]
force = 0.0

[[soft_body.marker]]
name = "corner"
position = [0.02, 0.02, 0.02]

[[soft_body.effector]]
name = "top"
point = [0.01, 0.005, 0.019]

[[obstacle]]
type = "plane"
point = [0.0, 0.0, 1.0e-4]
normal = [0.0, 0.0, 1.0]
"""


class Tracking:
    """A scene, knots of its cables and a loss of the run's states:
    L = Σ_s ½‖marker(s) − y_s‖² + Σ_s ½‖effector(s) − z_s‖² + w_x · x(s_x) + w_v · v(s_v)."""

    def __init__(self, scene, body, marker, effector, knots, times, E, moves, with_nodes, seed, fixed):
        self.scene, self.body, self.marker, self.effector = scene, body, marker, effector
        self.knots = knots
        self.times = np.asarray(times)
        self.E = E
        rest = diffsoro.Simulation(scene)
        m0, e0 = rest.markers()[marker], rest.effector(effector)
        # The marker is also compared at the start (s = 0): its term reaches the start state only.
        self.y = {s: m0 + moves[0] * np.array([np.sin(0.3 * s), 0.5, 1.0]) for s in [0] + SAMPLED}
        self.z = {s: e0 + moves[1] * np.array([1.0, 0.0, 1.0]) for s in SAMPLED}
        n = scene.node_count(body)
        rng = np.random.default_rng(seed)
        self.nodes = {}
        if with_nodes:
            self.nodes = {30: ("x", 1e-2 * rng.standard_normal((n, 3))), 20: ("v", 1e-3 * rng.standard_normal((n, 3)))}
        # A start-state direction on the free nodes (fixed ones are boundary conditions).
        free = 1.0 - fixed(rest.positions(body))
        self.dx = 1e-3 * rng.uniform(-1, 1, (n, 3)) * free[:, None]
        self.dv = 1e-2 * rng.uniform(-1, 1, (n, 3)) * free[:, None]

    def loss(self, knots=None, E=None, d=0.0, contacts=None):
        """L of a forward run that sets each step's inputs itself (no tape)."""
        knots = self.knots if knots is None else knots
        sim = diffsoro.Simulation(self.scene)
        sim.set_parameters({f"young_modulus:{self.body}": self.E if E is None else E})
        if d:
            sim.set_state(self.body, sim.positions(self.body) + d * self.dx, sim.velocities(self.body) + d * self.dv)
        dt, total = self.scene.dt, 0.0
        for s in range(STEPS + 1):
            if s in self.y:
                total += 0.5 * np.sum((sim.markers()[self.marker] - self.y[s]) ** 2)
            if s in self.z:
                total += 0.5 * np.sum((sim.effector(self.effector) - self.z[s]) ** 2)
            if s in self.nodes:
                kind, w = self.nodes[s]
                total += np.sum(w * (sim.positions(self.body) if kind == "x" else sim.velocities(self.body)))
            if s == STEPS:
                return total
            for name, q in knots.items():
                sim.set_actuation(name, hat((s + 1) * dt, self.times, q))
            sim.step()
            if contacts is not None:
                contacts.append(sim.final_state()["contacts"])

    def gradient(self):
        """The adjoint's gradient: {"knots", "parameters", "positions", "velocities"}."""
        sim = diffsoro.Simulation(self.scene)
        sim.set_parameters({f"young_modulus:{self.body}": self.E})
        tape = sim.record(STEPS, knots=self.knots, knot_times=self.times)
        markers = tape.trajectory("markers", sorted(self.y))
        effectors = tape.trajectory("effectors", sorted(self.z))
        series = {}
        for i, s in enumerate(sorted(self.y)):
            series.setdefault(s, {})["markers"] = {self.marker: markers[i, 0] - self.y[s]}
        for i, s in enumerate(sorted(self.z)):
            series.setdefault(s, {})["effectors"] = {self.effector: effectors[i, 0] - self.z[s]}
        for s, (kind, w) in self.nodes.items():
            series.setdefault(s, {})["positions" if kind == "x" else "velocities"] = {self.body: w}
        return tape.adjoint(params=[f"young_modulus:{self.body}"], series=series)


def hat(t, times, q):
    """The knots' input at time t: (1 − w) q_j + w q_{j+1}, w = (t − τ_j)/(τ_{j+1} − τ_j) on
    [τ_j, τ_{j+1}), held outside [τ_0, τ_{K−1}] (docs/derivatives.md)."""
    if t <= times[0]:
        return float(q[0])
    if t >= times[-1]:
        return float(q[-1])
    j = int(np.searchsorted(times, t, side="right")) - 1
    w = (t - times[j]) / (times[j + 1] - times[j])
    return float((1.0 - w) * q[j] + w * q[j + 1])


def beam():
    scene = diffsoro.Scene.from_toml(BEAM, base_dir=SCENES)
    knots = {"pull": np.array([0.0, 0.3, 0.1, 0.4]), "side": np.array([0.2, 0.0, 0.25, 0.1])}
    return Tracking(scene, "beam", "mid", "tip", knots, [0.0, 0.2, 0.4, 0.6], 1.0e6, (2e-3, 3e-3), True, 3, lambda x: x[:, 0] == 0.0)


def block():
    scene = diffsoro.Scene.from_toml(BLOCK, base_dir=REPO / "meshes")
    knots = {"pull": np.array([0.0, 0.05, 0.03])}
    return Tracking(scene, "block", "corner", "top", knots, [0.0, 0.3, 0.6], 1.0e5, (1e-4, 1e-4), False, 7, lambda x: np.zeros(len(x)))
