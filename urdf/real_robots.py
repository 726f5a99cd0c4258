#!/usr/bin/env python3
"""Writes the real robot files of urdf/real/ and their Pinocchio reference values.

1. Copies the UR5 (ur5_robot.urdf) and Go1 (go1.urdf) URDFs of the example-robot-data package
   verbatim into urdf/real/, with a provenance header after the XML declaration (mesh
   references kept as names; no mesh file is copied).
2. Loads each committed copy with Pinocchio (UR5 fixed base, Go1 on a free-flyer) and writes
   urdf/real/pinocchio_reference.json: the joint order and dimensions, the limits, damping and
   friction, the body masses, and at 3 random states (fixed seed) RNEA, CRBA, ABA and the
   analytical derivatives of RNEA and ABA. tests/rigid_real_robots.rs compares diffsoro to it.

Run (offline, once; not a test dependency):
  python3 -m venv /tmp/pinenv
  /tmp/pinenv/bin/pip install pin==4.1.0 example-robot-data==6.0.0
  /tmp/pinenv/bin/python urdf/real_robots.py
"""
import json
import os
import re
from importlib import metadata

import numpy as np
import pinocchio as pin

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "real")
ROBOTS = [
    # (committed name, path under example-robot-data's robots/, free-flyer base)
    ("ur5_robot.urdf", "ur_description/urdf/ur5_robot.urdf", False),
    ("go1.urdf", "go1_description/urdf/go1.urdf", True),
]


def robots_dir():
    """example-robot-data's robots/ folder as installed by pip (cmeel prefix)."""
    import cmeel  # installed with pin / example-robot-data

    d = os.path.join(str(cmeel.__path__[0]) + ".prefix", "share", "example-robot-data", "robots")
    if not os.path.isdir(d):
        import sysconfig

        d = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data", "robots")
    return d


def copy_with_header(name, rel):
    src = os.path.join(robots_dir(), rel)
    text = open(src).read()
    # The package's README.md of the robot names the upstream repository and its licence.
    readme = open(os.path.join(robots_dir(), rel.split("/")[0], "README.md")).read()
    upstream = re.search(r"upstream: (\S+)", readme).group(1)
    licence = re.search(r"license: (\S+)", readme).group(1)
    header = (
        "<!-- diffsoro test robot: copied verbatim (this comment added) from the pip package\n"
        f"     example-robot-data {metadata.version('example-robot-data')} (BSD-3-Clause), file robots/{rel}\n"
        f"     (upstream {upstream}, licence {licence}),\n"
        "     by urdf/real_robots.py (python3 urdf/real_robots.py with pin and example-robot-data\n"
        "     installed). Mesh files are not copied: mesh references stay names. -->\n"
    )
    m = re.match(r"<\?xml[^>]*\?>\s*\n", text)
    text = text[: m.end()] + header + text[m.end():] if m else header + text
    dst = os.path.join(OUT, name)
    with open(dst, "w") as f:
        f.write(text)
    return dst


def sym(m):
    return np.triu(m) + np.triu(m, 1).T


def rows(m):
    return [list(map(float, r)) for r in np.asarray(m)]


def finite(x):
    """JSON has no infinity: ±inf as ±1e300 is not needed, so report None."""
    return [float(v) if np.isfinite(v) else None for v in x]


def reference(path, free_flyer, rng):
    model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if free_flyer else pin.buildModelFromUrdf(path)
    data = model.createData()
    joints = [dict(name=model.names[i], idx_q=int(model.joints[i].idx_q), idx_v=int(model.joints[i].idx_v),
                   nq=int(model.joints[i].nq), nv=int(model.joints[i].nv), mass=float(model.inertias[i].mass))
              for i in range(1, model.njoints)]
    out = dict(base="free_flyer" if free_flyer else "fixed", nq=model.nq, nv=model.nv, joints=joints,
               lower=finite(model.lowerPositionLimit), upper=finite(model.upperPositionLimit),
               effort=finite(model.effortLimit), velocity=finite(model.velocityLimit),
               damping=finite(model.damping), friction=finite(model.friction), cases=[])
    for _ in range(3):
        q = pin.integrate(model, pin.neutral(model), rng.uniform(-1, 1, model.nv))
        v, a, tau = rng.uniform(-1, 1, model.nv), rng.uniform(-2, 2, model.nv), rng.uniform(-5, 5, model.nv)
        case = dict(q=q.tolist(), v=v.tolist(), a=a.tolist(), tau=tau.tolist())
        case["rnea"] = pin.rnea(model, data, q, v, a).tolist()
        case["crba"] = rows(sym(pin.crba(model, data, q)))
        case["aba"] = pin.aba(model, data, q, v, tau).tolist()
        dq, dv, _ = pin.computeRNEADerivatives(model, data, q, v, a)
        case["rnea_dq"], case["rnea_dv"] = rows(dq), rows(dv)
        adq, adv, adtau = pin.computeABADerivatives(model, data, q, v, tau)
        case["aba_dq"], case["aba_dv"], case["aba_dtau"] = rows(adq), rows(adv), rows(sym(adtau))
        out["cases"].append(case)
    return out


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(18)
    fixture = dict(
        provenance=(f"urdf/real_robots.py: Pinocchio {pin.__version__} (pip pin {metadata.version('pin')}), "
                    f"example-robot-data {metadata.version('example-robot-data')}, numpy seed 18; "
                    "joint order is Pinocchio's (child joints sorted by name); matrices are lists of rows, "
                    "derivatives with respect to q in the tangent space; infinite limits are null"),
        robots={})
    for name, rel, ff in ROBOTS:
        path = copy_with_header(name, rel)
        fixture["robots"][name] = reference(path, ff, rng)
        r = fixture["robots"][name]
        print(f"{name}: nq {r['nq']} nv {r['nv']}, {len(r['cases'])} cases")
    with open(os.path.join(OUT, "pinocchio_reference.json"), "w") as f:
        json.dump(fixture, f)
        f.write("\n")
