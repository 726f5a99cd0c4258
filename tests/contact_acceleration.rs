//! Anderson acceleration of the ADMM contact solver (`contact::AdmmSettings::anderson_memory`,
//! `[contact] acceleration`): it changes the iterates' path, not the NCP's solution. The
//! reference is plain ADMM on the same problems: the same forces where they are unique, the
//! same trajectories, in fewer iterations (both unpolished where iterations are counted:
//! tests/contact_polish.rs counts the polish's).

use std::path::Path;

use diffsoro::contact::{AdmmSettings, AdmmSolver};
use diffsoro::math::Vec3;
use diffsoro::scene::{Scene, Stepper};

use crate::slab_ncp;
use slab_ncp::SlabContacts;

#[test]
fn accelerated_and_plain_admm_find_the_same_forces_on_the_slab() {
    for n in [10, 100] {
        let p = SlabContacts::new(n).problem();
        let tolerance = 1e-10;
        let solve = |memory: usize| {
            // Unpolished, so that the iterations counted are the acceleration's alone.
            AdmmSolver::new(AdmmSettings {
                anderson_memory: memory,
                polish: false,
                tolerance,
                ..AdmmSettings::default()
            })
            .solve(&p, None)
            .unwrap()
        };
        let plain = solve(0);
        let fast = solve(5);
        assert!(plain.converged && fast.converged, "n = {n}");
        assert!(fast.residuals.max() <= tolerance, "n = {n}");
        // G is positive definite (every row a node of the slab), so λ is unique; a residual
        // of 1e-10 leaves λ within ~1e-7 N of it on this ill-conditioned G (the forces are
        // ~1e-2 N). The reference: plain ADMM to 1e-13.
        let exact = slab_ncp::reference(&p);
        let plain_error = (&plain.lambda - &exact.lambda).amax();
        let fast_error = (&fast.lambda - &exact.lambda).amax();
        assert!(
            fast_error <= plain_error.max(1e-9),
            "n = {n}: accelerated λ within {fast_error:e} N of the reference, plain within {plain_error:e} N"
        );
        assert!(
            2 * fast.iterations < plain.iterations,
            "n = {n}: {} accelerated iterations against {} plain",
            fast.iterations,
            plain.iterations
        );
    }
}

/// Final soft positions and rigid configurations, the summed iterations of each step's
/// largest NCP, and whether every step's NCPs converged.
type Run = (Vec<Vec<Vec3>>, Vec<Vec<f64>>, usize, bool);

fn run(path: &str, overrides: &[&str], steps: usize) -> Run {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let s = Scene::load(&root.join(path), &overrides).unwrap();
    let mut state = s.initial_state();
    let mut stepper = Stepper::new(&s).unwrap();
    let mut iterations = 0;
    let mut converged = true;
    for _ in 0..steps {
        let r = stepper.step(&s, &mut state).unwrap();
        converged &= r.contact_converged;
        iterations += r.largest_ncp_iterations();
    }
    let x = state.bodies.iter().map(|b| b.positions.clone()).collect();
    let q = state.rigid.iter().map(|r| r.q.clone()).collect();
    (x, q, iterations, converged)
}

#[test]
fn the_finger_curling_into_the_block_moves_the_same_in_fewer_iterations() {
    // Unpolished, so that the iterations counted are the acceleration's alone.
    let (fast, _, fast_iterations, fast_converged) =
        run("scenes/finger_obstacle.toml", &["contact.polish=false"], 60);
    let (plain, _, plain_iterations, plain_converged) = run(
        "scenes/finger_obstacle.toml",
        &["contact.acceleration=false", "contact.polish=false"],
        60,
    );
    assert!(fast_converged && plain_converged);
    let worst = fast[0]
        .iter()
        .zip(&plain[0])
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    // Both NCPs are solved to their tolerance each step: the runs agree to far below the
    // mesh's size (as screened and unscreened runs do, tests/contact_screen.rs).
    assert!(
        worst < 1e-8,
        "accelerated and plain runs differ by {worst} m"
    );
    assert!(
        fast_iterations < plain_iterations,
        "{fast_iterations} accelerated iterations against {plain_iterations} plain"
    );
}

/// A box landing on the floor: its contact rows are between a rigid body and an obstacle
/// alone (four corners, non-unique forces), which the solver never accelerates nor polishes
/// (either would pick another of the many solutions than ADMM's proximal iterates); the
/// settings give the same run bit for bit.
#[test]
fn rigid_only_contact_is_never_accelerated_nor_polished() {
    let (_, fast, a, _) = run("scenes/cube_drop.toml", &[], 80);
    let (_, plain, b, _) = run("scenes/cube_drop.toml", &["contact.acceleration=false"], 80);
    let (_, unpolished, c, _) = run("scenes/cube_drop.toml", &["contact.polish=false"], 80);
    assert!(a > 0, "the cube never touched the floor");
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_eq!(fast, plain);
    assert_eq!(fast, unpolished);
}
