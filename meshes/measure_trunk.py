#!/usr/bin/env python3
"""Measures a Trunk mesh along its axis (meshio + numpy): the facts meshes/trunk.geo is built from.

    python3 meshes/measure_trunk.py [MESH [SCALE]]

MESH defaults to the published `trunk/trunk.vtk` under $DIFFSORO_REAL_MESHES (or
../shared/meshes-real beside the clone; docs/real-meshes.md), read in mm with SCALE = 0.001;
give `meshes/trunk.msh 1` to measure the project's own. Prints, in mm:

- nodes, tetrahedra, volume, bounding box;
- the node rings: every height holding 4 or more nodes, with their count and mean radius (the
  cone's rims, the groove apexes) beside the cone's radius 13 - 8 z / 195 there;
- the grooves: apex height and radius, the angle of each flank to the cross-section plane;
- the cross-section every 0.5 mm: area A and second moments Ixx = ∫y², Iyy = ∫x² of the plane
  z = const cut through the tetrahedra, with the radii of the discs of the same A and Ixx.
"""
import os
import sys

import numpy as np

from mesh_sections import cut_moments, load, volume


def section(p, t, z):
    """Area, Ixx = ∫y², Iyy = ∫x² of the cut of the tetrahedra by the plane at height z."""
    A, _, _, Sxx, Syy = cut_moments(p, t, 2, z)
    return A, Syy, Sxx


def main():
    shared = os.environ.get(
        "DIFFSORO_REAL_MESHES",
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "meshes-real"),
    )
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(shared, "trunk", "trunk.vtk")
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 0.001
    p, t = load(path, scale / 0.001)  # in mm from here on
    print(f"{path}: {len(p)} nodes, {len(t)} tetrahedra, volume {volume(p, t):.1f} mm^3, "
          f"bbox {p.min(0).round(4)} .. {p.max(0).round(4)} mm")
    r = np.hypot(p[:, 0], p[:, 1])
    print("node rings (z, count, mean radius, cone radius 13 - 8 z / 195), mm:")
    zs, counts = np.unique(np.round(p[:, 2], 4), return_counts=True)
    for z, n in zip(zs, counts):
        if n >= 4:
            ring = np.abs(p[:, 2] - z) < 1e-3
            print(f"  z {z:9.4f}  {n:3d} nodes  r {r[ring].mean():8.4f}  cone {13 - 8 * z / 195:8.4f}")
    # Groove apexes (rings of radius < 3 mm) and the rims (rings on the cone) on either side: the
    # flanks' angle to the cross-section plane, atan(dz / dr).
    rings = [(z, r[np.abs(p[:, 2] - z) < 1e-3].mean()) for z, n in zip(zs, counts) if n >= 4]
    rims = [(z, rr) for z, rr in rings if abs(rr - (13 - 8 * z / 195)) < 1e-3 and 0 < z < 195]
    print("grooves (apex z, apex radius, flank angles below / above in degrees):")
    for za, ra in rings:
        if ra < 3:
            zl, rl = max((x for x in rims if x[0] < za), key=lambda x: x[0])
            zu, ru = min((x for x in rims if x[0] > za), key=lambda x: x[0])
            lo = np.degrees(np.arctan2(za - zl, rl - ra))
            hi = np.degrees(np.arctan2(zu - za, ru - ra))
            print(f"  z {za:8.3f}  r {ra:6.3f}  flanks {lo:6.2f} / {hi:6.2f}")
    print("cross-sections (z, A mm^2, Ixx, Iyy mm^4, radius of the disc of equal A, of equal Ixx):")
    for z in np.arange(0.25, p[:, 2].max(), 0.5):
        A, Ixx, Iyy = section(p, t, z)
        print(f"  z {z:7.2f}  A {A:8.3f}  Ixx {Ixx:9.3f}  Iyy {Iyy:9.3f}  "
              f"r_A {np.sqrt(A / np.pi):6.3f}  r_I {(4 * Ixx / np.pi) ** 0.25:6.3f}")


if __name__ == "__main__":
    main()
