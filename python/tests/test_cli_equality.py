"""Python results equal the CLI's JSON for the same scene, bit for bit: both go through the
same library calls (Scene::load with the overrides, Stepper::step, FinalState), and Python's
json module reads the floats serde_json writes exactly, so `==` on floats is the check."""

import json

import numpy as np

import diffsoro
from conftest import SCENES


def test_beam_five_steps_equals_cli(cli):
    expected = cli.json("simulate", "scenes/beam.toml", "--steps", "5")
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "beam.toml"))
    sim.run(5)
    assert sim.final_state() == expected
    body = expected["soft_bodies"][0]
    assert np.array_equal(sim.positions("beam"), np.array(body["positions"]))
    assert np.array_equal(sim.velocities("beam"), np.array(body["velocities"]))
    assert sim.time == expected["time"]


def test_steps_one_by_one_equal_run(cli):
    a = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "beam.toml"))
    b = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "beam.toml"))
    a.run(3)
    for _ in range(3):
        b.step()
    assert a.final_state() == b.final_state()


def test_finger_with_override_equals_cli_set(cli):
    # overrides={...} are the CLI's --set: the cable pulled at 0.5 N, 3 steps.
    expected = cli.json(
        "simulate",
        "scenes/finger.toml",
        "--steps",
        "3",
        "--set",
        "soft_body.finger.cable.cable.force=0.5",
    )
    scene = diffsoro.Scene.load(
        str(SCENES / "finger.toml"),
        overrides={"soft_body.finger.cable.cable.force": 0.5},
    )
    sim = diffsoro.Simulation(scene)
    sim.run(3)
    assert sim.final_state() == expected
    assert np.array_equal(sim.effector("tip"), np.array(expected["effectors"][0]["position"]))


def test_set_actuation_equals_override(cli):
    expected = cli.json(
        "simulate",
        "scenes/finger.toml",
        "--steps",
        "2",
        "--set",
        "soft_body.finger.cable.cable.force=0.25",
    )
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "finger.toml"))
    sim.set_actuation("cable", 0.25)
    sim.run(2)
    assert sim.final_state() == expected


def test_static_equilibrium_equals_cli_static(cli):
    expected = cli.json("simulate", "scenes/beam.toml", "--static")
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "beam.toml"))
    reports = sim.static_equilibrium()
    assert reports["beam"]["residual"] <= 1e-9
    assert sim.final_state() == expected


def test_from_toml_equals_load(cli):
    text = (SCENES / "beam.toml").read_text()
    a = diffsoro.Simulation(diffsoro.Scene.from_toml(text, base_dir=SCENES))
    b = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "beam.toml"))
    a.run(2)
    b.run(2)
    assert a.final_state() == b.final_state()


def test_final_state_keys_match_contract():
    # docs/outputs.md "Final state (JSON)".
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "finger.toml"))
    sim.step()
    state = sim.final_state()
    assert {
        "time", "steps", "contacts", "soft_bodies", "actuators", "effectors", "rigid_bodies", "robots"
    } <= set(state)
    assert set(state["soft_bodies"][0]) == {"name", "positions", "velocities"}
    assert set(state["actuators"][0]) == {"name", "kind", "value", "force"}
    # body, nodes, weights: the effector's embedding (position = Σ weights[i] x[nodes[i]]).
    assert set(state["effectors"][0]) == {"name", "position", "body", "nodes", "weights"}
    assert state["steps"] == 1 and state["actuators"][0]["kind"] == "cable"
    json.dumps(state)  # plain JSON types only


def test_energy_is_the_sum_of_its_parts():
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "beam.toml"))
    sim.run(2)
    e = sim.energy()
    assert e["total"] == e["kinetic"] + e["elastic"] + e["gravity"] + e["actuators"]
    assert e["kinetic"] > 0.0


def test_set_state_round_trip():
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "beam.toml"))
    sim.run(2)
    x, v = sim.positions("beam"), sim.velocities("beam")
    other = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "beam.toml"))
    other.set_state("beam", x, v)
    sim.step()
    other.step()
    # Same start state, same step: the same positions (time differs).
    assert np.array_equal(sim.positions("beam"), other.positions("beam"))
