"""Feedback inverse control as on hardware: a `diffsoro.Controller` drives a robot it only
measures.

The robot here is a `diffsoro.Simulation` of the Trunk 25 % stiffer than the controller's
model (`scenes/trunk.toml`), its tip read through Gaussian noise of `--noise` m. The target
is a closed loop of 16 tip positions the model reaches at rest (static equilibria under one
or two of the long cables c1-c4 pulling, up to 0.05 N), 5 s a lap, linear between them. Each
period: set the commands on the robot, step it, measure its tip, and give
`Controller.update` the measurement and the target `Controller.lead` s ahead. Writes
`loop.csv` (the path, `time,x,y,z`) and, with matplotlib, `feedback_trunk.png` (target
against measured path); prints the RMS tip error (m) over the second lap.

    python examples/python/feedback_trunk.py [--laps 2] [--noise 2e-4] [--seed 1]
"""

import argparse
import bisect
import math
from pathlib import Path

import numpy as np

import diffsoro

SCENE = Path(__file__).resolve().parents[2] / "scenes" / "trunk.toml"
LAP = 5.0  # s

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--laps", type=int, default=2)
parser.add_argument("--noise", type=float, default=2e-4, help="sensor noise σ (m)")
parser.add_argument("--seed", type=int, default=1)
args = parser.parse_args()

model = diffsoro.Scene.load(SCENE)


def static_tip(theta):
    """The tip at rest with c1..c4 pulling 0.05 N × max(0, cos/sin/−cos/−sin θ)."""
    sim = diffsoro.Simulation(model)
    pulls = [math.cos(theta), math.sin(theta), -math.cos(theta), -math.sin(theta)]
    for i, p in enumerate(pulls):
        sim.set_actuation(f"c{i + 1}", 0.05 * max(p, 0.0))
    sim.static_equilibrium()
    return sim.effector("tip")


points = [static_tip(2 * math.pi * j / 16) for j in range(16)]
times = [LAP * j / 16 for j in range(16 * args.laps + 1)]
path = [points[j % 16] for j in range(len(times))]
with open("loop.csv", "w") as f:
    f.write("time,x,y,z\n")
    for t, p in zip(times, path):
        f.write(f"{t!r},{float(p[0])!r},{float(p[1])!r},{float(p[2])!r}\n")


def target_at(t):
    """The path at t (s): linear between its points, held outside them."""
    if t <= times[0]:
        return path[0]
    if t >= times[-1]:
        return path[-1]
    b = bisect.bisect_right(times, t)
    a = b - 1
    w = (t - times[a]) / (times[b] - times[a])
    return path[a] + (path[b] - path[a]) * w


robot = diffsoro.Simulation(
    diffsoro.Scene.load(SCENE, overrides={"soft_body.trunk.young_modulus": 450.0e3 * 1.25})
)
controller = diffsoro.Controller(model, effectors=["tip"])
dt = model.dt
rng = np.random.default_rng(args.seed)
commands = controller.commands
measured_path, target_path, errors = [], [], []
for step in range(round(LAP * args.laps / dt)):
    for name, value in commands.items():  # the commands go to the robot...
        robot.set_actuation(name, value)
    robot.step()
    tip = robot.effector("tip")  # ...its sensor reads the tip
    measured = tip + rng.normal(0.0, args.noise, 3) if args.noise > 0 else tip
    target = target_at(robot.time)
    measured_path.append(measured)
    target_path.append(target)
    if robot.time > LAP * (args.laps - 1) + 1e-9 * dt:
        errors.append(float(np.linalg.norm(tip - target)))
    ahead = target_at(robot.time + dt + controller.lead)
    commands = controller.update({"tip": measured}, {"tip": ahead})

rms = math.sqrt(sum(e * e for e in errors) / len(errors))
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m, t = np.array(measured_path) * 1e3, np.array(target_path) * 1e3
    plt.plot(t[:, 0], t[:, 2], label="target")
    plt.plot(m[:, 0], m[:, 2], label="measured", alpha=0.7)
    plt.xlabel("x (mm)")
    plt.ylabel("z (mm)")
    plt.axis("equal")
    plt.legend()
    plt.savefig("feedback_trunk.png")
except ImportError:
    pass
print(f"last lap RMS tip error {rms!r} m")
