"""The jobs equal the CLI's reports bit for bit: `calibrate` (same scene overrides, the same
observation file, the same starting value) and `control` (same effector, target, steps)."""

import json

import diffsoro
from conftest import SCENES

STEPS = {"simulation.steps": 5}


def test_calibrate_equals_cli(cli, tmp_path):
    # The observation: the beam's final state after 5 steps at the scene's E = 1 MPa.
    scene = diffsoro.Scene.load(SCENES / "beam.toml", overrides=STEPS)
    sim = diffsoro.Simulation(scene)
    sim.run()
    observed = sim.final_state()
    path = tmp_path / "observed.json"
    path.write_text(json.dumps(observed))
    events = []
    report = diffsoro.calibrate(
        scene,
        observed=observed,
        params=["young_modulus:beam"],
        init={"young_modulus:beam": 1.5e6},
        progress=events.append,
    )
    expected = cli.json(
        "calibrate", str(SCENES / "beam.toml"), "--observed", str(path),
        "--param", "young_modulus:beam", "--init", "young_modulus:beam=1.5e6",
        "--set", "simulation.steps=5",
    )
    assert report == expected
    assert set(report) >= {"params", "iterations", "loss", "converged"}
    assert abs(report["params"]["young_modulus:beam"] / 1e6 - 1.0) < 1e-6
    assert events and events[0]["evaluation"] == 1
    # (the fit works on log E: the first value is 1.5e6 to round-off)
    assert abs(events[0]["values"]["young_modulus:beam"] / 1.5e6 - 1.0) < 1e-12
    # The observation as a file gives the same report.
    assert diffsoro.calibrate(scene, observed=path, params=["young_modulus:beam"],
                              init={"young_modulus:beam": 1.5e6}) == expected


def test_control_equals_cli(cli):
    scene = diffsoro.Scene.load(SCENES / "finger.toml")
    target = [-0.1, 0.02, 0.007]
    done = []
    report = diffsoro.control(scene, effector="tip", target=target, steps=5,
                              progress=lambda e: done.append(e["done"]))
    expected = cli.json(
        "control", "scenes/finger.toml", "--effector", "tip",
        "--target", "-0.1,0.02,0.007", "--steps", "5",
    )
    assert report == expected
    assert set(report) >= {"target", "final_position", "final_error", "error_history", "actuation_history"}
    assert done == [1, 2, 3, 4, 5]


def test_calibrate_bounds_equal_cli(cli, tmp_path):
    # bounds={name: (lo, hi)} are the CLI's --bounds NAME=LO,HI (None: the default end).
    scene = diffsoro.Scene.load(SCENES / "beam.toml", overrides=STEPS)
    sim = diffsoro.Simulation(scene)
    sim.run()
    path = tmp_path / "observed.json"
    path.write_text(json.dumps(sim.final_state()))
    report = diffsoro.calibrate(
        scene, observed=path, params=["young_modulus:beam"],
        init={"young_modulus:beam": 2e6}, bounds={"young_modulus:beam": (1e5, None)}, restarts=0,
    )
    expected = cli.json(
        "calibrate", str(SCENES / "beam.toml"), "--observed", str(path),
        "--param", "young_modulus:beam", "--init", "young_modulus:beam=2e6",
        "--bounds", "young_modulus:beam=1e5,", "--restarts", "0", "--set", "simulation.steps=5",
    )
    assert report == expected


def test_control_max_force_equals_cli(cli):
    scene = diffsoro.Scene.load(SCENES / "finger.toml")
    report = diffsoro.control(scene, effector="tip", target=[-0.1, 0.03, 0.007], steps=4,
                              max_force={"cable": 0.3})
    expected = cli.json(
        "control", "scenes/finger.toml", "--effector", "tip",
        "--target", "-0.1,0.03,0.007", "--steps", "4", "--max-force", "cable=0.3",
    )
    assert report == expected
    assert max(max(row) for row in report["actuation_history"]) <= 0.3
