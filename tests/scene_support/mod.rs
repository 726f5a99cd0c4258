//! Shared helpers of the tests that build scenes from TOML text: the repository root, a
//! checked scene from text (relative paths resolved against `scenes/`), and plain steps.
#![allow(dead_code)]

use std::path::Path;

use diffsoro::scene::{Scene, SceneFile, State, Stepper};

/// The repository root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The scene of the TOML `text`, parsed, validated and built as if it were a file of
/// `scenes/` (panics on any error).
pub fn scene(text: &str) -> Scene {
    let file = SceneFile::parse("test.toml", text, &[]).unwrap();
    file.validate().unwrap();
    Scene::build(&file, &root().join("scenes")).unwrap()
}

/// Advances `state` by `steps` steps of `scene` with a fresh stepper.
pub fn run_steps(scene: &Scene, state: &mut State, steps: usize) {
    let mut stepper = Stepper::new(scene).unwrap();
    for _ in 0..steps {
        stepper.step(scene, state).unwrap();
    }
}
