"""diffsoro: a differentiable soft-robot simulator (tetrahedral FEM, exact frictional
contact, implicit differentiation), from Python.

SI units throughout: positions in m, velocities in m/s, time in s, Young's modulus in Pa,
actuator inputs in N (cables), Pa (cavities), N·m or rad (servos). Arrays are NumPy float64,
(n, 3) per soft body in mesh-file node order.

    import diffsoro
    scene = diffsoro.Scene.load("scenes/trunk.toml",
                                overrides={"soft_body.trunk.cable.c2.force": 0.5})
    sim = diffsoro.Simulation(scene)
    sim.run(100)
    x = sim.positions("trunk")           # (n, 3), m
    state = sim.final_state()            # the CLI's final-state JSON as a dict
    tips = sim.markers()                 # {marker name: (3,) m}, [[soft_body.marker]]

Optional modules (import them explicitly): `diffsoro.linalg` (one step's Jacobian in (x, v)
as a SciPy LinearOperator), `diffsoro.torch` (rollouts as a torch.autograd.Function; extra
`diffsoro[torch]`), `diffsoro.ray` (rollouts, gradients and calibrations over Ray; extra
`diffsoro[ray]`).
"""

from ._diffsoro import (
    Controller,
    ConvergenceError,
    Scene,
    Simulation,
    Tape,
    __version__,
    calibrate,
    control,
    read_marker_tracks,
)

__all__ = [
    "Controller",
    "ConvergenceError",
    "Scene",
    "Simulation",
    "Tape",
    "__version__",
    "calibrate",
    "control",
    "read_marker_tracks",
]
