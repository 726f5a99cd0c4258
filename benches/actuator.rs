//! Cost of the actuators in a Trunk step (scenes/trunk.toml): one linearised step with no
//! actuator, with the 8 cables force-driven (0.2 N each), and with the 8 cables
//! displacement-driven (their tensions solved in the step, 8 extra solves with A's factor).
//!
//! Run briefly: `cargo bench --bench actuator -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group};
use diffsoro::scene::{BodyActuation, Scene, Stepper};

fn trunk(sets: Vec<String>) -> Scene {
    Scene::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/trunk.toml"),
        &sets,
    )
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("trunk_step");
    group.sample_size(20);
    let mut bare = trunk(Vec::new());
    bare.actuation = vec![BodyActuation::default()];
    let forced = trunk(
        (1..=8)
            .map(|i| format!("soft_body.trunk.cable.c{i}.force=0.2"))
            .collect(),
    );
    for (name, scene) in [("no_actuator", &bare), ("8_cables_force", &forced)] {
        let mut state = scene.initial_state();
        let mut stepper = Stepper::new(scene).unwrap();
        group.bench_function(name, |b| {
            b.iter(|| {
                stepper.step(scene, &mut state).unwrap();
                black_box(&state);
            })
        });
    }
    // Displacement-driven: the scene text with `force = 0.0` → `displacement = 0.001`.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/trunk.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("force = 0.0", "displacement = 0.001");
    let file = diffsoro::scene::SceneFile::parse("trunk.toml", &text, &[]).unwrap();
    let displaced = Scene::build(&file, path.parent().unwrap()).unwrap();
    let mut state = displaced.initial_state();
    let mut stepper = Stepper::new(&displaced).unwrap();
    group.bench_function("8_cables_displacement", |b| {
        b.iter(|| {
            stepper.step(&displaced, &mut state).unwrap();
            black_box(&state);
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
#[path = "support/worker.rs"]
mod worker;

/// `criterion_main!`, with the group run on a pool worker (`support/worker.rs`).
fn main() {
    worker::on_worker(benches);
    Criterion::default().configure_from_args().final_summary();
}
