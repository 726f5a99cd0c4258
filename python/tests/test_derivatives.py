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


def test_mixed_steps_carry_the_rigid_tangents_by_name():
    """The pad of lift_pad.toml hangs from a robot's palm (attachment): the palm's tangents,
    (nv,) arrays keyed by the robot's name, go in and out of jvp/vjp with the pad's. The JVP
    along the palm's velocity equals central differences of one step (the prismatic joint's
    q is linear), and vjp is jvp's adjoint for random directions of everything."""
    # kd = 5 N·s/m: with the scene's 20, h kd equals the palm's mass and its velocity after a
    # step no longer depends on its velocity before (nothing to differentiate along it).
    text = (SCENES / "lift_pad.toml").read_text().replace("kd = [20.0]", "kd = [5.0]")
    text += "\n[contact]\ntolerance = 1e-12\nmax_iterations = 100000\n"
    scene = diffsoro.Scene.from_toml(text, base_dir=SCENES)
    sim = diffsoro.Simulation(scene)
    sim.run(10)
    x, v = sim.positions("pad"), sim.velocities("pad")
    q, qd = sim.rigid_q("lift"), sim.rigid_v("lift")
    dx, dv = sim.jvp(velocities={"lift": [1.0]})
    assert dx["lift"].shape == (1,) and dv["pad"].shape == x.shape

    def step_from(velocity):
        s = diffsoro.Simulation(scene)
        s.set_state("pad", x, v)
        s.set_rigid_state("lift", q, [velocity])
        s.step()
        return s.rigid_q("lift"), s.positions("pad")

    eps = 1e-6
    (qp, xp), (qm, xm) = step_from(qd[0] + eps), step_from(qd[0] - eps)
    _close(dx["lift"], (qp - qm) / (2 * eps))
    _close(dx["pad"], (xp - xm) / (2 * eps))
    rng = np.random.default_rng(3)
    n = sim.scene.node_count("pad")
    u = {"pad": rng.standard_normal((n, 3)), "lift": rng.standard_normal(1)}
    w = {"pad": rng.standard_normal((n, 3)), "lift": rng.standard_normal(1)}
    ux = {k: a * 1e-3 for k, a in u.items()}
    dx, dv = sim.jvp(positions=ux, velocities=u)
    back = sim.vjp(positions=w, velocities=w)
    left = sum(np.sum(w[k] * dx[k]) + np.sum(w[k] * dv[k]) for k in w)
    right = sum(
        np.sum(back["positions"][k] * ux[k]) + np.sum(back["velocities"][k] * u[k]) for k in u
    )
    assert abs(left - right) <= 1e-9 * max(abs(left), abs(right))
