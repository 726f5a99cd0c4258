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


def test_a_process_removes_the_folders_it_materialised_when_it_exits():
    # A fresh interpreter materialises a package (as a Ray worker does) and exits normally: the
    # temporary folder its files were written to must be gone, the scene file itself untouched.
    import subprocess
    import sys
    from pathlib import Path

    path = sorted(SCENES.glob("*.toml"))[0]
    script = (
        "import sys\n"
        "from diffsoro.ray import ScenePackage\n"
        "base = ScenePackage.load(sys.argv[1]).base_dir()\n"
        "print(base)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True
    )
    base = Path(out.stdout.strip())
    assert base.is_absolute() and "diffsoro-" in str(base)
    assert not base.exists()
    assert path.is_file()


def test_the_folders_of_a_process_that_is_gone_are_removed():
    # A killed worker's folder (its pid no longer running) is removed by the next
    # materialisation; one of a live process (this one's parent) is kept.
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead_pid = int(gone.stdout)
    tmp = Path(tempfile.gettempdir())
    stale = tmp / f"diffsoro-package-{dead_pid}-0123456789ab-x"
    live = tmp / f"diffsoro-package-{os.getppid()}-0123456789ab-x"
    for folder in (stale, live):
        (folder / "scenes").mkdir(parents=True, exist_ok=True)
    try:
        path = sorted(SCENES.glob("*.toml"))[0]
        # A package this process has not materialised yet (another override set's text).
        package = ScenePackage.load(path)
        package = ScenePackage(text=package.text + "\n# fresh\n", base=package.base, files=package.files, overrides={})
        package.base_dir()
        assert not stale.exists()
        assert live.exists()
    finally:
        import shutil

        shutil.rmtree(live, ignore_errors=True)
        shutil.rmtree(stale, ignore_errors=True)
