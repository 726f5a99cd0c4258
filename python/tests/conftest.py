"""Shared fixtures: the repository's paths and the `diffsoro` command-line program, whose
JSON the Python results are compared with bit for bit."""

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCENES = REPO / "scenes"


def _cli_path() -> Path:
    """The CLI built from this tree: $DIFFSORO_CLI, or release/diffsoro in cargo's target
    folder ($CARGO_TARGET_DIR, default target/; built by `cargo test --release` in CI, built
    here with cargo if missing)."""
    given = os.environ.get("DIFFSORO_CLI")
    if given:
        return Path(given)
    path = REPO / os.environ.get("CARGO_TARGET_DIR", "target") / "release" / "diffsoro"
    if not path.exists():
        subprocess.run(
            ["cargo", "build", "--release", "--bin", "diffsoro"],
            cwd=REPO,
            check=True,
            stdin=subprocess.DEVNULL,
        )
    return path


class Cli:
    """Runs `diffsoro ARGS…` from the repository root."""

    def __init__(self, path: Path):
        self.path = path

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.path), *args],
            cwd=REPO,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )

    def json(self, *args: str):
        """The JSON the command prints on stdout (it must succeed)."""
        done = self.run(*args)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def error(self, *args: str) -> str:
        """The one-line error of a failing command, without its `error: ` prefix."""
        done = self.run(*args)
        assert done.returncode != 0
        line = done.stderr.strip().splitlines()[-1]
        assert line.startswith("error: "), done.stderr
        return line[len("error: ") :]


@pytest.fixture(scope="session")
def cli() -> Cli:
    return Cli(_cli_path())
