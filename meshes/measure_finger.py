#!/usr/bin/env python3
"""Measures a cable Finger mesh along its length (meshio + numpy): the facts meshes/finger.geo is built from.

    python3 meshes/measure_finger.py [MESH [SCALE]]

MESH defaults to the published `finger/finger.vtk` under $DIFFSORO_REAL_MESHES (or
../shared/meshes-real beside the clone; docs/real-meshes.md), read in mm with SCALE = 0.001;
give `meshes/finger.msh 1` to measure the project's own. Prints, in mm:

- nodes, tetrahedra, volume, bounding box, the planes z = const holding nodes;
- the side profile: the nodes of the face z = 0 on its outline (the corners of the attachment
  block, the chamfered tip, the rims of the notches on the top face y = 15, the notch apexes
  at y = 5) and the area of the profile, volume / width;
- the cross-section every 0.5 mm along x: area A and its height (A / width), and the second
  moment Iz = int (y - yc)^2 of the cut by the plane x = const (bending in the x-y plane);
- whether the cable's points (`finger/cable.json` beside the published mesh) lie in the material.
"""
import json
import os
import sys

import numpy as np

from mesh_sections import cut_moments, load, volume


def section(p, t, x):
    """Area, centroid y and Iz = int (y - yc)^2 of the cut of the tetrahedra by the plane at x."""
    A, Sy, _, Syy, _ = cut_moments(p, t, 0, x)
    yc = Sy / A if A else 0.0
    return A, yc, Syy - A * yc * yc


def inside(p, t, q):
    a, b, c, d = (p[t[:, i]] for i in range(4))
    T = np.linalg.inv(np.stack([b - a, c - a, d - a], axis=2))
    lam = np.einsum("nij,mnj->mni", T, q[:, None, :] - a[None])
    return ((lam >= -1e-9).all(2) & (lam.sum(2) <= 1 + 1e-9)).any(1)


def main():
    shared = os.environ.get(
        "DIFFSORO_REAL_MESHES",
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "meshes-real"),
    )
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(shared, "finger", "finger.vtk")
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 0.001
    p, t = load(path, scale / 0.001)  # in mm from here on
    W = p[:, 2].max() - p[:, 2].min()
    V = volume(p, t)
    print(f"{path}: {len(p)} nodes, {len(t)} tetrahedra, volume {V:.2f} mm^3, "
          f"bbox {p.min(0).round(4)} .. {p.max(0).round(4)} mm; profile area volume / width = {V / W:.2f} mm^2")
    zs, n = np.unique(np.round(p[:, 2], 3), return_counts=True)
    print("planes z = const (z, nodes):", ", ".join(f"{z:g} ({k})" for z, k in zip(zs, n)))
    f = p[np.abs(p[:, 2] - p[:, 2].min()) < 1e-6]
    x0, x1 = p[:, 0].min(), p[:, 0].max()
    outline = f[(np.abs(f[:, 1]) < 1e-6) | (np.abs(f[:, 1] - 15) < 1e-6) | (np.abs(f[:, 1] - 5) < 1e-6)
                | (np.abs(f[:, 0] - x0) < 1e-6) | (np.abs(f[:, 0] - x1) < 1e-6) | (f[:, 0] < -93)]
    print("outline nodes of the face z = min (x, y):")
    for x, y in sorted(outline[:, :2].tolist()):
        print(f"  {x:9.3f} {y:7.3f}")
    print("cross-sections (x, A mm^2, height A / width, centroid y, Iz mm^4):")
    for x in np.arange(x0 + 0.25, x1, 0.5):
        A, yc, Iz = section(p, t, x)
        print(f"  x {x:8.2f}  A {A:8.3f}  h {A / W:6.3f}  yc {yc:6.3f}  Iz {Iz:9.2f}")
    cable = os.path.join(shared, "finger", "cable.json")
    if os.path.exists(cable):
        q = np.array(json.load(open(cable)), float)
        ok = inside(p, t, q)
        print(f"cable points (cable.json, mm) inside the material: {ok.sum()} of {len(q)}",
              "" if ok.all() else f"outside: {q[~ok].tolist()}")


if __name__ == "__main__":
    main()
