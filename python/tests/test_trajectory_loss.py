"""Losses along a trajectory: `Simulation.record(knots=, knot_times=)`, `Tape.trajectory` and
`Tape.adjoint(series=...)`.

The gradients of a tracking loss summed over 60 steps (markers, effectors, node positions and
velocities at several states, the start state's marker included) with respect to every knot
of two cables, E and the start state are checked against central finite differences of the
loss recomputed by forward runs that do not use the tape: each step sets the inputs
interpolated by numpy at the step's end time with `set_actuation` and takes `step()`, and the
markers and effectors are read with `Simulation.markers` / `Simulation.effector`. Two scenes:
the coarse damped beam pulled by two cables (no contact), and a soft block resting in
sticking contact on a floor (μ = 0.9, 25 contacts every step) pulled across its top, where
every perturbed run keeps the same contact count at every step (no mode switch).

Difference steps, measured (relative error of the difference against the adjoint): knots
1e-3 N → ≤ 1e-6 (truncation), 1e-4 N → ≤ 1e-8, 1e-6 N → ≤ 2e-7 (round-off); E: 10 Pa (1e-5
relative on the beam, 1e-4 on the block) → ≤ 1e-8; the start state along a direction of
1e-3 m and 1e-2 m/s per node: 1e-4 → 2e-7 (beam) and 2e-9 (block), 1e-5 → below 1e-8 for
both. The steps below sit in those windows, so 1e-6 relative holds with margin."""

import numpy as np
import pytest

import diffsoro
from conftest import SCENES
from trajectory_problems import BEAM, STEPS, Tracking, beam, block, hat


def central(f, h):
    return (f(h) - f(-h)) / (2 * h)


def check(p: Tracking, knot_step, e_step, state_step, contacts=None):
    g = p.gradient()
    assert p.loss() > 0.0

    def close(name, got, fd):
        assert abs(got - fd) <= 1e-6 * abs(fd), f"{name}: adjoint {got:e}, differences {fd:e}"

    def kept(run):
        """The loss of a perturbed run, checking it meets the same contacts at every step."""
        if contacts is None:
            return run(None)
        seen = []
        value = run(seen)
        assert seen == contacts, "a contact changed mode in the difference window"
        return value

    for name, q in p.knots.items():
        for j in range(len(q)):

            def moved(h, name=name, j=j):
                k = {a: v.copy() for a, v in p.knots.items()}
                k[name][j] += h
                return kept(lambda seen: p.loss(knots=k, contacts=seen))

            close(f"knot {name}[{j}]", g["knots"][name][j], central(moved, knot_step))
    fd = central(lambda h: kept(lambda seen: p.loss(E=p.E + h, contacts=seen)), e_step)
    close("E", g["parameters"][f"young_modulus:{p.body}"], fd)
    fd = central(lambda h: kept(lambda seen: p.loss(d=h, contacts=seen)), state_step)
    ad = np.sum(g["positions"][p.body] * p.dx) + np.sum(g["velocities"][p.body] * p.dv)
    close("start state", ad, fd)


def test_a_tracking_loss_over_60_beam_steps_has_the_gradient_its_differences_give():
    check(beam(), knot_step=1e-4, e_step=10.0, state_step=1e-5)


def test_a_tracking_loss_through_sticking_contact_has_the_gradient_its_differences_give():
    p = block()
    contacts = []
    p.loss(contacts=contacts)
    assert min(contacts) == max(contacts) == 25
    check(p, knot_step=1e-4, e_step=10.0, state_step=1e-5, contacts=contacts)


def test_a_run_under_knots_is_the_run_that_sets_each_step_s_inputs():
    """The recorded states equal, bit for bit, those of steps taken with the inputs of the
    knots' formula at (k + 1)·dt; the simulation keeps the last inputs; a final-state
    cotangent gives the same gradient through `positions=` as through `series[steps]`."""
    p = beam()
    a, b = diffsoro.Simulation(p.scene), diffsoro.Simulation(p.scene)
    tape = a.record(70, knots=p.knots, knot_times=p.times)
    assert tape.steps == 70 and a.steps == 70
    assert np.array_equal(tape.knots["times"], p.times)
    assert np.array_equal(tape.knots["values"]["side"], p.knots["side"])
    rows = {"markers": [], "effectors": [], "nodes": []}
    for k in range(70):
        for name, q in p.knots.items():
            b.set_actuation(name, hat((k + 1) * p.scene.dt, p.times, q))
        b.step()
        rows["markers"].append([b.markers()["mid"]])
        rows["effectors"].append([b.effector("tip")])
        rows["nodes"].append(b.positions("beam"))
    for quantity, expected in rows.items():
        assert np.array_equal(tape.trajectory(quantity), np.array(expected)), quantity
    start = diffsoro.Simulation(p.scene).positions("beam")
    assert np.array_equal(tape.trajectory("nodes", [0, 70])[0], start)
    assert a.final_state() == b.final_state()
    # The last steps (t > 0.6 s, past the last knot) took the last knots' values.
    forces = {act["name"]: act["force"] for act in a.final_state()["actuators"]}
    assert forces == {"pull": 0.4, "side": 0.1}
    w = np.random.default_rng(5).standard_normal((p.scene.node_count("beam"), 3))
    one = tape.adjoint(positions={"beam": w}, params=["poisson_ratio:beam"])
    other = tape.adjoint(series={np.int64(70): {"positions": {"beam": w}}}, params=["poisson_ratio:beam"])
    assert one["parameters"] == other["parameters"]
    for name in p.knots:
        assert np.array_equal(one["knots"][name], other["knots"][name])


def test_a_tape_of_no_step():
    """Zero steps: the start is the end, the knots are reported, no input moves L."""
    p = beam()
    sim = diffsoro.Simulation(p.scene)
    tape = sim.record(0, knots=p.knots, knot_times=p.times)
    assert tape.steps == 0 and np.array_equal(tape.knots["times"], p.times)
    assert tape.trajectory("nodes").shape == (0, 190, 3)
    assert np.array_equal(tape.trajectory("nodes", [0])[0], sim.positions("beam"))
    w = np.ones((190, 3))
    back = tape.adjoint(positions={"beam": w}, series={0: {"markers": {"mid": [1.0, 0.0, 0.0]}}})
    assert np.array_equal(back["knots"]["pull"], np.zeros(4))
    # ∂L/∂x₀ = w plus the marker's weights along x on its nodes: they sum to 1.
    assert np.isclose(np.sum(back["positions"]["beam"] - w), 1.0, rtol=0.0, atol=1e-14)


def test_knot_times_are_on_the_simulation_clock():
    """Recorded from a state 7 steps into a run, knots at τ + t₀ give the run whose step k
    takes the knots' inputs at τ-time (k + 1)·dt (to round-off: t₀ is subtracted back)."""
    p = beam()
    a, b = diffsoro.Simulation(p.scene), diffsoro.Simulation(p.scene)
    a.run(7)
    b.run(7)
    t0 = a.time
    tape = a.record(30, knots=p.knots, knot_times=p.times + t0)
    for k in range(30):
        for name, q in p.knots.items():
            b.set_actuation(name, hat((k + 1) * p.scene.dt, p.times, q))
        b.step()
    assert np.allclose(tape.trajectory("nodes", [30])[0], b.positions("beam"), rtol=0.0, atol=1e-15)
    assert np.allclose(tape.knots["times"], p.times + t0, rtol=0.0, atol=1e-15)


def test_bad_input_is_a_one_line_value_error_naming_the_argument():
    p = beam()
    sim = diffsoro.Simulation(p.scene)
    cases = [
        (lambda: sim.record(3, knots={"nope": [0.0, 1.0]}, knot_times=[0.0, 0.1]), r'record knots\["nope"\]: the scene has no actuator `nope` \(it has \["pull", "side"\]\)'),
        (lambda: sim.record(3, knots={"pull": [0.0, 1.0, 2.0]}, knot_times=[0.0, 0.1]), r'record knots\["pull"\]: has shape \[3\], expected \(2,\)'),
        (lambda: sim.record(3, knots={"pull": [0.0, 1.0]}, knot_times=[0.1, 0.1]), r"record knot_times\[1\]: .* knot times increase"),
        (lambda: sim.record(3, knots={"pull": [0.0, np.nan]}, knot_times=[0.0, 0.1]), r'record knots\["pull"\]: entry 1 is not finite'),
        (lambda: sim.record(3, knots={"pull": [0.0, 1.0]}), "record knot_times: is needed with knots"),
        (lambda: sim.record(3, knot_times=[0.0]), "record knots: is needed with knot_times"),
    ]
    tape = diffsoro.Simulation(p.scene).record(4, knots=p.knots, knot_times=p.times)
    n = p.scene.node_count("beam")
    cases += [
        (lambda: tape.adjoint(series={5: {"markers": {"mid": [0, 0, 1.0]}}}), r"adjoint series: step index 5 is out of range: states 0 \(the start\) to 4"),
        (lambda: tape.adjoint(series={-1: {}}), "adjoint series: step index -1 is out of range"),
        (lambda: tape.adjoint(series={2: {"markers": {"nope": [0, 0, 1.0]}}}), r'adjoint series\[2\]\["markers"\]\["nope"\]: the scene has no marker `nope` \(it has \["mid"\]\)'),
        (lambda: tape.adjoint(series={2: {"effectors": {"nope": [0, 0, 1.0]}}}), r'adjoint series\[2\]\["effectors"\]\["nope"\]: the scene has no effector'),
        (lambda: tape.adjoint(series={2: {"markers": {"mid": [0, 1.0]}}}), r'adjoint series\[2\]\["markers"\]\["mid"\]: has shape \[2\], expected \(3,\)'),
        (lambda: tape.adjoint(series={2: {"positions": {"beam": np.zeros((n, 2))}}}), r'adjoint series\[2\] positions\["beam"\]: has shape \[190, 2\], expected \(190, 3\)'),
        (lambda: tape.adjoint(series={2: {"position": {}}}), r'adjoint series\[2\]: unknown key "position"'),
        (lambda: tape.trajectory("marker"), 'trajectory quantity: "marker" is not'),
        (lambda: tape.trajectory("nodes", [0, 9]), r"trajectory steps\[1\]: step index 9 is out of range"),
        (lambda: tape.trajectory("nodes", [1.0]), r"trajectory steps\[0\]: step index 1.0 is not an int"),
        (lambda: tape.adjoint(series={True: {}}), "adjoint series: step index True is not an int"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message) as raised:
            call()
        assert "\n" not in str(raised.value)
    # A displacement-driven cable does not follow knots.
    driven = diffsoro.Scene.from_toml(BEAM.replace("force = 0.0", "displacement = 0.0", 1), base_dir=SCENES)
    with pytest.raises(ValueError, match=r'record knots\["pull"\]: actuator `pull` is driven by its displacement or volume \(m\): knots drive force-driven actuators only'):
        diffsoro.Simulation(driven).record(3, knots={"pull": [0.0, 1.0]}, knot_times=[0.0, 0.1])
