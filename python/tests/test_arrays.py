"""A soft body built from arrays (as meshio, gmsh or pyvista give them) is the same model as
the same mesh read from a file: the two scenes step to bit-identical states."""

import numpy as np
import pytest

import diffsoro
from conftest import REPO


def read_msh22(path):
    """Nodes (n, 3) and 0-based tetrahedra (m, 4) of an ASCII MSH 2.2 file."""
    lines = path.read_text().splitlines()
    i = lines.index("$Nodes")
    n = int(lines[i + 1])
    nodes = np.array([[float(v) for v in l.split()[1:4]] for l in lines[i + 2 : i + 2 + n]])
    j = lines.index("$Elements")
    m = int(lines[j + 1])
    tets = []
    for l in lines[j + 2 : j + 2 + m]:
        f = [int(v) for v in l.split()]
        if f[1] == 4:  # a 4-node tetrahedron: number, type, tag count, tags…, nodes
            tets.append([v - 1 for v in f[3 + f[2] :]])
    return nodes, np.array(tets, dtype=np.int64)


TOML = """
[simulation]
dt = 0.005
steps = 20
gravity = [0.0, 0.0, -9.81]

[[soft_body]]
name = "block"
mesh = "meshes/soft_block.msh"
law = "neo_hookean"
young_modulus = 1.0e5
poisson_ratio = 0.3
density = 1000.0
rayleigh_mass = 2.0
fixed_box = [[-1.0, -1.0, -0.001], [1.0, 1.0, 0.001]]
"""


def test_a_body_from_arrays_steps_as_the_same_mesh_from_its_file():
    nodes, tets = read_msh22(REPO / "meshes" / "soft_block.msh")
    assert nodes.shape == (75, 3) and tets.shape == (192, 4)
    fixed = np.flatnonzero(np.abs(nodes[:, 2]) <= 0.001)
    from_arrays = diffsoro.Scene.from_arrays(
        nodes, tets, name="block", law="neo_hookean", young_modulus=1.0e5,
        poisson_ratio=0.3, density=1000.0, rayleigh_mass=2.0, fixed=fixed.tolist(),
        dt=0.005, steps=20,
    )
    from_file = diffsoro.Scene.from_toml(TOML, base_dir=REPO)
    a, b = diffsoro.Simulation(from_arrays), diffsoro.Simulation(from_file)
    a.run()
    b.run()
    assert np.array_equal(a.positions("block"), b.positions("block"))
    assert a.positions("block")[:, 2].min() < nodes[:, 2].min() + 1e-12  # the base held
    assert not np.array_equal(a.positions("block"), nodes)  # and the rest sagged


def test_bad_arrays_are_value_errors_naming_them():
    nodes, tets = read_msh22(REPO / "meshes" / "soft_block.msh")
    kw = dict(young_modulus=1e5, poisson_ratio=0.3, density=1000.0)
    with pytest.raises(ValueError, match="nodes"):
        diffsoro.Scene.from_arrays(nodes[:, :2], tets, **kw)
    with pytest.raises(ValueError, match="tets row 3"):
        bad = tets.copy()
        bad[3, 1] = 75
        diffsoro.Scene.from_arrays(nodes, bad, **kw)
    with pytest.raises(ValueError, match="fixed"):
        diffsoro.Scene.from_arrays(nodes, tets, fixed=[-1], **kw)
    with pytest.raises(ValueError, match="tetrahedron 0"):
        flat = nodes.copy()
        flat[tets[0], 2] = 0.0
        flat[tets[0], 1] = 0.0
        diffsoro.Scene.from_arrays(flat, tets[:1], **kw)
    with pytest.raises(ValueError, match="law"):
        diffsoro.Scene.from_arrays(nodes, tets, law="rubber", **kw)
    with pytest.raises(ValueError):
        diffsoro.Scene.from_arrays(nodes, tets, young_modulus=-1.0, poisson_ratio=0.3, density=1000.0)
