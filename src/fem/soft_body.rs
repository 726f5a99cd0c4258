//! The soft-body model: a tetrahedral mesh with its material, mass, damping and fixed nodes,
//! precomputed once (elements, sparsity pattern over the free degrees of freedom, mass).

use crate::error::{Error, Result};
use crate::linalg::SymmetricPattern;
use crate::material::{Material, SofaRestFrame};
use crate::math::Vec3;
use crate::mesh::Mesh;

use super::mass::MassKind;
use super::mass_damping::masses;
use super::rest_frame::rest_frames;
use super::tetrahedron::Tetrahedron;

/// What a soft body is made of and how it is held (everything but its mesh).
#[derive(Debug, Clone, PartialEq)]
pub struct SoftBodyOptions {
    /// Constitutive law and its parameters.
    pub material: Material,
    /// Mass density ρ (kg/m³); with [`MassKind::Uniform`], the mean density total mass / rest
    /// volume.
    pub density: f64,
    /// Lumped, consistent or uniform mass.
    pub mass: MassKind,
    /// Rayleigh mass coefficient α (1/s) of D = αM + βK.
    pub rayleigh_mass: f64,
    /// Rayleigh stiffness coefficient β (s) of D = αM + βK.
    pub rayleigh_stiffness: f64,
    /// Per node: fixed (its three degrees of freedom are removed from the system).
    pub fixed: Vec<bool>,
}

#[cfg(test)]
impl SoftBodyOptions {
    /// The unit tests' body of `material`: lumped masses at 1000 kg/m³, no damping, the nodes
    /// flagged in `fixed` held.
    pub(crate) fn for_tests(material: Material, fixed: Vec<bool>) -> SoftBodyOptions {
        SoftBodyOptions {
            material,
            density: 1000.0,
            mass: MassKind::Lumped,
            rayleigh_mass: 0.0,
            rayleigh_stiffness: 0.0,
            fixed,
        }
    }
}

/// An immutable soft-body model (Pinocchio's "Model"): mesh in metres, elements, pattern of
/// the system matrix over the free degrees of freedom, mass. Its per-step buffers live in a
/// [`super::ElasticState`] and in the step's workspace.
#[derive(Debug, Clone)]
pub struct SoftBody {
    name: String,
    mesh: Mesh,
    options: SoftBodyOptions,
    elements: Vec<Tetrahedron>,
    frames: Vec<SofaRestFrame>,
    pattern: SymmetricPattern,
    node_mass: Vec<f64>,
    mass_values: Vec<f64>,
    incidence_ptr: Vec<usize>,
    incidence: Vec<(u32, u8)>,
    /// Per element: `None` (the body's material) or the Lamé pair of its region
    /// ([`super::MaterialRegion`]); empty without regions.
    pub(super) region_lame: Vec<Option<crate::material::Lame>>,
}

impl SoftBody {
    /// Builds the model of the body `name` from its mesh (coordinates in m) and options.
    /// Errors name the body: a `fixed` list of the wrong length, a body with no tetrahedron.
    pub fn new(name: &str, mesh: Mesh, options: SoftBodyOptions) -> Result<SoftBody> {
        SoftBody::with_couplings(name, mesh, options, &[] as &[Vec<usize>])
    }

    /// As [`SoftBody::new`], with the pattern widened by `couplings`: node lists that a
    /// term outside the elements couples (an actuator's tangent in A, e.g. a cable segment's
    /// embedded points, which lie in different elements). Errors as [`SoftBody::new`], or
    /// a coupling naming a node out of range.
    pub fn with_couplings<C: AsRef<[usize]>>(
        name: &str,
        mesh: Mesh,
        options: SoftBodyOptions,
        couplings: &[C],
    ) -> Result<SoftBody> {
        let n = mesh.node_count();
        if options.fixed.len() != n {
            return Err(Error::invalid(
                format!("soft_body.{name}"),
                format!("{} fixed flags for {n} nodes", options.fixed.len()),
            ));
        }
        if mesh.tetrahedra().is_empty() {
            return Err(Error::invalid(
                format!("soft_body.{name}.mesh"),
                "has no tetrahedron",
            ));
        }
        if !(options.density.is_finite() && options.density > 0.0) {
            return Err(Error::invalid(
                format!("soft_body.{name}.density"),
                "must be positive",
            ));
        }
        let elements: Vec<Tetrahedron> = mesh
            .tetrahedra()
            .iter()
            .map(|&t| Tetrahedron::new(t, mesh.positions()))
            .collect();
        let frames = rest_frames(options.material.law(), &elements, mesh.positions())
            .map_err(|e| prefix_body(e, name))?;
        let removed: Vec<bool> = options.fixed.iter().flat_map(|&f| [f; 3]).collect();
        let pattern =
            SymmetricPattern::with_couplings(n, 3, mesh.tetrahedra(), couplings, &removed)?;
        let (node_mass, mass_values) = masses(&pattern, &elements, &options);
        // Node → (element, local index) incidence, for the parallel gather of nodal forces.
        let mut count = vec![0usize; n + 1];
        for e in &elements {
            for &v in &e.nodes {
                count[v + 1] += 1;
            }
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        let mut fill = count.clone();
        let mut incidence = vec![(0u32, 0u8); count[n]];
        for (ei, e) in elements.iter().enumerate() {
            for (local, &v) in e.nodes.iter().enumerate() {
                incidence[fill[v]] = (ei as u32, local as u8);
                fill[v] += 1;
            }
        }
        Ok(SoftBody {
            name: name.to_string(),
            mesh,
            options,
            elements,
            frames,
            pattern,
            node_mass,
            mass_values,
            incidence_ptr: count,
            incidence,
            region_lame: Vec::new(),
        })
    }

    /// The body's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its mesh (rest positions in m).
    pub fn mesh(&self) -> &Mesh {
        &self.mesh
    }

    /// Rest positions (m).
    pub fn rest_positions(&self) -> &[Vec3] {
        self.mesh.positions()
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.mesh.node_count()
    }

    /// The options it was built with.
    pub fn options(&self) -> &SoftBodyOptions {
        &self.options
    }

    /// The options, to change in place (`mass_damping`'s setters, which rebuild what
    /// depends on them).
    pub(super) fn options_mut(&mut self) -> &mut SoftBodyOptions {
        &mut self.options
    }

    /// Replaces the nodal masses and the values of M (`mass_damping::SoftBody::set_density`).
    pub(super) fn set_masses(&mut self, node_mass: Vec<f64>, mass_values: Vec<f64>) {
        self.node_mass = node_mass;
        self.mass_values = mass_values;
    }

    /// Its material.
    pub fn material(&self) -> &Material {
        &self.options.material
    }

    /// Replaces the material (same law or not); the pattern and mass are unchanged, the rest
    /// frames of `corotational_sofa` computed or dropped as the new law needs.
    pub fn set_material(&mut self, material: Material) {
        if material.law() != self.options.material.law() {
            self.frames = rest_frames(material.law(), &self.elements, self.mesh.positions())
                .expect("the rest frames of a mesh that built a body are computable");
        }
        self.options.material = material;
    }

    /// Per element, the rest frame of the `corotational_sofa` law; empty for the other laws.
    pub(super) fn rest_frames(&self) -> &[SofaRestFrame] {
        &self.frames
    }

    /// The tetrahedra with their rest data.
    pub fn elements(&self) -> &[Tetrahedron] {
        &self.elements
    }

    /// The sparsity pattern of K, M and A = M + hD + h²K over the free degrees of freedom.
    pub fn pattern(&self) -> &SymmetricPattern {
        &self.pattern
    }

    /// Nodal masses (kg): the lumped ones, or the uniform ones with [`MassKind::Uniform`]; also
    /// the gravity-load weights fₙ = mₙ g.
    pub fn node_masses(&self) -> &[f64] {
        &self.node_mass
    }

    /// Values of the mass matrix M on [`SoftBody::pattern`] (kg).
    pub fn mass_values(&self) -> &[f64] {
        &self.mass_values
    }

    /// Total mass (kg).
    pub fn total_mass(&self) -> f64 {
        self.node_mass.iter().sum()
    }

    /// Whether node `n` is fixed.
    pub fn is_fixed(&self, n: usize) -> bool {
        self.options.fixed[n]
    }

    /// The (element, local node) pairs of node `n`.
    pub(super) fn incidence(&self, n: usize) -> &[(u32, u8)] {
        &self.incidence[self.incidence_ptr[n]..self.incidence_ptr[n + 1]]
    }

    /// Sums per-element nodal vectors (`element_vectors[e][local]`) into one vector per node
    /// (`out`, overwritten), in parallel over nodes; bit-identical for any thread count.
    pub(super) fn gather(&self, element_vectors: &[[Vec3; 4]], out: &mut [Vec3]) {
        use rayon::prelude::*;
        out.par_iter_mut().enumerate().for_each(|(n, o)| {
            *o = self
                .incidence(n)
                .iter()
                .map(|&(e, local)| element_vectors[e as usize][local as usize])
                .sum();
        });
    }
}

/// Prefixes an `Invalid` error's item with the body (`tetrahedron 3` →
/// `soft_body.NAME.tetrahedron 3`).
fn prefix_body(e: Error, name: &str) -> Error {
    match e {
        Error::Invalid { what, message } => {
            Error::invalid(format!("soft_body.{name}.{what}"), message)
        }
        other => other,
    }
}
