//! Tetrahedral meshes (layer 1; uses `math`, `error`): the [`Mesh`] type with its named
//! groups, boundary-surface extraction, a structured box tetrahedraliser, and the readers and
//! writers of the mesh files users bring (gmsh `.msh`, VTK `.vtk`/`.vtu`), triangle surfaces of rigid obstacles (`.stl`, `.obj`) and ParaView output
//! (`.vtu` frames with a `.pvd` index).

mod box_mesh;
mod fold_check;
pub mod io;
mod surface;
mod tet_mesh;
mod triangle_surface;

pub use box_mesh::box_mesh;
pub use fold_check::check_not_folded;
pub use io::{read_mesh, read_surface};
pub use surface::{boundary_triangles, triangle_normal};
pub use tet_mesh::{Groups, Mesh, MeshInfo};
pub use triangle_surface::{Closure, TriangleSurface, weld_triangle_soup};
