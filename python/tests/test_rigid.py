"""Rigid bodies and robots from Python: the final state equals the CLI's bit for bit, and the
rigid state can be read and set as arrays."""

import numpy as np
import pytest

import diffsoro
from conftest import SCENES


def test_cube_drop_equals_cli(cli):
    scene = diffsoro.Scene.load(SCENES / "cube_drop.toml", overrides={"simulation.steps": 50})
    sim = diffsoro.Simulation(scene)
    sim.run()
    expected = cli.json(
        "simulate", str(SCENES / "cube_drop.toml"), "--set", "simulation.steps=50"
    )
    assert sim.final_state()["rigid_bodies"] == expected["rigid_bodies"]
    q = sim.rigid_q("cube")
    assert q.shape == (7,)
    assert q.tolist() == expected["rigid_bodies"][0]["position"] + expected["rigid_bodies"][0]["orientation"]


def test_a_thrown_cube_follows_the_parabola_of_semi_implicit_euler():
    scene = diffsoro.Scene.load(SCENES / "cube_drop.toml")
    sim = diffsoro.Simulation(scene)
    # Far above the floor, thrown sideways: x = v h n, z = z0 − g h² n(n+1)/2 after n steps.
    sim.set_rigid_state("cube", [0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    sim.run(20)
    h, n, g = scene.dt, 20, 9.81
    q = sim.rigid_q("cube")
    assert q[0] == pytest.approx(1.0 * h * n, abs=1e-12)
    assert q[2] == pytest.approx(10.0 - g * h * h * n * (n + 1) / 2, abs=1e-12)
    assert sim.rigid_v("cube")[2] == pytest.approx(-g * h * n, abs=1e-12)


def test_bad_rigid_names_and_lengths_are_value_errors():
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "cube_drop.toml"))
    with pytest.raises(ValueError, match="no such rigid body"):
        sim.rigid_q("sphere")
    with pytest.raises(ValueError, match="expected 7"):
        sim.set_rigid_state("cube", np.zeros(6), np.zeros(6))


def test_a_pad_hanging_from_a_lifted_palm_pulls_it_down_by_its_weight():
    # scenes/lift_pad.toml: a soft pad attached to a palm held by a PD (kp = 200 N/m) on a
    # prismatic joint; at rest kp (0 − q) = (0.1 kg + the pad's mass) g.
    scene = diffsoro.Scene.load(SCENES / "lift_pad.toml")
    sim = diffsoro.Simulation(scene)
    sim.run()
    pad_mass = 0.04 * 0.04 * 0.02 * 1000.0
    q = sim.rigid_q("lift")
    assert q[0] == pytest.approx(-(0.1 + pad_mass) * 9.81 / 200.0, rel=1e-6)
    # The pad's top face follows the palm.
    x = sim.positions("pad")
    top = x[:, 2] > 0.019 + q[0]
    assert top.sum() == 25
    assert np.allclose(x[top, 2], 0.02 + q[0], atol=1e-9)
