//! The scene file's `[[attachment]]` sections (docs/rigid.md "Mixed scenes"): soft nodes held
//! to a rigid body or a robot link by bilateral rows of the contact NCP. Plain data
//! deserialised with serde; [`AttachmentSection::validate`] checks what can be checked without
//! the bodies, naming `attachment[k].KEY`.

use serde::Deserialize;

use crate::error::{Error, Result};

/// One `[[attachment]]`: the nodes of `soft_body` in `group` and/or `box` follow the rigid
/// body `rigid_body`, or the link `link` of the robot `robot`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttachmentSection {
    /// The soft body whose nodes are attached.
    pub soft_body: String,
    /// A node, triangle or tetrahedron group of its mesh.
    #[serde(default)]
    pub group: Option<String>,
    /// An axis-aligned box `[[min], [max]]` (m, after the mesh's `scale`): the nodes inside.
    #[serde(default, rename = "box")]
    pub node_box: Option<[[f64; 3]; 2]>,
    /// A free or fixed `[[rigid_body]]`.
    #[serde(default)]
    pub rigid_body: Option<String>,
    /// A `[[robot]]` (with `link`).
    #[serde(default)]
    pub robot: Option<String>,
    /// The robot's link (a URDF `<link>` name).
    #[serde(default)]
    pub link: Option<String>,
}

impl AttachmentSection {
    /// Checks the keys' combination: a node set (`group` and/or `box`), and exactly one of
    /// `rigid_body` or `robot` + `link`.
    pub fn validate(&self, k: usize) -> Result<()> {
        let at = |key: &str| format!("attachment[{k}].{key}");
        if self.group.is_none() && self.node_box.is_none() {
            return Err(Error::invalid(
                at("group"),
                "give `group` and/or `box` = [[min], [max]] (m): the soft nodes to attach",
            ));
        }
        if let Some([lo, hi]) = self.node_box
            && (lo.iter().chain(&hi).any(|x| !x.is_finite()) || (0..3).any(|a| lo[a] > hi[a]))
        {
            return Err(Error::invalid(
                at("box"),
                format!("{lo:?}..{hi:?} must be finite with min ≤ max on each axis (m)"),
            ));
        }
        match (&self.rigid_body, &self.robot, &self.link) {
            (Some(_), None, None) | (None, Some(_), Some(_)) => Ok(()),
            (Some(_), Some(_), _) => Err(Error::invalid(
                at("robot"),
                "give `rigid_body` or `robot` + `link`, not both",
            )),
            (None, Some(_), None) => Err(Error::invalid(
                at("link"),
                "is required with `robot` (the URDF link the nodes follow)",
            )),
            (_, None, Some(_)) => Err(Error::invalid(at("link"), "is only used with `robot`")),
            (None, None, None) => Err(Error::invalid(
                at("rigid_body"),
                "give `rigid_body = \"NAME\"` or `robot = \"NAME\"` + `link = \"LINK\"`",
            )),
        }
    }
}
