//! The contact geometry of the last rigid step's rows, for the step derivative: for each row
//! block of [`RigidWorkspace::contacts`] that is a contact between a collider and an obstacle,
//! a fixed rigid body or another collider, the derivatives of its point, normal and gap with
//! respect to the motions of its two bodies (`contact::contact_geometry_jacobian`, at the
//! step's start poses); `None` for a joint limit.

use crate::contact::{
    ContactGeometryJacobian, Counterpart, ManifoldWorkspace, ShapeContact,
    contact_geometry_jacobian,
};
use crate::error::Result;

use super::detection::RigidRow;
use super::stage::RigidWorkspace;
use crate::scene::model::contact::SceneContact;
use crate::scene::model::rigid::RigidScene;

impl RigidWorkspace {
    /// The geometry Jacobians of the last step's detected rigid rows (the first
    /// [`RigidWorkspace::own_row_count`] of [`RigidWorkspace::contacts`]; module doc). Errors
    /// when a contact changes features within the differentiation step.
    pub fn row_geometry(
        &self,
        rigid: &RigidScene,
        contact: &SceneContact,
    ) -> Result<Vec<Option<ContactGeometryJacobian>>> {
        let mut out = Vec::new();
        self.row_geometry_into(rigid, contact, &mut out)?;
        Ok(out)
    }

    /// [`Self::row_geometry`] into `out` (cleared first; no allocation once it has held as
    /// many rows). Errors as [`Self::row_geometry`].
    pub fn row_geometry_into(
        &self,
        rigid: &RigidScene,
        contact: &SceneContact,
        out: &mut Vec<Option<ContactGeometryJacobian>>,
    ) -> Result<()> {
        let own = self.own_rows();
        let mut ws = ManifoldWorkspace::default();
        out.clear();
        for item in own.iter().zip(self.own_keys()).map(|(row, key)| {
            let RigidRow::Contact { point, frame, .. } = row.row else {
                return Ok(None);
            };
            let (kind, s, c, o, d, f1, f2) = *key;
            let found = ShapeContact {
                point,
                normal: frame.column(2).into_owned(),
                gap: row.gap,
                features: (f1, f2),
            };
            let a = &rigid.systems[s].colliders[c].collider;
            let pose_a = self.poses()[s][c];
            let other = match kind {
                0 => Counterpart::Obstacle(&contact.obstacles[o]),
                1 => {
                    let fixed = &rigid.statics[o];
                    Counterpart::Collider(&fixed.collider, fixed.pose)
                }
                _ => Counterpart::Collider(
                    &rigid.systems[o].colliders[d].collider,
                    self.poses()[o][d],
                ),
            };
            contact_geometry_jacobian(a, &pose_a, other, &found, &mut ws).map(Some)
        }) {
            out.push(item?);
        }
        Ok(())
    }
}
