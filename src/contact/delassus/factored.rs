//! One soft body's Delassus operator `G = h H A⁻¹ Hᵀ` ((m/s)/N) never assembled: products go
//! through the step's sparse factor of `A = M + hD + h²K`, and the shifted solves ADMM needs
//! through the Woodbury identity
//!
//! ```text
//! (G + c I)⁻¹ = (1/c) · (I − h H (c A + h HᵀH)⁻¹ Hᵀ)
//! ```
//!
//! (`c > 0`), one sparse numeric factorisation of `c A + h HᵀH` per shift on `A`'s own symbolic
//! analysis. That holds when every row of `H` reads DOFs that `A` already couples (a node, or
//! the three nodes of a surface triangle, which share a tetrahedron): contacts against
//! obstacles and rigid shapes. [`FactoredDelassus::new`] checks it and refuses rows that
//! couple two distant nodes (self-contact, two bodies).
//!
//! Cost, for `n` contacts on a body with `N` free DOFs: a product or a shifted solve is one
//! sparse forward/backward substitution (`O(nnz(L))`), against `O(n²)` for the dense `G`, and a
//! shift change one sparse factorisation, against `O(n³)`; nothing of size `n²` is stored, and
//! forming `G` (3n sparse solves) is skipped. Worth it from a few hundred contacts on
//! (docs/speed.md).
//!
//! The projected systems `E G Eᵀ + D` (`D` diagonal and positive, each row of `E` a direction
//! in one contact's frame; [`DelassusOperator::factorize_projected`]) that precondition the
//! polish of an ADMM iterate (`crate::contact::ncp::polish_krylov`) are solved the same way:
//! `(D + h Ẽ A⁻¹ Ẽᵀ)⁻¹ = D⁻¹ − D⁻¹ Ẽ h (A + h Ẽᵀ D⁻¹ Ẽ)⁻¹ Ẽᵀ D⁻¹` with `Ẽ = E H`, whose rows
//! read the DOFs of one contact's rows of `H`, so one more sparse factorisation on `A`'s own
//! symbolic analysis.

use faer::dyn_stack::{MemBuffer, MemStack};

use super::assembly::reduced_rows;
use super::jacobian::ContactJacobian;
use crate::contact::ncp::delassus_operator::{DelassusOperator, ProjectedRow};
use crate::error::{Error, Result};
use crate::linalg::{FactorKind, NumericFactor, SymmetricPattern};

/// Buffers of [`FactoredDelassus`], kept between problems: the rows of `H` over the reduced
/// DOFs and `h HᵀH` on `A`'s pattern ([`prepare`](Self::prepare)), the shifted factor
/// (reallocated only when the symbolic analysis changes) and the solve workspace.
#[derive(Default)]
pub struct FactoredDelassusWorkspace {
    /// Time step (s) of the prepared rows.
    h: f64,
    /// Reduced DOFs and stored values of the pattern the rows were prepared on.
    n_reduced: usize,
    nnz: usize,
    shifted: Option<NumericFactor>,
    /// `h HᵀH` (lower-triangle values on the pattern of `A`).
    hth: Vec<f64>,
    /// `c A + h HᵀH`.
    values: Vec<f64>,
    /// Row pointers and `(reduced DOF, coefficient)` entries of `H`.
    row_ptr: Vec<usize>,
    entries: Vec<(usize, f64)>,
    reduced: Vec<f64>,
    stack: Option<MemBuffer>,
    /// The projected system's rows `E H` (row pointers and entries, as `H`'s), its shifts
    /// and the factor of `A + h (E H)ᵀ diag(shifts)⁻¹ (E H)`
    /// ([`DelassusOperator::factorize_projected`]).
    projected_ptr: Vec<usize>,
    projected_entries: Vec<(usize, f64)>,
    projected_shifts: Vec<f64>,
    projected: Option<NumericFactor>,
    projected_ready: bool,
}

impl std::fmt::Debug for FactoredDelassusWorkspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FactoredDelassusWorkspace")
            .field("rows", &self.row_ptr.len().saturating_sub(1))
            .finish()
    }
}

impl FactoredDelassusWorkspace {
    /// Takes in the contact Jacobian `jacobian` (3 rows per contact) of a body whose reduced
    /// `A` has the structure `pattern`, for a step of `h` (s): `H` over the reduced DOFs and
    /// `h HᵀH` on the pattern.
    ///
    /// Errors when `h` is not positive, when the Jacobian's node count does not match the
    /// pattern, or when a row couples two DOFs that `A` does not (the error names the row;
    /// such rows need the assembled `G`, `crate::contact::assemble_delassus`).
    pub fn prepare(
        &mut self,
        h: f64,
        jacobian: &ContactJacobian,
        pattern: &SymmetricPattern,
    ) -> Result<()> {
        if !(h > 0.0) || !h.is_finite() {
            return Err(Error::invalid("time step", format!("{h} must be positive")));
        }
        let dofs = pattern.dofs();
        if 3 * jacobian.node_count() != dofs.n_full() {
            return Err(Error::invalid(
                "factored Delassus operator",
                format!(
                    "the Jacobian has {} nodes, the pattern {} DOFs",
                    jacobian.node_count(),
                    dofs.n_full()
                ),
            ));
        }
        // Marked unprepared until the checks below pass.
        self.n_reduced = usize::MAX;
        reduced_rows(jacobian, dofs, &mut self.row_ptr, &mut self.entries);
        // h HᵀH on A's pattern: each row adds h cᵀc over its entries' pairs.
        self.hth.clear();
        self.hth.resize(pattern.nnz(), 0.0);
        for i in 0..jacobian.row_count() {
            let row = &self.entries[self.row_ptr[i]..self.row_ptr[i + 1]];
            add_row_outer(pattern, row, h, &mut self.hth).map_err(|(ra, rb)| {
                Error::invalid(
                    format!("contact row {i}"),
                    format!(
                        "couples DOFs {ra} and {rb}, which A does not couple: \
                         the factored Delassus operator needs rows within one element"
                    ),
                )
            })?;
        }
        self.h = h;
        self.n_reduced = dofs.n_reduced();
        self.nnz = pattern.nnz();
        Ok(())
    }
}

/// Adds `weight · cᵀc` to the lower-triangle `values` on `pattern`, for the row
/// `c = Σ coefficient · e_DOF` given by `row`'s `(reduced DOF, coefficient)` entries (a DOF
/// may appear more than once). Errors with the first pair of DOFs the pattern does not
/// couple.
fn add_row_outer(
    pattern: &SymmetricPattern,
    row: &[(usize, f64)],
    weight: f64,
    values: &mut [f64],
) -> std::result::Result<(), (usize, usize)> {
    for a in 0..row.len() {
        let (ra, ca) = row[a];
        for (b, &(rb, cb)) in row.iter().enumerate().skip(a) {
            let k = pattern.value_index(ra, rb).ok_or((ra, rb))?;
            // A pair of two entries stands for both (ra, rb) and (rb, ra): one stored value
            // off the diagonal, twice the diagonal when they share a DOF.
            let twice = if b != a && ra == rb { 2.0 } else { 1.0 };
            values[k] += weight * ca * cb * twice;
        }
    }
    Ok(())
}

/// `G = h H A⁻¹ Hᵀ` of one soft body, applied through the factor of `A` (see the module
/// documentation). Borrowed for one contact problem.
pub struct FactoredDelassus<'a> {
    h: f64,
    pattern: &'a SymmetricPattern,
    a_values: &'a [f64],
    factor: &'a NumericFactor,
    work: &'a mut FactoredDelassusWorkspace,
    shift: f64,
}

impl<'a> FactoredDelassus<'a> {
    /// The operator of the rows `work` was [prepared](FactoredDelassusWorkspace::prepare)
    /// with, on a body whose reduced `A` has lower-triangle values `a_values` on `pattern` and
    /// is factorised in `factor`.
    ///
    /// Errors when `work` was not prepared on `pattern`, when `a_values` has the wrong
    /// length, or when `factor` is not factorised on `pattern`'s analysis.
    pub fn new(
        pattern: &'a SymmetricPattern,
        a_values: &'a [f64],
        factor: &'a NumericFactor,
        work: &'a mut FactoredDelassusWorkspace,
    ) -> Result<FactoredDelassus<'a>> {
        let n = pattern.dofs().n_reduced();
        if work.n_reduced != n || work.nnz != pattern.nnz() || a_values.len() != pattern.nnz() {
            return Err(Error::invalid(
                "factored Delassus operator",
                format!(
                    "rows prepared on another pattern, or A has {} values for {} stored entries",
                    a_values.len(),
                    pattern.nnz()
                ),
            ));
        }
        if !factor.is_factorized() || factor.symbolic().n() != n {
            return Err(Error::invalid(
                "factored Delassus operator",
                "the factor of A is not computed or does not match the pattern",
            ));
        }
        let symbolic = factor.symbolic();
        if !matches!(&work.shifted, Some(s) if std::sync::Arc::ptr_eq(s.symbolic(), symbolic)) {
            work.shifted = Some(NumericFactor::new(symbolic.clone(), FactorKind::Llt));
            work.projected = None;
            work.stack = None;
        }
        // A projected factor of another problem is never reused.
        work.projected_ready = false;
        if work.stack.is_none() {
            work.stack = Some(MemBuffer::new(factor.solve_scratch(1)));
        }
        work.reduced.resize(n, 0.0);
        work.values.resize(pattern.nnz(), 0.0);
        Ok(FactoredDelassus {
            h: work.h,
            pattern,
            a_values,
            factor,
            work,
            shift: 0.0,
        })
    }
}

/// `reduced = Σᵢ xᵢ rowᵢ` (rows with `xᵢ = 0` skipped) for rows over the reduced DOFs in
/// compressed form: row `i`'s `(reduced DOF, coefficient)` entries are
/// `entries[ptr[i]..ptr[i + 1]]` (`H`'s rows, or the projected system's `E H`).
fn transpose_apply(ptr: &[usize], entries: &[(usize, f64)], x: &[f64], reduced: &mut [f64]) {
    reduced.fill(0.0);
    for (i, &xi) in x.iter().enumerate() {
        if xi != 0.0 {
            for &(r, c) in &entries[ptr[i]..ptr[i + 1]] {
                reduced[r] += c * xi;
            }
        }
    }
}

/// `rowᵢ · reduced` for rows in the form of [`transpose_apply`].
fn row_dot(ptr: &[usize], entries: &[(usize, f64)], i: usize, reduced: &[f64]) -> f64 {
    entries[ptr[i]..ptr[i + 1]]
        .iter()
        .map(|&(r, c)| c * reduced[r])
        .sum()
}

impl DelassusOperator for FactoredDelassus<'_> {
    fn factorize_projected(&mut self, rows: &[ProjectedRow], shifts: &[f64]) -> Result<bool> {
        let contacts = self.dim() / 3;
        if rows.len() != shifts.len() {
            return Err(Error::invalid(
                "projected Delassus system",
                format!("{} rows but {} shifts", rows.len(), shifts.len()),
            ));
        }
        if let Some(k) = shifts.iter().position(|&c| !(c > 0.0) || !c.is_finite()) {
            return Err(Error::invalid(
                format!("projected Delassus system, shift {k}"),
                format!("{:e} must be positive", shifts[k]),
            ));
        }
        let work = &mut *self.work;
        work.projected_ready = false;
        // The rows E H: each contact's three rows of H, weighted by the direction.
        work.projected_ptr.clear();
        work.projected_ptr.push(0);
        work.projected_entries.clear();
        for (k, row) in rows.iter().enumerate() {
            if row.contact >= contacts {
                return Err(Error::invalid(
                    format!("projected Delassus system, row {k}"),
                    format!("contact {} of {contacts}", row.contact),
                ));
            }
            for (j, &w) in row.direction.iter().enumerate() {
                let i = 3 * row.contact + j;
                if w != 0.0 {
                    let entries = &work.entries[work.row_ptr[i]..work.row_ptr[i + 1]];
                    work.projected_entries
                        .extend(entries.iter().map(|&(r, c)| (r, w * c)));
                }
            }
            work.projected_ptr.push(work.projected_entries.len());
        }
        // A + h (E H)ᵀ diag(shifts)⁻¹ (E H): the rows of one contact read the DOFs of H's
        // rows, which A couples (checked by `prepare`).
        work.values.copy_from_slice(self.a_values);
        for (k, &c) in shifts.iter().enumerate() {
            let row = &work.projected_entries[work.projected_ptr[k]..work.projected_ptr[k + 1]];
            add_row_outer(self.pattern, row, self.h / c, &mut work.values)
                .expect("the rows of H were checked against A's pattern");
        }
        let projected = work.projected.get_or_insert_with(|| {
            NumericFactor::new(self.factor.symbolic().clone(), FactorKind::Llt)
        });
        projected
            .factorize(self.pattern, &work.values)
            .map_err(|e| {
                Error::invalid(
                    "Delassus matrix",
                    format!("A + h HᵀH/c cannot be factorised ({e}): A is not positive definite"),
                )
            })?;
        work.projected_shifts.clear();
        work.projected_shifts.extend_from_slice(shifts);
        work.projected_ready = true;
        Ok(true)
    }

    fn solve_projected(&mut self, rhs: &mut [f64]) {
        let work = &mut *self.work;
        let projected = work
            .projected
            .as_ref()
            .filter(|_| work.projected_ready)
            .expect("solve_projected: no valid factorisation");
        assert_eq!(
            rhs.len(),
            work.projected_shifts.len(),
            "FactoredDelassus::solve_projected: length"
        );
        // Woodbury: (D + h Ẽ A⁻¹ Ẽᵀ)⁻¹ = D⁻¹ − D⁻¹ Ẽ h (A + h Ẽᵀ D⁻¹ Ẽ)⁻¹ Ẽᵀ D⁻¹, Ẽ = E H.
        for (r, c) in rhs.iter_mut().zip(&work.projected_shifts) {
            *r /= c;
        }
        let (ptr, entries) = (&work.projected_ptr, &work.projected_entries);
        transpose_apply(ptr, entries, rhs, &mut work.reduced);
        let stack = MemStack::new(work.stack.as_mut().expect("sized by new"));
        projected.solve_vec_in_place(&mut work.reduced, stack);
        for (k, r) in rhs.iter_mut().enumerate() {
            let dot = row_dot(ptr, entries, k, &work.reduced);
            *r -= self.h * dot / work.projected_shifts[k];
        }
    }

    fn dim(&self) -> usize {
        self.work.row_ptr.len() - 1
    }

    fn apply(&mut self, x: &[f64], out: &mut [f64]) {
        let m = self.dim();
        assert!(
            x.len() == m && out.len() == m,
            "FactoredDelassus::apply: lengths"
        );
        let work = &mut *self.work;
        transpose_apply(&work.row_ptr, &work.entries, x, &mut work.reduced);
        let stack = MemStack::new(work.stack.as_mut().expect("sized by new"));
        self.factor.solve_vec_in_place(&mut work.reduced, stack);
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.h * row_dot(&work.row_ptr, &work.entries, i, &work.reduced);
        }
    }

    fn factorize_shifted(&mut self, shift: f64) -> Result<()> {
        if !(shift > 0.0) || !shift.is_finite() {
            return Err(Error::invalid(
                "Delassus shift",
                format!("{shift:e} must be positive"),
            ));
        }
        let work = &mut *self.work;
        for ((v, a), b) in work.values.iter_mut().zip(self.a_values).zip(&work.hth) {
            *v = shift * a + b;
        }
        let shifted = work.shifted.as_mut().expect("allocated by new");
        shifted.factorize(self.pattern, &work.values).map_err(|e| {
            Error::invalid(
                "Delassus matrix",
                format!(
                    "{shift:e}·A + h HᵀH cannot be factorised ({e}): A is not positive definite"
                ),
            )
        })?;
        self.shift = shift;
        Ok(())
    }

    fn solve_shifted(&mut self, rhs: &mut [f64]) {
        let m = self.dim();
        assert_eq!(rhs.len(), m, "FactoredDelassus::solve_shifted: length");
        let work = &mut *self.work;
        transpose_apply(&work.row_ptr, &work.entries, rhs, &mut work.reduced);
        let shifted = work.shifted.as_ref().expect("allocated by new");
        let stack = MemStack::new(work.stack.as_mut().expect("sized by new"));
        // Panics (as the trait says) if the last factorisation failed.
        shifted.solve_vec_in_place(&mut work.reduced, stack);
        let c = self.shift;
        for (i, r) in rhs.iter_mut().enumerate() {
            *r = (*r - self.h * row_dot(&work.row_ptr, &work.entries, i, &work.reduced)) / c;
        }
    }
}
