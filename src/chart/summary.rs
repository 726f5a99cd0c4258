//! A run's summary: one SVG of panels side by side, two per row (the effector's path, the
//! error or loss, the actuation, a table of the run's key numbers), so one file shows the run.

use plotters::prelude::*;

use super::line_chart::LineChart;
use super::path_plot::PathPlot;
use crate::error::{Error, Result};

/// One panel of a summary.
#[derive(Debug, Clone, PartialEq)]
pub enum Panel {
    /// A line chart (error, loss, actuation, parameters).
    Line(LineChart),
    /// Paths projected onto a plane (the effector's path).
    Path(PathPlot),
    /// A titled table of (name, value) rows: the run's key numbers, units in the values.
    Table(String, Vec<(String, String)>),
}

/// A summary: a title over panels laid out two per row.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The title drawn above the panels.
    pub title: String,
    /// The panels, left to right then top to bottom.
    pub panels: Vec<Panel>,
}

/// One panel's size in pixels.
const PANEL: (u32, u32) = (640, 440);
/// The height of the title band in pixels.
const TITLE_BAND: u32 = 50;

impl Summary {
    /// The summary as an SVG document: width 2 × 640 px, 440 px per row of two panels plus
    /// a 50 px title band; each panel drawn as its own chart would be (see
    /// [`LineChart::to_svg`]), a table as `<text>` lines `name: value`. Errors: no panel, or
    /// a panel that is not valid.
    pub fn to_svg(&self) -> Result<String> {
        if self.panels.is_empty() {
            return Err(Error::invalid(
                format!("summary `{}`", self.title),
                "has no panel",
            ));
        }
        for panel in &self.panels {
            match panel {
                Panel::Line(chart) => chart.validate()?,
                Panel::Path(plot) => plot.validate()?,
                Panel::Table(..) => {}
            }
        }
        let rows = self.panels.len().div_ceil(2) as u32;
        let size = (2 * PANEL.0, TITLE_BAND + rows * PANEL.1);
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
            let fail = |e: &dyn std::fmt::Display| {
                Error::invalid(format!("summary `{}`", self.title), e.to_string())
            };
            root.fill(&WHITE).map_err(|e| fail(&e))?;
            let (title, body) = root.split_vertically(TITLE_BAND);
            title
                .draw_text(
                    &self.title,
                    &("sans-serif", 26).into_text_style(&title),
                    (15, 12),
                )
                .map_err(|e| fail(&e))?;
            let areas = body.split_evenly((rows as usize, 2));
            for (panel, area) in self.panels.iter().zip(&areas) {
                match panel {
                    Panel::Line(chart) => chart.draw_on(area),
                    Panel::Path(plot) => plot.draw_on(area),
                    Panel::Table(heading, rows) => draw_table(area, heading, rows),
                }
                .map_err(|e| fail(&e))?;
            }
            root.present().map_err(|e| fail(&e))?;
        }
        Ok(svg)
    }
}

/// Draws a heading and one `name: value` line per row into `area`.
fn draw_table<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    heading: &str,
    rows: &[(String, String)],
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    area.draw_text(heading, &("sans-serif", 20).into_text_style(area), (30, 20))?;
    // 24 px per line, closer (with a smaller font) when the rows would overflow the panel.
    let height = area.dim_in_pixel().1 as i32;
    let pitch = (24).min((height - 70) / (rows.len().max(1) as i32)).max(8);
    let style = ("sans-serif", (2 * pitch / 3).max(7)).into_text_style(area);
    for (i, (name, value)) in rows.iter().enumerate() {
        let y = 60 + pitch * i as i32;
        area.draw_text(&format!("{name}: {value}"), &style, (30, y))?;
    }
    Ok(())
}
