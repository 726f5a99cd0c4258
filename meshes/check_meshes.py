#!/usr/bin/env python3
"""Offline sanity checks of the committed meshes (meshio + numpy only; not used by the build or tests).

For every .msh in this directory: every tetrahedron has positive signed volume (right-handed
corner order), none is degenerate (volume > 1e-3 * mean, min dihedral-free shape measure > 0.05),
every named surface group's triangles are boundary faces of the tetrahedra oriented out of the
body, and the `cavity` group
(pneumatic.msh) is a closed, consistently oriented, two-manifold surface with outward normals
(pointing out of the cavity, into the material: positive enclosed volume). It also checks that the
published cable paths lie inside the material (finger: every point; trunk: every point
inside or within 1 mm, the polyline crossing the grooves as on the published mesh).

Usage: python3 meshes/check_meshes.py   (exit status 1 if a check fails)
"""
import contextlib
import glob
import io
import json
import os
import sys

import meshio
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# The published SoftRobots meshes (docs/real-meshes.md).
SHARED = os.environ.get(
    "DIFFSORO_REAL_MESHES",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "meshes-real"),
)
SHARED = os.path.abspath(SHARED)
FAIL = []


def check(cond, msg):
    print(("  ok   " if cond else "  FAIL ") + msg)
    if not cond:
        FAIL.append(msg)


def group_cells(m, name, ctype):
    out = []
    for block, ids in zip(m.cells, m.cell_sets[name]):
        if block.type == ctype and len(ids):
            out.append(block.data[ids])
    return np.concatenate(out) if out else np.zeros((0, 3 if ctype == "triangle" else 4), int)


def signed_volumes(p, t):
    a, b, c, d = (p[t[:, i]] for i in range(4))
    return np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a) / 6.0


def shape_quality(p, t):
    """Volume / (rms edge)^3 normalised to 1 for the regular tetrahedron."""
    e = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    l2 = sum(np.sum((p[t[:, i]] - p[t[:, j]]) ** 2, axis=1) for i, j in e) / 6.0
    return np.abs(signed_volumes(p, t)) / l2 ** 1.5 * 6.0 * np.sqrt(2.0)


def boundary_faces(t):
    f = np.concatenate([t[:, [1, 2, 3]], t[:, [0, 3, 2]], t[:, [0, 1, 3]], t[:, [0, 2, 1]]])
    s = np.sort(f, axis=1)
    _, inv, cnt = np.unique(s, axis=0, return_inverse=True, return_counts=True)
    return f[cnt[inv] == 1]  # outward-oriented boundary faces


def points_inside(p, t, q, tol=1e-12):
    """True for each query point that lies in some tetrahedron (barycentric test)."""
    a = p[t[:, 0]]
    m = np.stack([p[t[:, 1]] - a, p[t[:, 2]] - a, p[t[:, 3]] - a], axis=2)
    minv = np.linalg.inv(m)
    res = []
    for x in q:
        lam = np.einsum("kij,kj->ki", minv, x - a)
        ok = (lam >= -tol).all(axis=1) & (lam.sum(axis=1) <= 1 + tol)
        res.append(ok.any())
    return np.array(res)


def distance_to_triangles(x, a, b, c):
    """Distance from point x to the nearest of the triangles (a[k], b[k], c[k]) (Ericson's closest point)."""
    ab, ac, ap = b - a, c - a, x - a
    d1, d2 = (ab * ap).sum(1), (ac * ap).sum(1)
    bp = x - b
    d3, d4 = (ab * bp).sum(1), (ac * bp).sum(1)
    cp = x - c
    d5, d6 = (ab * cp).sum(1), (ac * cp).sum(1)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    den = va + vb + vc
    v, w = vb / den, vc / den
    q = a + ab * v[:, None] + ac * w[:, None]  # inside the face region
    eps = 1e-300
    # vertex and edge regions
    reg = [
        ((d1 <= 0) & (d2 <= 0), a),
        ((d3 >= 0) & (d4 <= d3), b),
        ((d6 >= 0) & (d5 <= d6), c),
    ]
    e_ab = (vc <= 0) & (d1 >= 0) & (d3 <= 0)
    e_ac = (vb <= 0) & (d2 >= 0) & (d6 <= 0)
    e_bc = (va <= 0) & ((d4 - d3) >= 0) & ((d5 - d6) >= 0)
    q = np.where(e_bc[:, None], b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6) + eps))[:, None], q)
    q = np.where(e_ac[:, None], a + ac * (d2 / (d2 - d6 + eps))[:, None], q)
    q = np.where(e_ab[:, None], a + ab * (d1 / (d1 - d3 + eps))[:, None], q)
    for cond, vtx in reversed(reg):
        q = np.where(cond[:, None], vtx, q)
    return np.sqrt(((x - q) ** 2).sum(1)).min()


def main():
    for path in sorted(glob.glob(os.path.join(HERE, "*.msh"))):
        name = os.path.basename(path)
        print(name)
        with contextlib.redirect_stdout(io.StringIO()):  # meshio prints blank lines
            m = meshio.read(path)
        p = m.points
        t = np.concatenate([c.data for c in m.cells if c.type == "tetra"])
        v = signed_volumes(p, t)
        check((v > 0).all(), f"all {len(t)} tets positive (min signed volume {v.min():.3e} m^3)")
        check(v.min() > 1e-3 * v.mean(), f"no degenerate tet (min/mean volume {v.min() / v.mean():.3e})")
        q = shape_quality(p, t)
        check(q.min() > 0.05, f"min shape quality {q.min():.3f} (mean {q.mean():.3f})")
        used = np.unique(t)
        check(len(used) == len(p), f"every node is used by a tet ({len(used)}/{len(p)})")
        bf = boundary_faces(t)
        bset = {tuple(sorted(f)) for f in bf}
        bdir = {tuple(f[np.r_[i:3, 0:i]]) for f in bf for i in range(3)}  # all rotations
        for g in m.cell_sets:
            if g.startswith("gmsh:"):
                continue
            tri = group_cells(m, g, "triangle")
            if len(tri):
                inb = all(tuple(sorted(f)) in bset for f in tri)
                check(inb, f"group {g}: {len(tri)} triangles, all are tet boundary faces")
                if g != "cavity":
                    out = all(tuple(f) in bdir for f in tri)
                    check(out, f"group {g}: triangles oriented out of the body")
        if "cavity" in m.cell_sets:
            tri = group_cells(m, "cavity", "triangle")
            e = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]])
            directed = {tuple(x) for x in e}
            closed_consistent = len(directed) == len(e) and all((b, a) in directed for a, b in e)
            check(closed_consistent, "cavity: closed, every edge used once in each direction")
            a, b, c = (p[tri[:, i]] for i in range(3))
            vol = np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0
            check(vol > 0, f"cavity: enclosed volume {vol:.6e} m^3 > 0 (normals point out of the cavity)")
            # Outward from the cavity = into the material: the same orientation as the tets' own faces?
            # A tet boundary face oriented outward from the material points INTO the cavity, so the
            # cavity triangles must be the reverse of the matching tet boundary faces.
            rev = all((f[0], f[2], f[1]) in bdir for f in tri)
            check(rev, "cavity: each triangle is the reverse of its tet's outward face")
        if name == "finger.msh":
            # As on the published mesh, the notches cut the whole width and the cable crosses
            # them in the air between its points: every point must lie inside the material.
            cable = np.array(json.load(open(os.path.join(SHARED, "finger/cable.json")))) * 1e-3
            check(points_inside(p, t, cable).all(), f"finger: all {len(cable)} cable points inside the material")
        if name == "trunk.msh":
            # As on the published mesh, the cables cross the V grooves in the air between their
            # points, and the points on the groove walls lie just outside the faceted surface:
            # each point must be inside the material or within 1 mm of it (the embed_tolerance
            # of scenes/trunk.toml).
            d = json.load(open(os.path.join(SHARED, "trunk/trunk_cables.derived.json")))
            pts = np.concatenate([np.array(c["points"]) * 1e-3 for c in d["cables"]])
            inside = points_inside(p, t, pts)
            tri = p[bf]
            far = max(
                (distance_to_triangles(x, tri[:, 0], tri[:, 1], tri[:, 2]) for x in pts[~inside]),
                default=0.0,
            )
            check(
                far <= 1e-3,
                f"trunk: {inside.sum()}/{len(pts)} cable points inside the material, the others within {far:.2e} m of it",
            )
    if FAIL:
        print(f"{len(FAIL)} check(s) failed")
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
