//! A soft body's mass and damping parameters (docs/derivatives.md): the Rayleigh coefficients
//! α (1/s) and β (s) of D = αM + βK̂, and the density ρ (kg/m³) of a lumped or consistent
//! mass, with the setters that rebuild what depends on them.
//!
//! The mass matrix M and the nodal masses mₙ (the gravity weights mₙ g) are linear in ρ for
//! the lumped and the consistent mass (ρVₑ/4 per node and tetrahedron, ρVₑ(1 + δᵢⱼ)/20 per
//! component), so ∂M/∂ρ = M/ρ and ∂mₙ/∂ρ = mₙ/ρ. A uniform mass (`mass = "uniform"`) is set
//! by its total mass instead; its ρ is only the mean density total mass / rest volume.

use crate::error::{Error, Result};

use super::mass::{MassKind, consistent_mass_block, lumped_masses, uniform_masses};
use super::soft_body::{SoftBody, SoftBodyOptions};
use super::tetrahedron::Tetrahedron;
use crate::linalg::SymmetricPattern;

/// A differentiable mass or damping parameter of a soft body (not of its elastic law).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MassDampingParameter {
    /// The Rayleigh mass coefficient α (1/s) of D = αM + βK̂.
    RayleighMass,
    /// The Rayleigh stiffness coefficient β (s) of D = αM + βK̂.
    RayleighStiffness,
    /// The density ρ (kg/m³) of a lumped or consistent mass: M and the weights mₙ g scale
    /// with it.
    Density,
}

impl MassDampingParameter {
    /// The three parameters, in the order of [`MassDampingParameter::index`].
    pub const ALL: [MassDampingParameter; 3] = [
        MassDampingParameter::RayleighMass,
        MassDampingParameter::RayleighStiffness,
        MassDampingParameter::Density,
    ];

    /// The name used in sensitivity and calibration parameter names, and the scene key
    /// (`rayleigh_mass`, `rayleigh_stiffness`, `density`).
    pub fn name(self) -> &'static str {
        match self {
            MassDampingParameter::RayleighMass => "rayleigh_mass",
            MassDampingParameter::RayleighStiffness => "rayleigh_stiffness",
            MassDampingParameter::Density => "density",
        }
    }

    /// The parameter of a name of [`MassDampingParameter::name`].
    pub fn from_name(name: &str) -> Option<MassDampingParameter> {
        MassDampingParameter::ALL
            .into_iter()
            .find(|p| p.name() == name)
    }

    /// Its position in [`MassDampingParameter::ALL`].
    pub fn index(self) -> usize {
        match self {
            MassDampingParameter::RayleighMass => 0,
            MassDampingParameter::RayleighStiffness => 1,
            MassDampingParameter::Density => 2,
        }
    }

    /// The admissible values as text: `α ≥ 0`, `β ≥ 0`, `ρ > 0` (all finite).
    pub fn range_text(self) -> &'static str {
        match self {
            MassDampingParameter::RayleighMass => "finite and non-negative (α ≥ 0, 1/s)",
            MassDampingParameter::RayleighStiffness => "finite and non-negative (β ≥ 0, s)",
            MassDampingParameter::Density => "finite and positive (ρ > 0, kg/m³)",
        }
    }

    /// Whether `value` is admissible: finite, and ≥ 0 for α and β, > 0 for ρ.
    pub fn admits(self, value: f64) -> bool {
        value.is_finite()
            && match self {
                MassDampingParameter::Density => value > 0.0,
                _ => value >= 0.0,
            }
    }

    /// The parameter's current value on `body` (1/s, s or kg/m³).
    pub fn value(self, body: &SoftBody) -> f64 {
        let o = body.options();
        match self {
            MassDampingParameter::RayleighMass => o.rayleigh_mass,
            MassDampingParameter::RayleighStiffness => o.rayleigh_stiffness,
            MassDampingParameter::Density => o.density,
        }
    }
}

impl SoftBody {
    /// Sets the Rayleigh mass coefficient α (1/s) of D = αM + βK̂; the step reads it from the
    /// body, so a stepper built before or after sees it. Errors unless α is finite and ≥ 0,
    /// naming `soft_body.NAME.rayleigh_mass`.
    pub fn set_rayleigh_mass(&mut self, alpha: f64) -> Result<()> {
        self.check_mass_damping(MassDampingParameter::RayleighMass, alpha)?;
        self.options_mut().rayleigh_mass = alpha;
        Ok(())
    }

    /// Sets the Rayleigh stiffness coefficient β (s) of D = αM + βK̂ (as
    /// [`SoftBody::set_rayleigh_mass`]). Errors unless β is finite and ≥ 0, naming
    /// `soft_body.NAME.rayleigh_stiffness`.
    pub fn set_rayleigh_stiffness(&mut self, beta: f64) -> Result<()> {
        self.check_mass_damping(MassDampingParameter::RayleighStiffness, beta)?;
        self.options_mut().rayleigh_stiffness = beta;
        Ok(())
    }

    /// Sets the density ρ (kg/m³) and rebuilds what depends on it, as the body's construction
    /// computes them: the nodal masses mₙ (the gravity weights) and the values of M. With
    /// [`MassKind::Uniform`], ρ is the mean density and the total mass becomes ρ Σₑ Vₑ. The
    /// pattern, the elements and the material are unchanged. Errors unless ρ is finite and
    /// > 0, naming `soft_body.NAME.density`.
    pub fn set_density(&mut self, density: f64) -> Result<()> {
        self.check_mass_damping(MassDampingParameter::Density, density)?;
        self.options_mut().density = density;
        let (node_mass, mass_values) = masses(self.pattern(), self.elements(), self.options());
        self.set_masses(node_mass, mass_values);
        Ok(())
    }

    /// Sets one of α, β, ρ ([`MassDampingParameter`]) by the setter above.
    pub fn set_mass_damping(&mut self, parameter: MassDampingParameter, value: f64) -> Result<()> {
        match parameter {
            MassDampingParameter::RayleighMass => self.set_rayleigh_mass(value),
            MassDampingParameter::RayleighStiffness => self.set_rayleigh_stiffness(value),
            MassDampingParameter::Density => self.set_density(value),
        }
    }

    fn check_mass_damping(&self, parameter: MassDampingParameter, value: f64) -> Result<()> {
        if parameter.admits(value) {
            return Ok(());
        }
        Err(Error::invalid(
            format!("soft_body.{}.{}", self.name(), parameter.name()),
            format!("must be {}, got {value}", parameter.range_text()),
        ))
    }
}

/// The nodal masses (kg; uniform or lumped, the gravity weights) and the values of M on
/// `pattern` (kg) of the `elements` with the density and mass kind of `options`.
pub(super) fn masses(
    pattern: &SymmetricPattern,
    elements: &[Tetrahedron],
    options: &SoftBodyOptions,
) -> (Vec<f64>, Vec<f64>) {
    let n = options.fixed.len();
    let element_volumes: Vec<([usize; 4], f64)> =
        elements.iter().map(|e| (e.nodes, e.volume)).collect();
    let node_mass = if options.mass == MassKind::Uniform {
        uniform_masses(n, &element_volumes, options.density)
    } else {
        lumped_masses(n, &element_volumes, options.density)
    };
    let mut mass_values = vec![0.0; pattern.nnz()];
    let dof_mass: Vec<f64> = node_mass.iter().flat_map(|&m| [m; 3]).collect();
    match options.mass {
        MassKind::Lumped | MassKind::Uniform => {
            pattern.add_full_diagonal(&mut mass_values, 1.0, &dof_mass)
        }
        MassKind::Consistent => {
            let mut blocks = vec![0.0; pattern.plan().block_buffer_len()];
            for (e, chunk) in elements.iter().zip(blocks.chunks_mut(144)) {
                consistent_mass_block(options.density, e.volume, chunk);
            }
            pattern.assemble(&blocks, &mut mass_values);
        }
    }
    (node_mass, mass_values)
}
