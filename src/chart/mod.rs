//! Line charts (layer 1; uses only `math` and `error`; no physics): an SVG plot and the CSV
//! of the same data, written together all or nothing, for the `calibrate` and `control`
//! outputs.

mod files;
mod line_chart;

pub use files::write_chart;
pub use line_chart::{LineChart, Series, YScale};

#[cfg(test)]
mod tests;
