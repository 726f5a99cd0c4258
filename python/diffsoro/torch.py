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

Along a trajectory: `record="markers"` (or "effectors", "nodes") returns the recorded points
at every `every`-th state as a (T, M, 3) tensor, and `knots` makes the actuators' inputs a
(K, n_actuators) tensor of piecewise-linear knots; a loss of the whole path backpropagates to
both through one adjoint sweep (`Tape.adjoint(series=...)`):

    knots = torch.zeros(5, 1, dtype=torch.float64, requires_grad=True)          # N
    path = diffsoro.torch.rollout(scene, [], torch.zeros(0, dtype=torch.float64), steps=100,
                                  record="effectors", every=10, knots=knots,
                                  knot_times=[0.0, 0.25, 0.5, 0.75, 1.0], actuators=["cable"])
    ((path[:, 0] - targets) ** 2).sum().backward()     # knots.grad: (5, 1), per N
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ._diffsoro import Scene, Simulation

__all__ = ["Rollout", "rollout"]


_RECORDED = ("markers", "effectors", "nodes")


class Rollout(torch.autograd.Function):
    """The autograd Function behind `rollout`: forward = `Simulation.record(steps)` from the
    scene's rest state with the parameters set (and the inputs following the knots, if any),
    backward = `Tape.adjoint` (first order only): of the final positions, or with
    `record`, of the recorded points along the run (its `series`)."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any,
        values: torch.Tensor,
        scene: Scene,
        params: tuple[str, ...],
        steps: int,
        *along: Any,
    ) -> torch.Tensor:
        # `along` = (knots, knot_times, actuators, record, every), all optional (`rollout`
        # passes them; a caller of the original four arguments need not).
        knots, knot_times, actuators, record, every = (*along, *(None, (), (), None, 1)[len(along):])
        ctx.inputs = 4 + len(along)
        given = values.detach().to("cpu", torch.float64).reshape(-1).numpy()
        if given.size != len(params):
            raise ValueError(
                f"diffsoro.torch.rollout: {given.size} values for {len(params)} parameters {list(params)}"
            )
        sim = Simulation(scene)
        if params:
            sim.set_parameters({name: float(v) for name, v in zip(params, given)})
        if knots is None:
            tape = sim.record(steps)
        else:
            k = knots.detach().to("cpu", torch.float64).numpy()
            tape = sim.record(
                steps,
                knots={a: k[:, i].copy() for i, a in enumerate(actuators)},
                knot_times=np.asarray(knot_times, dtype=np.float64),
            )
        bodies = list(scene.bodies)
        if record is None:
            x = np.concatenate([sim.positions(b) for b in bodies])
        else:
            x = tape.trajectory(record, list(range(every, steps + 1, every)))
        ctx.tape = tape
        ctx.params = list(params)
        ctx.bodies = bodies
        ctx.counts = [scene.node_count(b) for b in bodies]
        ctx.record = record
        ctx.every = every
        ctx.names = (
            scene.marker_names if record == "markers" else scene.effectors if record == "effectors" else []
        )
        ctx.actuators = list(actuators)
        ctx.knots_like = None if knots is None else (knots.dtype, knots.device)
        ctx.like = (values.dtype, values.device)
        return torch.from_numpy(x).to(dtype=values.dtype, device=values.device)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:  # type: ignore[override]
        g = grad.detach().to("cpu", torch.float64).numpy()

        def per_body(rows: np.ndarray) -> dict[str, np.ndarray]:
            out, start = {}, 0
            for body, n in zip(ctx.bodies, ctx.counts):
                out[body] = np.ascontiguousarray(rows[start : start + n])
                start += n
            return out

        if ctx.record is None:
            back = ctx.tape.adjoint(positions=per_body(g), params=ctx.params)
        else:
            series: dict[int, dict[str, Any]] = {}
            for i, rows in enumerate(g):
                s = (i + 1) * ctx.every
                if ctx.record == "nodes":
                    series[s] = {"positions": per_body(rows)}
                else:
                    series[s] = {ctx.record: {name: rows[m] for m, name in enumerate(ctx.names)}}
            back = ctx.tape.adjoint(params=ctx.params, series=series)
        dtype, device = ctx.like
        gv = torch.tensor(
            [back["parameters"][p] for p in ctx.params], dtype=dtype, device=device
        )
        gk = None
        if ctx.knots_like is not None:
            kdtype, kdevice = ctx.knots_like
            gk = torch.tensor(
                np.stack([back["knots"][a] for a in ctx.actuators], axis=1),
                dtype=kdtype,
                device=kdevice,
            )
        return (gv, None, None, None, gk, None, None, None, None)[: ctx.inputs]


def _bad(argument: str, message: str) -> ValueError:
    return ValueError(f"diffsoro.torch.rollout {argument}: {message}")


def rollout(
    scene: Scene,
    params: Sequence[str],
    values: torch.Tensor,
    steps: int | None = None,
    *,
    record: str | None = None,
    every: int = 1,
    knots: torch.Tensor | None = None,
    knot_times: Sequence[float] | np.ndarray | torch.Tensor | None = None,
    actuators: Sequence[str] | None = None,
) -> torch.Tensor:
    """A run of `steps` time steps (default: the scene's `simulation.steps`) of `scene` from
    its rest state, with parameter `params[i]` set to `values[i]` (names as
    `Simulation.set_parameters`: `young_modulus:BODY` in Pa, `poisson_ratio:BODY`,
    `actuator:NAME`, `tau:ROBOT[k]`; `params` may be empty with `values` of shape (0,)).

    Without `record`, returns the final node positions (m): an (N, 3) tensor, every soft
    body's nodes in scene order, mesh-file node order. With `record` = "markers" (in
    `Scene.marker_names` order), "effectors" (in `Scene.effectors` order) or "nodes" (as
    the final positions), returns a (T, M, 3) tensor (m), T = steps // every: row i is the
    recorded points in the state after (i + 1)·every steps, i.e. at time (i + 1)·every·dt
    (the start state, row "0", is left out: no parameter moves it).

    `knots`: a (K, len(actuators)) tensor of the inputs of the force-driven actuators named
    in `actuators` (a cable's tension N, a cavity's pressure Pa, a servo's torque N·m) at
    `knot_times` ((K,) s, strictly increasing; not differentiated): each step k takes the
    inputs interpolated linearly at (k + 1)·dt, held before the first knot and after the last
    (`Simulation.record(knots=...)`).

    The result takes `values`' dtype and device. Differentiable with respect to `values` and
    `knots` (reverse mode: the trajectory's adjoint, one backward sweep whatever the number
    of parameters and knots). Raises ValueError (one line naming the argument) for an unknown
    parameter, actuator or `record`, an invalid value, a count or shape mismatch."""
    names = tuple(str(p) for p in params)
    n = scene.steps if steps is None else int(steps)
    if record is not None and record not in _RECORDED:
        raise _bad("record", f"{record!r} is not None, 'markers', 'effectors' or 'nodes'")
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise _bad("every", f"{every!r} is not a whole number of steps ≥ 1")
    if record is not None and n // every == 0:
        raise _bad("every", f"{every} is more than the {n} steps: nothing would be recorded")
    if record == "markers" and not scene.marker_names:
        raise _bad("record", "'markers': the scene has no [[soft_body.marker]]")
    if record == "effectors" and not scene.effectors:
        raise _bad("record", "'effectors': the scene has no [[soft_body.effector]]")
    times: tuple[float, ...] = ()
    acts: tuple[str, ...] = ()
    if knots is None:
        if knot_times is not None or actuators is not None:
            raise _bad("knots", "is needed with knot_times and actuators: a (K, n_actuators) tensor")
    else:
        if knot_times is None or actuators is None:
            raise _bad(
                "knot_times" if knot_times is None else "actuators",
                "is needed with knots: the knots' times (K,) in s and the actuators' names",
            )
        if not isinstance(knots, torch.Tensor):
            raise _bad("knots", "is not a torch tensor")
        if isinstance(actuators, str):
            raise _bad("actuators", "is a string: give a list of actuator names")
        acts = tuple(str(a) for a in actuators)
        known = scene.actuators
        for i, a in enumerate(acts):
            if a not in known:
                raise _bad(f"actuators[{i}]", f"the scene has no actuator `{a}` (it has {known})")
        if len(set(acts)) != len(acts):
            raise _bad("actuators", f"{list(acts)} names an actuator twice")
        t = np.asarray(
            knot_times.detach().cpu().numpy() if isinstance(knot_times, torch.Tensor) else knot_times,
            dtype=np.float64,
        )
        if t.ndim != 1 or t.size == 0:
            raise _bad("knot_times", f"has shape {t.shape}, expected (K,) with K ≥ 1")
        times = tuple(float(v) for v in t)
        if tuple(knots.shape) != (len(times), len(acts)):
            raise _bad(
                "knots",
                f"has shape {tuple(knots.shape)}, expected ({len(times)}, {len(acts)}): one row per knot time, one column per actuator",
            )
    out: torch.Tensor = Rollout.apply(values, scene, names, n, knots, times, acts, record, every)
    return out
