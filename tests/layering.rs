//! Guards the layer order of docs/design.md: a module may use only modules of lower layers
//! (`math` and `error` everywhere), and `contact` and `rigid` never import each other.
//! The test reads every `crate::NAME` path in `src/` and fails on an edge that goes up or
//! sideways, or on a module that has no layer yet.

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
        "calibrate" | "control" | "view" => 6,
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
