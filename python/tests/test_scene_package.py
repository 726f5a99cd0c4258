"""`diffsoro.ray.ScenePackage` (no Ray needed): every shipped scene, packed as TOML text plus
the bytes of the files it reads and rebuilt from a fresh temporary folder, steps bit for bit as
the scene loaded from the repository (meshes, STL obstacles, URDFs found)."""

from pathlib import PurePosixPath

import pytest

import diffsoro
from conftest import SCENES
from diffsoro.ray import ScenePackage


@pytest.mark.parametrize("path", sorted(SCENES.glob("*.toml")), ids=lambda p: p.stem)
def test_a_packed_scene_steps_as_the_loaded_one(path):
    package = ScenePackage.load(path)
    base = package.base_dir()
    assert SCENES.parent not in base.resolve().parents  # a temporary folder, not the repository
    depth = len(PurePosixPath(package.base).parts) if package.base != "." else 0
    root = base if depth == 0 else base.parents[depth - 1]
    for name, data in package.files.items():
        assert (root / PurePosixPath(name)).read_bytes() == data
    packed, loaded = diffsoro.Simulation(package.scene()), diffsoro.Simulation(diffsoro.Scene.load(path))
    packed.step()
    loaded.step()
    assert packed.final_state() == loaded.final_state()
