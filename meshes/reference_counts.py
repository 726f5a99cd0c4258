#!/usr/bin/env python3
"""Independent reference counts of tetrahedral meshes (meshio + numpy only, no project code).

For each mesh file given (default: every committed mesh in meshes/, every fixture in tests/data/
and every volume mesh of the published SoftRobots meshes, docs/real-meshes.md), prints one Markdown table row:
  nodes              all points in the file (including points no tetrahedron uses)
  tetrahedra         number of 4-node tetrahedra (other cell types are ignored)
  surface_triangles  tetrahedron faces that appear exactly once
  volume             sum over tetrahedra of |det(b - a, c - a, d - a)| / 6, in the file's unit^3
  bbox               min and max corner of all points, in the file's unit
  groups             per named physical group: tetrahedra for volume groups, triangles for
                     surface groups, points for point groups (line elements are ignored)

A file meshio cannot read (meshio 5.3.5 fails on the binary VTK 5.1 fixture
tests/data/cube_vtk51_binary.vtk with a UnicodeDecodeError in its field-data reader) is named
on stderr after the table, and the exit status is then 1.

Usage: python3 meshes/reference_counts.py [FILE ...]
"""
import contextlib
import glob
import io
import os
import sys

import meshio
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# The published SoftRobots meshes (docs/real-meshes.md).
SHARED = os.environ.get(
    "DIFFSORO_REAL_MESHES",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "meshes-real"),
)
SHARED = os.path.abspath(SHARED)
XML_CONTENT = {"diamond.vtk"}  # VTU (XML) content despite the .vtk extension


def read(path):
    fmt = "vtu" if os.path.basename(path) in XML_CONTENT else None
    with contextlib.redirect_stdout(io.StringIO()):  # meshio prints blank lines and warnings
        return meshio.read(path, file_format=fmt)


def counts(path):
    m = read(path)
    p = np.asarray(m.points, dtype=np.float64)
    blocks = [c.data for c in m.cells if c.type == "tetra"]
    t = np.concatenate(blocks) if blocks else np.zeros((0, 4), dtype=np.int64)
    a, b, c, d = (p[t[:, i]] for i in range(4))
    vol = np.abs(np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a)).sum() / 6.0
    faces = np.sort(np.concatenate([t[:, [1, 2, 3]], t[:, [0, 2, 3]], t[:, [0, 1, 3]], t[:, [0, 1, 2]]]), axis=1)
    _, cnt = np.unique(faces, axis=0, return_counts=True)
    groups = {}
    phys = m.cell_data.get("gmsh:physical")
    if phys is not None:
        # gmsh files: field_data maps each physical name to (tag, dimension).
        dim_of = {"vertex": 0, "triangle": 2, "tetra": 3}
        for name, (tag, dim) in m.field_data.items():
            if dim == 1:
                continue  # line elements are ignored
            n = 0
            for block, tags in zip(m.cells, phys):
                if dim_of.get(block.type) == dim:
                    n += int((np.asarray(tags) == tag).sum())
            groups[name] = n
    return {
        "nodes": len(p),
        "tetrahedra": len(t),
        "surface_triangles": int((cnt == 1).sum()),
        "volume": vol,
        "bbox": (p.min(axis=0), p.max(axis=0)),
        "groups": groups,
    }


def fmt_vec(v):
    return "(" + ", ".join(f"{x:.10g}" for x in v) + ")"


def default_files():
    files = sorted(glob.glob(os.path.join(HERE, "*.msh")))
    data = os.path.join(ROOT, "tests", "data")
    for ext in ("msh", "vtk", "vtu"):
        files += sorted(glob.glob(os.path.join(data, f"*.{ext}")))
    for ext in ("msh", "vtk", "vtu"):
        files += sorted(glob.glob(os.path.join(SHARED, "*", f"*.{ext}")))
    return files


def label(path):
    path = os.path.abspath(path)
    if path.startswith(SHARED):
        return "shared/meshes-real" + path[len(SHARED):]
    return os.path.relpath(path, ROOT)


def main():
    files = sys.argv[1:] or default_files()
    print("| file | nodes | tetrahedra | surface_triangles | volume | bbox min | bbox max | groups |")
    print("|---|---:|---:|---:|---:|---|---|---|")
    unreadable = []
    for f in files:
        try:
            r = counts(f)
        except Exception as e:  # meshio's readers raise many kinds; report and go on
            unreadable.append((label(f), f"{type(e).__name__}: {e}"))
            continue
        g = ", ".join(f"{k}: {v}" for k, v in sorted(r["groups"].items())) or "—"
        lo, hi = r["bbox"]
        print(
            f"| {label(f)} | {r['nodes']} | {r['tetrahedra']} | {r['surface_triangles']} | "
            f"{r['volume']:.10g} | {fmt_vec(lo)} | {fmt_vec(hi)} | {g} |"
        )
    print(f"\n(meshio {meshio.__version__}, numpy {np.__version__})")
    for name, why in unreadable:
        print(f"meshio cannot read {name}: {why}", file=sys.stderr)
    if unreadable:
        sys.exit(1)


if __name__ == "__main__":
    main()
