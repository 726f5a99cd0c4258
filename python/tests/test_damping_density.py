"""The soft bodies' damping and density parameters by name, `rayleigh_mass:BODY` (α, 1/s),
`rayleigh_stiffness:BODY` (β, s) and `density:BODY` (ρ, kg/m³), through the bindings:
`step_jacobian` against central differences of one step of scenes loaded with the value moved
by its override, `jvp` equal to it and `vjp` its adjoint, `Tape.adjoint` against the forward
tangents chained by `jvp` over a run, `set_parameters` equal to the override bit for bit,
`diffsoro.calibrate` recovering β, and the errors (tests/diff_damping_density.rs checks the
same derivatives against Richardson-extrapolated differences in Rust).

Finite differences: x⁺ of one step is smooth in α, β, ρ (they enter the matrix A and the
right-hand side of the step's one linear solve), and the central difference with ε = 1e-4 |p|
has a truncation error ~1e-8 relative, far below the 1e-6 asked."""

import numpy as np
import pytest

import diffsoro
from conftest import SCENES

# The beam with both Rayleigh coefficients nonzero.
DAMPED = {"soft_body.beam.rayleigh_mass": 0.5, "soft_body.beam.rayleigh_stiffness": 0.01}
VALUES = {"rayleigh_mass:beam": 0.5, "rayleigh_stiffness:beam": 0.01, "density:beam": 1000.0}


def _scene(**extra):
    return diffsoro.Scene.load(SCENES / "beam.toml", overrides={**DAMPED, **extra})


def _key(name):
    return "soft_body.beam." + name.split(":")[0]


def test_step_jacobian_against_central_differences_and_jvp_vjp():
    sim = diffsoro.Simulation(_scene())
    sim.run(3)  # a moving state
    x, v = sim.positions("beam"), sim.velocities("beam")
    names = list(VALUES)
    jac = sim.step_jacobian(names)
    for name, value in VALUES.items():
        plus, minus = value * (1 + 1e-4), value * (1 - 1e-4)

        def step(p):
            s = diffsoro.Simulation(_scene(**{_key(name): p}))
            s.set_state("beam", x, v)
            s.step()
            return s.positions("beam")

        fd = (step(plus) - step(minus)) / (plus - minus)
        scale = np.abs(jac[name]).max()
        assert scale > 0.0
        assert np.abs(jac[name] - fd).max() <= 1e-6 * scale, (name, np.abs(jac[name] - fd).max() / scale)
        dx, _ = sim.jvp(parameters={name: 1.0})
        # (solved alone rather than beside two other columns: equal to round-off)
        assert np.abs(dx["beam"] - jac[name]).max() <= 1e-12 * scale
    # ⟨w, J u⟩ = ⟨Jᵀ w, u⟩ along the three parameters at once.
    rng = np.random.default_rng(5)
    n = sim.scene.node_count("beam")
    pdot = {"rayleigh_mass:beam": 0.3, "rayleigh_stiffness:beam": 0.002, "density:beam": 40.0}
    xbar, vbar = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    dx, dv = sim.jvp(parameters=pdot)
    back = sim.vjp(positions={"beam": xbar}, velocities={"beam": vbar}, params=names)
    left = np.sum(xbar * dx["beam"]) + np.sum(vbar * dv["beam"])
    right = sum(back["parameters"][k] * pdot[k] for k in names)
    assert abs(left - right) <= 1e-9 * max(abs(left), abs(right))


def test_tape_adjoint_equals_the_forward_tangents_of_the_run():
    names = list(VALUES)
    steps = 10
    sim = diffsoro.Simulation(_scene())
    # Forward: d(x, v after `steps`)/dp by jvp chained over the run.
    forward = {}
    for name in names:
        s = diffsoro.Simulation(_scene())
        dx, dv = None, None
        for _ in range(steps):
            dx, dv = s.jvp(parameters={name: 1.0}, positions=dx, velocities=dv)
            s.step()
        forward[name] = (dx["beam"], dv["beam"])
    rng = np.random.default_rng(9)
    n = sim.scene.node_count("beam")
    xbar, vbar = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    tape = sim.record(steps)
    grad = tape.adjoint(positions={"beam": xbar}, velocities={"beam": vbar}, params=names)["parameters"]
    for name in names:
        dx, dv = forward[name]
        expected = np.sum(xbar * dx) + np.sum(vbar * dv)
        assert abs(grad[name] - expected) <= 1e-10 * abs(expected), (name, grad[name], expected)


def test_set_parameters_equals_the_override_bit_for_bit():
    for name, value in [("rayleigh_mass:beam", 1.25), ("rayleigh_stiffness:beam", 0.003),
                        ("density:beam", 1234.5)]:
        a = diffsoro.Simulation(_scene())
        a.set_parameters({name: value})
        a.run(5)
        b = diffsoro.Simulation(_scene(**{_key(name): value}))
        b.run(5)
        assert np.array_equal(a.positions("beam"), b.positions("beam")), name
        assert np.array_equal(a.velocities("beam"), b.velocities("beam")), name


def test_calibrate_recovers_the_rayleigh_stiffness():
    # The coarse beam's first downswing (10 steps), where the sag falls monotonically with β.
    base = {"soft_body.beam.mesh": "../meshes/beam_1.msh", "simulation.steps": 10}
    truth = diffsoro.Simulation(diffsoro.Scene.load(
        SCENES / "beam.toml", overrides={**base, "soft_body.beam.rayleigh_stiffness": 0.02}))
    truth.run()
    report = diffsoro.calibrate(
        diffsoro.Scene.load(SCENES / "beam.toml", overrides=base),
        observed=truth.final_state(),
        params=["rayleigh_stiffness:beam"],
        init={"rayleigh_stiffness:beam": 0.06},
    )
    assert report["converged"]
    assert abs(report["params"]["rayleigh_stiffness:beam"] / 0.02 - 1.0) < 1e-6


def test_bad_values_and_a_uniform_mass_density_are_value_errors(tmp_path):
    sim = diffsoro.Simulation(_scene())
    for name, value in [("rayleigh_mass:beam", -1.0), ("rayleigh_stiffness:beam", float("nan")),
                        ("density:beam", 0.0)]:
        with pytest.raises(ValueError, match=name):
            sim.set_parameters({name: value})
    text = (SCENES / "beam.toml").read_text()
    text = text.replace("density = 1000.0", "total_mass = 0.01").replace(
        'mass = "lumped"', 'mass = "uniform"')
    uniform = diffsoro.Simulation(diffsoro.Scene.from_toml(text, base_dir=SCENES))
    with pytest.raises(ValueError, match="`beam` has mass = \"uniform\""):
        uniform.step_jacobian(["density:beam"])
    uniform.step_jacobian(["rayleigh_mass:beam"])  # α of a uniform mass is a parameter
