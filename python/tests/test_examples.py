"""The example scripts run, and say what the CLI says (the Trunk: the one quick test of the
largest shipped scene)."""

import subprocess
import sys

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
