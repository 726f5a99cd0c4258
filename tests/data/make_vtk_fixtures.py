#!/usr/bin/env python3
"""Regenerates the fixtures written by VTK itself (offline tool; the build and the tests never
run it): the cube of `cube_ascii.vtu` (made by make_fixtures.py) read and re-written by the VTK
9.7 Python package (`pip install vtk`), the library ParaView reads and writes files with.

  cube_vtk_binary_be.vtu   XML, inline base64, BigEndian, UInt32 header, no compression
                           (VTK encodes the size header and the data as separate base64 runs)
  cube_vtk51_ascii.vtk     legacy 5.1 ASCII (CELLS with OFFSETS / CONNECTIVITY vtktypeint64)
  cube_vtk51_binary.vtk    legacy 5.1 BINARY (big-endian)

Each also carries point and cell data arrays (a scalar with lookup table, a vector, a field
array) that readers must skip.

Usage: python3 tests/data/make_vtk_fixtures.py
"""
import os

import numpy as np
import vtk
from vtk.util.numpy_support import numpy_to_vtk

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    r = vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(os.path.join(HERE, "cube_ascii.vtu"))
    r.Update()
    grid = r.GetOutput()
    n, m = grid.GetNumberOfPoints(), grid.GetNumberOfCells()
    pts = np.array([grid.GetPoint(i) for i in range(n)])
    temp = numpy_to_vtk(pts[:, 2].copy(), deep=True)
    temp.SetName("temperature")
    grid.GetPointData().SetScalars(temp)
    vel = numpy_to_vtk(pts * 0.5, deep=True)
    vel.SetName("velocity")
    grid.GetPointData().AddArray(vel)
    ids = numpy_to_vtk(np.arange(m, dtype=np.int32), deep=True)
    ids.SetName("cell id")
    grid.GetCellData().AddArray(ids)
    stamp = numpy_to_vtk(np.array([1.5, 2.5]), deep=True)
    stamp.SetName("stamp")
    grid.GetFieldData().AddArray(stamp)

    w = vtk.vtkXMLUnstructuredGridWriter()
    w.SetFileName(os.path.join(HERE, "cube_vtk_binary_be.vtu"))
    w.SetInputData(grid)
    w.SetDataModeToBinary()
    w.SetCompressorTypeToNone()
    w.SetByteOrderToBigEndian()
    w.SetHeaderTypeToUInt32()
    assert w.Write() == 1

    for name, binary in (("cube_vtk51_ascii.vtk", False), ("cube_vtk51_binary.vtk", True)):
        w = vtk.vtkUnstructuredGridWriter()
        w.SetFileName(os.path.join(HERE, name))
        w.SetInputData(grid)
        if binary:
            w.SetFileTypeToBinary()
        else:
            w.SetFileTypeToASCII()
        assert w.Write() == 1
    print("written with VTK", vtk.vtkVersion.GetVTKVersion())


if __name__ == "__main__":
    main()
