//! A path plot: 3D point paths (an effector's positions, m) projected onto the plane of the
//! two world axes along which they spread most, drawn with equal scales on both axes, with
//! marked points (a target, a start).

use plotters::prelude::*;

use super::line_chart::{colour, tick_label};
use crate::error::{Error, Result};

/// How a marked point is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A hollow circle (a start).
    Circle,
    /// A cross (a target).
    Cross,
}

/// A marked point: its legend entry, position (m) and shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// The legend entry.
    pub name: String,
    /// The position (m, world frame).
    pub position: [f64; 3],
    /// The shape.
    pub mark: Mark,
}

/// Paths and marked points in 3D (m), drawn projected onto a plane.
#[derive(Debug, Clone, PartialEq)]
pub struct PathPlot {
    /// The title drawn above the plot.
    pub title: String,
    /// The paths: a legend entry and the points in order (m, world frame).
    pub paths: Vec<(String, Vec<[f64; 3]>)>,
    /// The marked points.
    pub markers: Vec<Marker>,
}

/// The world axes' names, for the axis titles.
const AXES: [&str; 3] = ["x", "y", "z"];

impl PathPlot {
    /// Checks that there is at least one path with a point and every coordinate is finite.
    pub fn validate(&self) -> Result<()> {
        let what = || format!("path plot `{}`", self.title);
        if self.paths.iter().all(|(_, p)| p.is_empty()) {
            return Err(Error::invalid(what(), "has no point"));
        }
        let points = self.paths.iter().flat_map(|(_, p)| p.iter());
        let marks = self.markers.iter().map(|m| &m.position);
        if points.chain(marks).flatten().any(|v| !v.is_finite()) {
            return Err(Error::invalid(what(), "has a non-finite coordinate"));
        }
        Ok(())
    }

    /// The two axes of the plane drawn (indices into x, y, z, ascending): those along which
    /// the paths and marked points extend most; ties go to the earlier axis.
    pub fn plane(&self) -> [usize; 2] {
        let extent = |k: usize| {
            let values = self
                .paths
                .iter()
                .flat_map(|(_, p)| p.iter())
                .chain(self.markers.iter().map(|m| &m.position))
                .map(|p| p[k]);
            let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
            hi - lo
        };
        let mut order = [0, 1, 2];
        order.sort_by(|&a, &b| extent(b).total_cmp(&extent(a)).then(a.cmp(&b)));
        let mut plane = [order[0], order[1]];
        plane.sort_unstable();
        plane
    }

    /// Draws the plot into `area`: one 2 px polyline per path (in the palette's colours),
    /// each marker in black, a legend entry per path and marker, axis titles `x (m)` etc.
    /// Both axes span the same length (m), so the path keeps its shape.
    pub(super) fn draw_on<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, plotters::coord::Shift>,
    ) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let [a, b] = self.plane();
        let project = |p: &[f64; 3]| (p[a], p[b]);
        let all: Vec<(f64, f64)> = self
            .paths
            .iter()
            .flat_map(|(_, p)| p.iter())
            .chain(self.markers.iter().map(|m| &m.position))
            .map(project)
            .collect();
        let bounds = |f: &dyn Fn(&(f64, f64)) -> f64| {
            all.iter()
                .map(f)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                })
        };
        let (u0, u1) = bounds(&|p| p.0);
        let (v0, v1) = bounds(&|p| p.1);
        let half = 0.55 * (u1 - u0).max(v1 - v0).max(1e-6);
        let (uc, vc) = (0.5 * (u0 + u1), 0.5 * (v0 + v1));
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(uc - half..uc + half, vc - half..vc + half)?;
        let (x_title, y_title) = (format!("{} (m)", AXES[a]), format!("{} (m)", AXES[b]));
        chart
            .configure_mesh()
            .x_desc(x_title.as_str())
            .y_desc(y_title.as_str())
            .x_label_formatter(&|v| tick_label(*v))
            .y_label_formatter(&|v| tick_label(*v))
            .draw()?;
        for (k, (name, path)) in self.paths.iter().enumerate() {
            let colour = colour(k);
            chart
                .draw_series(LineSeries::new(
                    path.iter().map(project),
                    colour.stroke_width(2),
                ))?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 4), (x + 12, y + 4)], colour.filled())
                });
        }
        for m in &self.markers {
            let at = project(&m.position);
            let style = BLACK.stroke_width(2);
            let drawn = match m.mark {
                Mark::Circle => chart.draw_series(std::iter::once(Circle::new(at, 6, style)))?,
                Mark::Cross => chart.draw_series(std::iter::once(Cross::new(at, 6, style)))?,
            };
            let mark = m.mark;
            drawn
                .label(m.name.as_str())
                .legend(move |(x, y)| match mark {
                    Mark::Circle => Circle::new((x + 6, y), 5, style).into_dyn(),
                    Mark::Cross => Cross::new((x + 6, y), 5, style).into_dyn(),
                });
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
        Ok(())
    }
}
