//! A tetrahedron's 12 × 12 block added into the stored lower triangle by runs: the three DOFs
//! of a free node are consecutive rows, so the entries of one node pair in one column are
//! contiguous values. 30 run starts replace the 78 per-entry value indices and block positions
//! of the general plan (124 bytes per element instead of 468), and the adds go by threes.

use super::pattern::SymmetricPattern;

/// The six node pairs (i, j), i < j, of a tetrahedron, in the order of their runs.
const PAIRS: [(usize, usize); 6] = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)];

/// Where a tetrahedron's block goes, when its four nodes are distinct and all their DOFs free
/// (block size 3): every column of the matrix it adds to, split by node pair, is one run of
/// consecutive stored values.
#[derive(Debug, Clone, Copy)]
pub(super) struct TetRuns {
    /// The value index of each run's first entry: first the 12 diagonal runs (node `i`,
    /// component `p`: rows `p..3` of the node's own 3 × 3 block, from its diagonal), then the
    /// 18 off-diagonal ones (pair `k` of [`PAIRS`], component `p` of its column node: the
    /// other node's three rows).
    start: [u32; 30],
    /// Bit `k`: pair `k`'s column node (the one with the lower DOF index) is its first node.
    column_first: u8,
}

impl TetRuns {
    /// The runs of the tetrahedron `nodes` on `pattern`, or `None` if it is not made of four
    /// distinct nodes whose DOFs are all free, with a block size of 3.
    pub(super) fn new(pattern: &SymmetricPattern, nodes: &[usize]) -> Option<TetRuns> {
        if pattern.block_size() != 3 || nodes.len() != 4 {
            return None;
        }
        let mut first = [0usize; 4];
        for (f, &node) in first.iter_mut().zip(nodes) {
            let dofs: Option<Vec<usize>> = (0..3)
                .map(|p| pattern.dofs().reduced_index(3 * node + p))
                .collect();
            let dofs = dofs?;
            // Free DOFs of one node are consecutive reduced indices.
            debug_assert!(dofs[1] == dofs[0] + 1 && dofs[2] == dofs[0] + 2);
            *f = dofs[0];
        }
        if (0..4).any(|i| (i + 1..4).any(|j| first[i] == first[j])) {
            return None;
        }
        let (col_ptr, row_idx) = (pattern.col_ptr(), pattern.row_idx());
        // The stored value of (row, col), row ≥ col, followed by rows + 1, …, + len − 1.
        let run = |row: usize, col: usize, len: usize| -> Option<u32> {
            let rows = &row_idx[col_ptr[col]..col_ptr[col + 1]];
            let k = rows.binary_search(&row).ok()?;
            let contiguous = (0..len).all(|q| rows.get(k + q) == Some(&(row + q)));
            contiguous.then_some((col_ptr[col] + k) as u32)
        };
        let mut start = [0u32; 30];
        for i in 0..4 {
            for p in 0..3 {
                let col = first[i] + p;
                start[3 * i + p] = run(col, col, 3 - p)?;
            }
        }
        let mut column_first = 0u8;
        for (k, &(i, j)) in PAIRS.iter().enumerate() {
            let (column, other) = if first[i] < first[j] {
                column_first |= 1 << k;
                (first[i], first[j])
            } else {
                (first[j], first[i])
            };
            for p in 0..3 {
                start[12 + 3 * k + p] = run(other, column + p, 3)?;
            }
        }
        Some(TetRuns {
            start,
            column_first,
        })
    }

    /// Every stored entry of the block: its position in the block's upper triangle and the
    /// value it adds to (78 of them, runs in order).
    pub(super) fn entries(&self) -> impl Iterator<Item = (u16, u32)> + '_ {
        let diagonal = (0..4).flat_map(move |i| {
            (0..3).flat_map(move |p| {
                let start = self.start[3 * i + p];
                (p..3).map(move |q| {
                    (
                        ((3 * i + p) * 12 + 3 * i + q) as u16,
                        start + (q - p) as u32,
                    )
                })
            })
        });
        let pairs = PAIRS.iter().enumerate().flat_map(move |(k, &(i, j))| {
            (0..3).flat_map(move |p| {
                let start = self.start[12 + 3 * k + p];
                (0..3).map(move |q| {
                    let local = if self.column_first & (1 << k) != 0 {
                        (3 * i + p) * 12 + 3 * j + q
                    } else {
                        (3 * i + q) * 12 + 3 * j + p
                    };
                    (local as u16, start + q as u32)
                })
            })
        });
        diagonal.chain(pairs)
    }

    /// Adds the row-major symmetric 12 × 12 `block` (upper triangle read) into `values`, each
    /// stored entry once.
    #[inline]
    pub(super) fn scatter_add(&self, block: &[f64], values: &mut [f64]) {
        let block = &block[..144];
        for i in 0..4 {
            for p in 0..3 {
                let start = self.start[3 * i + p] as usize;
                // Row 3i + p of the block, from its diagonal to the node's last column.
                let at = (3 * i + p) * 12 + 3 * i;
                let row = &block[at + p..at + 3];
                for (v, b) in values[start..start + 3 - p].iter_mut().zip(row) {
                    *v += b;
                }
            }
        }
        for (k, &(i, j)) in PAIRS.iter().enumerate() {
            for p in 0..3 {
                let start = self.start[12 + 3 * k + p] as usize;
                let out = &mut values[start..start + 3];
                if self.column_first & (1 << k) != 0 {
                    // Column 3i + p, rows 3j + q: the upper entries (3i + p, 3j + q).
                    let row = &block[(3 * i + p) * 12 + 3 * j..][..3];
                    for (v, b) in out.iter_mut().zip(row) {
                        *v += b;
                    }
                } else {
                    // Column 3j + p, rows 3i + q: the upper entries (3i + q, 3j + p).
                    for (q, v) in out.iter_mut().enumerate() {
                        *v += block[(3 * i + q) * 12 + 3 * j + p];
                    }
                }
            }
        }
    }
}
