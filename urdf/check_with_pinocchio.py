#!/usr/bin/env python3
"""Offline cross-check of the rigid module against Pinocchio (pip install pin): for each model
of this folder, a random case is evaluated by both and the norm-wise relative differences are
printed. Not a test dependency. Build first:
  cargo build --release --example rigid_dynamics_report
and run with the example's path in $REPORT (default target/release/examples/...).
The real robot files of urdf/real/ have committed reference values instead, written by the
sibling script urdf/real_robots.py and checked by tests/rigid_real_robots.rs."""
import json
import os
import subprocess
import tempfile

import numpy as np
import pinocchio as pin

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
REPORT = os.environ.get("REPORT", os.path.join(TARGET, "release", "examples", "rigid_dynamics_report"))


def sym(m):
    return np.triu(m) + np.triu(m, 1).T


def check(name, free_flyer, rng):
    urdf = os.path.join(HERE, name)
    model = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer()) if free_flyer else pin.buildModelFromUrdf(urdf)
    data = model.createData()
    q = pin.integrate(model, pin.neutral(model), rng.uniform(-1, 1, model.nv))
    v, a, tau = rng.uniform(-1, 1, model.nv), rng.uniform(-2, 2, model.nv), rng.uniform(-5, 5, model.nv)
    case = dict(q=q.tolist(), v=v.tolist(), a=a.tolist(), tau=tau.tolist(),
                base="free_flyer" if free_flyer else "fixed")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(case, f)
    out = subprocess.run([REPORT, urdf, f.name], capture_output=True, text=True, check=True)
    mine = json.loads(out.stdout)
    ref = {"rnea": pin.rnea(model, data, q, v, a), "crba": sym(pin.crba(model, data, q)),
           "aba": pin.aba(model, data, q, v, tau)}
    dq, dv, _ = pin.computeRNEADerivatives(model, data, q, v, a)
    ref["rnea_dq"], ref["rnea_dv"] = dq.copy(), dv.copy()
    adq, adv, adtau = pin.computeABADerivatives(model, data, q, v, tau)
    ref["aba_dq"], ref["aba_dv"], ref["aba_dtau"] = adq.copy(), adv.copy(), sym(adtau.copy())
    worst = max(np.linalg.norm(np.array(mine[k]) - r) / max(np.linalg.norm(r), 1e-12) for k, r in ref.items())
    print(f"{name:22s} {'free-flyer' if free_flyer else 'fixed':10s} nq {model.nq:2d} nv {model.nv:2d}  "
          f"worst relative difference {worst:.1e}")
    return worst


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    cases = [("double_pendulum.urdf", False), ("cartpole.urdf", False), ("ur5.urdf", False),
             ("quadruped.urdf", True), ("humanoid.urdf", True), ("humanoid.urdf", False)]
    worst = max(check(n, ff, rng) for n, ff in cases)
    raise SystemExit(0 if worst < 1e-10 else 1)
