//! The files an experiment brings and the run-level helpers around them: marker track files
//! (`time,marker,x,y,z`, docs/outputs.md), read for observed tracks and written for simulated
//! ones (`simulate --markers-out`), and a simulated track interpolated in time at an observed
//! sample's time. Uses the scene's model (its markers and states); after `statics` and
//! `output` in the folder order of docs/design.md.

pub mod interpolate;
pub mod tracks;

#[cfg(test)]
mod tests;
