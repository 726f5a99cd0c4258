"""`Simulation.set_parameters`, `Simulation.record` and `Tape.adjoint`: the recorded run equals
`run()` bit for bit, parameters set in a simulation equal the same values given as scene
overrides bit for bit, and the adjoint's gradients equal central finite differences of whole
runs.

Finite differences: the final positions after 4 steps of the coarse beam (one Newton iteration
per step, no contact) are smooth in E, ν, the cable's tension and the start velocity. Relative
steps 1e-4 of each parameter (and 3e-4 m/s for the velocity) leave a truncation error ~1e-8
and round-off below it (measured: ≤ 2e-8 relative), so 1e-6 relative has fifty-fold margin."""

import numpy as np
import pytest

import diffsoro
from conftest import SCENES
from scenes_small import PARAMS, VALUES, beam_with_cable

STEPS = 4


def test_record_equals_run_and_set_parameters_equal_overrides():
    scene = diffsoro.Scene.load(SCENES / "beam.toml")
    a, b = diffsoro.Simulation(scene), diffsoro.Simulation(scene)
    a.run(5)
    tape = b.record(5)
    assert tape.steps == 5 and b.steps == 5 and b.time == a.time
    assert a.final_state() == b.final_state()
    over = diffsoro.Scene.load(
        SCENES / "finger.toml",
        overrides={"soft_body.finger.young_modulus": 7e5, "soft_body.finger.poisson_ratio": 0.35,
                   "soft_body.finger.cable.cable.force": 0.4},
    )
    c = diffsoro.Simulation(over)
    c.run(3)
    d = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "finger.toml"))
    d.set_parameters({"young_modulus:finger": 7e5, "poisson_ratio:finger": 0.35, "actuator:cable": 0.4})
    d.run(3)
    assert c.final_state() == d.final_state()


def _loss_and_cotangent(x, weights):
    return float(np.sum(weights * x)), weights


def test_adjoint_against_central_differences():
    scene = beam_with_cable()
    n = scene.node_count("beam")
    weights = np.random.default_rng(2).standard_normal((n, 3))

    def final(values, dv=None):
        sim = diffsoro.Simulation(scene)
        sim.set_parameters(dict(zip(PARAMS, values)))
        if dv is not None:
            sim.set_state("beam", sim.positions("beam"), sim.velocities("beam") + dv)
        sim.run(STEPS)
        return np.sum(weights * sim.positions("beam"))

    sim = diffsoro.Simulation(scene)
    sim.set_parameters(dict(zip(PARAMS, VALUES)))
    tape = sim.record(STEPS)
    back = tape.adjoint(positions={"beam": weights}, params=PARAMS)
    for i, name in enumerate(PARAMS):
        h = 1e-4 * VALUES[i]
        up, down = list(VALUES), list(VALUES)
        up[i] += h
        down[i] -= h
        fd = (final(up) - final(down)) / (2 * h)
        assert abs(back["parameters"][name] - fd) <= 1e-6 * abs(fd), name
    # Along a start velocity direction (free nodes only: the clamp's are boundary conditions).
    rest = diffsoro.Simulation(scene).positions("beam")
    direction = np.random.default_rng(4).standard_normal((n, 3))
    direction[rest[:, 0] == 0.0] = 0.0
    eps = 3e-4
    fd = (final(VALUES, eps * direction) - final(VALUES, -eps * direction)) / (2 * eps)
    ad = np.sum(back["velocities"]["beam"] * direction)
    assert abs(ad - fd) <= 1e-6 * abs(fd)
    # A second sweep (records recomputed), and a tape that kept no record, give the same
    # numbers.
    again = tape.adjoint(positions={"beam": weights}, params=PARAMS)
    assert again["parameters"] == back["parameters"]
    assert np.array_equal(again["velocities"]["beam"], back["velocities"]["beam"])
    lean = diffsoro.Simulation(scene)
    lean.set_parameters(dict(zip(PARAMS, VALUES)))
    bare = lean.record(STEPS, memory_limit=0).adjoint(positions={"beam": weights}, params=PARAMS)
    assert bare["parameters"] == back["parameters"]
    assert np.array_equal(bare["positions"]["beam"], back["positions"]["beam"])


def test_errors():
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "beam.toml"))
    with pytest.raises(ValueError, match="young_modulus:nope"):
        sim.set_parameters({"young_modulus:nope": 1.0})
    with pytest.raises(ValueError, match="young_modulus"):
        sim.set_parameters({"young_modulus:beam": -1.0})
    tape = sim.record(1)
    with pytest.raises(ValueError, match="nope"):
        tape.adjoint(positions={"nope": np.zeros((3, 3))})
    with pytest.raises(ValueError):
        tape.adjoint(positions={"beam": np.zeros((3, 3))})  # wrong node count
