"""Structured tetrahedral meshes for the project's generator scripts (no dependencies): a grid
of nx × ny × nz cells, each cut into 6 tetrahedra around a main diagonal (Kuhn / Freudenthal
split, conforming between cells), and an MSH 2.2 writer. Nodes are numbered from 1, i fastest:
node (i, j, k) is `1 + i + (nx + 1) (j + (ny + 1) k)`."""
import itertools


def vol(a, b, c, d):
    """Six times the signed volume of the tetrahedron (a, b, c, d)."""
    u = [b[t] - a[t] for t in range(3)]
    v = [c[t] - a[t] for t in range(3)]
    w = [d[t] - a[t] for t in range(3)]
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
            + u[2] * (v[0] * w[1] - v[1] * w[0]))


def grid_nodes(cells, point):
    """The (nx + 1)(ny + 1)(nz + 1) nodes `point(i, j, k)`, i fastest."""
    nx, ny, nz = cells
    return [point(i, j, k) for k in range(nz + 1) for j in range(ny + 1) for i in range(nx + 1)]


def kuhn_tets(cells, nodes, mirrored=lambda i, j, k: False):
    """6 positively oriented tetrahedra per cell (1-based node numbers); a cell for which
    `mirrored` is true uses the split mirrored in x."""
    nx, ny, _ = cells
    idx = lambda i, j, k: 1 + i + (nx + 1) * (j + (ny + 1) * k)
    tets = []
    for k in range(cells[2]):
        for j in range(ny):
            for i in range(nx):
                for perm in itertools.permutations(range(3)):
                    corner = [0, 0, 0]
                    path = [tuple(corner)]
                    for a in perm:
                        corner[a] = 1
                        path.append(tuple(corner))
                    if mirrored(i, j, k):
                        path = [(1 - p[0], p[1], p[2]) for p in path]
                    t = [idx(i + p[0], j + p[1], k + p[2]) for p in path]
                    if vol(*(nodes[n - 1] for n in t)) < 0:
                        t[2], t[3] = t[3], t[2]
                    tets.append(t)
    return tets


def write_msh22(path, nodes, tets):
    """An ASCII MSH 2.2 file of the tetrahedra, all in the physical group `body`."""
    with open(path, "w") as f:
        f.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n")
        f.write('$PhysicalNames\n1\n3 1 "body"\n$EndPhysicalNames\n')
        f.write("$Nodes\n%d\n" % len(nodes))
        for n, p in enumerate(nodes, 1):
            f.write("%d %.17g %.17g %.17g\n" % (n, *p))
        f.write("$EndNodes\n$Elements\n%d\n" % len(tets))
        for e, t in enumerate(tets, 1):
            f.write("%d 4 2 1 1 %d %d %d %d\n" % (e, *t))
        f.write("$EndElements\n")
