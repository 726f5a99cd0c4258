//! `control --max-force NAME=VALUE`: the largest input of a force-driven actuator, set on the
//! scene as its `max_force` (cable, N), `max_pressure` (cavity, Pa) or `max_torque` (servo,
//! N·m, bounding the torque by ±VALUE) would. Control takes its bounds from the scene only.

use crate::actuator::{ActuatorKind, Drive};
use crate::error::{Error, Result};
use crate::scene::Scene;

/// Applies `--max-force NAME=VALUE` entries to `scene`: `NAME` a force-driven actuator of the
/// scene (given once), `VALUE` a positive finite number in its units, which becomes the upper
/// end of its bounds (a servo's bounds become ±VALUE). Errors name the entry and list the
/// scene's force-driven actuators.
pub fn set_max_forces(scene: &mut Scene, entries: &[String]) -> Result<()> {
    let mut seen: Vec<&str> = Vec::new();
    for entry in entries {
        let what = || format!("--max-force `{entry}`");
        let Some((name, value)) = entry.split_once('=') else {
            return Err(Error::invalid(what(), "is not of the form NAME=VALUE"));
        };
        let name = name.trim();
        if seen.contains(&name) {
            return Err(Error::invalid(what(), format!("`{name}` is given twice")));
        }
        seen.push(name);
        let value: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| *v > 0.0 && v.is_finite())
            .ok_or_else(|| {
                Error::invalid(
                    what(),
                    format!("`{}` is not a positive number (N, Pa or N·m)", value.trim()),
                )
            })?;
        let actuator = scene
            .actuation
            .iter_mut()
            .flat_map(|b| b.actuators.iter_mut())
            .find(|a| a.name == name && matches!(a.drive, Drive::Force(_)));
        let Some(actuator) = actuator else {
            let known: Vec<&str> = scene
                .actuation
                .iter()
                .flat_map(|b| b.actuators.iter())
                .filter(|a| matches!(a.drive, Drive::Force(_)))
                .map(|a| a.name.as_str())
                .collect();
            return Err(Error::invalid(
                what(),
                format!(
                    "the scene has no force-driven actuator `{name}` (its force-driven actuators: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        };
        match actuator.kind {
            ActuatorKind::Servo(_) => actuator.bounds = [-value, value],
            _ if value <= actuator.bounds[0] => {
                return Err(Error::invalid(
                    what(),
                    format!(
                        "{value} is not above the actuator's lower bound {}",
                        actuator.bounds[0]
                    ),
                ));
            }
            _ => actuator.bounds[1] = value,
        }
    }
    Ok(())
}
