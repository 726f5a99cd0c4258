//! Range checks of the actuator and effector sections of a scene file; errors name the key
//! (`soft_body.trunk.cable.c1.force`).

use std::collections::BTreeSet;

use crate::error::{Error, Result};

use crate::scene::file::{CableSection, SoftBodySection};

fn finite(what: &str, v: f64) -> Result<f64> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(Error::invalid(what, format!("must be finite, got {v}")))
    }
}

fn point(what: &str, p: &[f64; 3]) -> Result<()> {
    if p.iter().all(|c| c.is_finite()) {
        Ok(())
    } else {
        Err(Error::invalid(what, format!("must be finite, got {p:?}")))
    }
}

/// Exactly one of two inputs; returns the one given.
fn one_of(at: &str, a: (&str, Option<f64>), b: (&str, Option<f64>)) -> Result<f64> {
    match (a.1, b.1) {
        (Some(v), None) => finite(&format!("{at}.{}", a.0), v),
        (None, Some(v)) => finite(&format!("{at}.{}", b.0), v),
        (Some(_), Some(_)) => Err(Error::invalid(
            at,
            format!("give either `{}` or `{}`, not both", a.0, b.0),
        )),
        (None, None) => Err(Error::invalid(at, format!("needs `{}` or `{}`", a.0, b.0))),
    }
}

fn positive_bound(what: &str, v: Option<f64>) -> Result<()> {
    match v {
        Some(v) if !(v > 0.0) || v.is_nan() => {
            Err(Error::invalid(what, format!("must be positive, got {v}")))
        }
        _ => Ok(()),
    }
}

/// A cable's `min_force` ≤ `force` ≤ `max_force` (0 ≤ `min_force`) and `min_displacement` ≤
/// `displacement` ≤ `max_displacement`, each finite where given.
fn cable_bounds(at: &str, c: &CableSection) -> Result<()> {
    let inf = f64::INFINITY;
    for (key, v) in [
        ("min_force", c.min_force),
        ("max_displacement", c.max_displacement),
        ("min_displacement", c.min_displacement),
    ] {
        if let Some(v) = v {
            finite(&format!("{at}.{key}"), v)?;
        }
    }
    let (lo, hi) = (c.min_force.unwrap_or(0.0), c.max_force.unwrap_or(inf));
    if lo < 0.0 {
        return Err(Error::invalid(
            format!("{at}.min_force"),
            format!("a cable only pulls: must be ≥ 0, got {lo}"),
        ));
    }
    if lo > hi {
        return Err(Error::invalid(
            format!("{at}.min_force"),
            format!("must be ≤ max_force, got {lo} > {hi}"),
        ));
    }
    if let Some(f) = c.force
        && !(lo..=hi).contains(&f)
    {
        return Err(Error::invalid(
            format!("{at}.force"),
            format!("must lie in [min_force, max_force] = [{lo}, {hi}] N, got {f}"),
        ));
    }
    let (dlo, dhi) = (
        c.min_displacement.unwrap_or(-inf),
        c.max_displacement.unwrap_or(inf),
    );
    if dlo > dhi {
        return Err(Error::invalid(
            format!("{at}.min_displacement"),
            format!("must be ≤ max_displacement, got {dlo} > {dhi}"),
        ));
    }
    if let Some(d) = c.displacement
        && !(dlo..=dhi).contains(&d)
    {
        return Err(Error::invalid(
            format!("{at}.displacement"),
            format!("must lie in [min_displacement, max_displacement] = [{dlo}, {dhi}] m, got {d}"),
        ));
    }
    Ok(())
}

/// An actuator's command map (`gain`, `offset`, `time_constant` of `--inputs`): the gain
/// finite and ≠ 0, the offset finite, the time constant (s) finite and ≥ 0; errors name the
/// key under `at`.
fn command_map(at: &str, gain: f64, offset: f64, time_constant: f64) -> Result<()> {
    if !(gain.is_finite() && gain != 0.0) {
        return Err(Error::invalid(
            format!("{at}.gain"),
            format!("must be finite and non-zero, got {gain}"),
        ));
    }
    finite(&format!("{at}.offset"), offset)?;
    if !(time_constant.is_finite() && time_constant >= 0.0) {
        return Err(Error::invalid(
            format!("{at}.time_constant"),
            format!("must be non-negative and finite (s), got {time_constant}"),
        ));
    }
    Ok(())
}

/// Checks the cables, cavities, servos and effectors of one body.
pub fn validate_actuation(b: &SoftBodySection) -> Result<()> {
    let body = format!("soft_body.{}", b.name);
    let mut names = BTreeSet::new();
    let mut unique = |kind: &str, name: &str| {
        if names.insert(name.to_string()) {
            Ok(())
        } else {
            Err(Error::invalid(
                format!("{body}.{kind}.{name}"),
                "two actuators of the body have this name",
            ))
        }
    };
    for c in &b.cable {
        unique("cable", &c.name)?;
        let at = format!("{body}.cable.{}", c.name);
        let needed = if c.pull_point.is_some() { 1 } else { 2 };
        if c.points.len() < needed {
            return Err(Error::invalid(
                format!("{at}.points"),
                format!("needs at least {needed} points, got {}", c.points.len()),
            ));
        }
        for (i, p) in c.points.iter().enumerate() {
            point(&format!("{at}.points[{i}]"), p)?;
        }
        if let Some(p) = &c.pull_point {
            point(&format!("{at}.pull_point"), p)?;
        }
        one_of(&at, ("force", c.force), ("displacement", c.displacement))?;
        if let Some(f) = c.force
            && f < 0.0
        {
            return Err(Error::invalid(
                format!("{at}.force"),
                format!("a cable only pulls: must be ≥ 0, got {f}"),
            ));
        }
        positive_bound(&format!("{at}.max_force"), c.max_force)?;
        cable_bounds(&at, c)?;
        positive_bound(
            &format!("{at}.max_displacement_step"),
            c.max_displacement_step,
        )?;
        positive_bound(&format!("{at}.max_force_step"), c.max_force_step)?;
        command_map(&at, c.gain, c.offset, c.time_constant)?;
    }
    for p in &b.pneumatic {
        unique("pneumatic", &p.name)?;
        let at = format!("{body}.pneumatic.{}", p.name);
        if p.group.is_some() == p.surface.is_some() {
            return Err(Error::invalid(
                &at,
                "give exactly one of `group` (a triangle group of the mesh) and `surface` (a closed surface file)",
            ));
        }
        one_of(
            &at,
            ("pressure", p.pressure),
            ("volume_change", p.volume_change),
        )?;
        positive_bound(&format!("{at}.max_volume_step"), p.max_volume_step)?;
        positive_bound(&format!("{at}.max_pressure_step"), p.max_pressure_step)?;
        command_map(&at, p.gain, p.offset, p.time_constant)?;
        let lo = p.min_pressure.unwrap_or(f64::NEG_INFINITY);
        let hi = p.max_pressure.unwrap_or(f64::INFINITY);
        if lo.is_nan() || hi.is_nan() || lo > hi {
            return Err(Error::invalid(
                format!("{at}.max_pressure"),
                format!("must be ≥ min_pressure, got [{lo}, {hi}]"),
            ));
        }
        if let Some(pressure) = p.pressure
            && !(lo..=hi).contains(&pressure)
        {
            return Err(Error::invalid(
                format!("{at}.pressure"),
                format!(
                    "must lie in [min_pressure, max_pressure] = [{lo}, {hi}] Pa, got {pressure}"
                ),
            ));
        }
    }
    for s in &b.servo {
        unique("servo", &s.name)?;
        let at = format!("{body}.servo.{}", s.name);
        if s.group.is_none() && s.node_box.is_none() {
            return Err(Error::invalid(
                &at,
                "needs `group` or `box` (the driven nodes)",
            ));
        }
        if let Some([lo, hi]) = s.node_box
            && (0..3).any(|a| !(lo[a] <= hi[a]) || !lo[a].is_finite() || !hi[a].is_finite())
        {
            return Err(Error::invalid(
                format!("{at}.box"),
                "must be [[min], [max]] with min ≤ max, finite",
            ));
        }
        point(&format!("{at}.axis_point"), &s.axis_point)?;
        point(&format!("{at}.axis_direction"), &s.axis_direction)?;
        if s.axis_direction.iter().all(|c| *c == 0.0) {
            return Err(Error::invalid(
                format!("{at}.axis_direction"),
                "must not be zero",
            ));
        }
        one_of(&at, ("angle", s.angle), ("torque", s.torque))?;
        positive_bound(&format!("{at}.max_torque"), s.max_torque)?;
        positive_bound(&format!("{at}.max_angle_step"), s.max_angle_step)?;
        positive_bound(&format!("{at}.max_torque_step"), s.max_torque_step)?;
        command_map(&at, s.gain, s.offset, s.time_constant)?;
        if let Some(a) = s.angle
            && !(a.abs() < std::f64::consts::PI)
        {
            return Err(Error::invalid(
                format!("{at}.angle"),
                format!("must lie in (−π, π) rad, got {a}"),
            ));
        }
    }
    let mut effectors = BTreeSet::new();
    for e in &b.effector {
        let at = format!("{body}.effector.{}", e.name);
        if !effectors.insert(e.name.as_str()) {
            return Err(Error::invalid(
                &at,
                "two effectors of the body have this name",
            ));
        }
        point(&format!("{at}.point"), &e.point)?;
    }
    Ok(())
}
