"""`diffsoro.torch.rollout`: a loss on the final positions backpropagates to E, ν and a cable's
tension through the trajectory's adjoint; `torch.autograd.gradcheck` (float64) compares it with
torch's own central differences. Skipped without torch (the `torch` extra).

gradcheck runs in scaled units, p = p₀ ⊙ z with z ≈ 1 (the scaling done in torch), so that its
step eps = 1e-4 is a relative step of every parameter. Measured on this function, the central
difference then differs from the adjoint by ≤ 3e-10 in absolute (|J| ≤ 0.1: ~3e-9 relative;
eps = 1e-6 is worse, 2e-8, round-off); atol = 1e-7 (1e-6 of |J|) keeps a 300-fold margin."""

import numpy as np
import pytest

import diffsoro
from scenes_small import PARAMS, VALUES, beam_with_cable

torch = pytest.importorskip("torch")
import diffsoro.torch as dtorch  # noqa: E402

STEPS = 4


def test_gradcheck_float64():
    scene = beam_with_cable()
    n = scene.node_count("beam")
    scale = torch.tensor(VALUES, dtype=torch.float64)
    # A few fixed projections of the final positions keep the backward calls few.
    w = torch.tensor(np.random.default_rng(0).standard_normal((3 * n, 4)), dtype=torch.float64)

    def f(z):
        return dtorch.rollout(scene, PARAMS, z * scale, steps=STEPS).reshape(-1) @ w

    z = torch.ones(3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(f, (z,), eps=1e-4, atol=1e-7, rtol=0.0)


def test_loss_backward_equals_the_tape_adjoint_and_the_forward_equals_run():
    scene = beam_with_cable()
    p = torch.tensor(VALUES, dtype=torch.float64, requires_grad=True)
    x = dtorch.rollout(scene, PARAMS, p, steps=STEPS)
    sim = diffsoro.Simulation(scene)
    sim.set_parameters(dict(zip(PARAMS, VALUES)))
    sim.run(STEPS)
    assert np.array_equal(x.detach().numpy(), sim.positions("beam"))
    target = torch.zeros_like(x)
    loss = ((x - target) ** 2).sum()
    loss.backward()
    tape_sim = diffsoro.Simulation(scene)
    tape_sim.set_parameters(dict(zip(PARAMS, VALUES)))
    tape = tape_sim.record(STEPS)
    back = tape.adjoint(positions={"beam": 2 * sim.positions("beam")}, params=PARAMS)
    assert p.grad.tolist() == [back["parameters"][k] for k in PARAMS]


def test_errors():
    scene = beam_with_cable()
    with pytest.raises(ValueError, match="2 values for 3 parameters"):
        dtorch.rollout(scene, PARAMS, torch.ones(2, dtype=torch.float64), steps=1)
    with pytest.raises(ValueError, match="young_modulus"):
        dtorch.rollout(scene, PARAMS, torch.tensor([-1.0, 0.3, 0.0], dtype=torch.float64), steps=1)
