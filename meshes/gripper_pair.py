"""Writes gripper_pair.msh: both fingers of scenes/gripper.toml as ONE mesh, so that the
self-contact of one body makes them touch (scenes/gripper_touching.toml).

Run: python3 meshes/gripper_pair.py   (needs meshio + numpy: pip install meshio numpy)

Input: servo_finger.msh (MSH 4.1, groups `horn`, `fixed`, `body`).
Left finger: the mesh as it is (nodes 1..N), its contact wall at x = 40 mm facing +x.
Right finger: the same mesh turned by pi about y and moved by (0.1, 0, 0.02) m, exactly as
gripper.toml places `finger_right`: (x, y, z) -> (0.1 - x, y, 0.02 - z) (a proper rotation, so
tetrahedra and boundary triangles keep their orientation); nodes N+1..2N, its contact wall at
x = 60 mm facing -x: a 20 mm gap, no node shared.
Output (MSH 2.2 ASCII, metres): physical groups
  `fixed`      (2D, tag 1): both fixed feet (26 + 26 triangles),
  `horn_left`  (2D, tag 2): the left finger's horn face,
  `horn_right` (2D, tag 3): the right finger's horn face,
  `body`       (3D, tag 4): all tetrahedra (left first).
"""
import os

import meshio
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def groups(mesh, cell_type):
    """{group name: array of cells} of the cells of `cell_type` by physical tag."""
    names = {int(v[0]): k for k, v in mesh.field_data.items()}
    out = {}
    for block, tags in zip(mesh.cells, mesh.cell_data["gmsh:physical"]):
        if block.type != cell_type:
            continue
        for tag in np.unique(tags):
            cells = block.data[tags == tag]
            name = names[int(tag)]
            out[name] = np.vstack([out[name], cells]) if name in out else cells
    return out


def main():
    finger = meshio.read(os.path.join(HERE, "servo_finger.msh"))
    x = np.asarray(finger.points, dtype=float)
    n = len(x)
    right = np.column_stack([0.1 - x[:, 0], x[:, 1], 0.02 - x[:, 2]])
    points = np.vstack([x, right])
    tris = groups(finger, "triangle")
    tets = groups(finger, "tetra")["body"]

    def vol6(t):
        a, b, c, d = (points[t[:, i]] for i in range(4))
        return np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a)

    all_tets = np.vstack([tets, tets + n])
    assert (vol6(all_tets) > 0).all(), "a tetrahedron lost its orientation"
    elements = []  # (gmsh type, physical tag, 0-based nodes)
    for t in tris["fixed"]:
        elements.append((2, 1, t))
    for t in tris["fixed"]:
        elements.append((2, 1, t + n))
    for t in tris["horn"]:
        elements.append((2, 2, t))
    for t in tris["horn"]:
        elements.append((2, 3, t + n))
    for t in all_tets:
        elements.append((4, 4, t))
    with open(os.path.join(HERE, "gripper_pair.msh"), "w") as f:
        f.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n")
        f.write('$PhysicalNames\n4\n2 1 "fixed"\n2 2 "horn_left"\n2 3 "horn_right"\n'
                '3 4 "body"\n$EndPhysicalNames\n')
        f.write("$Nodes\n%d\n" % len(points))
        for i, p in enumerate(points, 1):
            f.write("%d %.17g %.17g %.17g\n" % (i, *p))
        f.write("$EndNodes\n$Elements\n%d\n" % len(elements))
        for e, (kind, tag, nodes) in enumerate(elements, 1):
            f.write("%d %d 2 %d %d %s\n" % (e, kind, tag, tag, " ".join(str(int(v) + 1) for v in nodes)))
        f.write("$EndElements\n")
    print("gripper_pair.msh: %d nodes, %d tetrahedra, %d triangles"
          % (len(points), len(all_tets), len(elements) - len(all_tets)))


if __name__ == "__main__":
    main()
