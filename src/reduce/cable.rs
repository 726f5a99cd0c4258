//! A cable on a reduced body: its embedded points move as p_k = p̄_k + W_k q (W_k = Σᵢ wᵢ V_nᵢ,
//! 3 × K, fixed), so its length L = Σ_s ‖p_b − p_a‖ (`actuator::Cable`), generalised force
//! σλ Σ_s Δ_sᵀu_s and tangent −σλ Σ_s Δ_sᵀ(I − u_su_sᵀ)Δ_s/ℓ_s (Δ_s = W_b − W_a, u_s the
//! segment's direction, ℓ_s its length) are evaluated on the points alone, with
//! Δ_sᵀΔ_s formed once: no node position is rebuilt.

use crate::actuator::Cable;
use crate::math::{DMat, DVec, Vec3};

use super::nodal_basis::NodalBasis;

/// One straight segment from point `a` (`None`: the fixed pull point) to point `b`.
#[derive(Debug, Clone)]
struct Segment {
    a: Option<usize>,
    b: usize,
    /// Δ = W_b − W_a, one column per mode.
    delta: Vec<Vec3>,
    /// ΔᵀΔ (K × K).
    gram: DMat,
}

/// A cable of a reduced model.
#[derive(Debug, Clone)]
pub struct ReducedCable {
    /// p̄_k (m).
    offsets: Vec<Vec3>,
    /// W_k, one column per mode (m per unit mode).
    maps: Vec<Vec<Vec3>>,
    pull_point: Option<Vec3>,
    segments: Vec<Segment>,
    /// Scratch: the points now, and Δᵀu.
    points: Vec<Vec3>,
    a: DVec,
}

impl ReducedCable {
    /// `cable` of a body with rest positions `rest` (m) on the basis `basis`.
    pub fn new(cable: &Cable, rest: &[Vec3], basis: &NodalBasis) -> ReducedCable {
        let k = basis.modes();
        let mut offsets = Vec::with_capacity(cable.points.len());
        let mut maps = Vec::with_capacity(cable.points.len());
        for p in &cable.points {
            let mut w = vec![Vec3::zeros(); k];
            let mut o = Vec3::zeros();
            for (&n, &wi) in p.nodes.iter().zip(&p.weights) {
                if wi == 0.0 {
                    continue;
                }
                o += wi * (rest[n] + basis.offset(n));
                for c in 0..3 {
                    for (wj, v) in w.iter_mut().zip(basis.row(n, c)) {
                        wj[c] += wi * v;
                    }
                }
            }
            offsets.push(o);
            maps.push(w);
        }
        let mut segments = Vec::new();
        let mut prev: Option<Option<usize>> = cable.pull_point.map(|_| None);
        for b in 0..cable.points.len() {
            if let Some(a) = prev {
                let delta: Vec<Vec3> = match a {
                    Some(a) => maps[b]
                        .iter()
                        .zip(&maps[a])
                        .map(|(wb, wa)| wb - wa)
                        .collect(),
                    None => maps[b].clone(),
                };
                let gram = DMat::from_fn(k, k, |i, j| delta[i].dot(&delta[j]));
                segments.push(Segment { a, b, delta, gram });
            }
            prev = Some(Some(b));
        }
        ReducedCable {
            points: offsets.clone(),
            offsets,
            maps,
            pull_point: cable.pull_point,
            segments,
            a: DVec::zeros(k),
        }
    }

    /// Adds the cable's generalised force σλ Vᵀ H_aᵀ (σ = −1: a tension pulls) into `force`
    /// (N per unit mode) and, with `tangent`, its tangent Vᵀ K_a V = λ Σ_s Δ_sᵀ(I − uuᵀ)Δ_s/ℓ_s
    /// into `stiffness`, at reduced coordinates `q` under tension `lambda` (N).
    pub fn add(
        &mut self,
        q: &[f64],
        lambda: f64,
        tangent: bool,
        force: &mut DVec,
        stiffness: &mut DMat,
    ) {
        for ((p, o), w) in self.points.iter_mut().zip(&self.offsets).zip(&self.maps) {
            *p = *o;
            for (wj, qj) in w.iter().zip(q) {
                *p += wj * *qj;
            }
        }
        let k = q.len();
        for s in &self.segments {
            let pa = match s.a {
                Some(a) => self.points[a],
                None => self.pull_point.expect("a segment from the pull point"),
            };
            let d = self.points[s.b] - pa;
            let l = d.norm();
            let u = d / l;
            // a = Δᵀu; the force −λ a (σ = −1).
            for ((aj, dj), fj) in self.a.iter_mut().zip(&s.delta).zip(force.iter_mut()) {
                *aj = dj.dot(&u);
                *fj -= lambda * *aj;
            }
            if tangent {
                let c = lambda / l;
                let (ks, gs, a) = (
                    stiffness.as_mut_slice(),
                    s.gram.as_slice(),
                    self.a.as_slice(),
                );
                for (j, aj) in a.iter().enumerate() {
                    let (kc, gc) = (&mut ks[j * k..(j + 1) * k], &gs[j * k..(j + 1) * k]);
                    for ((kij, gij), ai) in kc.iter_mut().zip(gc).zip(a) {
                        *kij += c * (gij - ai * aj);
                    }
                }
            }
        }
    }
}
