"""What the measuring scripts share (measure_trunk.py, measure_finger.py,
measure_pneunet.py): reading a tetrahedral mesh, its volume, and the moments of its cut by a
plane perpendicular to an axis."""

import contextlib
import io

import meshio
import numpy as np


def read(path):
    """The meshio mesh of `path` (meshio's own blank lines silenced)."""
    with contextlib.redirect_stdout(io.StringIO()):
        return meshio.read(path)


def load(path, scale):
    """Node positions (times `scale`) and tetrahedra of the mesh file `path`."""
    m = read(path)
    t = np.concatenate([c.data for c in m.cells if c.type == "tetra"])
    return m.points * scale, t


def volume(p, t):
    """Total volume of the tetrahedra `t` over the nodes `p`."""
    a, b, c, d = (p[t[:, i]] for i in range(4))
    return np.abs(np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a)).sum() / 6


def cut_moments(p, t, axis, at):
    """Moments of the cut of the tetrahedra by the plane {coordinate `axis` = `at`}, in the
    two other coordinates (u, v) in increasing order: (A, ∫u, ∫v, ∫u², ∫v²). Each tetrahedron
    the plane crosses cuts it in a triangle or a convex quadrilateral."""
    others = [k for k in range(3) if k != axis]
    w = p[t][:, :, axis]
    A = Su = Sv = Suu = Svv = 0.0
    for tet in t[(w.min(1) < at) & (w.max(1) > at)]:
        q = p[tet]
        pts = []
        for i in range(4):
            for j in range(i + 1, 4):
                wi, wj = q[i, axis] - at, q[j, axis] - at
                if (wi < 0) != (wj < 0):
                    pts.append(q[i, others] + wi / (wi - wj) * (q[j, others] - q[i, others]))
        pts = np.array(pts)
        c = pts.mean(0)
        pts = pts[np.argsort(np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0]))]
        u, v = pts[:, 0], pts[:, 1]
        u1, v1 = np.roll(u, -1), np.roll(v, -1)
        cr = u * v1 - u1 * v
        A += cr.sum() / 2
        Su += ((u + u1) * cr).sum() / 6
        Sv += ((v + v1) * cr).sum() / 6
        Suu += ((u * u + u * u1 + u1 * u1) * cr).sum() / 12
        Svv += ((v * v + v * v1 + v1 * v1) * cr).sum() / 12
    return A, Su, Sv, Suu, Svv
