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
import itertools
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def vol(a, b, c, d):
    u = [b[t] - a[t] for t in range(3)]
    v = [c[t] - a[t] for t in range(3)]
    w = [d[t] - a[t] for t in range(3)]
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
            + u[2] * (v[0] * w[1] - v[1] * w[0]))


def beam():
    nx, ny, nz = 20, 2, 2
    lx, ly, lz = 0.2, 0.02, 0.02
    idx = lambda i, j, k: 1 + i + (nx + 1) * (j + (ny + 1) * k)
    nodes = []
    for k in range(nz + 1):
        for j in range(ny + 1):
            for i in range(nx + 1):
                # x from the grid index so that mirrored nodes have mirrored coordinates exactly.
                x = lx * i / nx if 2 * i <= nx else lx - lx * (nx - i) / nx
                nodes.append((x, -ly / 2 + ly * j / ny, lz * k / nz))
    tets = []
    for k in range(nz):
        for j in range(ny):
            for i in range(nx):
                mirror = 2 * i >= nx
                for perm in itertools.permutations(range(3)):
                    corner = [0, 0, 0]
                    path = [tuple(corner)]
                    for a in perm:
                        corner[a] = 1
                        path.append(tuple(corner))
                    if mirror:
                        path = [(1 - p[0], p[1], p[2]) for p in path]
                    t = [idx(i + p[0], j + p[1], k + p[2]) for p in path]
                    if vol(*(nodes[n - 1] for n in t)) < 0:
                        t[2], t[3] = t[3], t[2]
                    tets.append(t)
    with open(os.path.join(HERE, "beam_supports.msh"), "w") as f:
        f.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n")
        f.write('$PhysicalNames\n1\n3 1 "body"\n$EndPhysicalNames\n')
        f.write("$Nodes\n%d\n" % len(nodes))
        for n, p in enumerate(nodes, 1):
            f.write("%d %.17g %.17g %.17g\n" % (n, *p))
        f.write("$EndNodes\n$Elements\n%d\n" % len(tets))
        for e, t in enumerate(tets, 1):
            f.write("%d 4 2 1 1 %d %d %d %d\n" % (e, *t))
        f.write("$EndElements\n")


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
