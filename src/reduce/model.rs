//! A reduced model as `reduce` writes it and every command reads it (`MODEL.reduced`, JSON):
//! the basis, the sampled elements and weights, the range of the reduced coordinates seen in
//! training, and the fingerprint of the body it was built for.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::math::DMat;

/// What the file says it is.
pub const FORMAT: &str = "diffsoro-reduced";
/// The version of the layout this build writes and reads.
pub const VERSION: u32 = 1;

/// How well the reduced model reproduces its training runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainingError {
    /// RMS over every free node and saved state of the training runs of |x_reduced − x_full|
    /// (m), the reduced model re-run on the training commands from its own start.
    pub position_rms: f64,
    /// The largest such distance (m).
    pub position_max: f64,
    /// The RMS distance over the same nodes of the snapshots from their projection on
    /// ū + span V (m): the part no reduced model on this basis can represent.
    pub projection_rms: f64,
    /// The share of the snapshots' energy Σσ² the basis leaves out (dimensionless).
    pub basis: f64,
    /// ‖Σₑ wₑVₑᵀfₑ − Vᵀf‖ / ‖Vᵀf‖ over the training configurations (dimensionless).
    pub force: f64,
}

/// A reduced model of one soft body (Goury & Duriez 2018): x = X + ū + Vq over the body's free
/// degrees of freedom, the elastic forces summed over `elements` with `weights`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReducedModel {
    /// [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The soft body it reduces.
    pub body: String,
    /// The body's fingerprint (`reduce::fingerprint`).
    pub fingerprint: String,
    /// Free degrees of freedom N (3 × free nodes).
    pub dofs: usize,
    /// Modes K.
    pub modes: usize,
    /// V, column-major N × K (m per unit mode; orthonormal columns).
    pub basis: Vec<f64>,
    /// ū, the mean training displacement the modes are about (N values, m): x = X + ū + Vq.
    pub offset: Vec<f64>,
    /// The sampled elements (indices into the body's tetrahedra, ascending).
    pub elements: Vec<usize>,
    /// Their ECSW weights (dimensionless, > 0).
    pub weights: Vec<f64>,
    /// [min, max] of each reduced coordinate over the training snapshots (m).
    pub q_range: Vec<[f64; 2]>,
    /// The training command files.
    pub training: Vec<String>,
    /// How well it reproduces them.
    pub training_error: TrainingError,
    /// Wall time of the reduction (s).
    pub offline_s: f64,
}

impl ReducedModel {
    /// V as a matrix (N × K).
    pub fn basis_matrix(&self) -> DMat {
        DMat::from_column_slice(self.dofs, self.modes, &self.basis)
    }

    /// Writes the model to `path` completely or not at all.
    pub fn write(&self, path: &Path) -> Result<()> {
        let bytes = serde_json::to_vec(self)
            .map_err(|e| Error::invalid(path.display().to_string(), e.to_string()))?;
        crate::mesh::io::write_file_atomic(path, &bytes)
    }

    /// Reads a model written by [`ReducedModel::write`]. Errors name the file: not found, not
    /// a reduced model, another version, or sizes that do not agree.
    pub fn read(path: &Path) -> Result<ReducedModel> {
        let what = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let value: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| Error::invalid(&what, format!("is not a reduced model ({e})")))?;
        if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(Error::invalid(
                &what,
                "is not a reduced model (`diffsoro reduce` writes one)",
            ));
        }
        let version = value.get("version").and_then(|v| v.as_u64());
        if version != Some(VERSION as u64) {
            return Err(Error::invalid(
                &what,
                format!(
                    "is a reduced model of version {}, this build reads version {VERSION}: run `diffsoro reduce` again",
                    version.map_or("?".to_string(), |v| v.to_string())
                ),
            ));
        }
        let model: ReducedModel = serde_json::from_value(value)
            .map_err(|e| Error::invalid(&what, format!("is not a reduced model ({e})")))?;
        let consistent = model.basis.len() == model.dofs * model.modes
            && model.offset.len() == model.dofs
            && model.elements.len() == model.weights.len()
            && model.q_range.len() == model.modes
            && model.modes > 0
            && model
                .basis
                .iter()
                .chain(&model.offset)
                .all(|v| v.is_finite())
            && model.weights.iter().all(|w| w.is_finite() && *w > 0.0);
        if !consistent {
            return Err(Error::invalid(
                &what,
                "is a damaged reduced model: its sizes or values do not agree",
            ));
        }
        Ok(model)
    }
}
