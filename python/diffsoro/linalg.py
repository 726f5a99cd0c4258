"""One step's Jacobian with respect to the state (x, v) as a linear operator.

`step_operator(sim)` is J = ∂(x⁺, v⁺)/∂(x, v) of one step of `sim` from its current state,
applied matrix-free: `matvec` is `Simulation.jvp` (forward mode), `rmatvec` is
`Simulation.vjp` (reverse mode). Nothing is computed here: each product is one step's
derivative in the compiled module (the step itself is retaken on a copy of the state for each
product, the simulation is not advanced).

Vector layout (length 2m): the positions block then the velocities block; in each block the
chosen bodies in order, a soft body's (n, 3) array flattened row by row (node i's x, y, z at
3i, 3i+1, 3i+2; mesh-file node order), a rigid body's or robot's (nv,) tangent. Units: the
x-x and v-v blocks are dimensionless, the x-v block in s, the v-x block in 1/s.

With SciPy installed the operator is a `scipy.sparse.linalg.LinearOperator` (so
`scipy.sparse.linalg.gmres`, `eigs`, `svds`, `aslinearoperator`… take it); without, an object
with the same `shape`, `dtype`, `matvec`, `rmatvec`, `matmat`, `rmatmat`, `dot`, `@` and `T`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ._diffsoro import Simulation

__all__ = ["StepJacobian", "step_operator"]

_Array = npt.NDArray[np.float64]


class StepJacobian:
    """J = ∂(x⁺, v⁺)/∂(x, v) of one step from a simulation's current state, matrix-free
    (see the module's docstring for the layout and units). Square: shape (2m, 2m), float64.

    The products are taken at the simulation's state when they are called: the operator
    refuses (RuntimeError) to work once the simulation has stepped since it was made."""

    def __init__(self, sim: Simulation, bodies: Sequence[str] | None = None):
        scene = sim.scene
        names = list(scene.bodies) if bodies is None else [str(b) for b in bodies]
        if not names:
            raise ValueError("step_operator: no body given (the scene has no soft body)")
        if len(set(names)) != len(names):
            raise ValueError(f"step_operator: bodies {names} name a body twice")
        soft = set(scene.bodies)
        self._sim = sim
        self._steps = sim.steps
        self.bodies: list[str] = names
        # Per body: the shape of its block ((n, 3) soft, (nv,) rigid; rigid_v raises a
        # ValueError naming an unknown body).
        self._shapes: list[tuple[int, ...]] = [
            (scene.node_count(b), 3) if b in soft else (sim.rigid_v(b).size,) for b in names
        ]
        sizes = [int(np.prod(s)) for s in self._shapes]
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        m = int(self._offsets[-1])
        self.shape: tuple[int, int] = (2 * m, 2 * m)
        self.dtype = np.dtype(np.float64)

    # --- layout -------------------------------------------------------------------------

    def unpack(self, vector: npt.ArrayLike) -> tuple[dict[str, _Array], dict[str, _Array]]:
        """A vector of length 2m as ({body: positions block}, {body: velocities block}),
        (n, 3) arrays for soft bodies and (nv,) for rigid ones."""
        w = np.asarray(vector, dtype=np.float64).reshape(-1)
        if w.size != self.shape[1]:
            raise ValueError(f"step_operator: a vector of length {w.size}, expected {self.shape[1]}")
        m = self.shape[1] // 2
        halves = []
        for block in (w[:m], w[m:]):
            halves.append(
                {
                    b: block[self._offsets[i] : self._offsets[i + 1]].reshape(self._shapes[i]).copy()
                    for i, b in enumerate(self.bodies)
                }
            )
        return halves[0], halves[1]

    def pack(self, positions: dict[str, Any], velocities: dict[str, Any]) -> _Array:
        """The vector of length 2m of per-body arrays (bodies of the operator only; each must
        be given)."""
        parts = [np.asarray(positions[b], dtype=np.float64).reshape(-1) for b in self.bodies]
        parts += [np.asarray(velocities[b], dtype=np.float64).reshape(-1) for b in self.bodies]
        return np.concatenate(parts)

    # --- products -----------------------------------------------------------------------

    def _check(self) -> None:
        if self._sim.steps != self._steps:
            raise RuntimeError(
                f"step_operator: the simulation stepped since the operator was made (at step "
                f"{self._steps}, now {self._sim.steps}): make a new one"
            )

    def matvec(self, w: npt.ArrayLike) -> _Array:
        """J w: the tangent of (x⁺, v⁺) along the state direction w (one JVP)."""
        self._check()
        wx, wv = self.unpack(w)
        dx, dv = self._sim.jvp(positions=wx, velocities=wv)
        return self.pack(dx, dv)

    def rmatvec(self, u: npt.ArrayLike) -> _Array:
        """Jᵀ u: the cotangent of (x, v) for the cotangent u of (x⁺, v⁺) (one VJP)."""
        self._check()
        ux, uv = self.unpack(u)
        back = self._sim.vjp(positions=ux, velocities=uv)
        return self.pack(back["positions"], back["velocities"])

    def matmat(self, W: npt.ArrayLike) -> _Array:
        """J W, column by column (one JVP each)."""
        W = np.asarray(W, dtype=np.float64)
        if W.ndim != 2 or W.shape[0] != self.shape[1]:
            raise ValueError(f"step_operator: matmat of shape {W.shape}, expected ({self.shape[1]}, k)")
        return np.column_stack([self.matvec(W[:, j]) for j in range(W.shape[1])]) if W.shape[1] else np.zeros((self.shape[0], 0))

    def rmatmat(self, U: npt.ArrayLike) -> _Array:
        """Jᵀ U, column by column (one VJP each)."""
        U = np.asarray(U, dtype=np.float64)
        if U.ndim != 2 or U.shape[0] != self.shape[0]:
            raise ValueError(f"step_operator: rmatmat of shape {U.shape}, expected ({self.shape[0]}, k)")
        return np.column_stack([self.rmatvec(U[:, j]) for j in range(U.shape[1])]) if U.shape[1] else np.zeros((self.shape[1], 0))

    def dot(self, x: npt.ArrayLike) -> _Array:
        """J x for a vector (matvec) or a matrix (matmat)."""
        x = np.asarray(x, dtype=np.float64)
        return self.matvec(x) if x.ndim == 1 else self.matmat(x)

    def __matmul__(self, x: npt.ArrayLike) -> _Array:
        return self.dot(x)

    @property
    def T(self) -> _Transposed:
        """Jᵀ (matvec ↔ rmatvec)."""
        return _Transposed(self)

    def __repr__(self) -> str:
        return f"<{self.shape[0]}x{self.shape[1]} StepJacobian of {self.bodies} at step {self._steps}>"


class _Transposed:
    """Jᵀ of a StepJacobian (without SciPy)."""

    def __init__(self, j: StepJacobian):
        self._j = j
        self.shape = (j.shape[1], j.shape[0])
        self.dtype = j.dtype

    def matvec(self, u: npt.ArrayLike) -> _Array:
        return self._j.rmatvec(u)

    def rmatvec(self, w: npt.ArrayLike) -> _Array:
        return self._j.matvec(w)

    def matmat(self, U: npt.ArrayLike) -> _Array:
        return self._j.rmatmat(U)

    def rmatmat(self, W: npt.ArrayLike) -> _Array:
        return self._j.matmat(W)

    def dot(self, x: npt.ArrayLike) -> _Array:
        x = np.asarray(x, dtype=np.float64)
        return self.matvec(x) if x.ndim == 1 else self.matmat(x)

    def __matmul__(self, x: npt.ArrayLike) -> _Array:
        return self.dot(x)

    @property
    def T(self) -> StepJacobian:
        return self._j


def _scipy_operator(core: StepJacobian) -> Any:
    """`core` as a scipy.sparse.linalg.LinearOperator, or None without SciPy."""
    try:
        from scipy.sparse.linalg import LinearOperator
    except ImportError:
        return None

    class StepLinearOperator(LinearOperator):
        """A StepJacobian as a SciPy LinearOperator (same products, `pack`/`unpack`)."""

        def __init__(self, core: StepJacobian):
            self.core = core
            self.bodies = core.bodies
            self.pack = core.pack
            self.unpack = core.unpack
            super().__init__(core.dtype, core.shape)

        def _matvec(self, x: Any) -> _Array:
            return self.core.matvec(x)

        def _rmatvec(self, x: Any) -> _Array:
            return self.core.rmatvec(x)

        def _matmat(self, X: Any) -> _Array:
            return self.core.matmat(X)

        def _rmatmat(self, X: Any) -> _Array:
            return self.core.rmatmat(X)

    return StepLinearOperator(core)


def step_operator(sim: Simulation, bodies: Sequence[str] | None = None) -> Any:
    """J = ∂(x⁺, v⁺)/∂(x, v) of one step of `sim` from its current state, as a linear
    operator of shape (2m, 2m), float64: a `scipy.sparse.linalg.LinearOperator` when SciPy
    is importable, otherwise a `StepJacobian` (same methods). `matvec` is one JVP,
    `rmatvec` one VJP, `matmat`/`rmatmat` one per column.

    `bodies`: the soft bodies, rigid bodies or robots whose states form the vector (default:
    every soft body, in scene order); the others' tangents are held at zero. Layout and
    units: see `diffsoro.linalg`. `op.pack(positions, velocities)` and `op.unpack(vector)`
    convert between vectors and per-body dicts. Raises ValueError for an unknown body, and
    (at the product) RuntimeError once the simulation has stepped since."""
    core = StepJacobian(sim, bodies)
    wrapped = _scipy_operator(core)
    return core if wrapped is None else wrapped
