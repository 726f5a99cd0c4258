"""Open-loop control through the adjoint: fit the Finger's cable tension, a piecewise-linear
function of time (5 knots over 0.6 s), so that its tip follows a path.

The path is the tip's own path under other knots (so it is reachable): sampled every 5 steps
(50 ms) of a 60-step run of `scenes/finger.toml`. From zero tension, L-BFGS (torch, 20
iterations, strong-Wolfe line search) minimises the mean squared distance (mm²) between the
recorded tip positions and the path; each evaluation is one `diffsoro.torch.rollout` with
`record="effectors"` and its backward pass, one adjoint sweep (`Tape.adjoint(series=...)`)
that returns the gradient along every knot at once. Prints the loss of every evaluation, the
fitted knots (N) and the tip's root-mean-square distance to the path (mm).

    python examples/python/fit_knots.py
"""

from pathlib import Path

import numpy as np
import torch

import diffsoro
import diffsoro.torch

SCENE = Path(__file__).resolve().parents[2] / "scenes" / "finger.toml"
STEPS, EVERY = 60, 5                           # 0.6 s at dt = 10 ms, the tip every 50 ms
TIMES = np.linspace(0.0, 0.6, 5)               # knot times (s)
TRUE = [0.0, 1.0, 2.0, 1.2, 0.6]               # tensions (N) that make the path

scene = diffsoro.Scene.load(SCENE)
none = torch.zeros(0, dtype=torch.float64)     # no constant parameter


def tip_path(knots: torch.Tensor) -> torch.Tensor:
    """The tip (m) after 5, 10, …, 60 steps, (12, 3), for knots (5, 1) of the cable (N)."""
    path = diffsoro.torch.rollout(scene, [], none, STEPS, record="effectors", every=EVERY,
                                  knots=knots, knot_times=TIMES, actuators=["cable"])
    return path[:, 0]


target = tip_path(torch.tensor(TRUE, dtype=torch.float64)[:, None]).detach()
knots = torch.zeros(len(TIMES), 1, dtype=torch.float64, requires_grad=True)
optimiser = torch.optim.LBFGS([knots], max_iter=20, line_search_fn="strong_wolfe",
                              tolerance_grad=1e-12, tolerance_change=1e-15)
evaluations = 0


def closure() -> torch.Tensor:
    global evaluations
    optimiser.zero_grad()
    loss = ((tip_path(knots) - target) * 1e3).pow(2).sum(-1).mean()     # mm²
    loss.backward()                                                      # one adjoint sweep
    evaluations += 1
    print(f"evaluation {evaluations}: loss {loss.item():.3e} mm²")
    return loss


optimiser.step(closure)
fitted = knots.detach()[:, 0].numpy()
rms = ((tip_path(knots.detach()) - target) * 1e3).pow(2).sum(-1).mean().sqrt().item()
print("fitted knots (N): " + " ".join(f"{q:.6f}" for q in fitted))
print(f"tip rms distance to the path: {rms:.3e} mm")
