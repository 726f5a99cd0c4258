//! Would reusing the last step's factorisation pay (toward a soft step within 1.5× its bare
//! factorisation, docs/speed.md)? For each step of a scene's first soft body, the step matrix A_k =
//! (1 + hα) M + (hβ + h²) K(x_k) is solved by conjugate gradients preconditioned with the exact
//! factor of A_{k−1} (or of an older one, `LAG=j`) to a residual of 1e-12 relative: the iteration
//! counts printed are what an exact reuse would cost, each iteration one substitution with the old
//! factor and one product with A_k (against one numeric factorisation per step today); it prints
//! the mean time of both, the factorisation timed on the same matrices. The force-driven cables'
//! tangent K_a is left out of A (zero in the Trunk at rest, small otherwise).
//!
//! `cargo run --release --example factor_reuse -- scenes/trunk.toml simulation.steps=300`

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use diffsoro::fem::Stiffness;
use diffsoro::linalg::{FactorKind, MemBuffer, MemStack, NumericFactor, SymbolicFactor};
use diffsoro::scene::{Scene, Stepper};

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

fn main() -> diffsoro::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().map_or("scenes/trunk.toml", String::as_str);
    let overrides = args.get(1..).unwrap_or_default();
    let lag: usize = std::env::var("LAG")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    run(Path::new(path), overrides, lag)?;
    Ok(())
}

/// The measurement on the scene at `path` (with `overrides`), the factor `lag` steps old;
/// returns the CG iteration counts of the steps, sorted.
pub fn run(path: &Path, overrides: &[String], lag: usize) -> diffsoro::Result<Vec<usize>> {
    let scene = Scene::load(path, overrides)?;
    let path = path.display();
    let body = &scene.bodies[0];
    let (pattern, opts, h) = (body.pattern(), body.options(), scene.simulation.dt);
    let (c_m, c_k) = (
        1.0 + h * opts.rayleigh_mass,
        h * opts.rayleigh_stiffness + h * h,
    );
    let mut old = NumericFactor::new(Arc::new(SymbolicFactor::new(pattern)?), FactorKind::Llt);
    let mut buffer = MemBuffer::new(old.solve_scratch(1));
    let mut elastic = body.elastic_state();
    let mut state = scene.initial_state();
    let mut stepper = Stepper::new(&scene)?;
    let n = pattern.n();
    // A fixed right-hand side with entries in [−0.5, 0.5).
    let b: Vec<f64> = (0..n)
        .map(|i| (i * 7919 % 1000) as f64 / 1000.0 - 0.5)
        .collect();
    let (mut x, mut r, mut z, mut p, mut ap) = (
        vec![0.0; n],
        vec![0.0; n],
        vec![0.0; n],
        vec![0.0; n],
        vec![0.0; n],
    );
    let mut history: Vec<Vec<f64>> = Vec::new();
    let mut counts = Vec::new();
    let (mut factorising, mut solving) = (0.0, 0.0);
    for _ in 0..scene.simulation.steps {
        body.evaluate_elastic(
            &state.bodies[0].positions,
            Stiffness::Assemble,
            &mut elastic,
        )?;
        let a: Vec<f64> = elastic
            .stiffness
            .iter()
            .zip(body.mass_values())
            .map(|(k, m)| c_m * m + c_k * k)
            .collect();
        if history.len() == lag {
            let clock = Instant::now();
            old.factorize(pattern, &history[0])
                .map_err(|e| diffsoro::Error::invalid("factor_reuse", e.to_string()))?;
            factorising += clock.elapsed().as_secs_f64();
            let clock = Instant::now();
            x.fill(0.0);
            r.copy_from_slice(&b);
            z.copy_from_slice(&r);
            old.solve_vec_in_place(&mut z, MemStack::new(&mut buffer));
            p.copy_from_slice(&z);
            let mut rz = dot(&r, &z);
            let mut iterations = 0;
            while dot(&r, &r).sqrt() > 1e-12 * dot(&b, &b).sqrt() && iterations < 200 {
                pattern.symmetric_product(&a, &p, &mut ap);
                let alpha = rz / dot(&p, &ap);
                for i in 0..n {
                    x[i] += alpha * p[i];
                    r[i] -= alpha * ap[i];
                }
                z.copy_from_slice(&r);
                old.solve_vec_in_place(&mut z, MemStack::new(&mut buffer));
                let rz_next = dot(&r, &z);
                for i in 0..n {
                    p[i] = z[i] + rz_next / rz * p[i];
                }
                rz = rz_next;
                iterations += 1;
            }
            solving += clock.elapsed().as_secs_f64();
            counts.push(iterations);
            history.remove(0);
        }
        history.push(a);
        stepper.step(&scene, &mut state)?;
    }
    counts.sort_unstable();
    let at = |q: usize| counts[(counts.len() - 1) * q / 100];
    println!(
        "{path}, {} steps, factor of A from {lag} step(s) before: CG iterations to 1e-12 relative: min {}, median {}, 90th percentile {}, max {}",
        counts.len(),
        at(0),
        at(50),
        at(90),
        at(100)
    );
    println!(
        "mean per step: the numeric factorisation {:.3} ms, the preconditioned CG solve {:.3} ms",
        1e3 * factorising / counts.len() as f64,
        1e3 * solving / counts.len() as f64
    );
    Ok(counts)
}
