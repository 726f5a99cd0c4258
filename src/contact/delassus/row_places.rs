//! A body's contact rows at their places among its group's (`scene::step::contact::group`, and the
//! reduced problem of `crate::contact::AttachedReduction`): the body's rows i are the group's rows
//! `rows[i]` (3 each), so its Delassus block, its row values and its share of λ move between
//! the two by these index maps.

use crate::math::DMat;

/// `out[3 rows[i] + p, 3 rows[j] + q] += g[3i + p, 3j + q]`: a body's Delassus block added at
/// its rows' places in the group's G, column by column (`g` column-major, 3·rows square), by runs of
/// consecutive rows (each a slice added to a slice).
pub(crate) fn add_blocks(g: &[f64], rows: &[usize], out: &mut DMat) {
    let k = 3 * rows.len();
    assert_eq!(g.len(), k * k, "add_blocks: a 3·rows square block");
    let n = out.nrows();
    let out = out.as_mut_slice();
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for (i, &gi) in rows.iter().enumerate() {
        match runs.last_mut() {
            Some((first, place, len)) if *first + *len == i && *place + *len == gi => *len += 1,
            _ => runs.push((i, gi, 1)),
        }
    }
    for (j, &gj) in rows.iter().enumerate() {
        for q in 0..3 {
            let src = &g[(3 * j + q) * k..(3 * j + q + 1) * k];
            let dst = &mut out[(3 * gj + q) * n..(3 * gj + q + 1) * n];
            for &(first, place, len) in &runs {
                for (d, s) in dst[3 * place..3 * (place + len)]
                    .iter_mut()
                    .zip(&src[3 * first..3 * (first + len)])
                {
                    *d += s;
                }
            }
        }
    }
}

/// Adds `local` (one value per row of a body's contacts) into `global` at the body's rows.
pub(crate) fn scatter(rows: &[usize], local: &[f64], global: &mut [f64]) {
    for (i, &gi) in rows.iter().enumerate() {
        for p in 0..3 {
            global[3 * gi + p] += local[3 * i + p];
        }
    }
}

/// `out` = the body's rows of `global`.
pub(crate) fn gather(rows: &[usize], global: &[f64], out: &mut Vec<f64>) {
    out.clear();
    out.extend(
        rows.iter()
            .flat_map(|&gi| global[3 * gi..3 * gi + 3].iter()),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::SplitMix64;

    /// Against the entry-by-entry sum of the definition: the same bits, for places in runs,
    /// out of order and with gaps.
    #[test]
    fn a_block_lands_at_its_rows_places() {
        let mut rng = SplitMix64::new(5);
        let rows = [4, 5, 6, 0, 2, 3];
        let g = DMat::from_fn(18, 18, |_, _| rng.uniform());
        let base = DMat::from_fn(24, 24, |_, _| rng.uniform());
        let mut fast = base.clone();
        add_blocks(g.as_slice(), &rows, &mut fast);
        let mut plain = base.clone();
        for (i, &gi) in rows.iter().enumerate() {
            for (j, &gj) in rows.iter().enumerate() {
                for p in 0..3 {
                    for q in 0..3 {
                        plain[(3 * gi + p, 3 * gj + q)] += g[(3 * i + p, 3 * j + q)];
                    }
                }
            }
        }
        assert_eq!(fast, plain);
        let local: Vec<f64> = (0..18).map(|i| i as f64).collect();
        let mut global = vec![0.0; 24];
        scatter(&rows, &local, &mut global);
        let mut back = Vec::new();
        gather(&rows, &global, &mut back);
        assert_eq!(back, local);
        assert_eq!(global[3..6], [0.0; 3]);
    }
}
