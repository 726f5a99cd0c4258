"""Every error path of the bindings: the exception type, and the CLI's one-line message
(compared with the CLI's own stderr where the CLI has the same input)."""

import numpy as np
import pytest

import diffsoro
from conftest import SCENES


def test_missing_scene_file_is_file_not_found(cli, tmp_path):
    missing = tmp_path / "nowhere.toml"
    with pytest.raises(FileNotFoundError) as e:
        diffsoro.Scene.load(missing)
    assert str(e.value) == cli.error("simulate", str(missing))


def test_missing_mesh_file_is_file_not_found(tmp_path):
    text = (SCENES / "beam.toml").read_text()
    with pytest.raises(FileNotFoundError, match=r"soft_body\.beam\.mesh: file .*beam_2\.msh not found"):
        diffsoro.Scene.from_toml(text, base_dir=tmp_path)


def test_unknown_override_key_names_it(cli):
    with pytest.raises(ValueError) as e:
        diffsoro.Scene.load(SCENES / "beam.toml", overrides={"soft_body.beam.stiffness": 1.0})
    assert "stiffness" in str(e.value)
    assert str(e.value) == cli.error("simulate", str(SCENES / "beam.toml"), "--set", "soft_body.beam.stiffness=1.0")


def test_override_of_a_missing_entry_names_it(cli):
    with pytest.raises(ValueError) as e:
        diffsoro.Scene.load(SCENES / "beam.toml", overrides={"soft_body.nobody.young_modulus": 1.0})
    assert "nobody" in str(e.value)
    assert str(e.value) == cli.error("simulate", str(SCENES / "beam.toml"), "--set", "soft_body.nobody.young_modulus=1.0")


def test_bad_override_value_names_the_key(cli):
    with pytest.raises(ValueError) as e:
        diffsoro.Scene.load(SCENES / "beam.toml", overrides={"soft_body.beam.young_modulus": -1.0})
    assert str(e.value).startswith("soft_body.beam.young_modulus:")
    assert str(e.value) == cli.error("simulate", str(SCENES / "beam.toml"), "--set", "soft_body.beam.young_modulus=-1.0")
    with pytest.raises(ValueError, match="young_modulus"):
        diffsoro.Scene.load(SCENES / "beam.toml", overrides={"soft_body.beam.young_modulus": "soft"})
    with pytest.raises(ValueError, match=r"override `soft_body\.beam\.young_modulus`"):
        diffsoro.Scene.load(SCENES / "beam.toml", overrides={"soft_body.beam.young_modulus": object()})


def test_override_value_kinds():
    # Strings, ints, bools and lists go through as TOML values.
    scene = diffsoro.Scene.load(
        SCENES / "beam.toml",
        overrides={
            "soft_body.beam.law": "stvk",
            "simulation.steps": 7,
            "simulation.gravity": [0.0, 0.0, -1.0],
        },
    )
    assert scene.steps == 7


def test_bad_toml_text_is_value_error():
    with pytest.raises(ValueError, match="<toml text>"):
        diffsoro.Scene.from_toml("[simulation\n")


def test_bad_names_and_shapes_are_value_errors():
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "finger.toml"))
    with pytest.raises(ValueError, match="soft body `trunk`"):
        sim.positions("trunk")
    with pytest.raises(ValueError, match="no actuator `c9`"):
        sim.set_actuation("c9", 1.0)
    with pytest.raises(ValueError, match="effector `nose`"):
        sim.effector("nose")
    # `mass:` names a free rigid body's mass; the soft finger is none.
    with pytest.raises(ValueError, match="no free rigid body `finger`"):
        sim.step_jacobian(["mass:finger"])
    with pytest.raises(ValueError, match="unknown kind `viscosity`"):
        sim.step_jacobian(["viscosity:finger"])
    with pytest.raises(ValueError, match="rayleigh_mass:finger"):
        sim.set_parameters({"rayleigh_mass:finger": -1.0})
    n = sim.scene.node_count("finger")
    with pytest.raises(ValueError, match=r"positions: has shape \[2, 3\]"):
        sim.set_state("finger", np.zeros((2, 3)), np.zeros((n, 3)))
    bad = np.zeros((n, 3))
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match="velocities row 4"):
        sim.set_state("finger", np.zeros((n, 3)), bad)
    with pytest.raises(ValueError, match="not finite"):
        sim.set_actuation("cable", float("inf"))


def test_static_with_contact_is_value_error(cli):
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "finger_obstacle.toml"))
    with pytest.raises(ValueError) as e:
        sim.static_equilibrium()
    assert str(e.value) == cli.error("simulate", str(SCENES / "finger_obstacle.toml"), "--static")


def test_job_input_errors(cli):
    scene = diffsoro.Scene.load(SCENES / "finger.toml")
    with pytest.raises(ValueError) as e:
        diffsoro.control(scene, effector="nose", target=[0.0, 0.0, 0.0])
    assert str(e.value) == cli.error("control", "scenes/finger.toml", "--effector", "nose", "--target", "0,0,0")
    with pytest.raises(ValueError, match="observed"):
        diffsoro.calibrate(scene, observed=3, params=["young_modulus:finger"])
    with pytest.raises(FileNotFoundError):
        diffsoro.calibrate(scene, observed="/nonexistent/observed.json", params=["young_modulus:finger"])
    with pytest.raises(ValueError, match="in the scene but not in the observation"):
        diffsoro.calibrate(scene, observed={"time": 0.0, "steps": 0, "contacts": 0, "soft_bodies": []},
                           params=["young_modulus:finger"])


def test_callback_exception_reaches_the_caller():
    scene = diffsoro.Scene.load(SCENES / "finger.toml")

    def boom(event):
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        diffsoro.control(scene, effector="tip", target=[-0.1, 0.01, 0.007], steps=2, progress=boom)


def test_array_likes_are_converted():
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "beam.toml"))
    x = sim.positions("beam")
    sim.set_state("beam", x.tolist(), np.zeros(x.shape, dtype=np.int32))
    assert np.array_equal(sim.positions("beam"), x)


def test_strict_unconverged_contact_is_convergence_error(cli):
    # One NCP iteration cannot reach the tolerance once the pulled finger hits the block.
    overrides = {"contact.max_iterations": 1}
    sim = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "finger_obstacle.toml", overrides=overrides), strict=True)
    with pytest.raises(diffsoro.ConvergenceError) as e:
        sim.run(100)
    assert isinstance(e.value, RuntimeError)
    assert str(e.value) == cli.error(
        "simulate", "scenes/finger_obstacle.toml", "--strict", "--steps", "100", "--set", "contact.max_iterations=1"
    )
    # Without strict, the run goes on and the final state counts the steps.
    lax = diffsoro.Simulation(diffsoro.Scene.load(SCENES / "finger_obstacle.toml", overrides=overrides))
    lax.run(sim.steps)
    assert lax.final_state()["unconverged_steps"] >= 1
