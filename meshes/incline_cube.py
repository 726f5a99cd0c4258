"""Writes incline_cube.msh (MSH 2.2): a 20 mm cube of 3×3×3 cells, 6 tetrahedra per cell
(Kuhn split, conforming; kuhn.py), rotated by 20° about +y so that its bottom face lies on the plane
through the origin with normal (−sin 20°, 0, cos 20°) of scenes/contact_incline.toml.
Run: python3 meshes/incline_cube.py (no dependencies)."""
import math
import os

from kuhn import grid_nodes, kuhn_tets, write_msh22

N, SIDE, THETA = 3, 0.02, math.radians(20.0)
c, s = math.cos(THETA), math.sin(THETA)


def rot(p):
    # rotation by THETA about +y: x' = c x + s z, z' = -s x + c z; maps e_z to (s, 0, c) —
    # we want the normal (-s, 0, c), so rotate by -THETA.
    x, y, z = p
    return (c * x - s * z, y, s * x + c * z)


nodes = grid_nodes((N, N, N), lambda i, j, k: rot((SIDE * i / N, SIDE * j / N, SIDE * k / N)))
write_msh22(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "incline_cube.msh"),
    nodes,
    kuhn_tets((N, N, N), nodes),
)
