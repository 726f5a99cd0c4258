//! The map between the full degrees of freedom of a body and the reduced (free) ones.
//!
//! Fixed nodes are projective constraints (docs/step.md): their DOFs are removed from the
//! system, never penalised. Reduced DOFs keep the order of the full DOFs they come from, so
//! reduced index `r` is the `r`-th free full DOF in increasing order.

use crate::math::Vec3;

/// Sentinel stored for a removed DOF in the full → reduced table.
const REMOVED: usize = usize::MAX;

/// Full DOF ↔ reduced DOF numbering for a mask of removed DOFs.
///
/// Full DOF `d` of node `i` with block size `b` is `d = i·b + component`.
#[derive(Debug, Clone)]
pub struct DofMap {
    full_to_reduced: Vec<usize>,
    reduced_to_full: Vec<usize>,
}

impl DofMap {
    /// The map for `removed[d] == true` meaning full DOF `d` is removed (fixed).
    pub fn new(removed: &[bool]) -> Self {
        let mut full_to_reduced = vec![REMOVED; removed.len()];
        let mut reduced_to_full = Vec::with_capacity(removed.iter().filter(|r| !**r).count());
        for (d, &is_removed) in removed.iter().enumerate() {
            if !is_removed {
                full_to_reduced[d] = reduced_to_full.len();
                reduced_to_full.push(d);
            }
        }
        Self {
            full_to_reduced,
            reduced_to_full,
        }
    }

    /// Number of full DOFs (free and removed).
    pub fn n_full(&self) -> usize {
        self.full_to_reduced.len()
    }

    /// Number of free (reduced) DOFs: the size of the reduced matrix.
    pub fn n_reduced(&self) -> usize {
        self.reduced_to_full.len()
    }

    /// The reduced index of full DOF `full`, or `None` when it is removed.
    ///
    /// Panics if `full >= n_full()` (an internal invariant: DOF indices come from the mesh).
    #[inline]
    pub fn reduced_index(&self, full: usize) -> Option<usize> {
        let r = self.full_to_reduced[full];
        (r != REMOVED).then_some(r)
    }

    /// The full DOF of reduced index `reduced`.
    #[inline]
    pub fn full_index(&self, reduced: usize) -> usize {
        self.reduced_to_full[reduced]
    }

    /// The free full DOFs in increasing order (reduced index → full DOF).
    pub fn free_dofs(&self) -> &[usize] {
        &self.reduced_to_full
    }

    /// Whether full DOF `full` is removed.
    #[inline]
    pub fn is_removed(&self, full: usize) -> bool {
        self.full_to_reduced[full] == REMOVED
    }

    /// Gathers the free entries of the full vector `full` into `reduced`
    /// (`reduced[r] = full[free_dofs()[r]]`).
    ///
    /// Panics if the lengths are not `n_full()` and `n_reduced()`.
    pub fn reduce(&self, full: &[f64], reduced: &mut [f64]) {
        assert_eq!(full.len(), self.n_full(), "reduce: full vector length");
        assert_eq!(
            reduced.len(),
            self.n_reduced(),
            "reduce: reduced vector length"
        );
        for (r, &d) in reduced.iter_mut().zip(&self.reduced_to_full) {
            *r = full[d];
        }
    }

    /// Scatters `reduced` into the free entries of `full`; the removed entries of `full`
    /// are left untouched (the caller owns their prescribed values, e.g. zero velocity
    /// increments of fixed nodes).
    ///
    /// Panics if the lengths are not `n_reduced()` and `n_full()`.
    pub fn expand(&self, reduced: &[f64], full: &mut [f64]) {
        assert_eq!(full.len(), self.n_full(), "expand: full vector length");
        assert_eq!(
            reduced.len(),
            self.n_reduced(),
            "expand: reduced vector length"
        );
        for (&r, &d) in reduced.iter().zip(&self.reduced_to_full) {
            full[d] = r;
        }
    }

    /// The free DOFs as `(node, component)` pairs of a nodal field (3 DOFs per node), in
    /// reduced order: what [`Self::gather_nodal`] reads and [`Self::scatter_nodal`] writes.
    pub fn free_components(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.reduced_to_full
            .iter()
            .map(|&full| (full / 3, full % 3))
    }

    /// Gathers the free components of a nodal field (3 DOFs per node, component `k` of node
    /// `n` at full DOF `3n + k`) into `reduced`, one entry per free DOF (`n_reduced()`; a
    /// shorter `reduced` takes the leading ones).
    ///
    /// Panics if a free DOF lies past the field.
    pub fn gather_nodal(&self, field: &[Vec3], reduced: &mut [f64]) {
        for (r, (n, k)) in reduced.iter_mut().zip(self.free_components()) {
            *r = field[n][k];
        }
    }

    /// The nodal field (3 DOFs per node) of the free components `reduced` (as
    /// [`Self::gather_nodal`] lays them out), removed components zero.
    ///
    /// Panics if a free DOF lies past the field.
    pub fn scatter_nodal(&self, reduced: &[f64], field: &mut [Vec3]) {
        field.iter_mut().for_each(|p| *p = Vec3::zeros());
        for (r, (n, k)) in reduced.iter().zip(self.free_components()) {
            field[n][k] = *r;
        }
    }

    /// Adds `scale` times the free components of a nodal field (3 DOFs per node) to
    /// `reduced` (laid out as [`Self::gather_nodal`] fills it).
    ///
    /// Panics if a free DOF lies past the field.
    pub fn add_nodal(&self, field: &[Vec3], scale: f64, reduced: &mut [f64]) {
        for (r, (n, k)) in reduced.iter_mut().zip(self.free_components()) {
            *r += scale * field[n][k];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_then_expand_round_trips_free_entries_and_keeps_removed_ones() {
        let removed = [false, true, false, false, true];
        let map = DofMap::new(&removed);
        assert_eq!(map.n_reduced(), 3);
        assert_eq!(map.free_dofs(), &[0, 2, 3]);
        assert_eq!(map.reduced_index(1), None);
        assert_eq!(map.reduced_index(3), Some(2));
        let full = [1.0, 2.0, 3.0, 4.0, 5.0];
        let mut reduced = [0.0; 3];
        map.reduce(&full, &mut reduced);
        assert_eq!(reduced, [1.0, 3.0, 4.0]);
        let mut back = [-1.0; 5];
        map.expand(&reduced, &mut back);
        assert_eq!(back, [1.0, -1.0, 3.0, 4.0, -1.0]);
    }

    /// The nodal forms against the flat ones on the same DOFs (3 per node).
    #[test]
    fn nodal_fields_gather_scatter_and_add_their_free_components() {
        let removed = [false, true, false, true, true, false];
        let map = DofMap::new(&removed);
        let field = [Vec3::new(1.0, 2.0, 3.0), Vec3::new(4.0, 5.0, 6.0)];
        let mut reduced = [0.0; 3];
        map.gather_nodal(&field, &mut reduced);
        assert_eq!(reduced, [1.0, 3.0, 6.0]);
        assert_eq!(
            map.free_components().collect::<Vec<_>>(),
            [(0, 0), (0, 2), (1, 2)]
        );
        map.add_nodal(&field, -2.0, &mut reduced);
        assert_eq!(reduced, [-1.0, -3.0, -6.0]);
        let mut back = [Vec3::repeat(9.0); 2];
        map.scatter_nodal(&reduced, &mut back);
        assert_eq!(
            back,
            [Vec3::new(-1.0, 0.0, -3.0), Vec3::new(0.0, 0.0, -6.0)]
        );
    }
}
