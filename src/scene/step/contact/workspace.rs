//! One soft body's buffers in the contact stage (`scene::step::contact::stage`), kept from step
//! to step and grown only when a step meets more contacts than any before: its contact points and their broad phase, its
//! surface tree, what the last step found (contacts with obstacles, itself, other bodies and
//! rigid shapes), its rows of the NCP, the Jacobian H_b, the Delassus assembly's columns
//! A_b⁻¹ H_bᵀ (or the factored operator's rows), and what the step's derivatives read of them.

use faer::dyn_stack::MemBuffer;

use crate::contact::{
    ContactJacobian, ContactPoints, DelassusWorkspace, FactoredDelassusWorkspace, NodeBroadPhase,
    NodeContact, SelfContact, SurfaceTree,
};
use crate::fem::SoftBody;
use crate::linalg::NumericFactor;
use crate::math::{DMat, Vec3};

use super::soft_rigid_rows::SoftRigidScratch;
use crate::scene::model::soft_rigid::SoftRigidRow;

/// Reusable buffers of the contact stage of one body, and what its last step found.
pub struct ContactWorkspace {
    /// The body's contact points (`contact::ContactPoints`): its boundary nodes, or an
    /// embedded surface's vertices.
    pub(in crate::scene) points: ContactPoints,
    /// Indices of the points that can move (not held by fixed nodes only).
    pub(in crate::scene) candidates: Vec<usize>,
    /// An embedded surface's points at the start of the step (m), and their free velocities
    /// (m/s); empty when the points are the nodes.
    pub(in crate::scene) x_points: Vec<Vec3>,
    pub(in crate::scene) v_points: Vec<Vec3>,
    pub(in crate::scene) broad_phase: NodeBroadPhase,
    pub(in crate::scene) contacts: Vec<NodeContact>,
    /// The volume mesh's boundary (self-contact, contact between bodies, rigid corners).
    pub(in crate::scene) surface: SurfaceTree,
    /// An embedded contact surface's triangles over its points, which then stand for the
    /// boundary in self-contact and contact between bodies (rigid corners keep `surface`).
    pub(in crate::scene) point_surface: Option<SurfaceTree>,
    pub(in crate::scene) self_contacts: Vec<SelfContact>,
    /// Indices (in the stage's list of contacts between bodies) of those this body takes
    /// part in, in increasing order.
    pub(in crate::scene) shared: Vec<usize>,
    /// Its rows against rigid bodies: contacts with their shapes, then attachments
    /// (`scene::model::soft_rigid`).
    pub(in crate::scene) rigid_rows: Vec<SoftRigidRow>,
    /// The buffers that find them, reused from step to step.
    pub(in crate::scene) soft_rigid_scratch: SoftRigidScratch,
    /// The row block (contact index) in its NCP of each of the body's contacts.
    pub(in crate::scene) rows: Vec<usize>,
    pub(in crate::scene) jacobian: ContactJacobian,
    pub(in crate::scene) delassus_ws: DelassusWorkspace,
    /// The rows of its NCP when G is not assembled (`[contact] delassus = "factored"`).
    pub(in crate::scene) factored: FactoredDelassusWorkspace,
    /// The body's term h H_b A_b⁻¹ H_bᵀ of its NCP's G (assembly buffer).
    pub(in crate::scene) delassus: DMat,
    pub(in crate::scene) lambda: Vec<f64>,
    pub(in crate::scene) v_nodes: Vec<Vec3>,
    pub(in crate::scene) full: Vec<f64>,
    pub(in crate::scene) red: Vec<f64>,
    pub(in crate::scene) solve_buffer: MemBuffer,
    /// h·max‖v_free‖ over the candidates (m): how far a node may travel this step.
    pub(in crate::scene) reach: f64,
}

impl ContactWorkspace {
    /// Buffers for `body` whose step matrix is factorised in `factor`, touching at its contact
    /// `points`; the candidates are the points that move: the nodes of its
    /// boundary triangles that are not fixed, or the embedded vertices that follow a free
    /// node.
    pub fn new(body: &SoftBody, points: ContactPoints, factor: &NumericFactor) -> ContactWorkspace {
        let dofs = body.pattern().dofs();
        let triangles = body.mesh().boundary_triangles();
        let mut on_surface = vec![false; body.node_count()];
        for t in &triangles {
            for &n in t {
                on_surface[n] = true;
            }
        }
        let surface_nodes: Vec<usize> = (0..body.node_count()).filter(|&n| on_surface[n]).collect();
        let candidates = points.candidates(&surface_nodes, |n| {
            (0..3).any(|p| dofs.reduced_index(3 * n + p).is_some())
        });
        let point_surface = match &points {
            ContactPoints::Nodes => None,
            ContactPoints::Embedded(e) => {
                let mut rest = Vec::new();
                points.fill(body.rest_positions(), &mut rest);
                Some(SurfaceTree::new(e.triangles.clone(), &rest))
            }
        };
        ContactWorkspace {
            point_surface,
            points,
            candidates,
            x_points: Vec::new(),
            v_points: Vec::new(),
            broad_phase: NodeBroadPhase::new(),
            contacts: Vec::new(),
            surface: SurfaceTree::new(triangles, body.rest_positions()),
            self_contacts: Vec::new(),
            shared: Vec::new(),
            rigid_rows: Vec::new(),
            soft_rigid_scratch: SoftRigidScratch::default(),
            rows: Vec::new(),
            jacobian: ContactJacobian::new(body.node_count()),
            delassus_ws: DelassusWorkspace::default(),
            factored: FactoredDelassusWorkspace::default(),
            delassus: DMat::zeros(0, 0),
            lambda: Vec::new(),
            v_nodes: vec![Vec3::zeros(); body.node_count()],
            full: vec![0.0; 3 * body.node_count()],
            red: vec![0.0; dofs.n_reduced()],
            solve_buffer: MemBuffer::new(factor.solve_scratch(1)),
            reach: 0.0,
        }
    }

    /// Forgets the last step's contacts.
    pub(in crate::scene) fn clear(&mut self) {
        self.contacts.clear();
        self.self_contacts.clear();
        self.shared.clear();
        self.rigid_rows.clear();
        self.rows.clear();
        self.jacobian.clear();
        self.lambda.clear();
    }
}

/// What the step's derivatives read of one body's part of the last step's contacts (the NCP
/// itself, G, λ, σ and μ, is the stage's: [`crate::scene::SceneContactWorkspace::groups`]).
impl ContactWorkspace {
    /// The points the body meets obstacles and rigid shapes with (its contacts' `node`
    /// indexes them).
    pub fn points(&self) -> &ContactPoints {
        &self.points
    }

    /// The obstacle contacts of the last step, in NCP order (empty when none was detected).
    pub fn contacts(&self) -> &[NodeContact] {
        &self.contacts
    }

    /// The self-contacts of the last step, in NCP order after the obstacle contacts.
    pub fn self_contacts(&self) -> &[SelfContact] {
        &self.self_contacts
    }

    /// The rows against rigid bodies of the last step (contacts with rigid shapes, then
    /// attachments), in NCP order after the contacts with other soft bodies.
    pub fn rigid_rows(&self) -> &[SoftRigidRow] {
        &self.rigid_rows
    }

    /// λ (N, 3 per contact in each contact's frame `[t₁, t₂, n]`) at the body's contacts.
    pub fn lambda(&self) -> &[f64] {
        &self.lambda
    }

    /// `A⁻¹ H_bᵀ` of the last step (free DOFs, column-major, one column per row of H_b), kept
    /// from the Delassus assembly.
    pub fn solved_columns(&self) -> &[f64] {
        self.delassus_ws.solved_columns()
    }

    /// The last step's contact Jacobian H_b (the body's columns, 3 rows per contact).
    pub fn jacobian(&self) -> &ContactJacobian {
        &self.jacobian
    }

    /// The row block (contact index) in its NCP of each of the body's contacts, in the
    /// body's order (obstacle contacts, self-contacts, then its contacts with other bodies in
    /// the order of `SceneContactWorkspace::body_contacts`): P_b of `scene::step::contact::group`.
    pub fn rows(&self) -> &[usize] {
        &self.rows
    }
}
