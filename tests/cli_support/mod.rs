//! Shared helpers of the tests that run the `diffsoro` program: the repository root, a run in
//! it, and a scratch folder of the test's own.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (the tests' working folder).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the built `diffsoro` with `args` in the repository root.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

/// Runs `diffsoro` with `args` and asserts it succeeded (showing its stderr otherwise).
pub fn run_ok(args: &[&str]) -> Output {
    let out = run(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `diffsoro` with `args`, asserts it succeeded (showing its stderr otherwise) and
/// returns its stdout as JSON.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    serde_json::from_slice(&run_ok(args).stdout).unwrap()
}

/// An empty folder `name` under the temporary folder, private to the calling test file
/// (`tests/TOPIC.rs`: the topics share one test binary and process) and to this process,
/// removed with everything in it when the returned guard is dropped (also when the test
/// fails), so that no run leaves folders behind.
#[track_caller]
pub fn scratch(name: &str) -> Scratch {
    let topic = Path::new(std::panic::Location::caller().file())
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("tests");
    let dir = std::env::temp_dir().join(format!("diffsoro-{topic}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// A scratch folder ([`scratch`]) that is removed when dropped; derefs to its path.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Already removed by the test itself, or never filled: either way nothing is left.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
