//! Contact screening (`scene::step::contact::screen`): leaving out of the NCP the candidates that the
//! free motion keeps open or that carried nothing in the last step, and checking them after the
//! solve, gives the solution of the NCP of all candidates. The reference is the same run with
//! `[contact] screen = false` (every candidate in the NCP).

use std::path::Path;

use diffsoro::scene::{Scene, Stepper};

fn run(overrides: &[&str], steps: usize) -> (Vec<Vec<diffsoro::math::Vec3>>, usize, usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let s = Scene::load(&root.join("scenes/finger_obstacle.toml"), &overrides).unwrap();
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let mut deferred = 0;
    for step in 0..steps {
        let r = stepper.step(&s, &mut state).unwrap();
        assert!(r.contact_converged, "step {step}");
        deferred += stepper.contact().deferred_contacts();
    }
    let x = state.bodies.iter().map(|b| b.positions.clone()).collect();
    (x, deferred, stepper.contact().restarts())
}

#[test]
fn screening_gives_the_solution_of_the_ncp_of_every_candidate() {
    // The Finger curling into the block: up to 30 candidates, 5 of which carry force.
    let (screened, deferred, restarts) = run(&[], 60);
    let (full, none, _) = run(&["contact.screen=false"], 60);
    assert!(
        deferred > 100,
        "only {deferred} candidate-steps were screened"
    );
    assert_eq!(none, 0);
    eprintln!("{deferred} candidate-steps left out, {restarts} re-solves");
    let worst = screened[0]
        .iter()
        .zip(&full[0])
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    // Both NCPs are solved to 1e-9 (m/s, N): the runs agree to far below the mesh's size.
    assert!(worst < 1e-8, "screened and full runs differ by {worst} m");
}
