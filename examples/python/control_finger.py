"""QP inverse control (job 2): drive the cable Finger's tip toward a target.

`scenes/finger.toml`, the tip driven toward (−0.1, 0.02, 0.007) m for `--steps` steps (one QP
per step, the cable's tension bounded by the scene). Prints the distance to the target every
10 steps (m) and the final tension (N).

    python examples/python/control_finger.py [--steps 100]
"""

import argparse
from pathlib import Path

import diffsoro

SCENE = Path(__file__).resolve().parents[2] / "scenes" / "finger.toml"

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--steps", type=int, default=100)
args = parser.parse_args()
report = diffsoro.control(
    diffsoro.Scene.load(SCENE),
    effector="tip",
    target=[-0.1, 0.02, 0.007],
    steps=args.steps,
)
for step, error in enumerate(report["error_history"], start=1):
    if step % 10 == 0 or step == args.steps:
        print(f"step {step}: {error * 1e3:.2f} mm from the target")
print(f"final tension {report['actuation_history'][-1][0]:.4f} N, "
      f"final error {report['final_error'] * 1e3:.2f} mm")
