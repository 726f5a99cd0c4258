//! Soak test (ignored by default; docs/testing.md gives the command): 10⁵ steps of the Trunk
//! (`scenes/trunk.toml`, dt = 0.01 s, so 1000 s of simulated time) under constant cable
//! tensions. Every step leaves finite positions and velocities, the energy stays within the
//! bound below, and the resident memory does not grow between step 10⁴ and step 10⁵.

use std::path::Path;

use diffsoro::scene::{Energy, Scene, Stepper};

/// Steps in the soak. The memory is compared between `STEPS / 10` and `STEPS`.
const STEPS: usize = 100_000;
/// Steps between two energy checks (positions and velocities are checked every step).
const ENERGY_EVERY: usize = 10;
/// Largest allowed growth of the resident memory between `STEPS / 10` and `STEPS` (bytes).
const RSS_GROWTH: u64 = 5 * 1024 * 1024;

/// Constant tensions (N) on three of the Trunk's cables, a case of tests/settling.rs: the
/// cables bend and compress the trunk, which settles within a few seconds.
const TENSIONS: [(&str, f64); 3] = [("c2", 0.9), ("c5", 0.4), ("c7", 0.25)];

/// This process's resident memory (bytes), from the `VmRSS: N kB` line of /proc/self/status.
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("a VmRSS line in /proc/self/status");
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("VmRSS: N kB");
    kb * 1024
}

/// The largest magnitude among the energy terms of `a` and `b` (J), the scale of round-off.
fn scale(a: &Energy, b: &Energy) -> f64 {
    [a, b]
        .iter()
        .flat_map(|e| [e.kinetic, e.elastic, e.gravity, e.actuators])
        .fold(0.0f64, |m, t| m.max(t.abs()))
}

/// The energy bound. The forces acting on the trunk are constant: gravity (m g on every node)
/// and the cable tensions λ. The work they do from step 0 to step k is exactly the drop of
/// their potentials, W = [gravity(0) + actuators(0)] − [gravity(k) + actuators(k)], where
/// gravity = −Σ m g·x and actuators = λ·L(x) per cable (`Scene::energy`). The time step only
/// removes energy (Rayleigh damping; the step is dissipative, tests/settling.rs checks it step
/// by step), so the energy the trunk holds can never exceed what it started with plus that
/// work: kinetic(k) + elastic(k) ≤ kinetic(0) + elastic(0) + W, i.e. total(k) ≤ total(0).
/// The slack is round-off: 1e-12 of the largest energy term per step (the per-step slack of
/// tests/settling.rs), accumulated over all k steps. A NaN fails the comparison too.
#[test]
#[ignore = "a soak test: 10⁵ Trunk steps take many minutes (docs/testing.md)"]
fn soak_trunk_under_constant_tensions_for_100000_steps() {
    let sets: Vec<String> = TENSIONS
        .iter()
        .map(|(c, f)| format!("soft_body.trunk.cable.{c}.force={f}"))
        .collect();
    let scene = Scene::load(Path::new("scenes/trunk.toml"), &sets).unwrap();
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene).unwrap();
    let start = scene.energy(&state).unwrap();
    let held_at_start = start.kinetic + start.elastic;
    let mut rss_early = 0;
    for k in 1..=STEPS {
        stepper.step(&scene, &mut state).unwrap();
        let body = &state.bodies[0];
        assert!(
            body.positions
                .iter()
                .chain(&body.velocities)
                .all(|v| v.iter().all(|c| c.is_finite())),
            "step {k}: a position or velocity is not finite"
        );
        if k % ENERGY_EVERY == 0 || k == STEPS {
            let e = scene.energy(&state).unwrap();
            let work = (start.gravity + start.actuators) - (e.gravity + e.actuators);
            let slack = 1e-12 * k as f64 * scale(&start, &e);
            assert!(
                e.kinetic + e.elastic <= held_at_start + work + slack,
                "step {k}: kinetic {:e} J + elastic {:e} J exceeds the initial {held_at_start:e} J \
                 plus the work {work:e} J of the constant forces (slack {slack:e} J)",
                e.kinetic,
                e.elastic
            );
        }
        if k == STEPS / 10 {
            rss_early = resident_bytes();
        }
    }
    let rss_late = resident_bytes();
    let growth = rss_late.saturating_sub(rss_early);
    assert!(
        growth < RSS_GROWTH,
        "resident memory grew by {growth} bytes from step {} ({rss_early} bytes) to step {STEPS} ({rss_late} bytes)",
        STEPS / 10
    );
    // Not a trivial pass: the cables did work and the trunk settled, deformed, at rest.
    let end = scene.energy(&state).unwrap();
    let work = (start.gravity + start.actuators) - (end.gravity + end.actuators);
    assert!(
        work > 0.0 && end.elastic > 0.0,
        "work {work:e} J, elastic {:e} J",
        end.elastic
    );
    assert!(
        end.kinetic < 1e-6 * end.elastic,
        "kinetic {:e} J",
        end.kinetic
    );
    eprintln!(
        "{STEPS} steps: time {} s, energy {:e} J → {:e} J (work {work:e} J, elastic {:e} J, kinetic {:e} J), VmRSS {rss_early} → {rss_late} bytes",
        state.time,
        start.total(),
        end.total(),
        end.elastic,
        end.kinetic
    );
}
