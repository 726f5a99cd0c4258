"""`diffsoro.ray` on a local Ray with 2 workers: rollouts, gradient evaluations and
calibrations equal the serial computations (the plain API in this process) bit for bit, and
scenes reach the workers as TOML text plus mesh bytes. Skipped without Ray (the `ray` extra)."""

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

import diffsoro
from conftest import SCENES

ray = pytest.importorskip("ray")
import diffsoro.ray as dray  # noqa: E402

STEPS = 3
CASES = [
    {"soft_body.trunk.young_modulus": e, "soft_body.trunk.cable.c2.force": t}
    for e in (3.0e5, 6.0e5)
    for t in (0.0, 0.8)
]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    workers = set()
    yield workers
    ray.shutdown()
    # The workers are killed without running their exit handlers: the folders they
    # materialised go at the next materialisation of any process once they are gone.
    deadline = time.monotonic() + 30.0
    while True:
        dray._remove_stale_materialised()
        left = [f for f in Path(tempfile.gettempdir()).glob("diffsoro-package-*") if dray._folder_pid(f) in workers]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not left, f"left behind by the workers: {left}"


@ray.remote
def _worker_pid(package):
    package.base_dir()
    return os.getpid()


def test_the_workers_folders_are_removed_once_they_are_gone(local_ray):
    # Records the workers that materialise a package; the fixture's teardown checks that their
    # folders are gone after the shutdown.
    package = dray.ScenePackage.load(SCENES / "trunk.toml")
    local_ray.update(ray.get([_worker_pid.remote(package) for _ in range(4)]))
    assert local_ray and os.getpid() not in local_ray


def _serial_final_state(overrides, path=SCENES / "trunk.toml", steps=STEPS):
    sim = diffsoro.Simulation(diffsoro.Scene.load(path, overrides=overrides))
    sim.run(steps)
    return sim.final_state()


def test_package_ships_the_mesh():
    package = dray.ScenePackage.load(SCENES / "trunk.toml")
    assert package.base == "scenes" and list(package.files) == ["meshes/trunk.msh"]
    assert package.files["meshes/trunk.msh"] == (SCENES.parent / "meshes" / "trunk.msh").read_bytes()


def test_rollouts_equal_serial_without_a_shared_filesystem(tmp_path):
    # The scene and its mesh copied to a folder that is removed before the map: the workers
    # can only use the shipped text and bytes.
    (tmp_path / "scenes").mkdir()
    (tmp_path / "meshes").mkdir()
    shutil.copy(SCENES / "trunk.toml", tmp_path / "scenes")
    shutil.copy(SCENES.parent / "meshes" / "trunk.msh", tmp_path / "meshes")
    package = dray.ScenePackage.load(tmp_path / "scenes" / "trunk.toml")
    shutil.rmtree(tmp_path / "meshes")
    seen = []
    states = dray.rollouts(package, CASES, steps=STEPS, progress=lambda d, n: seen.append((d, n)))
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)
    assert states == [_serial_final_state(c) for c in CASES]


def test_gradients_equal_serial():
    package = dray.ScenePackage.load(SCENES / "trunk.toml")
    params = ["young_modulus:trunk", "actuator:c2"]
    target = np.array([0.0, -0.01, 0.19])

    def loss(positions):
        d = positions["trunk"] - target
        return float(np.sum(d * d)), {"trunk": 2 * d}

    results = dray.gradients(package, CASES, params, loss, steps=STEPS)
    for case, result in zip(CASES, results):
        sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "trunk.toml", overrides=case))
        tape = sim.record(STEPS)
        value, cotangent = loss({"trunk": sim.positions("trunk")})
        back = tape.adjoint(positions=cotangent, params=params)
        assert result == {"loss": value, "gradient": back["parameters"]}
        assert result["gradient"]["actuator:c2"] != 0.0


def test_calibrations_from_files_equal_serial(tmp_path):
    files = []
    for i, e in enumerate((3.5e5, 5.5e5)):
        path = tmp_path / f"observed_{i}.json"
        path.write_text(json.dumps(_serial_final_state({"soft_body.trunk.young_modulus": e})))
        files.append(path)
    overrides = {"simulation.steps": STEPS}
    package = dray.ScenePackage.load(SCENES / "trunk.toml", overrides=overrides)
    kwargs = {"params": ["young_modulus:trunk"], "init": {"young_modulus:trunk": 4.5e5}}
    reports = dray.calibrations(package, files, **kwargs)
    scene = diffsoro.Scene.load(SCENES / "trunk.toml", overrides=overrides)
    assert reports == [diffsoro.calibrate(scene, observed=f, **kwargs) for f in files]
    assert abs(reports[1]["params"]["young_modulus:trunk"] / 5.5e5 - 1) < 1e-6


def test_a_task_error_reaches_the_caller():
    package = dray.ScenePackage.load(SCENES / "trunk.toml")
    with pytest.raises(ValueError, match="young_modulus"):
        dray.rollouts(package, [{"soft_body.trunk.young_modulus": -1.0}], steps=1)
