"""A robot's joint coordinate as the effector of `diffsoro.control` (`effector="q:key[0]"`,
one target in rad): the cable Finger of `scenes/pianist.toml` presses the hinged piano key.
As `tests/joint_control.rs`: the target is where a forward run at a constant cable tension
leaves the key, and control from zero tension must reach it with that tension; the report
equals the CLI's bit for bit; bad input is a one-line ValueError."""

import diffsoro
import pytest
from conftest import SCENES

PIANIST = SCENES / "pianist.toml"
# Steps that settle the key to rest under a constant tension (10 s; |θ̇| ≤ 1e-8 rad/s checked).
SETTLE = 1000


def pianist(force: float, **overrides) -> diffsoro.Scene:
    """scenes/pianist.toml with the cable's tension `force` (N)."""
    return diffsoro.Scene.load(
        PIANIST, overrides={"soft_body.finger.cable.cable.force": force, **overrides}
    )


def rest_angle(force: float) -> float:
    """The key's resting angle (rad) under the constant tension `force` (N), from rest."""
    sim = diffsoro.Simulation(pianist(force))
    sim.run(SETTLE)
    assert abs(sim.rigid_v("key")[0]) < 1e-8, "the key rests"
    return float(sim.rigid_q("key")[0])


def test_control_presses_the_key_to_the_angle_a_known_tension_gives():
    force = 2.0
    target = rest_angle(force)
    done = []
    # From rest with zero tension: the finger first has to reach the key.
    report = diffsoro.control(
        pianist(0.0), effector="q:key[0]", target=target, steps=500, progress=done.append
    )
    lam = report["actuation_history"][-1][0]
    # 1e-4 rad: a tenth of a millimetre at the key's 80 mm tip (tests/joint_control.rs).
    assert report["final_error"] <= 1e-4
    assert report["target"] == [target]
    assert report["effector"] == "q:key[0]" and report["unit"] == "rad"
    assert report["status"] == "reached"
    assert abs(report["final_velocity"]) <= 1e-6
    assert report["actuators"] == ["cable"] and report["actuators_at_bound"] == []
    # One cable for one angle: the forward run's tension, within what static friction holds.
    assert lam == pytest.approx(force, abs=1e-2)
    assert report["error_history"][0] > 0.04
    assert len(report["position_history"]) == 500 and done[-1] == {"done": 500}


def test_joint_control_equals_cli(cli):
    scene = pianist(0.0)
    report = diffsoro.control(scene, effector="q:key[0]", target=-0.05, steps=300)
    expected = cli.json(
        "control", str(PIANIST), "--effector", "q:key[0]", "--target", "-0.05",
        "--steps", "300", "--set", "soft_body.finger.cable.cable.force=0",
    )
    assert report == expected
    # A one-element sequence is the same target.
    assert diffsoro.control(scene, effector="q:key[0]", target=[-0.05], steps=300) == report


def test_bad_joint_effectors_and_targets_are_one_line_value_errors(cli):
    scene = pianist(0.0)
    cases = [
        ("q:piano[0]", "-0.05"),  # no such robot
        ("q:key[1]", "-0.05"),  # no such coordinate
        ("v:key[0]", "-0.05"),  # not a coordinate
        ("q:key[0]", "-0.05,0.1"),  # two numbers
    ]
    for effector, target in cases:
        with pytest.raises(ValueError) as e:
            diffsoro.control(
                scene, effector=effector, target=[float(t) for t in target.split(",")], steps=2
            )
        message = str(e.value)
        assert "\n" not in message
        assert message == cli.error(
            "control", str(PIANIST), "--effector", effector, "--target", target, "--steps", "2"
        )
    with pytest.raises(ValueError, match="a joint effector .* is driven in time"):
        diffsoro.control(scene, effector="q:key[0]", target=-0.05, steps=2, static=True)
    with pytest.raises(ValueError, match="target: expected a number or a sequence of numbers"):
        diffsoro.control(scene, effector="q:key[0]", target="up", steps=2)
