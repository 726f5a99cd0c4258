"""Type stubs of the compiled module `diffsoro._diffsoro` (re-exported by `diffsoro`).

SI units: m, m/s, s, Pa, N (cables), Pa (cavities), N·m or rad (servos), J.
"""

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "Controller",
    "Scene",
    "Simulation",
    "Tape",
    "calibrate",
    "control",
    "read_marker_tracks",
    "ConvergenceError",
    "__version__",
]

__version__: str

_OverrideValue = bool | int | float | str | Sequence[Any]
_Array = npt.NDArray[np.float64]

class ConvergenceError(RuntimeError):
    """A step's contact NCP stopped at its iteration limit under strict=True."""

@final
class Scene:
    """A scene: settings, soft bodies, actuators, effectors, obstacles (SI units). Immutable."""

    @staticmethod
    def load(
        path: str | os.PathLike[str],
        overrides: Mapping[str, _OverrideValue] | None = None,
    ) -> Scene:
        """Reads a scene file (TOML) with `--set`-style overrides ({dotted path: value}).

        Raises FileNotFoundError (missing scene or mesh file), ValueError (bad value,
        unknown key: the message names it)."""
    @staticmethod
    def from_toml(
        text: str,
        base_dir: str | os.PathLike[str] | None = None,
        overrides: Mapping[str, _OverrideValue] | None = None,
    ) -> Scene:
        """Parses a scene from TOML text; relative paths start at base_dir (default ".")."""
    @staticmethod
    def from_arrays(
        nodes: npt.ArrayLike,
        tets: npt.ArrayLike,
        *,
        young_modulus: float,
        poisson_ratio: float,
        density: float,
        name: str = "body",
        law: str = "corotational",
        fixed: Sequence[int] | None = None,
        rayleigh_mass: float = 0.0,
        rayleigh_stiffness: float = 0.0,
        dt: float = 0.01,
        steps: int = 1,
        gravity: Sequence[float] = ...,
    ) -> Scene:
        """One soft body from arrays: nodes (n, 3) in m, tets (m, 4) 0-based node indices;
        E in Pa, density in kg/m³ (lumped mass), Rayleigh α (1/s) and β (s), fixed node
        indices, dt (s), gravity (m/s²). Raises ValueError naming what is wrong."""
    @property
    def bodies(self) -> list[str]:
        """Soft-body names, in scene order."""
    @property
    def actuators(self) -> list[str]:
        """Actuator names, body by body."""
    @property
    def effectors(self) -> list[str]:
        """Effector names, body by body."""
    @property
    def marker_names(self) -> list[str]:
        """Marker names (`[[soft_body.marker]]`), body by body in scene order, file order
        within a body: the row order of `Simulation.marker_positions()`."""
    @property
    def dt(self) -> float:
        """Time step (s)."""
    @property
    def steps(self) -> int:
        """The scene's `simulation.steps`."""
    @property
    def warnings(self) -> list[str]:
        """One line per thing a user should hear about the scene as built."""
    def node_count(self, body: str) -> int:
        """Number of mesh nodes of soft body `body`."""

@final
class Controller:
    """QP inverse control of a robot from its measured effector positions: the scene is the
    model, stepped beside the robot; each update aims from the measurement."""

    def __new__(
        cls,
        scene: Scene,
        effectors: Sequence[str],
        regularisation: float | None = None,
        max_change: float | None = None,
    ) -> Controller:
        """One effector; regularisation and max_change override the scene's [control]."""

    @property
    def actuators(self) -> list[str]:
        """The controlled actuators (every force-driven actuator)."""

    @property
    def effectors(self) -> list[str]:
        """The controlled effectors."""

    @property
    def commands(self) -> dict[str, float]:
        """The commands for the robot's next step {actuator: input} (N, Pa or N·m)."""

    @property
    def lead(self) -> float:
        """How far ahead (s) to aim a moving target: the model's Rayleigh β."""

    @property
    def time(self) -> float:
        """The model's time (s): updates × dt."""

    def update(
        self,
        measured: Mapping[str, Sequence[float] | _Array],
        targets: Mapping[str, Sequence[float] | _Array],
    ) -> dict[str, float]:
        """One control period: the model steps with the last commands, the QPs aim from the
        measured positions (m) at the targets (m); returns the next commands."""

@final
class Simulation:
    """A scene's state stepped in time (GIL released during steps)."""

    def __new__(cls, scene: Scene, strict: bool = False) -> Simulation:
        """From the scene's rest state, time 0. strict=True: unconverged contact raises
        ConvergenceError."""
    def step(self) -> None:
        """One time step (dt s)."""
    def run(self, steps: int | None = None) -> None:
        """`steps` time steps (default: the scene's `simulation.steps`)."""
    @property
    def time(self) -> float:
        """Simulated time (s)."""
    @property
    def steps(self) -> int:
        """Steps taken."""
    @property
    def scene(self) -> Scene:
        """A copy of the simulation's scene (with set_actuation's inputs)."""
    def positions(self, body: str) -> _Array:
        """Node positions (m), owned (n, 3) float64, mesh-file node order."""
    def velocities(self, body: str) -> _Array:
        """Node velocities (m/s), owned (n, 3) float64, mesh-file node order."""
    def set_state(
        self, body: str, positions: npt.ArrayLike, velocities: npt.ArrayLike
    ) -> None:
        """Sets a body's positions (m) and velocities (m/s), (n, 3) each."""
    def set_actuation(self, name: str, value: float) -> None:
        """An actuator's input for the next steps in its unit, its drive kept: N, Pa or N·m
        (force), m (a cable's shortening), m³ (a cavity's volume change), rad (servo angle)."""
    def run_commands(
        self,
        times: npt.ArrayLike,
        commands: Mapping[str, npt.ArrayLike] | npt.ArrayLike,
        steps: int | None = None,
        start: str = "static",
        names: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """A run under logged commands (the CLI's `simulate --inputs`): times (T,) in s,
        commands {actuator: (T,)} or (T, n) with names; starts anew at time 0 = times[0]
        ("static": at rest under the first commands, or "scene"); returns {"t0", "steps",
        "clamped": {actuator: count}, "warnings": [...]}."""
    def set_parameters(self, values: Mapping[str, float]) -> None:
        """Sets named differentiable parameters for the next steps: `young_modulus:BODY` (Pa),
        `poisson_ratio:BODY`, `actuator:NAME` (N, Pa, N·m; rad for an angle servo),
        `friction:OBSTACLE` (Coulomb coefficient), `tau:ROBOT[k]` (N·m or N),
        `target:ROBOT[k]` (a PD robot's target, rad or m), `mass:BODY` (a free rigid body's
        mass, kg), `rayleigh_mass:BODY` (α, 1/s), `rayleigh_stiffness:BODY` (β, s),
        `density:BODY` (ρ, kg/m³). ValueError for an unknown name or invalid value (nothing
        changed then)."""
    def record(
        self,
        steps: int | None = None,
        memory_limit: int | None = None,
        knots: Mapping[str, npt.ArrayLike] | None = None,
        knot_times: npt.ArrayLike | None = None,
    ) -> Tape:
        """Advances `steps` steps (default: the scene's) as `run` (bit for bit without contact,
        to the contact solver's tolerance with it), recording them
        for `Tape.adjoint` (factorisations kept up to `memory_limit` bytes, default 2 GiB;
        the rest recomputed). `strict` is not checked (see final_state's
        unconverged_steps). With `knots` ({actuator: (K,) inputs, N / Pa / N·m, force-driven
        actuators only}) at `knot_times` ((K,) s, simulation clock, increasing), the inputs
        follow the knots piecewise linearly, step k from time t0 taking those at
        t0 + (k+1)·dt; the simulation keeps the last step's inputs."""
    def rigid_q(self, name: str) -> _Array:
        """A rigid body's [x, y, z, qx, qy, qz, qw] (m) or a robot's joint coordinates, (nq,)."""
    def rigid_v(self, name: str) -> _Array:
        """A rigid body's [v; ω] (m/s, rad/s, world axes) or a robot's joint velocities, (nv,)."""
    def set_rigid_state(self, name: str, q: npt.ArrayLike, v: npt.ArrayLike) -> None:
        """Sets a rigid body's or robot's configuration (nq) and velocity (nv)."""
    def effector(self, name: str) -> _Array:
        """Effector position (m), shape (3,)."""
    def markers(self) -> dict[str, _Array]:
        """Every marker's position in the current state: {name: (3,) float64, m, scene frame},
        in `Scene.marker_names` order; empty without markers."""
    def marker_positions(self) -> _Array:
        """Every marker's position in the current state, (M, 3) float64 in m (scene frame),
        one row per marker in `Scene.marker_names` order."""
    def static_equilibrium(self) -> dict[str, dict[str, float]]:
        """Static equilibrium from the current state: {body: {"iterations", "load_steps",
        "residual"}}."""
    def final_state(self) -> dict[str, Any]:
        """The CLI's final-state JSON of the current state, as a dict."""
    def energy(self) -> dict[str, float]:
        """Energy (J): {"kinetic", "elastic", "gravity", "actuators", "total"}."""
    def step_jacobian(self, params: Sequence[str]) -> dict[str, _Array]:
        """{name: (N, 3) d x⁺/d p} for one step from the current state (not advanced); N =
        nodes of every soft body in scene order (a rigid body's or robot's column: `jvp`).
        `tau:ROBOT` / `target:ROBOT` without a component: one entry per coordinate."""
    def jvp(
        self,
        parameters: Mapping[str, float] | None = None,
        positions: Mapping[str, npt.ArrayLike] | None = None,
        velocities: Mapping[str, npt.ArrayLike] | None = None,
    ) -> tuple[dict[str, _Array], dict[str, _Array]]:
        """Forward mode of one step: (dx⁺, dv⁺) per body for the given input direction
        (parameters by the names of `set_parameters`); soft bodies (n, 3), rigid bodies and
        robots (nv,) (configuration tangent, velocity)."""
    def vjp(
        self,
        positions: Mapping[str, npt.ArrayLike] | None = None,
        velocities: Mapping[str, npt.ArrayLike] | None = None,
        params: Sequence[str] = ...,
    ) -> dict[str, Any]:
        """Reverse mode of one step: {"positions": {body: x̄}, "velocities": {body: v̄},
        "parameters": {name: p̄}}; soft bodies (n, 3), rigid bodies and robots (nv,).
        `tau:ROBOT` / `target:ROBOT` without a component: one entry per coordinate."""

@final
class Tape:
    """A recorded trajectory (`Simulation.record`) for reverse-mode gradients of losses of
    the states along it."""

    @property
    def steps(self) -> int:
        """Steps recorded."""
    @property
    def knots(self) -> dict[str, Any] | None:
        """{"times": (K,) s, "values": {actuator: (K,)}} of a run under knots, else None."""
    def trajectory(self, quantity: str, steps: Sequence[int] | None = None) -> _Array:
        """(len(steps), M, 3) m: "markers", "effectors" or "nodes" of the states after s
        steps for s in `steps` (default 1, ..., Tape.steps; 0 is the start)."""
    def adjoint(
        self,
        positions: Mapping[str, npt.ArrayLike] | None = None,
        velocities: Mapping[str, npt.ArrayLike] | None = None,
        params: Sequence[str] = ...,
        series: Mapping[int, Mapping[str, Mapping[str, npt.ArrayLike]]] | None = None,
    ) -> dict[str, Any]:
        """For the cotangent of the final state ({body: ∂loss/∂x_final (n, 3), 1/m} and
        {body: ∂loss/∂v_final, s/m}; rigid bodies and robots (nv,)) and of the states along
        the run (`series`: {s: {"positions": {body: (n, 3)}, "velocities": {body: (n, 3)},
        "markers": {name: (3,)}, "effectors": {name: (3,)}}}, s = 0 the start to `steps`),
        summed in one reverse sweep, the cotangent of the start state and of the parameters
        held over the run: {"positions": {body: ...}, "velocities": {body: ...},
        "parameters": {name: ∂loss/∂p}} (per unit of p; `tau:ROBOT` / `target:ROBOT` without
        a component: one entry per coordinate), plus "knots": {actuator: (K,)} for a run
        under knots. Can be called again (records then recomputed)."""

def calibrate(
    scene: Scene,
    observed: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    params: Sequence[str] | None = None,
    init: Mapping[str, float] | None = None,
    bounds: Mapping[str, tuple[float | None, float | None]] | None = None,
    restarts: int | None = None,
    progress: Callable[[dict[str, Any]], object] | None = None,
    trials: list[dict[str, Any]] | None = None,
    compare: str | None = None,
    register: str | None = None,
    start: str | None = None,
    marker_unit: str = "m",
) -> dict[str, Any]:
    """Fits parameters to an observed final state, or with `trials` (dicts of "times",
    "commands" {actuator: array} and "markers" {"times", "names", "xyz"} or {name: (times,
    positions)}) to real experiments; the CLI's calibrate report."""

def control(
    scene: Scene,
    effector: str,
    target: float | Sequence[float],
    steps: int | None = None,
    static: bool = False,
    max_force: Mapping[str, float] | None = None,
    progress: Callable[[dict[str, Any]], object] | None = None,
) -> dict[str, Any]:
    """QP inverse control of an effector to a target: a soft effector's (x, y, z) in m, or a
    robot joint `q:ROBOT[k]`'s one coordinate (rad or m); the CLI's control report."""

def read_marker_tracks(
    path: str | os.PathLike[str],
    scene: Scene,
    unit: str = "m",
) -> dict[str, tuple[_Array, _Array]]:
    """Reads a marker track file (CSV `time,marker,x,y,z`, coordinates in `unit`, "m" or
    "mm"; times in s) for the scene's markers: {name: (times (T,) in s, positions (T, 3) in
    m)} for every marker in `Scene.marker_names` order (T = 0 for a marker never sampled).
    Rows with empty or NaN values are no samples. Raises FileNotFoundError (missing file),
    ValueError (the reader's one-line message naming the file and line: header, field count,
    not a number, unknown marker, time not after the marker's previous time; or a bad unit)."""
