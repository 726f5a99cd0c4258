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
