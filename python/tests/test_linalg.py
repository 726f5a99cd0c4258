"""The one-step Jacobian ∂(x⁺, v⁺)/∂(x, v) as a linear operator (`diffsoro.linalg`).

Central finite differences of `Simulation.step()` give every column, independently of the
derivative code; the operator's columns (`matmat`, JVPs) and rows (`rmatmat`, VJPs) must agree
with them to 1e-6 relative (per column, resp. per row, in ‖·‖∞, over the free DOFs).

Fixed nodes are boundary conditions, not inputs (docs/derivatives.md): the operator's rows and
columns for them are zero, while a finite difference that moves a clamped node moves its
neighbours. They are found independently: the beam is clamped at x = 0 (scenes/beam.toml).

Steps: x-columns ε = 1e-7 m; v-columns ε = 3e-4 m/s. Measured on this state, the central
difference's error falls as ε² down to ~1e-8 relative at these steps (x: curvature on the
element size ~1 mm, so 1e-4 m gives ~1e-2, 1e-7 m gives ~1e-8; v: the step is nearly linear
in v and the round-off, ~1e-12/ε, dominates below 1e-4 m/s): worst 4e-8 (x) and 1e-7 (v)
against the 1e-6 asked."""

import sys

import numpy as np
import pytest

import diffsoro
from conftest import SCENES
from diffsoro.linalg import StepJacobian, step_operator

RTOL = 1e-6
COARSE = {"soft_body.beam.mesh": "../meshes/beam_1.msh"}  # 190 nodes


def _moving_beam():
    scene = diffsoro.Scene.load(SCENES / "beam.toml", overrides=COARSE)
    sim = diffsoro.Simulation(scene)
    sim.run(3)  # v ≠ 0
    return scene, sim


def _free_mask(scene):
    rest = diffsoro.Simulation(scene).positions("beam")
    free = np.ones(rest.shape, bool)
    free[rest[:, 0] == 0.0] = False  # the clamp
    return np.concatenate([free.ravel(), free.ravel()])


def test_columns_and_rows_against_central_differences():
    scene, sim = _moving_beam()
    x, v = sim.positions("beam"), sim.velocities("beam")
    op = step_operator(sim)
    m = x.size
    assert op.shape == (2 * m, 2 * m) and op.dtype == np.float64

    def step(dx, dv):
        s = diffsoro.Simulation(scene)
        s.set_state("beam", x + dx, v + dv)
        s.step()
        return np.concatenate([s.positions("beam").ravel(), s.velocities("beam").ravel()])

    free = _free_mask(scene)
    cols = np.where(free)[0]
    fd = np.zeros((2 * m, 2 * m))
    for k in cols:
        eps = 1e-7 if k < m else 3e-4
        d = np.zeros(2 * m)
        d[k] = eps
        dx, dv = d[:m].reshape(-1, 3), d[m:].reshape(-1, 3)
        fd[:, k] = (step(dx, dv) - step(-dx, -dv)) / (2 * eps)
    eye = np.eye(2 * m)
    jac = op.matmat(eye)
    jac_rows = op.rmatmat(eye).T
    f, j, jr = (a[np.ix_(free, free)] for a in (fd, jac, jac_rows))
    scale_c = np.abs(f).max(axis=0)
    scale_r = np.abs(f).max(axis=1)
    assert scale_c.min() > 0 and scale_r.min() > 0
    assert (np.abs(j - f).max(axis=0) / scale_c).max() <= RTOL
    assert (np.abs(jr - f).max(axis=1) / scale_r).max() <= RTOL
    # Boundary conditions: zero rows and columns.
    assert not jac[~free].any() and not jac[:, ~free].any()
    # matvec is a column.
    k = cols[len(cols) // 2]
    assert np.array_equal(op.matvec(eye[:, k]), jac[:, k])


def _adjointness(op, rng):
    u = rng.standard_normal(op.shape[0])
    w = rng.standard_normal(op.shape[1])
    left, right = u @ op.matvec(w), op.rmatvec(u) @ w
    assert abs(left - right) <= 1e-10 * max(abs(left), abs(right))


def test_rmatvec_is_the_adjoint_of_matvec():
    _, sim = _moving_beam()
    rng = np.random.default_rng(11)
    _adjointness(step_operator(sim), rng)
    # A mixed scene: a robot's joint with the soft pad it carries (lift_pad.toml).
    pad = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "lift_pad.toml"))
    pad.run(10)
    op = step_operator(pad, bodies=["pad", "lift"])
    assert op.shape[0] == 2 * (3 * pad.scene.node_count("pad") + 1)
    _adjointness(op, rng)


def test_scipy_operator_and_the_fallback_agree(monkeypatch):
    scipy_linalg = pytest.importorskip("scipy.sparse.linalg")
    _, sim = _moving_beam()
    op = step_operator(sim)
    assert isinstance(op, scipy_linalg.LinearOperator)
    rng = np.random.default_rng(5)
    w = rng.standard_normal(op.shape[1])
    W = rng.standard_normal((op.shape[1], 2))
    monkeypatch.setitem(sys.modules, "scipy.sparse.linalg", None)  # import fails
    duck = step_operator(sim)
    assert type(duck) is StepJacobian and duck.shape == op.shape and duck.dtype == op.dtype
    assert np.array_equal(op @ w, duck @ w)
    assert np.array_equal(op.H @ w, duck.T @ w)
    assert np.array_equal(op.matmat(W), duck.matmat(W))
    assert np.array_equal(op.rmatmat(W), duck.rmatmat(W))
    xs, vs = duck.unpack(w)
    assert xs["beam"].shape == (sim.scene.node_count("beam"), 3)
    assert np.array_equal(duck.pack(xs, vs), w)


def test_errors():
    _, sim = _moving_beam()
    with pytest.raises(ValueError, match="no_such_body"):
        step_operator(sim, bodies=["no_such_body"])
    op = step_operator(sim)
    with pytest.raises(ValueError):  # a wrong length
        op.matvec(np.zeros(3))
    sim.step()
    with pytest.raises(RuntimeError, match="stepped"):
        op.matvec(np.zeros(op.shape[1]))
