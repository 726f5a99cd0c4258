//! `[[soft_body.marker]]`: a point an experiment tracks (a motion-capture marker, a camera's
//! feature), at a mesh node or at a position carried by the mesh (docs/scene-file.md). Parsed
//! here and checked by [`MarkerSection::validate`] and [`validate_marker_names`]; placed in
//! the mesh by `scene::model::markers`.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::{Error, Result};

/// `[[soft_body.marker]]`: a tracked point of the body. Exactly one of `node` and `position`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkerSection {
    /// The marker's name, unique over the whole scene (marker track files name markers by
    /// name only); it is a field of a CSV file, so it has no comma, quote or control
    /// character and no leading or trailing space.
    pub name: String,
    /// A node of the body's mesh (0-based, in the mesh file's order): the marker is that
    /// node.
    #[serde(default)]
    pub node: Option<usize>,
    /// A rest position (m, scene frame: where the body is after its `scale`, `rotation` and
    /// `translation`, as effector points). Inside the mesh it follows its tetrahedron's
    /// barycentric interpolation; outside (markers on posts off the surface), however far,
    /// its nearest tetrahedron's affine motion.
    #[serde(default)]
    pub position: Option<[f64; 3]>,
}

impl MarkerSection {
    /// The marker's key, `soft_body.BODY.marker.NAME`.
    pub fn key(&self, body: &str) -> String {
        format!("soft_body.{body}.marker.{}", self.name)
    }

    /// Checks the name (non-empty, a plain CSV field), exactly one of `node` and `position`,
    /// and a finite `position`; errors name the key (`soft_body.BODY.marker.NAME[.KEY]`).
    pub fn validate(&self, body: &str) -> Result<()> {
        let key = self.key(body);
        if self.name.is_empty() {
            return Err(Error::invalid(
                format!("soft_body.{body}.marker"),
                "a marker has an empty name",
            ));
        }
        if self.name.trim() != self.name
            || self
                .name
                .chars()
                .any(|c| c == ',' || c == '"' || c.is_control())
        {
            return Err(Error::invalid(
                format!("{key}.name"),
                format!(
                    "{:?} cannot be a field of a marker track file (CSV): no comma, quote or control character, no leading or trailing space",
                    self.name
                ),
            ));
        }
        match (self.node, self.position) {
            (Some(_), None) => Ok(()),
            (None, Some(p)) if p.iter().all(|c| c.is_finite()) => Ok(()),
            (None, Some(p)) => Err(Error::invalid(
                format!("{key}.position"),
                format!("must be finite, got {p:?}"),
            )),
            _ => Err(Error::invalid(
                key,
                "give exactly one of `node` (a mesh node, 0-based) and `position` (m)",
            )),
        }
    }
}

/// Checks that no two markers of the scene share a name; `bodies` lists each soft body's
/// name with its markers, in file order. The error names both markers' keys.
pub fn validate_marker_names<'a>(
    bodies: impl IntoIterator<Item = (&'a str, &'a [MarkerSection])>,
) -> Result<()> {
    // Name → (body, index within the body) of its first marker.
    let mut seen: BTreeMap<&str, (&str, usize)> = BTreeMap::new();
    for (body, markers) in bodies {
        for (k, m) in markers.iter().enumerate() {
            if let Some(&(first_body, first_k)) = seen.get(m.name.as_str()) {
                let first = format!("soft_body.{first_body}.marker.{}", m.name);
                let which = if first_body == body {
                    format!(" (the body's markers {first_k} and {k}, 0-based)")
                } else {
                    String::new()
                };
                return Err(Error::invalid(
                    m.key(body),
                    format!(
                        "another marker has this name: {first}{which}; marker names are unique over the whole scene (marker track files name markers by name only)"
                    ),
                ));
            }
            seen.insert(&m.name, (body, k));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(name: &str, node: Option<usize>, position: Option<[f64; 3]>) -> MarkerSection {
        MarkerSection {
            name: name.into(),
            node,
            position,
        }
    }

    #[test]
    fn exactly_one_of_node_and_position() {
        assert!(marker("tip", Some(3), None).validate("b").is_ok());
        assert!(
            marker("tip", None, Some([0.0, 0.1, 0.2]))
                .validate("b")
                .is_ok()
        );
        for m in [
            marker("tip", None, None),
            marker("tip", Some(3), Some([0.0; 3])),
        ] {
            let e = m.validate("b").unwrap_err().to_string();
            assert!(
                e.starts_with("soft_body.b.marker.tip: give exactly one of `node`"),
                "{e}"
            );
        }
        let e = marker("tip", None, Some([0.0, f64::NAN, 0.0]))
            .validate("b")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("soft_body.b.marker.tip.position: must be finite"),
            "{e}"
        );
    }

    #[test]
    fn a_name_must_be_a_plain_csv_field() {
        for bad in ["a,b", " tip", "tip ", "ti\"p", "t\tip"] {
            let e = marker(bad, Some(0), None)
                .validate("b")
                .unwrap_err()
                .to_string();
            assert!(e.contains(".name: "), "{bad:?}: {e}");
            assert!(e.contains("CSV"), "{e}");
        }
        let e = marker("", Some(0), None)
            .validate("b")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "soft_body.b.marker: a marker has an empty name");
    }

    #[test]
    fn a_duplicate_name_names_both_keys() {
        let a = [marker("tip", Some(0), None), marker("base", Some(1), None)];
        let b = [marker("side", Some(0), None), marker("tip", Some(2), None)];
        let e = validate_marker_names([("arm", &a[..]), ("hand", &b[..])])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "soft_body.hand.marker.tip: another marker has this name: soft_body.arm.marker.tip;"
            ),
            "{e}"
        );
        let c = [marker("tip", Some(0), None), marker("tip", Some(1), None)];
        let e = validate_marker_names([("arm", &c[..])])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "soft_body.arm.marker.tip: another marker has this name: soft_body.arm.marker.tip (the body's markers 0 and 1, 0-based)"
            ),
            "{e}"
        );
        assert!(validate_marker_names([("arm", &a[..]), ("leg", &[][..])]).is_ok());
    }
}
