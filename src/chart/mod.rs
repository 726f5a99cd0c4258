//! Charts (layer 1; uses only `math` and `error`; no physics): line charts written as an SVG
//! plot and the CSV of the same data, together all or nothing, for the `calibrate` and
//! `control` outputs; path plots; and a run's one-page summary (`summary.svg`).

mod files;
mod line_chart;
mod path_plot;
mod scale;
mod summary;

pub use files::{FileSet, write_chart, write_summary};
pub use line_chart::{LineChart, Series, YScale};
pub use path_plot::{Mark, Marker, PathPlot};
pub use scale::{AUTO_LOG_DECADES, ScaleChoice};
pub use summary::{Panel, Summary};

#[cfg(test)]
mod tests;
