//! The scene at a calibration's fitted values, to simulate the fitted run again (the frames
//! of `calibrate --view`).

use super::report::CalibrationReport;
use crate::diff::Parameter;
use crate::error::Result;
use crate::scene::Scene;

impl CalibrationReport {
    /// A copy of `scene` with every fitted parameter (`young_modulus:BODY` in Pa,
    /// `poisson_ratio:BODY`, `actuator:NAME` in its unit) set to its value in `params`.
    /// Errors: a parameter `scene` does not have (the report is of another scene).
    pub fn fitted_scene(&self, scene: &Scene) -> Result<Scene> {
        let mut fitted = scene.clone();
        for (name, &value) in &self.params {
            Parameter::parse(&fitted, name)?.set(&mut fitted, value)?;
        }
        Ok(fitted)
    }
}
