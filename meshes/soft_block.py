"""Writes two structured meshes (MSH 2.2) of 10 mm cells, 6 tetrahedra per cell (Kuhn split,
conforming), for the mixed rigid/soft scenes:
- soft_block.msh: a 40 × 40 × 20 mm block, x and y in [−20, 20] mm, z in [0, 20] mm
  (scenes/cube_on_block.toml, lift_pad.toml, gripper_lift.toml);
- cube30.msh: a 30 mm cube centred on the origin (the grasped cube of gripper_lift.toml as a
  stiff soft body, tests/mixed_scenes.rs).
Run: python3 meshes/soft_block.py (no dependencies)."""
import itertools
import os

def vol(a, b, c, d):
    u = [b[t] - a[t] for t in range(3)]
    v = [c[t] - a[t] for t in range(3)]
    w = [d[t] - a[t] for t in range(3)]
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
            + u[2] * (v[0] * w[1] - v[1] * w[0]))


def write(name, cells, lo, hi):
    nx, ny, nz = cells

    def idx(i, j, k):
        return 1 + i + (nx + 1) * (j + (ny + 1) * k)

    nodes = []
    for k in range(nz + 1):
        for j in range(ny + 1):
            for i in range(nx + 1):
                t = (i / nx, j / ny, k / nz)
                nodes.append(tuple(lo[a] + t[a] * (hi[a] - lo[a]) for a in range(3)))
    tets = []
    for k in range(nz):
        for j in range(ny):
            for i in range(nx):
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

    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
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


write("soft_block.msh", (4, 4, 2), (-0.02, -0.02, 0.0), (0.02, 0.02, 0.02))
write("cube30.msh", (3, 3, 3), (-0.015, -0.015, -0.015), (0.015, 0.015, 0.015))
