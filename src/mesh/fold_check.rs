//! Folded-mesh detection: a tetrahedral mesh whose elements overlap because a node was pushed
//! through a face (every tetrahedron still has a positive volume once re-oriented, so the
//! per-element checks of [`crate::mesh::Mesh::new`] pass, but the elements cover part of the
//! solid twice and the summed volume exceeds the solid's).
//!
//! The test is on the faces, O(elements): in a valid (conforming) mesh every face belongs to
//! one tetrahedron (boundary) or to two that lie on **opposite** sides of it. With positively
//! oriented tetrahedra this is combinatorial and exact: the outward-oriented copies of a shared
//! face (right-hand rule, as in [`crate::mesh::boundary_triangles`]) must be reversed versions
//! of each other; the same cyclic order means both tetrahedra lie on the same side, i.e. they
//! overlap. A face used by three or more tetrahedra is an overlap as well.
//!
//! This is the sharp form of the volume check "signed volume enclosed by the boundary surface =
//! Σ element volumes": when every shared face is used twice in opposite orientations, the
//! interior faces cancel in the divergence theorem and the two volumes agree identically; a
//! fold breaks exactly that cancellation, and the face test names the two elements involved.
//! (Not detected: a boundary node pushed *outwards* until the surface passes through another
//! part of the same body; that needs a surface self-intersection test.)

use std::collections::HashMap;

use crate::error::{Error, Result};

/// The four faces of a positively oriented tetrahedron (a, b, c, d), each ordered so that its
/// right-hand normal points out of the tetrahedron (the convention of `surface.rs`).
#[inline]
fn outward_faces([a, b, c, d]: [usize; 4]) -> [[usize; 3]; 4] {
    [[a, c, b], [a, b, d], [a, d, c], [b, c, d]]
}

/// The face's nodes sorted ascending, and whether its cyclic order is an even permutation of
/// the sorted order (two copies of one face with the same parity have the same orientation).
#[inline]
fn key_and_parity(face: [usize; 3]) -> ([usize; 3], bool) {
    let [a, b, c] = face;
    // The cyclic rotation starting at the smallest node; even iff the next node is the middle.
    let rotated = if a < b && a < c {
        [a, b, c]
    } else if b < a && b < c {
        [b, c, a]
    } else {
        [c, a, b]
    };
    let even = rotated[1] < rotated[2];
    let mut key = face;
    key.sort_unstable();
    (key, even)
}

/// Checks that the tetrahedra (positively oriented, as [`crate::mesh::Mesh::new`] leaves them)
/// do not overlap across a face: every face belongs to at most two tetrahedra, which lie on
/// opposite sides of it.
///
/// Errors ([`Error::Invalid`]) name the first offending pair in element order, e.g.
/// `tetrahedra 3 and 17: lie on the same side of their shared face (nodes [4, 9, 12]): the
/// mesh is folded …`, or the three elements sharing one face.
pub fn check_not_folded(tetrahedra: &[[usize; 4]]) -> Result<()> {
    // Sorted face → (first tetrahedron seen with it, its parity, how many tetrahedra so far).
    let mut seen: HashMap<[usize; 3], (usize, bool, u8)> =
        HashMap::with_capacity(tetrahedra.len() * 4);
    for (e, &tet) in tetrahedra.iter().enumerate() {
        for face in outward_faces(tet) {
            let (key, even) = key_and_parity(face);
            let entry = seen.entry(key).or_insert((e, even, 0));
            entry.2 += 1;
            let (first, first_even, count) = *entry;
            if count == 2 && first_even == even {
                return Err(Error::invalid(
                    format!("tetrahedra {first} and {e}"),
                    format!(
                        "lie on the same side of their shared face (nodes {key:?}), so they \
                         overlap: the mesh is folded (a node pushed through a face?)"
                    ),
                ));
            }
            if count == 3 {
                return Err(Error::invalid(
                    format!("tetrahedra {first} and {e}"),
                    format!(
                        "share the face (nodes {key:?}) with a third tetrahedron: a face \
                         belongs to at most two, so elements overlap"
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parity_is_invariant_under_rotation_and_flips_under_reversal() {
        for face in [[3, 1, 2], [1, 2, 3], [2, 3, 1]] {
            assert_eq!(key_and_parity(face), ([1, 2, 3], true));
        }
        for face in [[3, 2, 1], [1, 3, 2], [2, 1, 3]] {
            assert_eq!(key_and_parity(face), ([1, 2, 3], false));
        }
    }

    #[test]
    fn two_tetrahedra_on_opposite_sides_pass_and_on_the_same_side_fail() {
        // Combinatorial (the tetrahedra are taken as positively oriented): (0, 1, 2, 3) sees
        // face {1, 2, 3} as [1, 2, 3] (its face [b, c, d]); (1, 2, 3, 4) as [1, 3, 2] (its face
        // [a, c, b]), reversed, so their apexes 0 and 4 lie on opposite sides. (4, 1, 2, 3)
        // sees it as [1, 2, 3] like the first: apexes 0 and 4 on the same side.
        assert!(check_not_folded(&[[0, 1, 2, 3], [1, 2, 3, 4]]).is_ok());
        let err = check_not_folded(&[[0, 1, 2, 3], [4, 1, 2, 3]]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("tetrahedra 0 and 1:"), "{msg}");
        assert!(msg.contains("[1, 2, 3]"), "{msg}");
        let err = check_not_folded(&[[0, 1, 2, 3], [1, 2, 3, 4], [1, 2, 3, 5]]).unwrap_err();
        assert!(err.to_string().contains("third"), "{err}");
    }
}
