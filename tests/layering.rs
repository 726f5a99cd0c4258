//! Guards the layer order of docs/design.md: a module may use only modules of lower layers
//! (`math` and `error` everywhere), and `contact` and `rigid` never import each other.
//! The test reads every `crate::NAME` path in `src/` and fails on an edge that goes up or
//! sideways, or on a module that has no layer yet. Inside `scene` and `contact` the folders
//! have an order of their own (docs/design.md, "The map"), and a path that leaves its folder
//! is spelled from `crate::`, so the same reading guards it; no folder holds more than 30
//! files directly.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layer of each top-level module (docs/design.md).
fn layer(module: &str) -> Option<u32> {
    Some(match module {
        "math" | "error" => 0,
        "mesh" | "material" | "linalg" | "chart" => 1,
        "fem" | "actuator" | "rigid" => 2,
        "contact" => 3,
        "scene" => 4,
        "diff" => 5,
        "reduce" => 5,
        "calibrate" | "control" | "view" => 6,
        "optimize" => 7,
        _ => return None,
    })
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `NAME` in `crate::NAME` in `source` (comments included: a doc link that goes up a
/// layer is a smell too), plus the names inside `use crate::{a, b::c}` groups.
fn crate_edges(source: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = source;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        } else {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
        rest = after;
    }
    out
}

#[test]
fn modules_only_use_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // The binary's own modules (`mod NAME;` in main.rs) are L7 like main.rs.
    let main_rs = std::fs::read_to_string(src.join("main.rs")).unwrap();
    let binary_modules: Vec<String> = main_rs
        .lines()
        .filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';'))
        .map(|m| m.trim().to_string())
        .collect();
    let mut violations = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .to_string();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" || binary_modules.contains(&module) {
            continue; // the crate root and the binary (L7, with its own modules) may use everything
        }
        let Some(own) = layer(&module) else {
            violations.push(format!(
                "{}: module `{module}` has no layer in docs/design.md (add it to this test)",
                rel.display()
            ));
            continue;
        };
        let source = std::fs::read_to_string(file).unwrap();
        for used in crate_edges(&source) {
            if used == module {
                continue;
            }
            let Some(theirs) = layer(&used) else {
                // `crate::Result` and similar re-exports from the root resolve to `error`.
                if used == "Result" || used == "Error" {
                    continue;
                }
                violations.push(format!(
                    "{}: uses unknown module `crate::{used}`",
                    rel.display()
                ));
                continue;
            };
            let cross = (module == "contact" && used == "rigid")
                || (module == "rigid" && used == "contact");
            if cross || (theirs >= own && theirs != 0) {
                violations.push(format!(
                    "{}: `{module}` (L{own}) uses `{used}` (L{theirs})",
                    rel.display()
                ));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "layering violations:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_checker_sees_plain_and_grouped_paths() {
    let edges = crate_edges(
        "use crate::mesh::Mesh;\nuse crate::{fem, math::Vec3};\nlet x = crate::linalg::solve();",
    );
    let expected: BTreeSet<String> = ["mesh", "fem", "math", "linalg"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(edges, expected);
}

/// The folders of `scene` and `contact` in their order (docs/design.md, "The map"): a file in
/// one may use only folders before it; within `scene::step`, the stages in the order they run.
fn folder_layer(module: &str, path: &[&str]) -> Option<u32> {
    match (module, path) {
        ("scene", ["file", ..]) => Some(0),
        ("scene", ["model", ..]) => Some(1),
        ("scene", ["step", ..]) => Some(2),
        ("scene", ["statics", ..]) | ("scene", ["output", ..]) => Some(3),
        ("scene", ["experiment", ..]) => Some(4),
        ("contact", ["ncp", ..]) => Some(0),
        ("contact", ["delassus", ..]) => Some(1),
        ("contact", ["geometry", ..]) => Some(2),
        _ => None,
    }
}

/// The order of the step's stage folders (`scene::step::free`, then `rigid`, then `contact`).
fn stage_layer(stage: &str) -> Option<u32> {
    match stage {
        "free" => Some(0),
        "rigid" => Some(1),
        "contact" => Some(2),
        _ => None,
    }
}

/// Every `crate::MODULE::a::b` path in `source`, as `[a, b]` (b empty when absent).
fn inner_edges(source: &str, module: &str) -> BTreeSet<(String, String)> {
    let prefix = format!("crate::{module}::");
    let mut out = BTreeSet::new();
    let mut rest = source;
    while let Some(i) = rest.find(&prefix) {
        let after = &rest[i + prefix.len()..];
        let mut parts = after.split("::").map(|p| {
            p.chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect::<String>()
        });
        let a = parts.next().unwrap_or_default();
        let b = if after[a.len()..].starts_with("::") {
            parts.next().unwrap_or_default()
        } else {
            String::new()
        };
        if !a.is_empty() {
            out.insert((a, b));
        }
        rest = after;
    }
    out
}

/// The edges of one file (`rel`: its path inside `module`, without `.rs`) that go to a later
/// folder of `module`, or from a stage of the step to a later stage.
fn folder_violations(module: &str, rel: &[&str], source: &str) -> Vec<String> {
    let Some(own) = folder_layer(module, rel) else {
        return Vec::new(); // the module's own mod.rs and shared test fixtures
    };
    let mut out = Vec::new();
    for (a, b) in inner_edges(source, module) {
        let Some(theirs) = folder_layer(module, &[a.as_str()]) else {
            continue;
        };
        let up = if a == rel[0] {
            // Inside the step: a stage uses only the stages that run before it.
            let mine = rel.get(1).and_then(|s| stage_layer(s));
            matches!((mine, stage_layer(&b)), (Some(m), Some(o)) if module == "scene" && a == "step" && o > m)
        } else {
            theirs >= own
        };
        if up {
            out.push(format!(
                "src/{module}/{}.rs uses crate::{module}::{a}::{b}",
                rel.join("/")
            ));
        }
    }
    out
}

#[test]
fn folders_inside_scene_and_contact_only_use_earlier_folders() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for module in ["scene", "contact"] {
        let mut files = Vec::new();
        rust_files(&src.join(module), &mut files);
        for file in &files {
            let rel: Vec<String> = file
                .strip_prefix(src.join(module))
                .unwrap()
                .components()
                .map(|c| {
                    c.as_os_str()
                        .to_string_lossy()
                        .trim_end_matches(".rs")
                        .to_string()
                })
                .collect();
            let rel: Vec<&str> = rel.iter().map(String::as_str).collect();
            let source = std::fs::read_to_string(file).unwrap();
            violations.extend(folder_violations(module, &rel, &source));
        }
    }
    assert!(
        violations.is_empty(),
        "folder order violations:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_folder_order_flags_a_later_folder_and_a_later_stage() {
    let model_uses_step = "use crate::scene::step::rigid::stage::RigidWorkspace;";
    assert_eq!(
        folder_violations("scene", &["model", "rigid"], model_uses_step).len(),
        1
    );
    let free_uses_contact = "use crate::scene::step::contact::workspace::ContactWorkspace;";
    assert_eq!(
        folder_violations("scene", &["step", "free", "free_step"], free_uses_contact).len(),
        1
    );
    let contact_uses_free = "use crate::scene::step::free::actuation::ActuationWorkspace;";
    assert!(
        folder_violations("scene", &["step", "contact", "stage"], contact_uses_free).is_empty()
    );
    let output_uses_model = "use crate::scene::model::{Scene, State};";
    assert!(folder_violations("scene", &["output", "frames"], output_uses_model).is_empty());
    let ncp_uses_geometry = "use crate::contact::geometry::detection::Obstacle;";
    assert_eq!(
        folder_violations("contact", &["ncp", "admm"], ncp_uses_geometry).len(),
        1
    );
    let experiment_uses_statics = "use crate::scene::statics::solve_static;";
    assert!(
        folder_violations(
            "scene",
            &["experiment", "command_run"],
            experiment_uses_statics
        )
        .is_empty()
    );
    let output_uses_experiment = "use crate::scene::experiment::tracks::MarkerTracks;";
    assert_eq!(
        folder_violations("scene", &["output", "final_state"], output_uses_experiment).len(),
        1
    );
    let experiment_uses_model = "use crate::scene::model::{Scene, State};";
    assert!(
        folder_violations("scene", &["experiment", "tracks"], experiment_uses_model).is_empty()
    );
    let re_export = "use crate::scene::Scene;";
    assert!(folder_violations("scene", &["file", "rigid"], re_export).is_empty());
}

#[test]
fn no_folder_holds_more_than_thirty_files() {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        let entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        let files = entries.iter().filter(|p| p.is_file()).count();
        if files > 30 {
            out.push(format!("{}: {files} files", dir.display()));
        }
        for d in entries.iter().filter(|p| p.is_dir()) {
            walk(d, out);
        }
    }
    let mut crowded = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut crowded,
    );
    assert!(crowded.is_empty(), "split these folders: {crowded:?}");
}

#[test]
fn the_folder_reader_sees_folder_and_file() {
    let edges = inner_edges(
        "use crate::scene::model::rigid::RigidSide;\nuse crate::scene::Scene;",
        "scene",
    );
    let expected: BTreeSet<(String, String)> = [("model".to_string(), "rigid".to_string())].into();
    assert_eq!(edges, expected);
}
