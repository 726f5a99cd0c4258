//! What a run folder says beside its frames: `final.json` (the scene's obstacles, its
//! effectors and the nodes they follow) and, for a `control` run, `control.json` (the
//! target). Both are optional: a folder of frames alone is shown without them.

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::scene::{EffectorOutput, FinalState, ObstacleOutput};

/// The run's context read from its JSON outputs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunInfo {
    /// The scene's obstacles (world frame, m), from `final.json`.
    pub obstacles: Vec<ObstacleOutput>,
    /// The scene's gravity (m/s²), from `final.json` (older files do not record it).
    pub gravity: Option<[f64; 3]>,
    /// The effectors whose embedding `final.json` records (older files do not).
    pub effectors: Vec<EffectorOutput>,
    /// A `control` run's target positions (m): `targets` with `--contact-weight`, else
    /// `[target]`; empty for other runs.
    pub targets: Vec<[f64; 3]>,
}

/// Reads `dir/final.json` and `dir/control.json` when they exist. A file that exists but
/// cannot be read or parsed is a one-line error naming it.
pub fn read_info(dir: &Path) -> Result<RunInfo> {
    let mut info = RunInfo::default();
    let final_path = dir.join("final.json");
    if final_path.is_file() {
        let text = std::fs::read_to_string(&final_path).map_err(|e| Error::io(&final_path, e))?;
        let state: FinalState = serde_json::from_str(&text).map_err(|e| {
            Error::invalid(
                format!("view: `{}`", final_path.display()),
                format!("not a run's final state: {e}"),
            )
        })?;
        info.obstacles = state.obstacles;
        info.gravity = state.gravity;
        info.effectors = state
            .effectors
            .into_iter()
            .filter(|e| !e.nodes.is_empty() && e.nodes.len() == e.weights.len())
            .collect();
    }
    let control_path = dir.join("control.json");
    if control_path.is_file() {
        let here = || format!("view: `{}`", control_path.display());
        let text =
            std::fs::read_to_string(&control_path).map_err(|e| Error::io(&control_path, e))?;
        let report: Value = serde_json::from_str(&text)
            .map_err(|e| Error::invalid(here(), format!("not a control report: {e}")))?;
        let point = |v: &Value| -> Result<[f64; 3]> {
            serde_json::from_value(v.clone())
                .map_err(|_| Error::invalid(here(), format!("{v} is no [x, y, z] target")))
        };
        info.targets = match (report.get("targets"), report.get("target")) {
            (Some(Value::Array(all)), _) => all.iter().map(point).collect::<Result<_>>()?,
            // A joint effector's target (`--effector q:ROBOT[k]`): one coordinate, no point.
            (_, Some(Value::Array(one))) if one.len() == 1 => Vec::new(),
            (_, Some(one)) => vec![point(one)?],
            _ => return Err(Error::invalid(here(), "has no `target`")),
        };
    }
    Ok(info)
}
