"""`diffsoro.calibrate(scene, trials=[…])`: a fit to trials given as arrays (commands as times
plus a dict of per-actuator arrays; markers as long arrays of times, names and xyz, or as
`read_marker_tracks` returns them) gives the CLI's report for the same trials given as files
(`calibrate --trial INPUTS.csv:MARKERS.csv`, the committed recordings of the Finger), and bad
arrays raise the reader's one-line errors as `ValueError`."""

import csv

import numpy as np
import pytest

import diffsoro
from conftest import SCENES

RECORDINGS = SCENES / "recordings"
PARAMS = [
    "young_modulus:finger",
    "rayleigh_stiffness:finger",
    "gain:cable",
    "offset:cable",
    "time_constant:cable",
]
INIT = {"rayleigh_stiffness:finger": 0.01, "time_constant:cable": 0.01}


def read_commands(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    names = rows[0][1:]
    data = np.array([[float(v) for v in r] for r in rows[1:]])
    return data[:, 0], {n: data[:, 1 + k] for k, n in enumerate(names)}


def read_long_markers(path):
    """The marker file's rows as long arrays (mm), empty coordinates as NaN."""
    times, names, xyz = [], [], []
    with open(path) as f:
        for row in csv.DictReader(f):
            times.append(float(row["time"]))
            names.append(row["marker"])
            xyz.append([float(row[c]) if row[c] else np.nan for c in "xyz"])
    return {"times": np.array(times), "names": names, "xyz": np.array(xyz)}


def stairs_trial():
    times, commands = read_commands(RECORDINGS / "finger_stairs_inputs.csv")
    markers = read_long_markers(RECORDINGS / "finger_stairs_markers.csv")
    return {"times": times, "commands": commands, "markers": markers}


def test_arrays_give_the_cli_report_for_the_same_files(cli):
    scene = diffsoro.Scene.load(SCENES / "finger.toml")
    events = []
    report = diffsoro.calibrate(
        scene,
        trials=[stairs_trial()],
        params=PARAMS,
        init=INIT,
        register="rigid",
        marker_unit="mm",
        progress=events.append,
    )
    trial = (
        f"{RECORDINGS / 'finger_stairs_inputs.csv'}:{RECORDINGS / 'finger_stairs_markers.csv'}"
    )
    args = ["calibrate", str(SCENES / "finger.toml"), "--trial", trial, "--marker-unit", "mm",
            "--register", "rigid"]
    for p in PARAMS:
        args += ["--param", p]
    for k, v in INIT.items():
        args += ["--init", f"{k}={v}"]
    cli = cli.json(*args)
    # The same samples in the same order (the arrays are the file's rows, in mm): the same
    # fit, bit for bit.
    assert report["params"] == cli["params"]
    assert report["std_errors"] == cli["std_errors"]
    assert report["rms"] == cli["rms"]
    assert report["frame"] == cli["frame"]
    assert report["iterations"] == cli["iterations"]
    assert [e["event"] for e in events].count("evaluated") >= report["iterations"]
    # The fit recovers the robot the recordings were made with (tests/trial_support).
    truth = dict(zip(PARAMS, [5e5, 0.005, 1.3, 0.05, 0.03]))
    for name, value in truth.items():
        assert abs(report["params"][name] - value) <= 4 * report["std_errors"][name], name


def test_tracks_as_read_marker_tracks_returns_them_fit_the_same():
    scene = diffsoro.Scene.load(SCENES / "finger.toml")
    trial = stairs_trial()
    tracks = diffsoro.read_marker_tracks(
        RECORDINGS / "finger_stairs_markers.csv", scene, unit="mm"
    )
    per_marker = dict(trial, markers=tracks)
    long = diffsoro.calibrate(scene, trials=[trial], params=["young_modulus:finger"],
                              register="translation", marker_unit="mm")
    # read_marker_tracks gives metres.
    mine = diffsoro.calibrate(scene, trials=[per_marker], params=["young_modulus:finger"],
                              register="translation", marker_unit="m")
    assert mine["params"]["young_modulus:finger"] == pytest.approx(
        long["params"]["young_modulus:finger"], rel=1e-9
    )


def test_bad_arrays_raise_one_line_errors():
    scene = diffsoro.Scene.load(SCENES / "finger.toml")
    trial = stairs_trial()
    bad = dict(trial, markers=dict(trial["markers"], names=["thumb"] + trial["markers"]["names"][1:]))
    with pytest.raises(ValueError, match=r"line 2: marker `thumb` is not a marker of the scene"):
        diffsoro.calibrate(scene, trials=[bad], params=["young_modulus:finger"])
    times = trial["markers"]["times"].copy()
    names = trial["markers"]["names"]
    j = next(j for j in range(1, len(names)) if names[j] == names[0])
    times[j] = times[0]
    bad = dict(trial, markers=dict(trial["markers"], times=times))
    with pytest.raises(ValueError, match=rf"line {j + 2}: marker `{names[0]}`: time .* is not after"):
        diffsoro.calibrate(scene, trials=[bad], params=["young_modulus:finger"])
    with pytest.raises(ValueError, match=r"--register|register"):
        diffsoro.calibrate(scene, trials=[trial], params=["young_modulus:finger"],
                           compare="displacement", register="translation")
    with pytest.raises(ValueError, match=r"either observed"):
        diffsoro.calibrate(scene, params=["young_modulus:finger"])
