//! Shared helpers of the `rigid_*` tests: a deterministic PRNG, the repository's models and
//! random states.
#![allow(dead_code)]

use diffsoro::math::SplitMix64;
use diffsoro::rigid::{Base, Model, load_urdf};
use std::path::PathBuf;

/// The shared deterministic generator, with the helpers these tests use.
pub struct Rng(SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(SplitMix64::new(seed))
    }

    /// Uniform in [−1, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0.uniform()
    }

    pub fn vec(&mut self, n: usize, scale: f64) -> Vec<f64> {
        (0..n).map(|_| scale * self.uniform()).collect()
    }
}

pub fn urdf_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("urdf")
        .join(name)
}

pub fn model(name: &str, base: Base) -> Model {
    load_urdf(&urdf_path(name), base).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A random configuration: the neutral one moved by a random tangent vector of size ~`scale`.
pub fn random_q(model: &Model, rng: &mut Rng, scale: f64) -> Vec<f64> {
    let q0 = model.neutral();
    let d = rng.vec(model.nv, scale);
    let mut q = q0.clone();
    model.integrate(&q0, &d, &mut q);
    q
}

/// `q ⊕ d`.
pub fn plus(model: &Model, q: &[f64], d: &[f64]) -> Vec<f64> {
    let mut out = q.to_vec();
    model.integrate(q, d, &mut out);
    out
}
