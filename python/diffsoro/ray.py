"""Rollouts, gradients and calibrations mapped over a Ray cluster (the optional extra
`diffsoro[ray]`).

Scenes travel to the workers as a `ScenePackage`: the scene's TOML text plus the bytes of every
file it reads (meshes, obstacle meshes, URDFs and the meshes these name), so no shared
filesystem is needed. A worker writes the files once per package into a temporary folder of its
own (keeping their relative layout) and builds the scene there with `Scene.from_toml(text,
base_dir=...)`. The same code runs on a local Ray (`ray.init()`) or a cluster
(`ray.init(address=...)`; every worker needs `diffsoro` installed). Without `ray.init()`, the
first map starts a local Ray.

    import ray, diffsoro.ray as dray
    ray.init()
    package = dray.ScenePackage.load("scenes/trunk.toml")
    cases = [{"soft_body.trunk.young_modulus": e, "soft_body.trunk.cable.c2.force": t}
             for e in (3e5, 4.5e5) for t in (0.0, 0.5)]          # Pa, N (`--set` overrides)
    states = dray.rollouts(package, cases, steps=100, progress=print)  # final-state dicts

Every task is the serial computation (`rollout`, `gradient`, `calibration` here, which a
single process can call directly), so results equal the serial ones bit for bit. Results come
back in the order of the cases; `progress(done, total)` is called as tasks finish.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ._diffsoro import Scene, Simulation, calibrate

__all__ = [
    "ScenePackage",
    "calibration",
    "calibrations",
    "gradient",
    "gradients",
    "map",
    "rollout",
    "rollouts",
]

T = TypeVar("T")
R = TypeVar("R")
Loss = Callable[[dict[str, npt.NDArray[np.float64]]], tuple[float, Mapping[str, npt.ArrayLike]]]


def _toml_strings(value: Any) -> Iterable[str]:
    """Every string in a parsed TOML value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _toml_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _toml_strings(v)


def _parse_toml(text: str) -> Any:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(text)


_URDF_FILE = re.compile(r"""filename\s*=\s*["']([^"']+)["']""")


@dataclass(frozen=True)
class ScenePackage:
    """A scene to ship to workers: its TOML `text`, the `files` it reads ({relative POSIX
    path: bytes}), `base` (the folder, relative to the files' root, that the scene's relative
    paths start at) and `overrides` (`--set`-style, applied on every worker before a case's
    own). Build one with `ScenePackage.load(path)` or `ScenePackage.from_toml(text,
    base_dir)`.

    Files found: every string of the TOML (and of string overrides) that names an existing
    file relative to the base folder, and the `filename="..."` files of the URDFs among them.
    Absolute paths are not shipped (they must exist on the workers)."""

    text: str
    base: str
    files: dict[str, bytes] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def load(path: str | os.PathLike[str], overrides: Mapping[str, Any] | None = None) -> ScenePackage:
        """The scene file at `path` and the files it reads."""
        p = Path(path)
        return ScenePackage.from_toml(p.read_text(), p.parent, overrides)

    @staticmethod
    def from_toml(
        text: str,
        base_dir: str | os.PathLike[str] = ".",
        overrides: Mapping[str, Any] | None = None,
    ) -> ScenePackage:
        """TOML `text` whose relative paths start at `base_dir`, and the files it reads.
        Raises ValueError for invalid TOML; the scene itself is checked by `scene()`."""
        base = Path(base_dir).resolve()
        overrides = dict(overrides or {})
        try:
            parsed = _parse_toml(text)
        except Exception as e:  # tomllib.TOMLDecodeError
            raise ValueError(f"ScenePackage: the scene's TOML: {e}") from e
        found: list[Path] = []
        queue = [*_toml_strings(parsed), *_toml_strings(overrides)]
        seen: set[Path] = set()
        while queue:
            s = queue.pop(0)
            if not s or "\n" in s or os.path.isabs(s):
                continue
            candidate = (base / s).resolve()
            if candidate in seen or not candidate.is_file():
                continue
            seen.add(candidate)
            found.append(candidate)
            if candidate.suffix.lower() == ".urdf":
                for name in _URDF_FILE.findall(candidate.read_text(errors="replace")):
                    if "://" not in name and not os.path.isabs(name):
                        queue.append(os.path.relpath(candidate.parent / name, base))
        root = Path(os.path.commonpath([base, *found])) if found else base
        files = {PurePosixPath(*f.relative_to(root).parts).as_posix(): f.read_bytes() for f in found}
        rel = base.relative_to(root)
        return ScenePackage(
            text=text,
            base=PurePosixPath(*rel.parts).as_posix() if rel.parts else ".",
            files=files,
            overrides=overrides,
        )

    @property
    def digest(self) -> str:
        """SHA-256 of the text and files (the workers' cache key)."""
        h = hashlib.sha256(self.text.encode())
        h.update(self.base.encode())
        for name in sorted(self.files):
            h.update(name.encode() + b"\0" + hashlib.sha256(self.files[name]).digest())
        return h.hexdigest()

    def base_dir(self) -> Path:
        """The base folder on this machine: the files written under a temporary folder of
        this process (once per package), removed when the process exits."""
        key = self.digest
        root = _MATERIALISED.get(key)
        if root is None or not root.is_dir():
            _remove_stale_materialised()
            root = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-{key[:12]}-"))
            for name, data in self.files.items():
                target = root / PurePosixPath(name)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            # `base/../meshes/x.msh` needs `base` to exist, even with no file of its own.
            (root / PurePosixPath(self.base)).mkdir(parents=True, exist_ok=True)
            _MATERIALISED[key] = root
        return root / PurePosixPath(self.base)

    def scene(self, overrides: Mapping[str, Any] | None = None) -> Scene:
        """The scene built from the shipped files, with the package's overrides and then
        `overrides`. Raises as `Scene.from_toml`."""
        merged = {**self.overrides, **dict(overrides or {})}
        return Scene.from_toml(self.text, base_dir=self.base_dir(), overrides=merged)


# Per process: package digest → the temporary folder its files were written to.
_MATERIALISED: dict[str, Path] = {}


# A materialised package's folder: this prefix, the pid of its process, the digest's start.
_PREFIX = "diffsoro-package-"


@atexit.register
def _remove_materialised() -> None:
    """Removes this process's materialised packages (a process that exits leaves none)."""
    for root in _MATERIALISED.values():
        shutil.rmtree(root, ignore_errors=True)
    _MATERIALISED.clear()


def _folder_pid(folder: Path) -> int | None:
    """The pid in a materialised package's folder name, or None for any other name."""
    if not folder.name.startswith(_PREFIX):
        return None
    pid = folder.name[len(_PREFIX) :].split("-", 1)[0]
    return int(pid) if pid.isdigit() else None


def _remove_stale_materialised() -> None:
    """Removes the materialised packages of processes that are gone (a worker killed before
    its exit handlers ran). Best effort: a folder whose process may be alive is kept."""
    tmp = Path(tempfile.gettempdir())
    for folder in tmp.glob(f"{_PREFIX}*-*"):
        pid = _folder_pid(folder)
        if pid is None or pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            pass  # alive under another user, or undecidable: keep it


# --- the serial computations (one task each) ----------------------------------------------


def rollout(
    package: ScenePackage, overrides: Mapping[str, Any] | None = None, steps: int | None = None
) -> dict[str, Any]:
    """The final-state dict (the CLI's JSON, `Simulation.final_state()`) after `steps` steps
    (default: the scene's) of the package's scene with `overrides`."""
    sim = Simulation(package.scene(overrides))
    sim.run(steps)
    return sim.final_state()


def gradient(
    package: ScenePackage,
    params: Sequence[str],
    loss: Loss,
    overrides: Mapping[str, Any] | None = None,
    steps: int | None = None,
) -> dict[str, Any]:
    """A loss of the final positions and its gradient with respect to named parameters
    (`young_modulus:BODY`…, held constant over the run): `loss(positions)` takes {body: (n, 3)
    final positions (m)} and returns (value, {body: ∂loss/∂x (n, 3)}). Returns {"loss": value,
    "gradient": {name: ∂loss/∂p}} (per unit of each parameter), by one recorded run and its
    adjoint (`Simulation.record`, `Tape.adjoint`)."""
    scene = package.scene(overrides)
    sim = Simulation(scene)
    tape = sim.record(steps)
    value, cotangent = loss({b: sim.positions(b) for b in scene.bodies})
    back = tape.adjoint(
        positions={b: np.asarray(c, dtype=np.float64) for b, c in cotangent.items()},
        params=list(params),
    )
    return {"loss": float(value), "gradient": dict(back["parameters"])}


def calibration(
    package: ScenePackage,
    observed: Mapping[str, Any],
    params: Sequence[str],
    init: Mapping[str, float] | None = None,
    bounds: Mapping[str, tuple[float | None, float | None]] | None = None,
    restarts: int | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`diffsoro.calibrate` of the package's scene (with `overrides`) to an observed final
    state (a dict: read observation files on the driver)."""
    return calibrate(
        package.scene(overrides), observed=dict(observed), params=list(params),
        init=None if init is None else dict(init),
        bounds=None if bounds is None else dict(bounds), restarts=restarts,
    )


# --- maps over Ray ----------------------------------------------------------------------------


def _ray() -> Any:
    try:
        import ray
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("diffsoro.ray needs Ray: pip install 'diffsoro[ray]'") from e
    return ray


def _call(function: Callable[..., R], args: tuple[Any, ...], kwargs: dict[str, Any]) -> R:
    """Runs on a worker: `function(*args, **kwargs)`, object references among the positional
    arguments fetched first (Ray resolves only the task's own top-level arguments)."""
    ray = _ray()
    args = tuple(ray.get(a) if isinstance(a, ray.ObjectRef) else a for a in args)
    return function(*args, **kwargs)


_REMOTE: dict[str, Any] = {}


def map(
    function: Callable[..., R],
    calls: Sequence[tuple[tuple[Any, ...], Mapping[str, Any]]],
    progress: Callable[[int, int], object] | None = None,
) -> list[R]:
    """`[function(*args, **kwargs) for args, kwargs in calls]`, each call a Ray task (the
    function and its arguments are pickled by Ray). Results in the calls' order;
    `progress(done, total)` after each task. A task's exception is raised here (Ray's
    `RayTaskError`, which is also an instance of the original exception's class)."""
    ray = _ray()
    remote = _REMOTE.get("call")
    if remote is None:
        remote = _REMOTE["call"] = ray.remote(_call)
    refs = [remote.remote(function, tuple(args), dict(kwargs)) for args, kwargs in calls]
    total, done = len(refs), 0
    pending = list(refs)
    if progress is not None:
        progress(0, total)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        done += len(ready)
        if progress is not None:
            progress(done, total)
    return list(ray.get(refs))


def rollouts(
    package: ScenePackage,
    cases: Sequence[Mapping[str, Any]],
    steps: int | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> list[dict[str, Any]]:
    """`rollout(package, case, steps)` for each case (a dict of `--set` overrides: E in Pa,
    cable tension in N, …), over Ray: the final-state dicts, in order."""
    ray = _ray()
    ref = ray.put(package)
    return map(rollout, [((ref,), {"overrides": dict(c), "steps": steps}) for c in cases], progress)


def gradients(
    package: ScenePackage,
    cases: Sequence[Mapping[str, Any]],
    params: Sequence[str],
    loss: Loss,
    steps: int | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> list[dict[str, Any]]:
    """`gradient(package, params, loss, case, steps)` for each case (overrides), over Ray:
    [{"loss", "gradient": {name: ∂loss/∂p}}], in order. `loss` must be picklable by Ray
    (a module-level function, or a lambda or closure: cloudpickle ships those)."""
    ray = _ray()
    ref = ray.put(package)
    calls = [((ref, list(params), loss), {"overrides": dict(c), "steps": steps}) for c in cases]
    return map(gradient, calls, progress)


def calibrations(
    package: ScenePackage,
    observations: Sequence[Mapping[str, Any] | str | os.PathLike[str]],
    params: Sequence[str],
    init: Mapping[str, float] | None = None,
    bounds: Mapping[str, tuple[float | None, float | None]] | None = None,
    restarts: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> list[dict[str, Any]]:
    """`diffsoro.calibrate` of the package's scene to each observation (a final-state dict or
    the path of its JSON file, read here on the driver), over Ray: the calibrate reports, in
    order."""
    ray = _ray()
    ref = ray.put(package)
    observed = [
        json.loads(Path(o).read_text()) if isinstance(o, (str, os.PathLike)) else dict(o)
        for o in observations
    ]
    kwargs = {
        "init": None if init is None else dict(init),
        "bounds": None if bounds is None else dict(bounds),
        "restarts": restarts,
        "overrides": None if overrides is None else dict(overrides),
    }
    return map(calibration, [((ref, o, list(params)), kwargs) for o in observed], progress)
