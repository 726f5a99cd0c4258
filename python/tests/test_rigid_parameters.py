"""The rigid parameter names of the derivatives (`mass:BODY`, `friction:OBSTACLE`,
`target:ROBOT[k]`, `tau:ROBOT[k]`) through `Simulation.jvp` (chained over a run),
`step_jacobian` and `Tape.adjoint`, in mixed soft/rigid and rigid-only scenes, against central
differences of two simulations whose scenes differ by an override of the parameter (and, where
there is one, the analytic answer). The scenes and tolerances are those of the Rust tests
(`tests/mixed_jobs.rs`, `tests/pd_target.rs`, `tests/rigid_mass_friction.rs`,
`tests/cli_simulate.rs`): no contact changes mode over these runs, so 1e-6 relative."""

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

import diffsoro
from conftest import REPO, SCENES

# A rigid body's or robot's compared coordinates from its q, and the matching entries of its
# (nv,) configuration tangent: a free body's centre (m) and the first 3 tangent entries.
Coordinates = Callable[[np.ndarray], np.ndarray]
CENTRE: tuple[Coordinates, Coordinates] = (lambda q: q[:3], lambda t: t[:3])
JOINTS: tuple[Coordinates, Coordinates] = (lambda q: q, lambda t: t)


@dataclass
class Case:
    """A parameter `name` of the scenes `make(value)` (value in the override's unit; `scale`
    converts d/d(value) to d/d(parameter)), run `steps` steps from rest."""

    name: str
    make: Callable[[float], diffsoro.Scene]
    value: float
    eps: float
    steps: int
    rigid: dict[str, tuple[Coordinates, Coordinates]]
    scale: float = 1.0
    soft: list[str] = field(default_factory=list)


def observe(case: Case, sim: diffsoro.Simulation) -> dict[str, np.ndarray]:
    """The final quantities compared: soft positions and velocities, rigid coordinates and
    velocities."""
    out = {}
    for b in case.soft:
        out[f"x:{b}"] = sim.positions(b).ravel()
        out[f"v:{b}"] = sim.velocities(b).ravel()
    for r, (coords, _) in case.rigid.items():
        out[f"q:{r}"] = coords(sim.rigid_q(r))
        out[f"v:{r}"] = sim.rigid_v(r)
    return out


def view(case: Case, dx: dict, dv: dict) -> dict[str, np.ndarray]:
    """The same quantities' tangents from per-body tangent dicts."""
    out = {}
    for b in case.soft:
        out[f"x:{b}"] = np.asarray(dx[b]).ravel()
        out[f"v:{b}"] = np.asarray(dv[b]).ravel()
    for r, (_, part) in case.rigid.items():
        out[f"q:{r}"] = part(np.asarray(dx[r]))
        out[f"v:{r}"] = np.asarray(dv[r])
    return out


def central(case: Case) -> dict[str, np.ndarray]:
    """Central differences of two simulations built with the parameter at value ± eps."""
    runs = []
    for sign in (1.0, -1.0):
        sim = diffsoro.Simulation(case.make(case.value + sign * case.eps))
        sim.run(case.steps)
        runs.append(observe(case, sim))
    return {k: (runs[0][k] - runs[1][k]) / (2 * case.eps * case.scale) for k in runs[0]}


def forward(case: Case) -> dict[str, np.ndarray]:
    """The run's tangent along the parameter: one `jvp` per step, each fed the last one's
    tangent."""
    sim = diffsoro.Simulation(case.make(case.value))
    dx, dv = None, None
    for _ in range(case.steps):
        dx, dv = sim.jvp(parameters={case.name: 1.0}, positions=dx, velocities=dv)
        sim.step()
    return view(case, dx, dv)


def weights(case: Case, fd: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Fixed pseudo-random weights w of a linear loss Σ w·(final quantities)."""
    rng = np.random.default_rng(7)
    return {k: rng.uniform(-1.0, 1.0, v.shape) for k, v in fd.items()}


def adjoint(case: Case, w: dict[str, np.ndarray]) -> float:
    """d(Σ w·final)/d(parameter) by `record` and `Tape.adjoint`."""
    sim = diffsoro.Simulation(case.make(case.value))
    tape = sim.record(case.steps)
    positions, velocities = {}, {}
    for b in case.soft:
        n = sim.positions(b).shape
        positions[b] = w[f"x:{b}"].reshape(n)
        velocities[b] = w[f"v:{b}"].reshape(n)
    for r in case.rigid:
        nv = sim.rigid_v(r).shape[0]
        # The weights sit on the tangent entries the coordinates match (a free body's centre).
        probe = np.arange(nv, dtype=float)
        picked = case.rigid[r][1](probe).astype(int)
        bar = np.zeros(nv)
        bar[picked] = w[f"q:{r}"]
        positions[r] = bar
        velocities[r] = w[f"v:{r}"]
    grad = tape.adjoint(positions=positions, velocities=velocities, params=[case.name])
    return grad["parameters"][case.name]


def assert_close(got: dict[str, np.ndarray], want: dict[str, np.ndarray], rel: float):
    scale = max(np.max(np.abs(v)) for v in want.values())
    assert scale > 0.0
    for k in want:
        err = np.max(np.abs(got[k] - want[k]))
        assert err <= rel * scale, f"{k}: {got[k]} vs {want[k]} (scale {scale:e})"


def check(case: Case) -> dict[str, np.ndarray]:
    """Forward (chained jvp) and reverse (Tape.adjoint) against the central differences."""
    fd = central(case)
    fwd = forward(case)
    assert_close(fwd, fd, 1e-6)
    w = weights(case, fd)
    want = sum(float(np.dot(w[k], fd[k])) for k in fd)
    got = adjoint(case, w)
    assert abs(got - want) <= 1e-6 * sum(float(np.dot(np.abs(w[k]), np.abs(fd[k]))) for k in fd)
    return fd


def text_with_paths(path) -> str:
    """A scene file's text with its `../` paths made absolute."""
    return (
        path.read_text()
        .replace("../meshes/", f"{REPO}/meshes/")
        .replace("../urdf/", f"{REPO}/urdf/")
    )


# The PD target of a mixed scene: the pad hanging from the lifted palm (tests/mixed_jobs.rs).
LIFT_PAD = text_with_paths(SCENES / "lift_pad.toml") + (
    "\n[contact]\ntolerance = 1e-12\nmax_iterations = 100000\n"
)


def test_a_pd_targets_derivative_in_a_mixed_scene_is_two_runs_difference():
    case = Case(
        name="target:lift[0]",
        make=lambda t: diffsoro.Scene.from_toml(
            LIFT_PAD, overrides={"robot.lift.target": [t]}
        ),
        value=0.0,
        eps=1e-4,
        steps=20,
        rigid={"lift": JOINTS},
        soft=["pad"],
    )
    fd = check(case)
    assert abs(fd["q:lift"][0]) > 1e-3, "the palm follows its target"
    # One step's Jacobian has the pad's column too: d x⁺/d target from rest.
    sim = diffsoro.Simulation(case.make(0.0))
    jac = sim.step_jacobian([case.name])[case.name]
    one = Case(**{**case.__dict__, "steps": 1})
    assert_close({"x:pad": jac.ravel()}, {"x:pad": central(one)["x:pad"]}, 1e-6)


# The pianist (paper 004 §IV): the cable Finger pressing the hinged key, whose torsion spring
# is a PD toward `target`; its NCP solved to 1e-12 so that differences of two runs are clean.
PIANIST = text_with_paths(SCENES / "pianist.toml")


def test_the_piano_keys_target_derivative_is_two_runs_difference():
    case = Case(
        name="target:key[0]",
        make=lambda t: diffsoro.Scene.from_toml(
            PIANIST,
            overrides={
                "robot.key.target": [t],
                "contact.tolerance": 1e-12,
                "contact.max_iterations": 100000,
            },
        ),
        value=0.0,
        eps=1e-4,
        steps=40,
        rigid={"key": JOINTS},
        soft=["finger"],
    )
    fd = check(case)
    # The finger holds the key down: its angle follows the spring's rest angle, but not fully.
    assert 0.1 < fd["q:key"][0] < 1.0, fd["q:key"]


# A 25 mm cube landing on a clamped soft block (tests/mixed_jobs.rs): its mass as its
# density times V = (0.025 m)³. Its NCP is solved to 1e-14 m/s: the angular velocity's
# quotient is compared too, and 1e-12 left 3e-7 /kg of noise in it (1e-12 over 2 ε V).
LANDING = f"""
[simulation]
dt = 0.005
steps = 4
gravity = [0.0, 0.0, -9.81]

[contact]
friction = 0.5
tolerance = 1e-14
max_iterations = 100000

[[soft_body]]
name = "block"
mesh = "{REPO}/meshes/soft_block.msh"
law = "neo_hookean"
young_modulus = 1.0e5
poisson_ratio = 0.3
density = 1000.0
rayleigh_mass = 2.0
rayleigh_stiffness = 0.01
fixed_box = [[-1.0, -1.0, -1.0], [1.0, 1.0, 0.001]]

[[rigid_body]]
name = "cube"
shape = "box"
half_extents = [0.0125, 0.0125, 0.0125]
density = 1000.0
position = [0.0013, -0.0021, 0.0335]
velocity = [0.0, 0.0, -0.1]
"""


def test_a_free_bodys_mass_derivative_in_a_mixed_scene_is_two_runs_difference():
    case = Case(
        name="mass:cube",
        make=lambda rho: diffsoro.Scene.from_toml(
            LANDING, overrides={"rigid_body.cube.density": rho}
        ),
        value=1000.0,
        eps=0.1,
        scale=0.025**3,
        steps=4,
        rigid={"cube": CENTRE},
        soft=["block"],
    )
    fd = check(case)
    assert np.max(np.abs(fd["x:block"])) > 1e-6, "the block moves with the mass"


# A 0.5 kg box thrown at 0.5 m/s onto a 2 kg slab on a frictionless floor (rigid only,
# tests/rigid_mass_friction.rs): they end moving together at v_f = m_t v₀ / (m_t + m_s).
SLAB = """
[simulation]
dt = 0.005
gravity = [0.0, 0.0, -9.81]

[contact]
tolerance = 1e-14
max_iterations = 100000

[[obstacle]]
name = "floor"
type = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
friction = 0.0

[[rigid_body]]
name = "slab"
shape = "box"
half_extents = [0.3, 0.2, 0.02]
mass = 2.0
position = [0.0, 0.0, 0.02]

[[rigid_body]]
name = "top"
shape = "box"
half_extents = [0.05, 0.05, 0.05]
mass = 0.5
friction = 0.8
position = [-0.1, 0.0, 0.09]
velocity = [0.5, 0.0, 0.0]
"""


@pytest.mark.parametrize("body", ["top", "slab"])
def test_a_free_bodys_mass_derivative_in_a_rigid_scene_is_the_momentums(body):
    mass = {"top": 0.5, "slab": 2.0}[body]
    case = Case(
        name=f"mass:{body}",
        make=lambda m: diffsoro.Scene.from_toml(SLAB, overrides={f"rigid_body.{body}.mass": m}),
        value=mass,
        eps=1e-4 * mass,
        steps=30,
        rigid={"slab": CENTRE, "top": CENTRE},
    )
    fd = check(case)
    # And the analytic answer: dv_f/dm_t = v₀ m_s / (m_t + m_s)², dv_f/dm_s = −m_t v₀ / (…)².
    v0, mt, ms = 0.5, 0.5, 2.0
    want = v0 * ms / (mt + ms) ** 2 if body == "top" else -mt * v0 / (mt + ms) ** 2
    fwd = forward(case)
    for r in ("slab", "top"):
        assert fwd[f"v:{r}"][0] == pytest.approx(want, rel=1e-6)
        assert fd[f"v:{r}"][0] == pytest.approx(want, rel=1e-6)


def test_an_obstacles_friction_derivative_in_a_rigid_scene_is_coulombs():
    # scenes/cube_push.toml: the cube slides on the floor (obstacle 0, unnamed; it takes the
    # scene's coefficient) at (0.8, 0.3) m/s; each step changes its velocity by −h μ g û, so
    # after k steps dv/dμ = −k h g û and dc/dμ = −h² g û k(k+1)/2 (tests/cli_simulate.rs).
    case = Case(
        name="friction:obstacle0",
        make=lambda mu: diffsoro.Scene.load(SCENES / "cube_push.toml", overrides={"contact.friction": mu}),
        value=0.5,
        eps=1e-4,
        steps=5,
        rigid={"cube": CENTRE},
    )
    fd = check(case)
    h, g, k = 0.005, 9.81, 5
    u = np.array([0.8, 0.3, 0.0]) / np.hypot(0.8, 0.3)
    fwd = forward(case)
    np.testing.assert_allclose(fwd["v:cube"][:3], -k * h * g * u, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(fwd["q:cube"], -h * h * g * u * k * (k + 1) / 2, rtol=1e-10, atol=1e-16)
    # The differences carry the NCP's 1e-12 m/s tolerance over 2 ε: 5e-9.
    np.testing.assert_allclose(fd["v:cube"][:3], -k * h * g * u, rtol=1e-6, atol=1e-8)


# The double pendulum of urdf/double_pendulum.urdf from a fixed base, no contact (rigid only,
# tests/pd_target.rs); the shoulder is continuous, stored as (cos, sin): compared as its angle.
PENDULUM = f"""
[simulation]
dt = 0.005
steps = 30
gravity = [0.0, 0.0, -9.81]

[[robot]]
name = "arm"
urdf = "{REPO}/urdf/double_pendulum.urdf"
base = "fixed"
q = [0.9950041652780258, 0.09983341664682815, -0.2]
v = [0.1, 0.5]
"""
ANGLES: tuple[Coordinates, Coordinates] = (
    lambda q: np.array([np.arctan2(q[1], q[0]), q[2]]),
    lambda t: t,
)


def test_a_pd_targets_derivative_in_a_rigid_scene_is_two_runs_difference():
    # The shoulder's target at angle a (rad), as its (cos a, sin a); the elbow's 0.1 rad.
    pd = PENDULUM + "kp = [40.0, 20.0]\nkd = [2.0, 1.0]\n"
    case = Case(
        name="target:arm[0]",
        make=lambda a: diffsoro.Scene.from_toml(
            pd, overrides={"robot.arm.target": [np.cos(a), np.sin(a), 0.1]}
        ),
        value=0.3,
        eps=1e-5,
        steps=30,
        rigid={"arm": ANGLES},
    )
    fd = check(case)
    assert abs(fd["q:arm"][0]) > 1e-3


def test_a_robots_torque_derivative_in_a_rigid_scene_is_two_runs_difference():
    case = Case(
        name="tau:arm[1]",
        make=lambda tau: diffsoro.Scene.from_toml(PENDULUM, overrides={"robot.arm.torque": [0.0, tau]}),
        value=0.5,
        eps=1e-5,
        steps=30,
        rigid={"arm": ANGLES},
    )
    fd = check(case)
    assert abs(fd["q:arm"][1]) > 1e-3


def test_bad_rigid_parameter_names_are_one_line_value_errors():
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "lift_pad.toml"))
    for name, message in [
        ("mass:lift", "`lift` is a robot"),
        ("mass:cube", "no free rigid body `cube`"),
        ("tau:lift[0]", "driven by a PD"),
        ("target:lift[1]", "component 1 is out of range"),
        ("target:arm[0]", "no robot `arm`"),
    ]:
        with pytest.raises(ValueError, match=message) as e:
            sim.jvp(parameters={name: 1.0})
        assert "\n" not in str(e.value) and f"`{name}`" in str(e.value)
    cube = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "cube_push.toml"))
    with pytest.raises(ValueError, match=r"no obstacle `floor` \(it has \[\"obstacle0\"\]\)"):
        cube.record(1).adjoint(params=["friction:floor"])


def final(sim: diffsoro.Simulation, steps: int) -> dict:
    sim.run(steps)
    return sim.final_state()


def test_set_parameters_takes_the_rigid_names_as_overrides_do():
    # A PD target and an obstacle's friction: bit for bit the scene loaded with the override.
    for text, values, overrides, steps in [
        (LIFT_PAD, {"target:lift[0]": 0.003}, {"robot.lift.target": [0.003]}, 20),
        (SLAB, {"friction:floor": 0.1}, {"obstacle.floor.friction": 0.1}, 30),
    ]:
        sim = diffsoro.Simulation(diffsoro.Scene.from_toml(text))
        sim.set_parameters(values)
        assert final(sim, steps) == final(
            diffsoro.Simulation(diffsoro.Scene.from_toml(text, overrides=overrides)), steps
        )
    # A free body's mass scales its unit-mass inertia (the derivative's semantics), where the
    # scene file computes the inertia from the mass: equal to rounding.
    sim = diffsoro.Simulation(diffsoro.Scene.from_toml(SLAB))
    sim.set_parameters({"mass:top": 0.6})
    got = final(sim, 30)["rigid_bodies"]
    want = final(
        diffsoro.Simulation(diffsoro.Scene.from_toml(SLAB, overrides={"rigid_body.top.mass": 0.6})), 30
    )["rigid_bodies"]
    for a, b in zip(got, want):
        for key in ("position", "orientation", "velocity", "angular_velocity"):
            np.testing.assert_allclose(a[key], b[key], rtol=1e-12, atol=1e-14)


# The soft pad of `lift_pad.toml` hung from the cart of a PD-held cart-pole (2 joints), as in
# `tests/mixed_jobs.rs`: a robot's whole target names each of its coordinates.
CART_PAD = f"""
[simulation]
dt = 0.005
steps = 10
gravity = [0.0, 0.0, -9.81]

[[soft_body]]
name = "pad"
mesh = "{REPO}/meshes/soft_block.msh"
law = "neo_hookean"
young_modulus = 1.0e5
poisson_ratio = 0.3
density = 1000.0
rayleigh_mass = 2.0
rayleigh_stiffness = 0.01

[[robot]]
name = "cp"
urdf = "{REPO}/urdf/cartpole.urdf"
base = "fixed"
position = [0.0, 0.0, 0.2]
kp = [200.0, 5.0]
kd = [20.0, 0.5]
target = [0.01, 1.0, 0.0]

[[attachment]]
soft_body = "pad"
box = [[-1.0, -1.0, 0.019], [1.0, 1.0, 1.0]]
robot = "cp"
link = "cart"
"""


def test_a_whole_robots_target_names_each_of_its_coordinates():
    each = ["target:cp[0]", "target:cp[1]"]
    scene = diffsoro.Scene.from_toml(CART_PAD)
    sim = diffsoro.Simulation(scene)
    for _ in range(3):
        sim.step()
    jac_whole = sim.step_jacobian(["target:cp"])
    jac_each = sim.step_jacobian(each)
    assert sorted(jac_whole) == each
    for name in each:
        np.testing.assert_array_equal(jac_whole[name], jac_each[name])
    # The cart's own target moves the pad (m per m).
    assert np.abs(jac_whole["target:cp[0]"]).max() > 1e-6
    cot = {"positions": {"pad": np.ones((scene.node_count("pad"), 3))}}
    vjp_whole = sim.vjp(**cot, params=["target:cp"])["parameters"]
    vjp_each = sim.vjp(**cot, params=each)["parameters"]
    assert vjp_whole == vjp_each and sorted(vjp_whole) == each
    # One tape for both: its second sweep recomputes the records, bit for bit the same.
    tape = diffsoro.Simulation(scene).record(5)
    adj_whole = tape.adjoint(**cot, params=["target:cp"])["parameters"]
    adj_each = tape.adjoint(**cot, params=each)["parameters"]
    assert adj_whole == adj_each and sorted(adj_whole) == each
