#!/usr/bin/env python3
"""Regenerates the mesh-reader test fixtures in this directory (offline tool; the build and the
tests never run it).

One small mesh of the unit cube [0, 1]^3 (metres) is made with the gmsh Python API (4.15.2) and
saved by gmsh itself in the four MSH variants, then converted with meshio (5.3.5) to legacy VTK
(ASCII and big-endian BINARY, version 4.2 layout: CELLS + CELL_TYPES, mixed cells vertex / line /
triangle / tetra like the SOFA files) and to VTU: inline base64 without compression by meshio (one
base64 stream holding the UInt32 byte count then the data, as VTK writes it), and ASCII by our own
writer below (meshio prints ASCII VTU floats with only 12 significant digits).

Physical groups (only these are saved, Mesh.SaveAll = 0):
  body   (volume, tag 1)  all tetrahedra
  bottom (surface, tag 2) the face z = 0
  edge   (curve, tag 3)   the edge y = 0, z = 0 (line elements a reader must skip)
  corner (point, tag 4)   the vertex at the origin

Usage: pip install gmsh meshio numpy; python3 tests/data/make_fixtures.py
"""
import os

import gmsh
import meshio
import numpy as np
from meshio.vtk import _vtk_42 as vtk42

HERE = os.path.dirname(os.path.abspath(__file__))
H = 0.45  # element size (m)


def build_cube():
    gmsh.model.add("cube")
    gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1, 1)
    gmsh.model.occ.synchronize()
    eps = 1e-5
    bottom = gmsh.model.getEntitiesInBoundingBox(-eps, -eps, -eps, 1 + eps, 1 + eps, eps, 2)
    edge = gmsh.model.getEntitiesInBoundingBox(-eps, -eps, -eps, 1 + eps, eps, eps, 1)
    corner = gmsh.model.getEntitiesInBoundingBox(-eps, -eps, -eps, eps, eps, eps, 0)
    assert len(bottom) == 1 and len(edge) == 1 and len(corner) == 1
    gmsh.model.addPhysicalGroup(3, [1], 1, "body")
    gmsh.model.addPhysicalGroup(2, [bottom[0][1]], 2, "bottom")
    gmsh.model.addPhysicalGroup(1, [edge[0][1]], 3, "edge")
    gmsh.model.addPhysicalGroup(0, [corner[0][1]], 4, "corner")
    gmsh.option.setNumber("General.NumThreads", 1)
    gmsh.option.setNumber("Mesh.MeshSizeMin", H)
    gmsh.option.setNumber("Mesh.MeshSizeMax", H)
    gmsh.option.setNumber("Mesh.MeshSizeFromPoints", 0)
    gmsh.option.setNumber("Mesh.Algorithm3D", 1)
    gmsh.option.setNumber("Mesh.SaveAll", 0)
    gmsh.model.mesh.generate(3)


def write_msh():
    for version, vname in ((2.2, "v22"), (4.1, "v41")):
        for binary, bname in ((0, "ascii"), (1, "binary")):
            gmsh.option.setNumber("Mesh.MshFileVersion", version)
            gmsh.option.setNumber("Mesh.Binary", binary)
            gmsh.write(os.path.join(HERE, f"cube_{vname}_{bname}.msh"))


def tets_of(m):
    return np.concatenate([c.data for c in m.cells if c.type == "tetra"])


def check_same(paths):
    """All variants must hold the same node coordinates and the same tetrahedra."""
    ref = meshio.read(paths[0])
    for p in paths[1:]:
        m = meshio.read(p)
        assert m.points.shape == ref.points.shape, p
        # ASCII files print 16 significant digits, so coordinates may differ by an ulp from binary.
        assert np.allclose(m.points, ref.points, rtol=0, atol=1e-15), p
        assert np.array_equal(tets_of(m), tets_of(ref)), p
        got = [(c.type, len(c.data)) for c in m.cells]
        want = [(c.type, len(c.data)) for c in ref.cells]
        assert sorted(got) == sorted(want), (p, got, want)


VTK_TYPE = {"vertex": 1, "line": 3, "triangle": 5, "tetra": 10}


def write_vtu_ascii(path, mesh):
    """ASCII VTU (UnstructuredGrid) with coordinates printed as shortest round-trip decimals."""
    conn = np.concatenate([c.data.reshape(-1) for c in mesh.cells])
    offsets = np.cumsum(np.concatenate([np.full(len(c.data), c.data.shape[1]) for c in mesh.cells]))
    types = np.concatenate([np.full(len(c.data), VTK_TYPE[c.type]) for c in mesh.cells])
    n_cells = len(types)
    lines = [
        '<?xml version="1.0"?>',
        '<VTKFile type="UnstructuredGrid" version="0.1" byte_order="LittleEndian">',
        "<!--Written by tests/data/make_fixtures.py-->",
        "<UnstructuredGrid>",
        f'<Piece NumberOfPoints="{len(mesh.points)}" NumberOfCells="{n_cells}">',
        "<Points>",
        '<DataArray type="Float64" Name="Points" NumberOfComponents="3" format="ascii">',
    ]
    lines += [" ".join(repr(float(v)) for v in p) for p in mesh.points]
    lines += ["</DataArray>", "</Points>", "<Cells>"]
    lines += ['<DataArray type="Int64" Name="connectivity" format="ascii">']
    lines += [" ".join(str(int(v)) for v in c) for blk in mesh.cells for c in blk.data]
    lines += ["</DataArray>", '<DataArray type="Int64" Name="offsets" format="ascii">']
    lines += [" ".join(str(int(v)) for v in offsets)]
    lines += ["</DataArray>", '<DataArray type="UInt8" Name="types" format="ascii">']
    lines += [" ".join(str(int(v)) for v in types)]
    lines += ["</DataArray>", "</Cells>", "</Piece>", "</UnstructuredGrid>", "</VTKFile>", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def write_vtk_vtu():
    m = meshio.read(os.path.join(HERE, "cube_v41_ascii.msh"))
    order = {"vertex": 0, "line": 1, "triangle": 2, "tetra": 3}
    cells = sorted(((c.type, c.data) for c in m.cells), key=lambda c: order[c[0]])
    plain = meshio.Mesh(m.points, cells)  # no cell data: like the SOFA files
    vtk42.write(os.path.join(HERE, "cube_ascii.vtk"), plain, binary=False)
    vtk42.write(os.path.join(HERE, "cube_binary.vtk"), plain, binary=True)
    # meshio writes ASCII VTU floats with only 12 significant digits; write it ourselves at full precision.
    write_vtu_ascii(os.path.join(HERE, "cube_ascii.vtu"), plain)
    meshio.vtu.write(os.path.join(HERE, "cube_base64.vtu"), plain, binary=True, compression=None)


def main():
    gmsh.initialize()
    gmsh.option.setNumber("General.Terminal", 0)
    build_cube()
    write_msh()
    gmsh.finalize()
    msh = [os.path.join(HERE, f"cube_{v}_{b}.msh") for v in ("v22", "v41") for b in ("ascii", "binary")]
    check_same(msh)
    write_vtk_vtu()
    others = [os.path.join(HERE, f) for f in ("cube_ascii.vtk", "cube_binary.vtk", "cube_ascii.vtu", "cube_base64.vtu")]
    check_same(msh[2:3] + others)
    print("fixtures written and cross-checked")


if __name__ == "__main__":
    main()
