"""`diffsoro.Controller`: driven by a simulation of its own scene, its commands are the CLI's
`control` actuation step by step (to 1e-8 N, the QP solver's tolerance: the robot's step
and the model's recorded step round differently in the last bits, which the interior-point
QPs amplify); bad measurements and effectors raise one-line
errors."""

import numpy as np
import pytest

import diffsoro
from conftest import REPO

TRUNK = REPO / "scenes" / "trunk.toml"
TARGET = [-0.0123, -0.151, 0.0909]


def test_a_controller_driving_its_own_scene_commands_what_the_cli_applies(cli):
    scene = diffsoro.Scene.load(TRUNK)
    robot = diffsoro.Simulation(scene)
    ctrl = diffsoro.Controller(scene, effectors=["tip"])
    assert ctrl.actuators == [f"c{i}" for i in range(1, 9)]
    assert ctrl.effectors == ["tip"]
    assert ctrl.lead == 0.1  # the Trunk's Rayleigh β (scenes/trunk.toml)
    commands = ctrl.commands
    applied = []
    for _ in range(20):
        applied.append([commands[a] for a in ctrl.actuators])
        for name, value in commands.items():
            robot.set_actuation(name, value)
        robot.step()
        commands = ctrl.update({"tip": robot.effector("tip")}, {"tip": TARGET})
    assert ctrl.time == robot.time
    expected = cli.json(
        "control", "scenes/trunk.toml", "--effector", "tip",
        "--target", ",".join(map(str, TARGET)), "--steps", "20",
    )
    np.testing.assert_allclose(applied, expected["actuation_history"], rtol=0, atol=1e-8)
    np.testing.assert_allclose(robot.effector("tip"), expected["final_position"], rtol=0,
                               atol=1e-9)
    assert max(applied[-1]) > 0.05  # the cables did pull


def test_bad_measurements_and_effectors_raise_value_errors():
    scene = diffsoro.Scene.load(TRUNK)
    with pytest.raises(ValueError, match="no such effector"):
        diffsoro.Controller(scene, effectors=["nose"])
    with pytest.raises(ValueError, match="one effector"):
        diffsoro.Controller(scene, effectors=["tip", "tip"])
    with pytest.raises(ValueError, match="--max-change"):
        diffsoro.Controller(scene, effectors=["tip"], max_change=-1.0)
    ctrl = diffsoro.Controller(scene, effectors=["tip"])
    here = np.zeros(3)
    with pytest.raises(ValueError, match="unknown effector `nose`"):
        ctrl.update({"nose": here}, {"tip": here})
    with pytest.raises(ValueError, match="has no entry for effector `tip`"):
        ctrl.update({"tip": here}, {})
    with pytest.raises(ValueError, match="expected 3 coordinates"):
        ctrl.update({"tip": [0.0, 0.0]}, {"tip": here})
    with pytest.raises(ValueError, match="not finite"):
        ctrl.update({"tip": [0.0, np.nan, 0.0]}, {"tip": here})
    assert ctrl.time == 0.0  # nothing stepped
