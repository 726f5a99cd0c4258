"""The example scripts run, and say what the CLI says (the Trunk: the one quick test of the
largest shipped scene), or what the serial API computes (the Ray sweep)."""

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO


def test_quickstart_runs_and_its_tip_equals_cli(cli, tmp_path):
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "python" / "quickstart.py")],
        cwd=tmp_path,  # the script finds the scene itself; tip_path.png lands here
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 101 and lines[-1].startswith("tip moved ")
    time, *tip = (float(w) for w in lines[-2].split())
    expected = cli.json(
        "simulate", "scenes/trunk.toml", "--steps", "100",
        "--set", "soft_body.trunk.cable.c2.force=0.5",
    )
    assert time == expected["time"]
    assert tip == expected["effectors"][0]["position"]


def test_ray_sweep_runs_and_equals_serial(tmp_path):
    """examples/python/ray_sweep.py, small (a 2 × 2 grid of 3 steps, 2 calibrations on 2 local
    workers): its results equal the serial API's bit for bit. Skipped without Ray."""
    pytest.importorskip("ray")
    import diffsoro

    env = dict(os.environ, RAY_AUTH_MODE=os.environ.get("RAY_AUTH_MODE", "disabled"))
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "python" / "ray_sweep.py"), "--grid", "2",
         "--steps", "3", "--calibrations", "2", "--calibration-steps", "3", "--num-cpus", "2",
         "--out", str(tmp_path / "out")],
        cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    trunk = REPO / "scenes" / "trunk.toml"
    assert len(results["sweep"]) == 4
    for row in results["sweep"]:
        sim = diffsoro.Simulation(diffsoro.Scene.load(trunk, overrides=row["overrides"]))
        sim.run(3)
        assert row["final_state"] == sim.final_state()
    scene = diffsoro.Scene.load(
        trunk, overrides={"soft_body.trunk.cable.c2.force": 0.5, "simulation.steps": 3}
    )
    assert len(results["calibrations"]) == 2
    for row in results["calibrations"]:
        expected = diffsoro.calibrate(scene, observed=row["observed"], params=["young_modulus:trunk"],
                                      init={"young_modulus:trunk": 450e3})
        assert row["report"] == expected
        assert abs(row["report"]["params"]["young_modulus:trunk"] / row["true_young_modulus"] - 1) < 1e-6
    assert "true E (kPa)" in done.stdout


def _run_example(name, *args, cwd):
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "python" / name), *args],
        cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()


def test_calibrate_beam_recovers_e_as_the_cli_does(cli, tmp_path):
    """examples/python/calibrate_beam.py fits the E the CLI's `calibrate` fits from the same
    observation (simulated by the CLI at 3e5 Pa), to the printed digits, and it is 3e5 Pa."""
    lines = _run_example("calibrate_beam.py", cwd=tmp_path)
    observed = cli.json("simulate", "scenes/beam.toml", "--set", "soft_body.beam.young_modulus=3e5")
    obs = tmp_path / "observed.json"
    obs.write_text(json.dumps(observed))
    expected = cli.json(
        "calibrate", "scenes/beam.toml", "--observed", str(obs),
        "--param", "young_modulus:beam", "--init", "young_modulus:beam=1e5",
    )
    e = expected["params"]["young_modulus:beam"]
    assert lines[-1].startswith(f"fitted E = {e:.6e} Pa in {expected['iterations']} iterations")
    assert lines[-1].endswith("converged: True")
    assert abs(e / 3e5 - 1) < 1e-6
    assert sum(line.startswith("simulation ") for line in lines) >= expected["iterations"]


def test_control_finger_reports_what_the_cli_reports(cli, tmp_path):
    """examples/python/control_finger.py over 20 steps prints the CLI's `control` errors and
    final tension for the same target."""
    lines = _run_example("control_finger.py", "--steps", "20", cwd=tmp_path)
    expected = cli.json(
        "control", "scenes/finger.toml", "--effector", "tip",
        "--target", "-0.1,0.02,0.007", "--steps", "20",
    )
    assert lines[1] == f"step 20: {expected['error_history'][19] * 1e3:.2f} mm from the target"
    assert lines[-1] == (f"final tension {expected['actuation_history'][-1][0]:.4f} N, "
                         f"final error {expected['final_error'] * 1e3:.2f} mm")


def test_mixed_lift_ends_where_the_cli_ends(cli, tmp_path):
    """examples/python/mixed_lift.py over 60 steps: the palm's q and the pad's lowest point
    equal the CLI's final state of `scenes/lift_pad.toml` bit for bit."""
    lines = _run_example("mixed_lift.py", "--steps", "60", cwd=tmp_path)
    expected = cli.json("simulate", "scenes/lift_pad.toml", "--steps", "60")
    q = expected["robots"][0]["q"][0]
    z = min(p[2] for p in expected["soft_bodies"][0]["positions"])
    assert lines[-1] == f"palm q {q!r} m, pad bottom z {z!r} m"


def test_fit_knots_recovers_the_knots_that_made_the_path(tmp_path):
    """examples/python/fit_knots.py: L-BFGS from zero tension brings the loss down by more than
    10⁸ and finds the knots that made the path (1 mN); the tip's path under the printed knots,
    recomputed without torch (`Simulation.record` + `Tape.trajectory`), is within 1e-3 mm of
    the path under those knots, and the printed rms says so too. Skipped without torch."""
    pytest.importorskip("torch")
    import numpy as np

    import diffsoro

    lines = _run_example("fit_knots.py", cwd=tmp_path)
    losses = [float(line.split("loss ")[1].split()[0]) for line in lines if line.startswith("evaluation ")]
    assert len(losses) >= 20 and losses[-1] < 1e-8 * losses[0]
    fitted = [float(w) for w in lines[-2].removeprefix("fitted knots (N): ").split()]
    true = [0.0, 1.0, 2.0, 1.2, 0.6]
    assert np.max(np.abs(np.array(fitted) - true)) < 1e-3
    assert float(lines[-1].split(": ")[1].split()[0]) < 1e-3

    scene = diffsoro.Scene.load(REPO / "scenes" / "finger.toml")

    def path(knots):
        tape = diffsoro.Simulation(scene).record(60, knots={"cable": knots}, knot_times=np.linspace(0, 0.6, 5))
        return tape.trajectory("effectors", list(range(5, 61, 5)))[:, 0]

    rms = np.sqrt(np.mean(np.sum((path(fitted) - path(true)) ** 2, axis=1)))
    assert rms < 1e-6  # m


def test_feedback_trunk_tracks_as_the_cli_does(cli, tmp_path):
    """examples/python/feedback_trunk.py without noise: its loop of `Controller.update` on a
    robot `Simulation` 25 % stiffer gives the RMS of the CLI's `control --target-path
    --plant-set` on the same path (the loop.csv it writes), within 1 mm."""
    lines = _run_example("feedback_trunk.py", "--noise", "0", cwd=tmp_path)
    rms = float(lines[-1].removeprefix("last lap RMS tip error ").removesuffix(" m"))
    expected = cli.json(
        "control", "scenes/trunk.toml", "--effector", "tip",
        "--target-path", str(tmp_path / "loop.csv"), "--settle", "5", "--steps", "1000",
        "--plant-set", "soft_body.trunk.young_modulus=562500",
    )
    assert rms == pytest.approx(expected["tracking_rms"], rel=1e-9)
    assert rms <= 1e-3
