"""Logged actuator commands from Python (`Simulation.run_commands`) against the CLI's
`simulate --inputs` on the same command log, bit for bit: both go through the same library
run (`scene::CommandRun`), and the log's numbers are written with `repr`, which reads back as
the same doubles. Also `set_actuation` on a displacement-driven cable: its input is the
shortening (m), the cable stays displacement-driven."""

import numpy as np
import pytest

import diffsoro
from conftest import REPO, SCENES

# scenes/finger.toml with its cable displacement-driven (shortening in m).
DISPLACED = REPO / "tests" / "data" / "finger_displacement.toml"


def write_log(path, times, columns):
    """A command file `time,NAME,…` of `times` and {name: values}, full precision."""
    names = list(columns)
    lines = ["time," + ",".join(names)]
    for i, t in enumerate(times):
        lines.append(",".join(repr(float(v)) for v in [t, *(columns[n][i] for n in names)]))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_force_driven_run_commands_equals_cli_inputs(cli, tmp_path):
    # A ramp up, down and up again to 0.7 N, held, lagged by 30 ms and clamped at 0.6 N, from
    # the static start under the first command (the default of both).
    times = np.array([0.0, 0.05, 0.12, 0.2, 0.3])
    cable = np.array([0.0, 0.4, 0.1, 0.7, 0.7])
    log = write_log(tmp_path / "wave.csv", times, {"cable": cable})
    overrides = {
        "soft_body.finger.cable.cable.time_constant": 0.03,
        "soft_body.finger.cable.cable.max_force": 0.6,
    }
    sets = [a for k, v in overrides.items() for a in ("--set", f"{k}={v!r}")]
    expected = cli.json("simulate", "scenes/finger.toml", "--inputs", log, *sets)
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "finger.toml", overrides=overrides))
    with pytest.warns(UserWarning, match="clamped to 0.6"):
        report = sim.run_commands(times, {"cable": cable})
    body = expected["soft_bodies"][0]
    assert np.array_equal(sim.positions("finger"), np.array(body["positions"]))
    assert np.array_equal(sim.velocities("finger"), np.array(body["velocities"]))
    assert report["steps"] == expected["steps"] == 30
    assert report["t0"] == expected["inputs"]["t0"] == 0.0
    assert report["clamped"] == expected["inputs"]["clamped"]
    assert report["clamped"]["cable"] > 0
    assert sim.time == expected["time"]


def test_displacement_driven_run_commands_equals_cli_inputs(cli, tmp_path):
    # The shortening (m) logged from file time 1.0 s, 25 steps from the scene's initial state;
    # the commands as a (T, n) array with names.
    times = np.array([1.0, 1.1, 1.3])
    shortening = np.array([0.0, 0.004, 0.002])
    log = write_log(tmp_path / "pull.csv", times, {"cable": shortening})
    expected = cli.json(
        "simulate", str(DISPLACED), "--inputs", log, "--steps", "25", "--start", "scene"
    )
    sim = diffsoro.Simulation(diffsoro.Scene.load(DISPLACED))
    report = sim.run_commands(
        times, shortening.reshape(-1, 1), steps=25, start="scene", names=["cable"]
    )
    body = expected["soft_bodies"][0]
    assert np.array_equal(sim.positions("finger"), np.array(body["positions"]))
    assert np.array_equal(sim.velocities("finger"), np.array(body["velocities"]))
    assert report == {"t0": 1.0, "steps": 25, "clamped": {"cable": 0}, "warnings": []}
    # The cable stayed displacement-driven: its tension was solved, not given.
    assert sim.final_state()["actuators"] == expected["actuators"]


def test_set_actuation_sets_a_displacement_driven_cables_shortening():
    scene = diffsoro.Scene.load(DISPLACED)
    rest = diffsoro.Simulation(scene).final_state()["actuators"][0]["value"]  # m, at rest
    sim = diffsoro.Simulation(scene)
    sim.set_actuation("cable", 5e-4)  # shortening, m
    sim.run(300)
    cable = sim.final_state()["actuators"][0]
    # Settled (3 s), the cable's length is its rest length less the shortening: the
    # linearised step meets the target to first order in each step's motion, which dies out
    # as it settles. Its tension is solved (about 0.56 N); before, 5e-4 became the cable's
    # tension in N, which cannot hold the finger's weight, let alone shorten the cable so.
    assert abs(cable["value"] - (rest - 5e-4)) < 1e-9
    assert cable["force"] > 0.1


def test_bad_command_arrays_are_value_errors():
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "finger.toml"))
    with pytest.raises(ValueError, match=r'run_commands commands\["thumb"\]: .*no actuator'):
        sim.run_commands([0.0, 0.1], {"thumb": [0.0, 0.1]})
    with pytest.raises(ValueError, match=r"run_commands times\[1\]: 0 is not after"):
        sim.run_commands([0.0, 0.0], {"cable": [0.0, 0.1]})
    with pytest.raises(ValueError, match=r'run_commands commands\["cable"\]: has 1 values'):
        sim.run_commands([0.0, 0.1], {"cable": [0.0]})
    with pytest.raises(ValueError, match="run_commands start: expected `static` or `scene`"):
        sim.run_commands([0.0], {"cable": [0.1]}, start="rest")
    with pytest.raises(ValueError, match="names="):
        sim.run_commands([0.0], np.zeros((1, 1)))
    with pytest.raises(ValueError, match=r"shape \[1, 2\]"):
        sim.run_commands([0.0], np.zeros((1, 2)), names=["cable"])
    # Nothing ran.
    assert sim.steps == 0
