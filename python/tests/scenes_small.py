"""A small smooth scene for trajectory derivatives: the coarse cantilever beam
(meshes/beam_1.msh, 190 nodes, one Newton iteration per step, no contact) with a cable
`pull` along its upper side (tension in N), so that E, ν and an actuator all act."""

import diffsoro
from conftest import SCENES

CABLE = """[[soft_body.cable]]
name = "pull"
points = [[0.0, 0.0, 0.004], [0.05, 0.0, 0.004], [0.095, 0.0, 0.004]]
force = 0.0

[[soft_body.effector]]"""

PARAMS = ["young_modulus:beam", "poisson_ratio:beam", "actuator:pull"]
VALUES = [1.0e6, 0.3, 0.5]  # Pa, -, N


def beam_with_cable() -> diffsoro.Scene:
    text = (SCENES / "beam.toml").read_text().replace("beam_2.msh", "beam_1.msh")
    return diffsoro.Scene.from_toml(text.replace("[[soft_body.effector]]", CABLE), base_dir=SCENES)
