"""`diffsoro.torch.rollout` along a trajectory: `record="markers" | "effectors" | "nodes"`
returns the recorded points at every `every`-th state, equal to `Tape.trajectory` bit for bit,
and `loss.backward()` of a loss of them gives, for a knots tensor and a parameter, the numbers
`Tape.adjoint(series=...)` gives for that loss's cotangents (formed here by hand in numpy);
without `record` the final positions, with the knots' gradient too. Bad arguments are one-line
ValueErrors naming the argument. Skipped without torch (the `torch` extra).

The adjoint itself is checked against central differences of forward runs in
test_trajectory_loss.py."""

import numpy as np
import pytest

import diffsoro
from trajectory_problems import STEPS, beam

torch = pytest.importorskip("torch")
import diffsoro.torch as dtorch  # noqa: E402

EVERY = 6


def knots_tensor(p):
    return torch.tensor(np.stack([p.knots["pull"], p.knots["side"]], axis=1), requires_grad=True)


def recorded(p):
    sim = diffsoro.Simulation(p.scene)
    sim.set_parameters({"young_modulus:beam": p.E})
    return sim.record(STEPS, knots=p.knots, knot_times=p.times)


@pytest.mark.parametrize("quantity", ["markers", "effectors", "nodes"])
def test_a_loss_of_the_recorded_path_backpropagates_as_the_tape_s_adjoint(quantity):
    p = beam()
    k = knots_tensor(p)
    e = torch.tensor([p.E], dtype=torch.float64, requires_grad=True)
    path = dtorch.rollout(
        p.scene, ["young_modulus:beam"], e, STEPS, record=quantity, every=EVERY,
        knots=k, knot_times=p.times, actuators=["pull", "side"],
    )
    steps = list(range(EVERY, STEPS + 1, EVERY))
    tape = recorded(p)
    expected = tape.trajectory(quantity, steps)
    assert tuple(path.shape) == expected.shape and path.shape[0] == STEPS // EVERY
    assert np.array_equal(path.detach().numpy(), expected)
    # L = Σ_i c_i ‖path_i − y‖² with weights growing along the run: ∂L/∂path_i = 2 c_i (path_i − y).
    y = expected[0] + 1e-3
    c = np.linspace(0.5, 2.0, len(steps))
    loss = (torch.tensor(c)[:, None, None] * (path - torch.tensor(y)) ** 2).sum()
    loss.backward()
    rows = 2 * c[:, None, None] * (expected - y)
    if quantity == "nodes":
        series = {s: {"positions": {"beam": rows[i]}} for i, s in enumerate(steps)}
    else:
        names = p.scene.marker_names if quantity == "markers" else p.scene.effectors
        series = {s: {quantity: {n: rows[i, m] for m, n in enumerate(names)}} for i, s in enumerate(steps)}
    back = tape.adjoint(params=["young_modulus:beam"], series=series)
    assert e.grad.tolist() == [back["parameters"]["young_modulus:beam"]]
    assert np.array_equal(k.grad.numpy(), np.stack([back["knots"]["pull"], back["knots"]["side"]], axis=1))


def test_without_record_the_final_positions_with_the_knots_gradient():
    p = beam()
    k = knots_tensor(p)
    x = dtorch.rollout(p.scene, [], torch.zeros(0, dtype=torch.float64), STEPS, knots=k,
                       knot_times=torch.tensor(p.times), actuators=["pull", "side"])
    sim = diffsoro.Simulation(p.scene)
    tape = sim.record(STEPS, knots=p.knots, knot_times=p.times)
    assert np.array_equal(x.detach().numpy(), sim.positions("beam"))
    w = np.random.default_rng(1).standard_normal(x.shape)
    (x * torch.tensor(w)).sum().backward()
    back = tape.adjoint(positions={"beam": w})
    assert np.array_equal(k.grad.numpy(), np.stack([back["knots"]["pull"], back["knots"]["side"]], axis=1))


def test_bad_arguments_are_one_line_value_errors_naming_them():
    p = beam()
    v = torch.zeros(0, dtype=torch.float64)
    k = knots_tensor(p)
    t = p.times
    cases = [
        (dict(record="marker"), "rollout record: 'marker' is not None"),
        (dict(record="nodes", every=0), "rollout every: 0 is not a whole number"),
        (dict(record="nodes", every=STEPS + 1), "rollout every: 61 is more than the 60 steps"),
        (dict(knots=k, knot_times=t), "rollout actuators: is needed with knots"),
        (dict(knot_times=t, actuators=["pull"]), "rollout knots: is needed with knot_times"),
        (dict(knots=k, knot_times=t, actuators=["pull", "nope"]), r"rollout actuators\[1\]: the scene has no actuator `nope`"),
        (dict(knots=k, knot_times=t, actuators=["pull"]), r"rollout knots: has shape \(4, 2\), expected \(4, 1\)"),
        (dict(knots=k, knot_times=t[:3], actuators=["pull", "side"]), r"rollout knots: has shape \(4, 2\), expected \(3, 2\)"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message) as raised:
            dtorch.rollout(p.scene, [], v, STEPS, **kwargs)
        assert "\n" not in str(raised.value)


def test_the_function_still_takes_its_original_four_arguments():
    p = beam()
    e = torch.tensor([p.E], dtype=torch.float64, requires_grad=True)
    x = dtorch.Rollout.apply(e, p.scene, ("young_modulus:beam",), 5)
    y = dtorch.rollout(p.scene, ["young_modulus:beam"], e, 5)
    assert torch.equal(x, y)
    x.sum().backward()
    assert e.grad is not None and e.grad.shape == (1,)
