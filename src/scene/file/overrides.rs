//! `--set PATH=VALUE` overrides of a scene file (docs/scene-file.md): one value replaced by dotted
//! path in the parsed TOML, before the scene is validated. Arrays of tables are addressed by
//! the `name` of their entries: `soft_body.trunk.cable.c3.force=0.5`.

use crate::error::{Error, Result};

/// Applies one `PATH=VALUE` override to the scene's TOML table. `VALUE` is read as a TOML
/// value (`3e5`, `true`, `[0.0, 0.0, -9.81]`, `"stvk"`); a bare word that is not valid TOML is
/// taken as a string (`law=stvk`). The last path segment may name a key the table does not
/// have yet (the scene's validation then rejects unknown keys).
pub fn apply_override(root: &mut toml::Table, assignment: &str) -> Result<()> {
    let what = format!("--set {assignment}");
    let (path, raw) = assignment.split_once('=').ok_or_else(|| {
        Error::invalid(
            &what,
            "expected PATH=VALUE, e.g. soft_body.beam.young_modulus=3e5",
        )
    })?;
    let value = parse_value(raw.trim());
    let segments: Vec<&str> = path.trim().split('.').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(Error::invalid(&what, "empty segment in the path"));
    }
    let (last, parents) = segments
        .split_last()
        .expect("split on '.' gives at least one segment");
    let mut table = root;
    let mut i = 0;
    let mut walked = String::new();
    while i < parents.len() {
        let key = parents[i];
        walked = if walked.is_empty() {
            key.to_string()
        } else {
            format!("{walked}.{key}")
        };
        let entry = table
            .get_mut(key)
            .ok_or_else(|| Error::invalid(&what, format!("the scene has no `{walked}`")))?;
        table = match entry {
            toml::Value::Table(t) => t,
            toml::Value::Array(items) => {
                let name = parents.get(i + 1).copied().unwrap_or(last);
                if i + 1 >= parents.len() {
                    return Err(Error::invalid(
                        &what,
                        format!(
                            "`{walked}` is a list: address an entry by name, as `{walked}.NAME.KEY`"
                        ),
                    ));
                }
                i += 1;
                walked = format!("{walked}.{name}");
                items
                    .iter_mut()
                    .filter_map(|v| v.as_table_mut())
                    .find(|t| t.get("name").and_then(|n| n.as_str()) == Some(name))
                    .ok_or_else(|| {
                        Error::invalid(
                            &what,
                            format!(
                                "no entry named `{name}` in `{}`",
                                walked.rsplit_once('.').map_or("", |p| p.0)
                            ),
                        )
                    })?
            }
            _ => {
                return Err(Error::invalid(
                    &what,
                    format!("`{walked}` is a value, not a table"),
                ));
            }
        };
        i += 1;
    }
    table.insert(last.to_string(), value);
    Ok(())
}

/// A TOML value from the text after `=`, or a string when it is not valid TOML.
fn parse_value(raw: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENE: &str = r#"
        [simulation]
        dt = 0.01
        [[soft_body]]
        name = "beam"
        young_modulus = 1e6
        [[soft_body]]
        name = "trunk"
        [[soft_body.cable]]
        name = "c3"
        force = 0.0
    "#;

    #[test]
    fn overrides_follow_tables_and_named_array_entries() {
        let mut t: toml::Table = toml::from_str(SCENE).unwrap();
        apply_override(&mut t, "soft_body.beam.young_modulus=3e5").unwrap();
        apply_override(&mut t, "soft_body.trunk.cable.c3.force=0.5").unwrap();
        apply_override(&mut t, "simulation.gravity=[0.0, 0.0, -1.0]").unwrap();
        apply_override(&mut t, "soft_body.beam.law=stvk").unwrap();
        let bodies = t["soft_body"].as_array().unwrap();
        assert_eq!(bodies[0]["young_modulus"].as_float(), Some(3e5));
        assert_eq!(bodies[0]["law"].as_str(), Some("stvk"));
        assert_eq!(bodies[1]["cable"][0]["force"].as_float(), Some(0.5));
        assert_eq!(t["simulation"]["gravity"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn bad_overrides_name_the_problem() {
        let mut t: toml::Table = toml::from_str(SCENE).unwrap();
        let e = apply_override(&mut t, "soft_body.bem.young_modulus=1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no entry named `bem`"), "{e}");
        let e = apply_override(&mut t, "contact.friction=1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("the scene has no `contact`"), "{e}");
        let e = apply_override(&mut t, "simulation.dt")
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected PATH=VALUE"), "{e}");
        let e = apply_override(&mut t, "soft_body.young_modulus=1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a list"), "{e}");
    }
}
