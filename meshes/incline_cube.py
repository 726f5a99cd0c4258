"""Writes incline_cube.msh (MSH 2.2): a 20 mm cube of 3×3×3 cells, 6 tetrahedra per cell
(Kuhn split, conforming), rotated by 20° about +y so that its bottom face lies on the plane
through the origin with normal (−sin 20°, 0, cos 20°) of scenes/contact_incline.toml.
Run: python3 meshes/incline_cube.py (no dependencies)."""
import itertools
import math
import os

N, SIDE, THETA = 3, 0.02, math.radians(20.0)
c, s = math.cos(THETA), math.sin(THETA)


def rot(p):
    # rotation by THETA about +y: x' = c x + s z, z' = -s x + c z; maps e_z to (s, 0, c) —
    # we want the normal (-s, 0, c), so rotate by -THETA.
    x, y, z = p
    return (c * x - s * z, y, s * x + c * z)


def idx(i, j, k):
    return 1 + i + (N + 1) * (j + (N + 1) * k)


nodes = []
for k in range(N + 1):
    for j in range(N + 1):
        for i in range(N + 1):
            nodes.append(rot((SIDE * i / N, SIDE * j / N, SIDE * k / N)))


def vol(a, b, c_, d):
    u = [b[t] - a[t] for t in range(3)]
    v = [c_[t] - a[t] for t in range(3)]
    w = [d[t] - a[t] for t in range(3)]
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
            + u[2] * (v[0] * w[1] - v[1] * w[0]))


tets = []
for k in range(N):
    for j in range(N):
        for i in range(N):
            for perm in itertools.permutations(range(3)):
                corner = [0, 0, 0]
                path = [tuple(corner)]
                for a in perm:
                    corner[a] = 1
                    path.append(tuple(corner))
                t = [idx(i + p[0], j + p[1], k + p[2]) for p in path]
                if vol(*(nodes[n - 1] for n in t)) < 0:
                    t[2], t[3] = t[3], t[2]
                tets.append(t)

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "incline_cube.msh")
with open(out, "w") as f:
    f.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n")
    f.write('$PhysicalNames\n1\n3 1 "body"\n$EndPhysicalNames\n')
    f.write("$Nodes\n%d\n" % len(nodes))
    for n, p in enumerate(nodes, 1):
        f.write("%d %.17g %.17g %.17g\n" % (n, *p))
    f.write("$EndNodes\n$Elements\n%d\n" % len(tets))
    for e, t in enumerate(tets, 1):
        f.write("%d 4 2 1 1 %d %d %d %d\n" % (e, *t))
    f.write("$EndElements\n")
