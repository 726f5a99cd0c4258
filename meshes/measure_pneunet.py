#!/usr/bin/env python3
"""Measures a PneuNet mesh along its length (meshio + numpy): the facts meshes/pneumatic.geo is built from.

    python3 meshes/measure_pneunet.py [MESH [SCALE [CAVITY]]]

MESH defaults to the published `pneunet/pneunetCut.vtk` under $DIFFSORO_REAL_MESHES (or
../shared/meshes-real beside the clone; docs/real-meshes.md), read in mm with SCALE = 0.001, and
CAVITY to the published `pneunet/pneunetCavityCut.stl` beside it. Give `meshes/pneumatic.msh 1`
to measure the project's own (its cavity is the mesh's `cavity` triangle group). The published
finger lies along -x with its strain-limiting layer at the top (y = 30 mm); the project's is
turned by pi about z and moved up by 30 mm, (x, y, z) -> (-x, 30 - y, z): this script measures
a project mesh in the published frame, so both print the same numbers for the same shape.
Prints, in mm:

- nodes, tetrahedra, volume, bounding box;
- the coordinate planes holding 30 or more nodes (the faces of the slits, chambers and gallery);
- the side profile on the face z = -10: its corner nodes at the free end (the chamfer);
- the cavity surface: triangles, enclosed volume, bounding box, the planes of its faces;
- the cross-section every 0.5 mm along x: area A, first moment centroid y, second moments
  Iz = int (y - yc)^2 (bending in the x-y plane) and Iy = int z^2 (bending across the width).
"""
import os
import sys

import numpy as np

from mesh_sections import cut_moments, read, volume


def section(p, t, x):
    """Area, centroid y, Iz = int (y - yc)^2, Iy = int z^2 of the cut by the plane at x."""
    A, Sy, _, Syy, Szz = cut_moments(p, t, 0, x)
    yc = Sy / A if A else 0.0
    return A, yc, Syy - A * yc * yc, Szz


def main():
    shared = os.environ.get(
        "DIFFSORO_REAL_MESHES",
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "meshes-real"),
    )
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(shared, "pneunet", "pneunetCut.vtk")
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 0.001
    m = read(path)
    p = m.points * (scale / 0.001)  # in mm from here on
    project = p[:, 0].min() >= -1e-9  # the project's frame: along +x
    if project:
        p = np.column_stack([-p[:, 0], 30 - p[:, 1], p[:, 2]])
    t = np.concatenate([c.data for c in m.cells if c.type == "tetra"])
    print(f"{path}: {len(p)} nodes, {len(t)} tetrahedra, volume {volume(p, t):.1f} mm^3, "
          f"bbox {p.min(0).round(3)} .. {p.max(0).round(3)} mm (published frame)")
    for ax, name in enumerate("xyz"):
        v, n = np.unique(np.round(p[:, ax], 3), return_counts=True)
        print(f"planes {name} = const with >= 30 nodes:", ", ".join(f"{a:g}" for a, k in zip(v, n) if k >= 30))
    side = p[np.abs(p[:, 2] + 10) < 1e-6]
    end = side[side[:, 0] < -99 + 1e-6]
    hull = end[(np.abs(end[:, 0] + 115) < 1e-6) | (np.abs(end[:, 0] + end[:, 1] + 95) < 1e-3)]
    print("free end, nodes on the face z = -10 at x = -115 or on the line x + y = -95 (the chamfer):",
          " ".join(f"({a:.3f}, {b:.3f})" for a, b in sorted(hull[:, :2].tolist())))
    if project:
        tri = np.concatenate([c.data[ids] for c, ids in zip(m.cells, m.cell_sets["cavity"]) if c.type == "triangle"])
        cp = p
    else:
        cav = sys.argv[3] if len(sys.argv) > 3 else os.path.join(shared, "pneunet", "pneunetCavityCut.stl")
        c = read(cav)
        cp = c.points.astype(float)
        tri = c.cells[0].data
    used = np.unique(tri)
    a, b, cc = (cp[tri[:, i]] for i in range(3))
    print(f"cavity: {len(tri)} triangles, enclosed volume {abs(np.einsum('ij,ij->i', a, np.cross(b, cc)).sum() / 6):.1f} mm^3, "
          f"bbox {cp[used].min(0).round(3)} .. {cp[used].max(0).round(3)}")
    for ax, name in enumerate("xyz"):
        v, n = np.unique(np.round(cp[used, ax], 3), return_counts=True)
        print(f"  cavity planes {name} = const with >= 8 vertices:", ", ".join(f"{x:g}" for x, k in zip(v, n) if k >= 8))
    print("cross-sections (x, A mm^2, centroid y, Iz = int (y-yc)^2, Iy = int z^2 mm^4):")
    for x in np.arange(-114.75, 0, 0.5):
        A, yc, Iz, Iy = section(p, t, x)
        print(f"  x {x:8.2f}  A {A:8.3f}  yc {yc:7.3f}  Iz {Iz:10.2f}  Iy {Iy:10.2f}")


if __name__ == "__main__":
    main()
