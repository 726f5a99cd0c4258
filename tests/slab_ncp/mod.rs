//! The contact NCP of a soft slab resting on the floor, shared by `benches/contact.rs` (which
//! includes this file by path) and `tests/contact_acceleration.rs`.
//!
//! A slab (neo-Hookean, E = 1 MPa, ν = 0.45, 1000 kg/m³, 10 mm cells, 20 mm thick) lies on the
//! floor; its first n bottom nodes are point contacts (z = normal, μ = 0.5); A = M + h²K at
//! rest with h = 10 ms; the free velocity is a fall at 0.1 m/s plus one step of gravity, and a
//! sideways 0.02 m/s on the nodes with x < 0.3 × side, so that some contacts slide.

use std::sync::Arc;

use diffsoro::contact::{
    AdmmSettings, AdmmSolver, ContactJacobian, ContactProblem, DelassusWorkspace, FactoredDelassus,
    FactoredDelassusWorkspace, FrictionCone, NcpSolution, assemble_delassus, free_contact_velocity,
};
use diffsoro::fem::{MassKind, SoftBody, SoftBodyOptions, Stiffness};
use diffsoro::linalg::{FactorKind, NumericFactor, SymbolicFactor, axpby};
use diffsoro::material::{Law, Material};
use diffsoro::math::{DMat, DVec, Mat3, Vec3};
use diffsoro::mesh::box_mesh;

/// Time step (s).
pub const H: f64 = 0.01;

/// The friction coefficient at every contact of the slab.
pub const FRICTION: f64 = 0.5;

/// The slab, its A (lower-triangle values on the body's pattern) and their factor, and the
/// Jacobian of its first `n` bottom nodes.
pub struct SlabContacts {
    pub body: SoftBody,
    /// Read by [`SlabContacts::factored`], which not every includer calls.
    #[allow(dead_code)]
    pub a_values: Vec<f64>,
    pub factor: NumericFactor,
    pub jacobian: ContactJacobian,
}

impl SlabContacts {
    /// The slab with `n` point contacts: enough cells that (cells + 1)² ≥ n.
    pub fn new(n: usize) -> SlabContacts {
        let cells = ((n as f64).sqrt().ceil() as usize).max(2) - 1;
        let side = 0.01 * cells as f64;
        let mesh = box_mesh([cells, cells, 2], [0.0; 3], [side, side, 0.02]).unwrap();
        let nodes = mesh.node_count();
        let options = SoftBodyOptions {
            material: Material::new(Law::NeoHookean, 1e6, 0.45).unwrap(),
            density: 1000.0,
            mass: MassKind::Lumped,
            rayleigh_mass: 0.0,
            rayleigh_stiffness: 0.0,
            fixed: vec![false; nodes],
        };
        let body = SoftBody::new("slab", mesh, options).unwrap();
        let mut state = body.elastic_state();
        body.evaluate_elastic(body.rest_positions(), Stiffness::Assemble, &mut state)
            .unwrap();
        let mut a = state.stiffness.clone();
        axpby(1.0, body.mass_values(), H * H, &mut a);
        let symbolic = Arc::new(SymbolicFactor::new(body.pattern()).unwrap());
        let mut factor = NumericFactor::new(symbolic, FactorKind::Llt);
        factor.factorize(body.pattern(), &a).unwrap();
        let mut jacobian = ContactJacobian::new(nodes);
        let bottom: Vec<usize> = (0..nodes)
            .filter(|&i| body.rest_positions()[i].z < 1e-12)
            .take(n)
            .collect();
        assert_eq!(bottom.len(), n);
        for &b in &bottom {
            jacobian
                .push_point_contact(&Mat3::identity(), &[(b, 1.0)])
                .unwrap();
        }
        SlabContacts {
            body,
            a_values: a,
            factor,
            jacobian,
        }
    }

    /// The NCP: G = h H A⁻¹ Hᵀ by one multi-right-hand-side solve with the factor, and the
    /// free contact velocity.
    /// The slab's Delassus operator through its factor, on the rows of its contacts
    /// (`work` prepared for them).
    #[allow(dead_code)] // the bench and some tests use it
    pub fn factored<'a>(&'a self, work: &'a mut FactoredDelassusWorkspace) -> FactoredDelassus<'a> {
        work.prepare(H, &self.jacobian, self.body.pattern())
            .unwrap();
        FactoredDelassus::new(self.body.pattern(), &self.a_values, &self.factor, work).unwrap()
    }

    pub fn problem(&self) -> ContactProblem {
        let mut g_mat = DMat::zeros(0, 0);
        assemble_delassus(
            H,
            &self.jacobian,
            self.body.pattern().dofs(),
            &self.factor,
            &mut DelassusWorkspace::default(),
            &mut g_mat,
        )
        .unwrap();
        let n = self.jacobian.contact_count();
        ContactProblem::new(
            g_mat,
            DVec::from_vec(self.free_velocity()),
            &vec![FRICTION; n],
        )
        .unwrap()
    }

    /// The free contact velocity g (m/s, 3 per contact) of [`Self::problem`]: the slab moving
    /// down at 0.1 m/s plus a step of gravity, its left 30 % pushed sideways at 0.02 m/s.
    pub fn free_velocity(&self) -> Vec<f64> {
        let x = self.body.rest_positions();
        let side = x.iter().map(|p| p.x).fold(0.0, f64::max);
        let v_free: Vec<Vec3> = x
            .iter()
            .map(|p| {
                let push = if p.x < 0.3 * side { 0.02 } else { 0.0 };
                Vec3::new(push, 0.0, -0.1 - 9.81 * H)
            })
            .collect();
        let mut g = vec![0.0; self.jacobian.row_count()];
        free_contact_velocity(&self.jacobian, &v_free, &mut g);
        g
    }

    /// The friction cones of [`Self::problem`] (μ = [`FRICTION`] at every contact).
    #[allow(dead_code)] // some tests use it
    pub fn cones(&self) -> Vec<FrictionCone> {
        let n = self.jacobian.contact_count();
        vec![FrictionCone::new(FRICTION).unwrap(); n]
    }
}

/// The reference solution of a slab NCP: plain ADMM (no extrapolation) to 1e-13, which the
/// tests compare other solvers with (λ is unique: every row is a node of the slab, G is
/// positive definite). Panics if it does not converge.
#[allow(dead_code)] // the tests use it, the bench does not
pub fn reference(p: &ContactProblem) -> NcpSolution {
    // Plain ADMM alone: neither extrapolated nor polished, so that it checks both.
    let exact = AdmmSolver::new(AdmmSettings {
        anderson_memory: 0,
        polish: false,
        tolerance: 1e-13,
        max_iterations: 20_000,
        ..AdmmSettings::default()
    })
    .solve(p, None)
    .unwrap();
    assert!(exact.converged, "the reference did not converge");
    exact
}
