"""Writes the meshes of the contact scenes (no dependencies; run: python3 meshes/contact_scenes.py).

beam_supports.msh (MSH 2.2): a 200 x 20 x 20 mm beam, x in [0, 0.2], y in [-0.01, 0.01],
z in [0, 0.02], of 20 x 2 x 2 cells, 6 tetrahedra per cell. The cells with x < 0.1 use the Kuhn
split along their (0,0,0)-(1,1,1) diagonal and the others its mirror image in x, so the mesh is
exactly mirror-symmetric about the plane x = 0.1 (and conforming: both splits cut the shared
faces at x = 0.1 along the same diagonal). Group `body`.

finger_obstacle.stl (ASCII STL): the closed, outward-oriented surface of the box
x in [-0.12, -0.04], y in [0.018, 0.04], z in [-0.02, 0.035] (metres), 12 triangles: the rigid
block above the Finger of scenes/finger_obstacle.toml.
"""
import os

from kuhn import grid_nodes, kuhn_tets, write_msh22

HERE = os.path.dirname(os.path.abspath(__file__))


def beam():
    nx, ny, nz = 20, 2, 2
    lx, ly, lz = 0.2, 0.02, 0.02

    def point(i, j, k):
        # x from the grid index so that mirrored nodes have mirrored coordinates exactly.
        x = lx * i / nx if 2 * i <= nx else lx - lx * (nx - i) / nx
        return (x, -ly / 2 + ly * j / ny, lz * k / nz)

    nodes = grid_nodes((nx, ny, nz), point)
    tets = kuhn_tets((nx, ny, nz), nodes, mirrored=lambda i, j, k: 2 * i >= nx)
    write_msh22(os.path.join(HERE, "beam_supports.msh"), nodes, tets)


def block_stl():
    lo, hi = (-0.12, 0.018, -0.02), (-0.04, 0.04, 0.035)
    corner = lambda i: tuple(hi[a] if i >> a & 1 else lo[a] for a in range(3))
    quads = [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]]
    with open(os.path.join(HERE, "finger_obstacle.stl"), "w") as f:
        f.write("solid finger_obstacle\n")
        for a, b, c, d in quads:
            for tri in ((a, b, c), (a, c, d)):
                f.write("  facet normal 0 0 0\n    outer loop\n")
                for v in tri:
                    f.write("      vertex %.17g %.17g %.17g\n" % corner(v))
                f.write("    endloop\n  endfacet\n")
        f.write("endsolid finger_obstacle\n")


beam()
block_stl()
