"""Writes soft_block.msh (MSH 2.2): a 40 × 40 × 20 mm block, x and y in [−20, 20] mm and z in
[0, 20] mm, of 4 × 4 × 2 cells of 10 mm, 6 tetrahedra per cell (Kuhn split, conforming). Used
by the mixed rigid/soft scenes (scenes/cube_on_block.toml, scenes/cube_strikes_block.toml,
scenes/lift_pad.toml). Run: python3 meshes/soft_block.py (no dependencies)."""
import itertools
import os

NX, NY, NZ = 4, 4, 2
LO = (-0.02, -0.02, 0.0)
HI = (0.02, 0.02, 0.02)


def idx(i, j, k):
    return 1 + i + (NX + 1) * (j + (NY + 1) * k)


nodes = []
for k in range(NZ + 1):
    for j in range(NY + 1):
        for i in range(NX + 1):
            t = (i / NX, j / NY, k / NZ)
            nodes.append(tuple(LO[a] + t[a] * (HI[a] - LO[a]) for a in range(3)))


def vol(a, b, c, d):
    u = [b[t] - a[t] for t in range(3)]
    v = [c[t] - a[t] for t in range(3)]
    w = [d[t] - a[t] for t in range(3)]
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
            + u[2] * (v[0] * w[1] - v[1] * w[0]))


tets = []
for k in range(NZ):
    for j in range(NY):
        for i in range(NX):
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

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "soft_block.msh")
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
