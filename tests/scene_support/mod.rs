//! Shared helpers of the tests that build scenes from TOML text: the repository root, a
//! checked scene from text (relative paths resolved against `scenes/`), plain steps, and how
//! far apart two runs ended.
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

/// The largest distance (m) between the same node of the same soft body in two states.
pub fn largest_position_difference(a: &State, b: &State) -> f64 {
    a.bodies
        .iter()
        .zip(&b.bodies)
        .flat_map(|(p, q)| p.positions.iter().zip(&q.positions))
        .map(|(p, q)| (p - q).norm())
        .fold(0.0, f64::max)
}
