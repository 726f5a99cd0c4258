"""Quickstart: load the Trunk, pull cable c2 at 0.5 N, and follow its tip for 1 s.

Run from anywhere: `python examples/python/quickstart.py` (prints `time x y z` per step, in
s and m; with matplotlib installed, also writes tip_path.png)."""

from pathlib import Path

import numpy as np

import diffsoro

scene = diffsoro.Scene.load(Path(__file__).resolve().parents[2] / "scenes" / "trunk.toml")
sim = diffsoro.Simulation(scene)
sim.set_actuation("c2", 0.5)  # cable tension (N)
path = []
for _ in range(100):  # 100 steps of dt = 0.01 s
    sim.step()
    path.append(sim.effector("tip"))  # (3,) m
    print(sim.time, *path[-1])
tip = np.array(path)  # (100, 3) m
print(f"tip moved {np.linalg.norm(tip[-1] - tip[0]) * 1e3:.1f} mm", flush=True)

try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
if plt is not None:
    plt.plot(tip[:, 0], tip[:, 1])
    plt.xlabel("x (m)")
    plt.ylabel("y (m)")
    plt.title("Trunk tip, cable c2 at 0.5 N")
    plt.savefig("tip_path.png")
