//! Fixed nodes, chosen by a box or a named mesh group.

use crate::error::{Error, Result};
use crate::mesh::Mesh;

/// Per node, whether it is fixed: inside the closed box `[min, max]` (m, in the mesh's
/// coordinates) or in the mesh group `group` (any kind). `what` names the body in errors:
/// an unknown group, a box or group that fixes no node (almost always a unit mistake), or
/// boxes and groups that together fix every node (nothing could move).
pub fn fixed_nodes(
    mesh: &Mesh,
    fixed_box: Option<[[f64; 3]; 2]>,
    group: Option<&str>,
    what: &str,
) -> Result<Vec<bool>> {
    let mut fixed = vec![false; mesh.node_count()];
    if let Some([lo, hi]) = fixed_box {
        let mut any = false;
        for (f, p) in fixed.iter_mut().zip(mesh.positions()) {
            if (0..3).all(|a| p[a] >= lo[a] && p[a] <= hi[a]) {
                *f = true;
                any = true;
            }
        }
        if !any {
            return Err(Error::invalid(
                format!("{what}.fixed_box"),
                format!(
                    "{lo:?}..{hi:?} contains no node of the mesh (units are metres after `scale`)"
                ),
            ));
        }
    }
    if let Some(name) = group {
        let nodes = mesh.group_nodes(name).ok_or_else(|| {
            Error::invalid(
                format!("{what}.fixed_group"),
                format!(
                    "the mesh has no group `{name}` (it has {:?})",
                    mesh.group_names()
                ),
            )
        })?;
        for n in nodes {
            fixed[n] = true;
        }
    }
    if !fixed.is_empty() && fixed.iter().all(|&f| f) {
        let key = match (fixed_box.is_some(), group.is_some()) {
            (true, true) => format!("{what}.fixed_box/fixed_group"),
            (true, false) => format!("{what}.fixed_box"),
            _ => format!("{what}.fixed_group"),
        };
        return Err(Error::invalid(
            key,
            format!(
                "fixes every node of the mesh ({} nodes): nothing could move (units are metres after `scale`)",
                fixed.len()
            ),
        ));
    }
    Ok(fixed)
}
