"""Markers from Python (`[[soft_body.marker]]`, docs/python.md): `Scene.marker_names`,
`Simulation.markers()` and `marker_positions()` against the nodes and the final state, and
`diffsoro.read_marker_tracks` against the CLI's `--markers-out` file (bit for bit in m) and
the Rust reader's one-line errors, raised as `ValueError`."""

import numpy as np
import pytest

import diffsoro
from conftest import SCENES

PULL = {"soft_body.trunk.cable.c2.force": 0.5}


def test_markers_are_read_from_the_state_in_scene_order():
    scene = diffsoro.Scene.load(SCENES / "trunk.toml", overrides=PULL)
    assert scene.marker_names == ["tip", "tip_post"]
    sim = diffsoro.Simulation(scene)
    sim.run(10)
    markers = sim.markers()
    assert list(markers) == ["tip", "tip_post"]
    # `tip` is node 1 of the mesh (the tip face's centre): that node's position, exactly.
    assert np.array_equal(markers["tip"], sim.positions("trunk")[1])
    assert markers["tip"].shape == (3,) and markers["tip"].dtype == np.float64
    rows = sim.marker_positions()
    assert rows.shape == (2, 3) and rows.dtype == np.float64
    for k, name in enumerate(scene.marker_names):
        assert np.array_equal(rows[k], markers[name])
    final = sim.final_state()["markers"]
    assert [m["name"] for m in final] == scene.marker_names
    for m in final:
        assert m["body"] == "trunk"
        assert np.array_equal(np.array(m["position"]), markers[m["name"]])
    # The post's marker stays about 10 mm from the tip (the tip bends, it does not stretch
    # much in 0.1 s).
    assert abs(np.linalg.norm(markers["tip_post"] - markers["tip"]) - 0.010) < 0.001


def test_a_scene_without_markers():
    scene = diffsoro.Scene.load(SCENES / "beam.toml")
    assert scene.marker_names == []
    sim = diffsoro.Simulation(scene)
    assert sim.markers() == {}
    assert sim.marker_positions().shape == (0, 3)
    assert "markers" not in sim.final_state()


def test_read_marker_tracks_reads_the_cli_file_bit_for_bit(cli, tmp_path):
    steps = 5
    files = {}
    for unit in ["m", "mm"]:
        files[unit] = tmp_path / f"markers_{unit}.csv"
        done = cli.run(
            "simulate", str(SCENES / "trunk.toml"), "--steps", str(steps),
            "--set", "soft_body.trunk.cable.c2.force=0.5",
            "--markers-out", str(files[unit]), "--marker-unit", unit,
        )
        assert done.returncode == 0, done.stderr
    scene = diffsoro.Scene.load(SCENES / "trunk.toml", overrides=PULL)
    # The same run from Python: every saved state's markers.
    sim = diffsoro.Simulation(scene)
    expected = {name: [p] for name, p in sim.markers().items()}
    for _ in range(steps):
        sim.step()
        for name, p in sim.markers().items():
            expected[name].append(p)
    tracks = diffsoro.read_marker_tracks(files["m"], scene)
    in_mm = diffsoro.read_marker_tracks(str(files["mm"]), scene, unit="mm")
    assert list(tracks) == scene.marker_names
    for name in scene.marker_names:
        times, positions = tracks[name]
        assert times.shape == (steps + 1,) and positions.shape == (steps + 1, 3)
        # Times are steps × dt, exactly.
        assert np.array_equal(times, np.arange(steps + 1) * 0.01)
        assert np.array_equal(positions, np.array(expected[name]))
        times_mm, positions_mm = in_mm[name]
        assert np.array_equal(times_mm, times)
        np.testing.assert_allclose(positions_mm, positions, rtol=1e-12, atol=0)


def test_rows_without_values_are_no_samples(tmp_path):
    scene = diffsoro.Scene.load(SCENES / "trunk.toml")
    path = tmp_path / "obs.csv"
    path.write_text(
        "time , marker , x , y , z\n"
        "0.000,tip,0.87,1.24,108.96\n"
        "0.000,tip_post,NaN,NaN,NaN\n"
        "0.010,tip,,1.25,109.0\n"
        "0.020,tip,0.9,1.3,109.5\n"
    )
    tracks = diffsoro.read_marker_tracks(path, scene, unit="mm")
    times, positions = tracks["tip"]
    assert np.array_equal(times, [0.0, 0.02])
    np.testing.assert_allclose(
        positions, [[0.00087, 0.00124, 0.10896], [0.0009, 0.0013, 0.1095]], rtol=1e-12
    )
    times, positions = tracks["tip_post"]
    assert times.shape == (0,) and positions.shape == (0, 3)


@pytest.mark.parametrize(
    "text, message",
    [
        ("t,marker,x,y,z\n", "line 1: expected the header `time,marker,x,y,z`, got `t,marker,x,y,z`"),
        ("time,marker,x,y,z\n0.0,tip,1,2\n", "line 2: expected 5 fields `time,marker,x,y,z`, got 4"),
        ("time,marker,x,y,z\nnow,tip,1,2,3\n", "line 2: time `now` is not a number (s)"),
        ("time,marker,x,y,z\n0.0,tip,1,x,3\n", "line 2: y `x` is not a number (m)"),
        (
            "time,marker,x,y,z\n0.0,tip,1,2,3\n0.1,elbow,1,2,3\n",
            "line 3: marker `elbow` is not a marker of the scene (the scene's markers: tip, tip_post)",
        ),
        (
            "time,marker,x,y,z\n0.1,tip,1,2,3\n0.0,tip_post,1,2,3\n0.1,tip,1,2,3\n",
            "line 4: marker `tip`: time 0.1 s is not after its previous time 0.1 s (line 2); "
            "times must increase strictly per marker",
        ),
    ],
)
def test_reader_errors_are_value_errors_naming_the_file_and_line(tmp_path, text, message):
    scene = diffsoro.Scene.load(SCENES / "trunk.toml")
    path = tmp_path / "obs.csv"
    path.write_text(text)
    with pytest.raises(ValueError) as e:
        diffsoro.read_marker_tracks(path, scene)
    assert str(e.value) == f"{path}: {message}"


def test_a_missing_file_and_a_bad_unit(tmp_path):
    scene = diffsoro.Scene.load(SCENES / "trunk.toml")
    with pytest.raises(FileNotFoundError):
        diffsoro.read_marker_tracks(tmp_path / "none.csv", scene)
    path = tmp_path / "obs.csv"
    path.write_text("time,marker,x,y,z\n")
    with pytest.raises(ValueError, match=r"^unit: `cm` is not a marker unit: use m or mm"):
        diffsoro.read_marker_tracks(path, scene, unit="cm")
