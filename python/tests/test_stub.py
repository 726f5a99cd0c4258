"""The type stub `_diffsoro.pyi` says what the compiled module has: mypy's stubtest compares
every name, signature and default (skipped when mypy is not installed; the `test` extra
installs it)."""

import subprocess
import sys

import pytest


def test_stub_matches_the_module():
    pytest.importorskip("mypy")
    done = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "diffsoro._diffsoro"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
