"""A parameter sweep and calibrations of the Trunk over Ray (`pip install 'diffsoro[ray]'`).

1. 64 rollouts: Young's modulus E (8 values, 300-600 kPa) × the tension of cable c2 (8 values,
   0-1 N), `--steps` steps each; prints the tip's final position per pair (mm).
2. Calibrations from observation files: `--calibrations` final states simulated at known E
   (written as JSON files, as `diffsoro simulate` prints them), then E fitted to each file
   (from 450 kPa) over Ray; prints the true and fitted E.

The scene travels to the workers as TOML text plus mesh bytes (`diffsoro.ray.ScenePackage`):
no shared filesystem needed. Local Ray by default (`--num-cpus`), or a running cluster with
`--address ray://host:10001` (or `auto`). Everything is also written to `--out`/results.json.

    python examples/python/ray_sweep.py                   # 64 rollouts of 100 steps
    python examples/python/ray_sweep.py --grid 2 --steps 5 --calibrations 2 --num-cpus 2
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import ray

import diffsoro
import diffsoro.ray as dray

SCENE = Path(__file__).resolve().parents[2] / "scenes" / "trunk.toml"
E_KEY = "soft_body.trunk.young_modulus"  # Pa
T_KEY = "soft_body.trunk.cable.c2.force"  # N


def bar(label):
    """A text progress bar on stderr: progress(done, total)."""

    def progress(done, total):
        width = 30
        filled = width * done // max(total, 1)
        end = "\n" if done == total else ""
        print(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}", end=end,
              file=sys.stderr, flush=True)

    return progress


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", help="a Ray cluster's address (default: a local Ray)")
    parser.add_argument("--num-cpus", type=int, default=None, help="local Ray's CPUs")
    parser.add_argument("--grid", type=int, default=8, help="values per axis (grid² rollouts)")
    parser.add_argument("--steps", type=int, default=100, help="steps per rollout (dt = 0.01 s)")
    parser.add_argument("--calibrations", type=int, default=16, help="observation files to fit")
    parser.add_argument("--calibration-steps", type=int, default=10, help="steps per observation")
    parser.add_argument("--out", type=Path, default=Path("ray_sweep_out"), help="output folder")
    args = parser.parse_args(argv)

    if args.address:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False)
    args.out.mkdir(parents=True, exist_ok=True)
    package = dray.ScenePackage.load(SCENE)

    # 1. The sweep.
    moduli = np.linspace(300e3, 600e3, args.grid)  # Pa
    tensions = np.linspace(0.0, 1.0, args.grid)  # N
    cases = [{E_KEY: float(e), T_KEY: float(t)} for e in moduli for t in tensions]
    states = dray.rollouts(package, cases, steps=args.steps, progress=bar("rollouts"))
    print("E (kPa)  tension (N)  tip x, y, z (mm)")
    for case, state in zip(cases, states):
        tip = np.array(state["effectors"][0]["position"]) * 1e3
        print(f"{case[E_KEY] / 1e3:7.1f}  {case[T_KEY]:11.3f}  {tip[0]:7.2f} {tip[1]:7.2f} {tip[2]:7.2f}")

    # 2. Observation files at known E (c2 pulled at 0.5 N), then E fitted to each over Ray.
    truths = np.linspace(350e3, 550e3, args.calibrations)  # Pa
    files = []
    for i, e in enumerate(truths):
        sim = diffsoro.Simulation(diffsoro.Scene.load(SCENE, overrides={E_KEY: float(e), T_KEY: 0.5}))
        sim.run(args.calibration_steps)
        path = args.out / f"observed_{i}.json"
        path.write_text(json.dumps(sim.final_state()))
        files.append(path)
    fit = dray.ScenePackage.load(SCENE, overrides={T_KEY: 0.5, "simulation.steps": args.calibration_steps})
    reports = dray.calibrations(
        fit, files, params=["young_modulus:trunk"], init={"young_modulus:trunk": 450e3},
        progress=bar("calibrations"),
    )
    print("true E (kPa)  fitted E (kPa)")
    for e, report in zip(truths, reports):
        print(f"{e / 1e3:12.3f}  {report['params']['young_modulus:trunk'] / 1e3:14.3f}")

    results = {
        "steps": args.steps,
        "sweep": [{"overrides": c, "final_state": s} for c, s in zip(cases, states)],
        "calibration_steps": args.calibration_steps,
        "calibrations": [
            {"observed": str(f), "true_young_modulus": float(e), "report": r}
            for f, e, r in zip(files, truths, reports)
        ],
    }
    (args.out / "results.json").write_text(json.dumps(results))
    ray.shutdown()


if __name__ == "__main__":
    main()
