//! Tetrahedral meshes (layer 1; uses `math`, `error`): the [`Mesh`] type with its named
//! groups, boundary-surface extraction, a structured box tetrahedraliser, and the readers and
//! writers of the mesh files users bring (gmsh `.msh`, VTK `.vtk`/`.vtu`) and ParaView output
//! (`.vtu` frames with a `.pvd` index).

mod box_mesh;
pub mod io;
mod surface;
mod tet_mesh;

pub use box_mesh::box_mesh;
pub use io::read_mesh;
pub use surface::{boundary_triangles, triangle_normal};
pub use tet_mesh::{Groups, Mesh, MeshInfo};
