//! The rigid term of a group's Delassus matrix, `G += h J_s M_s⁻¹ J_sᵀ` over the rows that
//! touch system s (`RigidWorkspace::assemble`, paper 004 Eq. 1), added at those rows' places
//! in G.
//!
//! The lower triangle is computed, entry (r, c) for r ≥ c as `h · Σ_k J_rk Y_kc` summed in
//! order k = 0, 1, …, and mirrored: the term is exactly symmetric (so is G, whose soft blocks
//! are mirrored too, and it needs no averaging). The sums run over all rows below c at once
//! (one contiguous column of J per k), added into G by runs of consecutive places: a jaw's
//! 75 attachment rows were 5,625 dot products of length three, each a loop of its own.

use crate::math::DMat;

/// The buffers of [`add_rigid_term`], kept between steps.
#[derive(Debug, Default)]
pub(in crate::scene) struct RigidTermScratch {
    /// J's active rows by degree of freedom: `jk[k a + i]` = J_{active[i], k} (a active rows).
    jk: Vec<f64>,
    /// One column of J Y over the active rows.
    column: Vec<f64>,
    /// Runs of consecutive places: (first active row, its place, length).
    runs: Vec<(usize, usize, usize)>,
}

/// `G[places[i], places[j]] += h Σ_k jt[active[i] nv + k] y[active[j] nv + k]` for every pair
/// of active rows i ≥ j, and the same value at `(places[j], places[i])` (module doc): `jt`
/// holds J_sᵀ and `y` holds Y_s = M_s⁻¹ J_sᵀ, column by column (nv values per row of J_s);
/// `places[i]` is active row i's index in G.
#[allow(clippy::too_many_arguments)]
pub(in crate::scene) fn add_rigid_term(
    h: f64,
    nv: usize,
    jt: &[f64],
    y: &[f64],
    active: &[usize],
    places: &[usize],
    g: &mut DMat,
    scratch: &mut RigidTermScratch,
) {
    let a = active.len();
    assert_eq!(places.len(), a, "add_rigid_term: one place per active row");
    let RigidTermScratch { jk, column, runs } = scratch;
    jk.clear();
    jk.resize(nv * a, 0.0);
    for (i, &r) in active.iter().enumerate() {
        for k in 0..nv {
            jk[k * a + i] = jt[r * nv + k];
        }
    }
    runs.clear();
    for (i, &p) in places.iter().enumerate() {
        match runs.last_mut() {
            Some((first, place, len)) if *first + *len == i && *place + *len == p => *len += 1,
            _ => runs.push((i, p, 1)),
        }
    }
    column.clear();
    column.resize(a, 0.0);
    let n = g.nrows();
    let gm = g.as_mut_slice();
    for (ci, (&c, &gc)) in active.iter().zip(places).enumerate() {
        // Column c of J Y at rows i ≥ c (J Y's lower triangle over the active rows).
        let yc = &y[c * nv..(c + 1) * nv];
        let column = &mut column[ci..];
        column.fill(0.0);
        for (k, &ykc) in yc.iter().enumerate() {
            for (v, &j) in column.iter_mut().zip(&jk[k * a + ci..(k + 1) * a]) {
                *v += j * ykc;
            }
        }
        let dst = &mut gm[gc * n..(gc + 1) * n];
        for &(first, place, len) in runs.iter() {
            let end = first + len;
            if end <= ci {
                continue;
            }
            let skip = ci.saturating_sub(first);
            for (d, &v) in dst[place + skip..place + len]
                .iter_mut()
                .zip(&column[first + skip - ci..end - ci])
            {
                *d += h * v;
            }
        }
        // The mirror image, above the diagonal.
        for (&gr, &v) in places[ci + 1..].iter().zip(&column[1..]) {
            gm[gc + gr * n] += h * v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::SplitMix64;

    /// Against the plain pair-by-pair dot products of the lower triangle, mirrored: the same
    /// bits, with places in runs, out of order and with gaps, and inactive rows of J left out;
    /// a symmetric G stays exactly symmetric.
    #[test]
    fn the_rigid_term_is_the_pairwise_dot_products() {
        let mut rng = SplitMix64::new(3);
        for nv in [1, 6, 7] {
            let rows = 12;
            let jt: Vec<f64> = (0..rows * nv).map(|_| rng.uniform() - 0.5).collect();
            let y: Vec<f64> = (0..rows * nv).map(|_| rng.uniform() - 0.5).collect();
            let active = [0, 1, 2, 4, 5, 6, 9, 10, 11];
            let places = [3, 4, 5, 13, 14, 15, 0, 1, 2];
            let h = 0.01;
            let base = DMat::from_fn(16, 16, |i, j| ((i + 1) * (j + 1)) as f64 / 7.0);
            let mut fast = base.clone();
            add_rigid_term(
                h,
                nv,
                &jt,
                &y,
                &active,
                &places,
                &mut fast,
                &mut RigidTermScratch::default(),
            );
            let mut plain = base.clone();
            for (c, (&ac, &gc)) in active.iter().zip(&places).enumerate() {
                for (&ar, &gr) in active[c..].iter().zip(&places[c..]) {
                    let mut dot = 0.0;
                    for k in 0..nv {
                        dot += jt[ar * nv + k] * y[ac * nv + k];
                    }
                    plain[(gr, gc)] += h * dot;
                    if gr != gc {
                        plain[(gc, gr)] += h * dot;
                    }
                }
            }
            assert_eq!(fast, plain, "nv = {nv}");
            assert_ne!(fast, base);
            assert_eq!(fast, fast.transpose(), "nv = {nv}");
        }
    }
}
