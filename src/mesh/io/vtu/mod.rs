//! VTK XML unstructured grids (`.vtu`): a reader of `ascii` and inline base64 `binary` data
//! arrays, and the writer of the ParaView frames of a simulation.
//!
//! The writer stores the mesh's named groups as 0/1 `UInt8` arrays (`node_group:NAME` in
//! `PointData`, `tetra_group:NAME` and `triangle_group:NAME` in `CellData`), which the reader
//! turns back into groups, so a written file read back gives the same `Mesh` exactly.

mod read;
mod surface;
#[cfg(test)]
mod tests;
mod write;

pub use read::{read_vtu, read_vtu_point_scalars, read_vtu_point_vectors};
pub use surface::write_surface_vtu;
pub(crate) use write::escape_xml;
pub use write::{VtuEncoding, write_vtu, write_vtu_with_scalars};

/// Prefix of the `PointData` arrays holding node groups.
pub const NODE_GROUP_PREFIX: &str = "node_group:";
/// Prefix of the `CellData` arrays holding tetrahedron groups.
pub const TETRA_GROUP_PREFIX: &str = "tetra_group:";
/// Prefix of the `CellData` arrays holding triangle groups.
pub const TRIANGLE_GROUP_PREFIX: &str = "triangle_group:";
