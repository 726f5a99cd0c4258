//! The per-element rest frames of the `corotational_sofa` law (its rotation R = Q_s Q_mᵀ needs
//! each element's rest edge matrix D_m and its polar factor Q_m), and the evaluation of a
//! body's material at its elements, which passes them on.

use crate::error::{Error, Result};
use crate::material::{DeformationError, Law, MaterialPoint, SofaRestFrame, WarmRotation};
use crate::math::{Mat3, Vec3};

use super::soft_body::SoftBody;
use super::tetrahedron::Tetrahedron;

/// The rest frames of `elements` (rest positions `rest`, m) when `law` needs them
/// (`corotational_sofa`), else none. D_m = [X_b − X_a, X_c − X_a, X_d − X_a] in the element's
/// node order. Errors name the element (an SVD that does not converge).
pub(super) fn rest_frames(
    law: Law,
    elements: &[Tetrahedron],
    rest: &[Vec3],
) -> Result<Vec<SofaRestFrame>> {
    if law != Law::CorotationalSofa {
        return Ok(Vec::new());
    }
    elements
        .iter()
        .enumerate()
        .map(|(e, t)| {
            let [a, b, c, d] = t.nodes.map(|n| rest[n]);
            SofaRestFrame::new(&Mat3::from_columns(&[b - a, c - a, d - a]))
                .map_err(|err| err.at_element(e))
        })
        .collect::<std::result::Result<_, Error>>()
}

impl SoftBody {
    /// The material evaluated at element `e` for node positions `x` (m): F = Σₙ xₙ gₙᵀ and, for
    /// `corotational_sofa`, the element's rest frame; with the Lamé pair of the element's
    /// region if it has one ([`super::MaterialRegion`]).
    pub fn material_point(&self, e: usize, x: &[Vec3]) -> Result<MaterialPoint, DeformationError> {
        self.material_at(e, &self.elements()[e].deformation_gradient(x))
    }

    /// The material of element `e` evaluated at the deformation gradient `f` (its rest frame
    /// and region as in [`SoftBody::material_point`]): for callers that form F themselves
    /// (a reduced model's F = I + Σⱼ qⱼ ∂F/∂qⱼ).
    pub fn material_at(&self, e: usize, f: &Mat3) -> Result<MaterialPoint, DeformationError> {
        let point = match self.rest_frames().get(e) {
            Some(frame) => self.material().at_in_frame(f, frame),
            None => self.material().at(f),
        };
        point.map(|p| self.in_element_material(e, p))
    }

    /// The material at the deformation gradients `fs` of the elements `elements` (an index
    /// past the last element, e.g. `usize::MAX` for a padded lane: the identity frame),
    /// handed to `each(k, point)` in order, by reference: `Material::at_lanes` (side-by-side
    /// SVDs) when no element needs a rest frame; `Material::at_lanes_warm` when `warm` holds
    /// the elements' kept rotations (a step's evaluation: Newton's polar from the last
    /// rotation instead of the SVD). Elements of a region get its Lamé pair.
    pub(super) fn material_lanes<const N: usize>(
        &self,
        elements: [usize; N],
        fs: [&Mat3; N],
        warm: Option<&mut [WarmRotation]>,
        mut each: impl FnMut(usize, Result<&MaterialPoint, DeformationError>),
    ) {
        let mut each = |k: usize, point: Result<&MaterialPoint, DeformationError>| match (
            point,
            self.region_lame(elements[k]),
        ) {
            (Ok(p), Some(lame)) => each(k, Ok(&p.with_lame(lame))),
            (point, _) => each(k, point),
        };
        let frames = self.rest_frames();
        if !frames.is_empty() {
            for (k, f) in fs.iter().enumerate() {
                let point = match frames.get(elements[k]) {
                    Some(frame) => self.material().at_in_frame(f, frame),
                    None => self.material().at(f),
                };
                each(k, point.as_ref().map_err(|e| *e));
            }
        } else if let Some(warm) = warm {
            self.material().at_lanes_warm(fs, warm, each);
        } else {
            self.material().at_lanes(fs, each);
        }
    }
}

/// The element indices `first`, `first + 1`, … of a group of `N` lanes, for
/// [`SoftBody::material_lanes`] (past the last element when the group is short).
pub(super) fn consecutive_elements<const N: usize>(first: usize) -> [usize; N] {
    std::array::from_fn(|k| first + k)
}
