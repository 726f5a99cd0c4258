"""Speed of the Ray sweep against the serial one (the goal: ≤ 1.1 × serial / 2 on 2 cores).

64 rollouts of the Trunk (`scenes/trunk.toml`, E × cable tension, 100 steps each), first
serially in this process (`diffsoro.ray.rollout`, the function every Ray task runs), then over
a local Ray with 2 CPUs (`diffsoro.ray.rollouts`, Ray started before the clock). Prints both
wall times, the ratio Ray / (serial / 2), and whether the results are equal bit for bit.

    RAYON_NUM_THREADS=1 python benches/python/ray_sweep_speed.py [--grid 8] [--steps 100]

(one rayon thread per process, so the serial run uses one core and each of Ray's two workers
one core.)
"""

import argparse
import os
import time
from pathlib import Path

import ray

import diffsoro.ray as dray

SCENE = Path(__file__).resolve().parents[2] / "scenes" / "trunk.toml"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=int, default=8)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    package = dray.ScenePackage.load(SCENE)
    cases = [
        {"soft_body.trunk.young_modulus": 300e3 + 300e3 * i / (args.grid - 1),
         "soft_body.trunk.cable.c2.force": 1.0 * j / (args.grid - 1)}
        for i in range(args.grid) for j in range(args.grid)
    ]
    start = time.perf_counter()
    serial = [dray.rollout(package, c, args.steps) for c in cases]
    t_serial = time.perf_counter() - start
    ray.init(num_cpus=2, include_dashboard=False,
             runtime_env={"env_vars": {"RAYON_NUM_THREADS": os.environ.get("RAYON_NUM_THREADS", "1")}})
    dray.rollouts(package, cases[:2], 1)  # workers started and the package shipped
    start = time.perf_counter()
    parallel = dray.rollouts(package, cases, args.steps)
    t_ray = time.perf_counter() - start
    ray.shutdown()
    same = serial == parallel
    print(f"{len(cases)} Trunk rollouts of {args.steps} steps: serial {t_serial:.2f} s, "
          f"Ray on 2 CPUs {t_ray:.2f} s, Ray / (serial / 2) = {t_ray / (t_serial / 2):.3f}, "
          f"results equal: {same}")


if __name__ == "__main__":
    main()
