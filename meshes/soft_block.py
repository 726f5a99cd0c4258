"""Writes two structured meshes (MSH 2.2) of 10 mm cells, 6 tetrahedra per cell (Kuhn split,
conforming; kuhn.py), for the mixed rigid/soft scenes:
- soft_block.msh: a 40 × 40 × 20 mm block, x and y in [−20, 20] mm, z in [0, 20] mm
  (scenes/cube_on_block.toml, lift_pad.toml, gripper_lift.toml);
- cube30.msh: a 30 mm cube centred on the origin (the grasped cube of gripper_lift.toml as a
  stiff soft body, tests/mixed_scenes.rs).
Run: python3 meshes/soft_block.py (no dependencies)."""
import os

from kuhn import grid_nodes, kuhn_tets, write_msh22

HERE = os.path.dirname(os.path.abspath(__file__))


def write(name, cells, lo, hi):
    point = lambda i, j, k: tuple(
        lo[a] + (i, j, k)[a] / cells[a] * (hi[a] - lo[a]) for a in range(3)
    )
    nodes = grid_nodes(cells, point)
    write_msh22(os.path.join(HERE, name), nodes, kuhn_tets(cells, nodes))


write("soft_block.msh", (4, 4, 2), (-0.02, -0.02, 0.0), (0.02, 0.02, 0.02))
write("cube30.msh", (3, 3, 3), (-0.015, -0.015, -0.015), (0.015, 0.015, 0.015))
