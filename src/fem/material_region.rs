//! Regions of a soft body made of another material: a set of its elements with their own
//! Young's modulus and Poisson's ratio (same law), as SOFA models a stiffer layer by a second
//! `TetrahedronFEMForceField` on a sub-topology (the PneuNet's strain-limiting layer).
//!
//! Every law's outputs are linear in the Lamé pair (μ, λ) and its state at F does not depend
//! on them ([`crate::material::MaterialPoint::with_lame`]), so an element of a region is
//! evaluated with the body's law and reweighted with the region's pair. The body's material
//! parameters (`young_modulus:BODY`, `poisson_ratio:BODY`) do not reach a region: its elements
//! keep their own values when the body's are changed (calibration) and contribute nothing to
//! the derivatives with respect to them.

use crate::error::{Error, Result};
use crate::material::{Lame, Material, MaterialPoint};

use super::soft_body::SoftBody;

/// A region: its material and the elements it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct MaterialRegion {
    /// The region's material (the body's law, its own E and ν).
    pub material: Material,
    /// Indices of its elements (tetrahedra in mesh order).
    pub elements: Vec<usize>,
}

impl SoftBody {
    /// Makes the elements of each region of `regions` of its material, later regions over
    /// earlier ones where they overlap. Errors name the body: a region's law differs from the
    /// body's, or it names an element out of range.
    pub fn set_material_regions(&mut self, regions: &[MaterialRegion]) -> Result<()> {
        let ne = self.elements().len();
        let mut lame: Vec<Option<crate::material::Lame>> = vec![None; ne];
        for (r, region) in regions.iter().enumerate() {
            let what = || format!("soft_body.{}.region[{r}]", self.name());
            if region.material.law() != self.material().law() {
                return Err(Error::invalid(
                    what(),
                    format!(
                        "a region takes the body's law ({:?}), got {:?}",
                        self.material().law(),
                        region.material.law()
                    ),
                ));
            }
            for &e in &region.elements {
                let slot = lame.get_mut(e).ok_or_else(|| {
                    Error::invalid(what(), format!("element {e} of a mesh of {ne}"))
                })?;
                *slot = Some(region.material.lame());
            }
        }
        self.region_lame = if lame.iter().any(Option::is_some) {
            lame
        } else {
            Vec::new()
        };
        Ok(())
    }

    /// Whether element `e` belongs to a region (its material is not the body's).
    pub fn in_region(&self, e: usize) -> bool {
        self.region_lame.get(e).is_some_and(Option::is_some)
    }

    /// Whether some element belongs to a region.
    pub fn has_material_regions(&self) -> bool {
        !self.region_lame.is_empty()
    }

    /// Number of elements in regions.
    pub fn region_element_count(&self) -> usize {
        self.region_lame.iter().filter(|l| l.is_some()).count()
    }

    /// `point`, evaluated with the body's material at element `e`, reweighted with the Lamé
    /// pair of the element's region if it has one.
    pub(super) fn in_element_material(&self, e: usize, point: MaterialPoint) -> MaterialPoint {
        match self.region_lame(e) {
            Some(lame) => point.with_lame(lame),
            None => point,
        }
    }

    /// The Lamé pair of element `e`'s region, if it belongs to one.
    pub(super) fn region_lame(&self, e: usize) -> Option<Lame> {
        self.region_lame.get(e).copied().flatten()
    }
}
