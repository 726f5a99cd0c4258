//! `[[soft_body.region]]`: the elements of a box made of another material (docs/scene-file.md),
//! SOFA's stiffer layer of the PneuNet (a second `TetrahedronFEMForceField` on the tetrahedra
//! of a `BoxROI`). Parsed here, checked by [`RegionSection::validate`], mapped onto the
//! body's elements by [`material_regions`].

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::fem::MaterialRegion;
use crate::material::{Law, Material};
use crate::math::Vec3;
use crate::mesh::Mesh;

/// `[[soft_body.region]]`: the body's elements in `box` (all four nodes, or with
/// `strict = false` the centroid, as SOFA's `BoxROI` selects tetrahedra) are of their own
/// material, the body's law with `young_modulus` and `poisson_ratio`. Regions listed later
/// win where boxes overlap. The body's `young_modulus:BODY` and `poisson_ratio:BODY`
/// (calibration, sensitivities) do not reach a region's elements.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionSection {
    /// Unique name within the body (`--set soft_body.BODY.region.NAME.young_modulus=…`).
    pub name: String,
    /// `[min, max]` (m, world coordinates: after the body's `scale` and placement).
    #[serde(rename = "box")]
    pub bounds: [[f64; 3]; 2],
    /// Young's modulus E (Pa) of the region, > 0. SOFA adds a second force field's E to the
    /// body's: E here is their sum (e.g. 500 + 1000 kPa = 1.5e6 Pa).
    pub young_modulus: f64,
    /// Poisson's ratio ν of the region, in (−1, 0.5); default the body's.
    #[serde(default)]
    pub poisson_ratio: Option<f64>,
    /// An element is in the box when all four of its nodes are (true, the default, as
    /// SOFA's `BoxROI strict`) or when its centroid is (false).
    #[serde(default = "default_strict")]
    pub strict: bool,
}

fn default_strict() -> bool {
    true
}

impl RegionSection {
    /// Checks the box (min ≤ max, finite), E > 0 and finite, ν in (−1, 0.5); errors name
    /// `soft_body.BODY.region.NAME.KEY`.
    pub fn validate(&self, body: &str) -> Result<()> {
        let at = |key: &str| format!("soft_body.{body}.region.{}.{key}", self.name);
        let [lo, hi] = self.bounds;
        if (0..3).any(|a| !(lo[a] <= hi[a]) || !lo[a].is_finite() || !hi[a].is_finite()) {
            return Err(Error::invalid(
                at("box"),
                "must be [[min], [max]] with min ≤ max, finite (m)",
            ));
        }
        if !(self.young_modulus.is_finite() && self.young_modulus > 0.0) {
            return Err(Error::invalid(
                at("young_modulus"),
                format!("must be positive (Pa), got {}", self.young_modulus),
            ));
        }
        if let Some(nu) = self.poisson_ratio
            && !(nu > -1.0 && nu < 0.5)
        {
            return Err(Error::invalid(
                at("poisson_ratio"),
                format!("must be in (−1, 0.5), got {nu}"),
            ));
        }
        Ok(())
    }
}

/// The regions of the body `body` (law `law`, Poisson's ratio `nu`, placed mesh `mesh`):
/// per section its material and the tetrahedra in its box ([`RegionSection::strict`]).
/// Errors name the section: a box that holds no element, a duplicate name.
pub(in crate::scene) fn material_regions(
    sections: &[RegionSection],
    mesh: &Mesh,
    body: &str,
    law: Law,
    nu: f64,
) -> Result<Vec<MaterialRegion>> {
    let x = mesh.positions();
    let mut regions = Vec::with_capacity(sections.len());
    for (i, s) in sections.iter().enumerate() {
        let what = format!("soft_body.{body}.region.{}", s.name);
        if sections[..i].iter().any(|o| o.name == s.name) {
            return Err(Error::invalid(
                what,
                "another region of the body has this name",
            ));
        }
        let [lo, hi] = s.bounds;
        let inside = |p: &Vec3| (0..3).all(|a| lo[a] <= p[a] && p[a] <= hi[a]);
        let elements: Vec<usize> = mesh
            .tetrahedra()
            .iter()
            .enumerate()
            .filter(|(_, t)| {
                if s.strict {
                    t.iter().all(|&n| inside(&x[n]))
                } else {
                    inside(&(t.iter().map(|&n| x[n]).sum::<Vec3>() / 4.0))
                }
            })
            .map(|(e, _)| e)
            .collect();
        if elements.is_empty() {
            return Err(Error::invalid(
                format!("{what}.box"),
                format!(
                    "holds no element ({}; the box is in metres, world coordinates: after the body's scale and placement)",
                    if s.strict {
                        "strict: all four nodes inside"
                    } else {
                        "its centroid inside"
                    }
                ),
            ));
        }
        let material = Material::new(law, s.young_modulus, s.poisson_ratio.unwrap_or(nu))
            .map_err(|e| Error::invalid(what.clone(), e.to_string()))?;
        regions.push(MaterialRegion { material, elements });
    }
    Ok(regions)
}
