//! Shared helpers of the `rigid_*` tests: a deterministic PRNG, the repository's models and
//! random states.
#![allow(dead_code)]

use diffsoro::rigid::{Base, Model, load_urdf};
use std::path::PathBuf;

/// SplitMix64: a tiny deterministic generator (no `rand` crate).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [−1, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
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
