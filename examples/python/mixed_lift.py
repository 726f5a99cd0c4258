"""Mixed rigid/soft simulation (job 3): a soft pad hanging from a robot's lifted palm.

`scenes/lift_pad.toml`: a silicone pad attached to the palm of a one-joint (prismatic) robot
held by a PD at q = 0. The palm carries the pad's weight and settles below its target. Prints
the palm's joint coordinate q (m) every 50 steps and the pad's lowest point (m).

    python examples/python/mixed_lift.py [--steps 400]
"""

import argparse
from pathlib import Path

import diffsoro

SCENE = Path(__file__).resolve().parents[2] / "scenes" / "lift_pad.toml"

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--steps", type=int, default=400)
args = parser.parse_args()
sim = diffsoro.Simulation(diffsoro.Scene.load(SCENE))
for step in range(1, args.steps + 1):
    sim.step()
    if step % 50 == 0 or step == args.steps:
        print(f"t = {sim.time:.3f} s: palm q = {sim.rigid_q('lift')[0] * 1e3:.3f} mm")
pad = sim.positions("pad")  # (n, 3) m
print(f"palm q {float(sim.rigid_q('lift')[0])!r} m, pad bottom z {float(pad[:, 2].min())!r} m")
