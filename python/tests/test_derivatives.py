"""One-step derivatives against central finite differences of `Simulation.step()` from the
same state, and forward/reverse mode against each other.

Finite differences: x⁺(p) of one step is smooth in E and in a cable's tension (the
linearised step solves one linear system whose matrix and right-hand side are smooth in
both), so the central difference has error O(ε²)·|x'''| + O(u·|x|/ε). With ε = 1e-4·|p| the
truncation term is ~1e-8 relative and round-off (|x| ~ 0.1 m, u ~ 1e-16) far below, so the
agreement asked, ‖J − J_fd‖∞ ≤ 1e-6 ‖J‖∞, has two orders of margin either way."""

import numpy as np

import diffsoro
from conftest import SCENES

RTOL = 1e-6


def _close(j, fd):
    scale = np.abs(j).max()
    assert scale > 0.0
    assert np.abs(j - fd).max() <= RTOL * scale, np.abs(j - fd).max() / scale


def _step_from(scene, body, x, v, actuation=None):
    sim = diffsoro.Simulation(scene)
    if actuation is not None:
        sim.set_actuation(*actuation)
    sim.set_state(body, x, v)
    sim.step()
    return sim.positions(body)


def test_young_modulus_jacobian_against_central_differences():
    path = SCENES / "beam.toml"
    sim = diffsoro.Simulation(diffsoro.Scene.load(path))
    sim.run(3)  # a moving state: v ≠ 0
    x, v = sim.positions("beam"), sim.velocities("beam")
    jac = sim.step_jacobian(["young_modulus:beam"])["young_modulus:beam"]
    e = 1.0e6
    plus, minus = e * (1 + 1e-4), e * (1 - 1e-4)
    xp = _step_from(diffsoro.Scene.load(path, overrides={"soft_body.beam.young_modulus": plus}), "beam", x, v)
    xm = _step_from(diffsoro.Scene.load(path, overrides={"soft_body.beam.young_modulus": minus}), "beam", x, v)
    _close(jac, (xp - xm) / (plus - minus))
    # The simulation was not advanced by the Jacobian.
    assert sim.steps == 3 and np.array_equal(sim.positions("beam"), x)


def test_actuator_jacobian_against_central_differences():
    scene = diffsoro.Scene.load(SCENES / "finger.toml")
    sim = diffsoro.Simulation(scene)
    sim.set_actuation("cable", 0.5)  # N
    sim.run(3)
    x, v = sim.positions("finger"), sim.velocities("finger")
    jac = sim.step_jacobian(["actuator:cable"])["actuator:cable"]
    plus, minus = 0.5 + 5e-5, 0.5 - 5e-5
    xp = _step_from(scene, "finger", x, v, ("cable", plus))
    xm = _step_from(scene, "finger", x, v, ("cable", minus))
    _close(jac, (xp - xm) / (plus - minus))


def test_jvp_matches_step_jacobian_and_vjp_is_its_adjoint():
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "finger.toml"))
    sim.set_actuation("cable", 0.3)
    sim.run(2)
    names = ["young_modulus:finger", "actuator:cable"]
    jac = sim.step_jacobian(names)
    dx, dv = sim.jvp(parameters={"actuator:cable": 1.0})
    assert np.allclose(dx["finger"], jac["actuator:cable"], rtol=1e-12, atol=1e-18)
    # ⟨ȳ, J ẋ⟩ = ⟨Jᵀ ȳ, ẋ⟩ for random directions of (x, v, p).
    rng = np.random.default_rng(7)
    n = sim.scene.node_count("finger")
    xdot, vdot = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    pdot = {"young_modulus:finger": 1e4, "actuator:cable": 0.1}
    xbar, vbar = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    dx, dv = sim.jvp(parameters=pdot, positions={"finger": xdot}, velocities={"finger": vdot})
    back = sim.vjp(positions={"finger": xbar}, velocities={"finger": vbar}, params=names)
    left = np.sum(xbar * dx["finger"]) + np.sum(vbar * dv["finger"])
    right = (
        np.sum(back["positions"]["finger"] * xdot)
        + np.sum(back["velocities"]["finger"] * vdot)
        + sum(back["parameters"][k] * pdot[k] for k in names)
    )
    assert abs(left - right) <= 1e-9 * max(abs(left), abs(right))
