//! The frictional contact NCP (paper 004 Eq. 2) and its solvers: the Coulomb cone with the De
//! Saxcé correction, the problem and its residuals, contact modes, the Delassus operator as the
//! solvers see it, ADMM (with Anderson acceleration and the polish) and PGS, bilateral rows
//! eliminated before a solve, and the NCP's implicit derivative.

pub mod admm;
mod admm_faces;
mod admm_iterate;
mod admm_loop;
mod admm_penalty;
pub mod admm_settings;
pub mod admm_trace;
pub mod anderson;
pub mod bilateral_elimination;
pub mod cone;
pub mod delassus_operator;
pub mod derivative;
pub mod modes;
pub mod pgs;
pub mod polish;
pub mod polish_krylov;
pub mod problem;
