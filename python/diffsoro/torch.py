"""PyTorch autograd for diffsoro rollouts (the optional extra `diffsoro[torch]`).

`rollout(scene, params, values, steps)` runs `steps` time steps of `scene` with the named
differentiable parameters set to `values` (a 1-D tensor) and returns the final node
positions; its backward pass is the adjoint of the recorded trajectory (`Simulation.record`
and `Tape.adjoint`: one backward sweep of step VJPs in the compiled module), so a loss on the
final positions backpropagates to Young's moduli, Poisson's ratios, actuator inputs and
robot torques:

    import torch, diffsoro, diffsoro.torch
    scene = diffsoro.Scene.load("scenes/finger.toml")
    p = torch.tensor([6e5, 0.3], dtype=torch.float64, requires_grad=True)  # Pa, N
    x = diffsoro.torch.rollout(scene, ["young_modulus:finger", "actuator:cable"], p, steps=20)
    loss = ((x - target) ** 2).sum()    # x: (N, 3) m, every soft body's nodes in scene order
    loss.backward()                     # p.grad: ∂loss/∂E (per Pa), ∂loss/∂λ (per N)

Units: the parameters' own (Pa, dimensionless ν, N / Pa / N·m / rad for actuators, N·m or N
for `tau:ROBOT[k]`); positions in m. The computation runs on the CPU in float64; the result
takes `values`' dtype and device. Parameters of very different magnitudes (E ~ 1e6 Pa next to
a tension ~ 1 N) are best optimised, and finite-difference checked, in scaled units
(`values = scale * z`, the scaling done in torch).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ._diffsoro import Scene, Simulation

__all__ = ["Rollout", "rollout"]


class Rollout(torch.autograd.Function):
    """The autograd Function behind `rollout`: forward = `Simulation.record(steps)` from the
    scene's rest state with the parameters set, backward = `Tape.adjoint` (first order
    only)."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any, values: torch.Tensor, scene: Scene, params: tuple[str, ...], steps: int
    ) -> torch.Tensor:
        given = values.detach().to("cpu", torch.float64).reshape(-1).numpy()
        if given.size != len(params):
            raise ValueError(
                f"diffsoro.torch.rollout: {given.size} values for {len(params)} parameters {list(params)}"
            )
        sim = Simulation(scene)
        sim.set_parameters({name: float(v) for name, v in zip(params, given)})
        tape = sim.record(steps)
        bodies = list(scene.bodies)
        x = np.concatenate([sim.positions(b) for b in bodies])
        ctx.tape = tape
        ctx.params = list(params)
        ctx.bodies = bodies
        ctx.counts = [scene.node_count(b) for b in bodies]
        ctx.like = (values.dtype, values.device)
        return torch.from_numpy(x).to(dtype=values.dtype, device=values.device)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:  # type: ignore[override]
        g = grad.detach().to("cpu", torch.float64).numpy()
        cotangent = {}
        start = 0
        for body, n in zip(ctx.bodies, ctx.counts):
            cotangent[body] = np.ascontiguousarray(g[start : start + n])
            start += n
        back = ctx.tape.adjoint(positions=cotangent, params=ctx.params)
        dtype, device = ctx.like
        gv = torch.tensor(
            [back["parameters"][p] for p in ctx.params], dtype=dtype, device=device
        )
        return gv, None, None, None


def rollout(
    scene: Scene,
    params: Sequence[str],
    values: torch.Tensor,
    steps: int | None = None,
) -> torch.Tensor:
    """Final node positions (m) after `steps` time steps (default: the scene's
    `simulation.steps`) of `scene` from its rest state, with parameter `params[i]` set to
    `values[i]` (names as `Simulation.set_parameters`: `young_modulus:BODY` in Pa,
    `poisson_ratio:BODY`, `actuator:NAME`, `tau:ROBOT[k]`). Returns an (N, 3) tensor: every
    soft body's nodes in scene order, mesh-file node order, `values`' dtype and device.
    Differentiable with respect to `values` (reverse mode: the trajectory's adjoint).

    Raises ValueError for an unknown parameter, an invalid value or a count mismatch."""
    names = tuple(str(p) for p in params)
    n = scene.steps if steps is None else int(steps)
    out: torch.Tensor = Rollout.apply(values, scene, names, n)
    return out
