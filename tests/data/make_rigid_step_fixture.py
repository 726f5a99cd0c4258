"""One rigid step of the standing quadruped computed with Pinocchio, as a reference for
tests/rigid_scenes.rs (`one_quadruped_step_agrees_with_pinocchio`).

Provenance: run offline with Pinocchio 4.1.0 (`pip install pin==4.1.0`, numpy) as
    python tests/data/make_rigid_step_fixture.py STATE.json > tests/data/quadruped_step_pinocchio.json
where STATE.json is the final state of
    diffsoro simulate scenes/quadruped_standing.toml --steps 3000
(its `robots[0].q`, `v`: the starting state; nothing else of diffsoro's output is used).

The step is paper 002 Eq. 3 as docs/rigid.md states it, computed here from Pinocchio's
algorithms: the PD input of the scene clamped to the URDF effort limits, v_free = v + h ABA,
the four foot contacts (a 0.02 m sphere at each `*_foot` frame against the plane z = 0:
contact point midway between the sphere's lowest point and the plane, normal +z, frame
[x, y, z]), their point Jacobians from `getJointJacobian(WORLD)`, M from CRBA,
G = h J M⁻¹ Jᵀ, g = J v_free + Φ/h − 0.8 [Φ/h]₋, and the NCP solved by Pinocchio's
ADMMConstraintSolver (checked against the sticking solution λ = −G⁻¹ g, which lies inside
the cones here). v⁺ = v_free + h M⁻¹ Jᵀ λ, q⁺ = integrate(q, h v⁺).
"""
import json
import sys

import numpy as np
import pinocchio as pin

state = json.load(open(sys.argv[1]))["robots"][0]
model = pin.buildModelFromUrdf("urdf/quadruped.urdf", pin.JointModelFreeFlyer())
data = model.createData()
q = np.array(state["q"])
v = np.array(state["v"])
h = 0.002
mu = 0.8
radius = 0.02
# The scene's PD (kp 60, kd 2 on the 12 leg joints), clamped to the efforts (30 N·m).
target = np.array([0.0, 0.0, 0.3125, 0.0, 0.0, 0.0, 1.0] + [0.0, 0.8, -1.5] * 4)
kp = np.array([0.0] * 6 + [60.0] * 12)
kd = np.array([0.0] * 6 + [2.0] * 12)
tau = kp * pin.difference(model, q, target) - kd * v
tau = np.clip(tau, -model.effortLimit, model.effortLimit)
v_free = v + h * pin.aba(model, data, q, v, tau)
M = pin.crba(model, data, q)
M = np.triu(M) + np.triu(M, 1).T
pin.computeJointJacobians(model, data, q)
pin.updateFramePlacements(model, data)
rows, points, gaps = [], [], []
for leg in ["FL", "FR", "HL", "HR"]:
    frame = model.getFrameId(leg + "_foot")
    centre = data.oMf[frame].translation
    gap = centre[2] - radius
    point = np.array([centre[0], centre[1], 0.5 * gap])
    joint = model.frames[frame].parentJoint
    J = pin.getJointJacobian(model, data, joint, pin.ReferenceFrame.WORLD)
    skew = pin.skew(point)
    rows.append(J[:3] - skew @ J[3:])  # frame [x, y, z] = identity
    points.append(point.tolist())
    gaps.append(gap)
J = np.vstack(rows)
G = h * J @ np.linalg.solve(M, J.T)
g = J @ v_free
for i, phi in enumerate(gaps):
    r = phi / h
    g[3 * i + 2] += r - 0.8 * min(r, 0.0)
# Sticking solution (σ = 0), then Pinocchio's ADMM on the same problem.
lam_stick = -np.linalg.solve(G, g)
for i in range(4):
    lt = np.hypot(lam_stick[3 * i], lam_stick[3 * i + 1])
    assert lam_stick[3 * i + 2] > 0 and lt < mu * lam_stick[3 * i + 2], "not sticking"
constraints = pin.StdVec_ConstraintModel()
for leg in ["FL", "FR", "HL", "HR"]:
    c = pin.PointContactConstraintModel(model, model.frames[model.getFrameId(leg + "_foot")].parentJoint)
    c.setFriction(mu)
    constraints.append(pin.ConstraintModel(c))
datas = pin.StdVec_ConstraintData()
for c in constraints:
    datas.append(c.createData())
lam = lam_stick
admm = None
try:
    settings = pin.ADMMSolverSettings()
    settings.absolute_feasibility_tol = 1e-12
    settings.absolute_complementarity_tol = 1e-12
    settings.max_iterations = 10000
    result = pin.ADMMSolverResult()
    solver = pin.ADMMConstraintSolver(12)
    ok = solver.solve(pin.DelassusOperatorDense(G), g, constraints, datas, settings, result)
    impulses = np.array(result.retrieveConstraintImpulses())
    assert ok and np.abs(impulses - lam_stick).max() < 1e-8 * np.abs(lam_stick).max(), (impulses, lam_stick)
    lam = admm = impulses
except Exception as e:  # noqa: BLE001 - record why the ADMM path was not used
    print(f"Pinocchio ADMM not used: {e}", file=sys.stderr)
v_plus = v_free + h * np.linalg.solve(M, J.T @ lam)
q_plus = pin.integrate(model, q, h * v_plus)
json.dump(
    {
        "provenance": "tests/data/make_rigid_step_fixture.py, Pinocchio " + pin.__version__,
        "ncp_solver": "pinocchio ADMMConstraintSolver" if admm is not None else "sticking solution -G^-1 g",
        "h": h,
        "q": q.tolist(),
        "v": v.tolist(),
        "tau": tau.tolist(),
        "points": points,
        "gaps": gaps,
        "lambda": lam.tolist(),
        "v_plus": v_plus.tolist(),
        "q_plus": q_plus.tolist(),
    },
    sys.stdout,
    indent=1,
)
