use diffsoro::scene::{Scene, Stepper};
use std::time::Instant;
fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or("scenes/trunk.toml".into());
    let scene = Scene::load(std::path::Path::new(&path), &[]).unwrap();
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    for _ in 0..5 {
        stepper.step(&scene, &mut state).unwrap();
    }
    let t = Instant::now();
    for _ in 0..50 {
        stepper.step(&scene, &mut state).unwrap();
    }
    eprintln!("step {:.3} ms", t.elapsed().as_secs_f64() * 1e3 / 50.0);
}
