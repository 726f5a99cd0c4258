//! The rows of the NCP from a soft body's step: the contact Jacobian H_c, the free contact
//! velocity and the penetration correction, and the Delassus matrix G = h H_c A⁻¹ H_cᵀ through
//! the step's factor of A (assembled, or applied without being formed), with attachment rows
//! eliminated through the bodies' factors.

pub mod assembly;
pub mod attached_body;
pub mod attached_reduction;
pub mod factored;
pub mod jacobian;
pub mod row_places;
