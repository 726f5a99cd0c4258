//! A line chart: named series over a shared x axis, rendered as SVG (plotters' SVG backend,
//! no system fonts: text is emitted as SVG `<text>` for the viewer to render) and as the CSV
//! of the same numbers.

use std::ops::Range;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use crate::error::{Error, Result};

/// How the y axis is scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YScale {
    /// Linear.
    Linear,
    /// Base-10 logarithmic; values ≤ 0 are left out of the drawn lines (kept in the CSV).
    Log,
}

/// One named line: a y value per x value of the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend entry and CSV column header.
    pub name: String,
    /// One value per x (non-finite values are left out of the drawn line, kept in the CSV).
    pub y: Vec<f64>,
}

/// A line chart: a title, axis labels, a shared x axis and one or more series.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// The title drawn above the plot.
    pub title: String,
    /// The x axis label (also the first CSV column's header).
    pub x_label: String,
    /// The y axis label.
    pub y_label: String,
    /// The x values, shared by every series.
    pub x: Vec<f64>,
    /// The lines.
    pub series: Vec<Series>,
    /// The y axis scale.
    pub y_scale: YScale,
}

/// Colours of successive series (repeating).
const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// SVG size in pixels.
const SIZE: (u32, u32) = (800, 500);

impl LineChart {
    /// A chart with no series yet and a linear y axis.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
        x: Vec<f64>,
    ) -> LineChart {
        LineChart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x,
            series: Vec::new(),
            y_scale: YScale::Linear,
        }
    }

    /// Adds a series.
    pub fn with_series(mut self, name: impl Into<String>, y: Vec<f64>) -> LineChart {
        self.series.push(Series {
            name: name.into(),
            y,
        });
        self
    }

    /// Sets the y axis scale.
    pub fn with_y_scale(mut self, scale: YScale) -> LineChart {
        self.y_scale = scale;
        self
    }

    /// Checks that there is at least one series, every series has one value per x, the x
    /// values are finite and the CSV headers are distinct.
    pub fn validate(&self) -> Result<()> {
        let what = || format!("chart `{}`", self.title);
        if self.series.is_empty() {
            return Err(Error::invalid(what(), "has no series"));
        }
        if let Some(i) = self.x.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                what(),
                format!("x value {i} is {} (must be finite)", self.x[i]),
            ));
        }
        for (k, s) in self.series.iter().enumerate() {
            if s.y.len() != self.x.len() {
                return Err(Error::invalid(
                    what(),
                    format!(
                        "series `{}` has {} values for {} x values",
                        s.name,
                        s.y.len(),
                        self.x.len()
                    ),
                ));
            }
            let clash = s.name == self.x_label || self.series[..k].iter().any(|o| o.name == s.name);
            if clash {
                return Err(Error::invalid(
                    what(),
                    format!("column name `{}` is used twice", s.name),
                ));
            }
        }
        Ok(())
    }

    /// The data as CSV: a header `x_label,series…`, then one row per x value. Numbers are
    /// written in Rust's shortest round-trip form (so they parse back exactly; non-finite as
    /// `NaN`, `inf`, `-inf`); headers are quoted when they hold a comma, quote or newline.
    pub fn to_csv(&self) -> Result<String> {
        self.validate()?;
        let mut out = String::new();
        let header: Vec<String> = std::iter::once(&self.x_label)
            .chain(self.series.iter().map(|s| &s.name))
            .map(|h| quote(h))
            .collect();
        out.push_str(&header.join(","));
        out.push('\n');
        for (i, x) in self.x.iter().enumerate() {
            out.push_str(&format!("{x:?}"));
            for s in &self.series {
                out.push_str(&format!(",{:?}", s.y[i]));
            }
            out.push('\n');
        }
        Ok(out)
    }

    /// The chart as an SVG document (800×500 px): one 2 px wide `<polyline>` per series, in
    /// its own colour, through its drawable points (finite, and positive on a log axis); 1 px
    /// black polylines for the axes and ticks; a legend, the title and axis labels as
    /// `<text>`.
    pub fn to_svg(&self) -> Result<String> {
        self.validate()?;
        let (x_range, drawable) = self.ranges();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
            let fail = |e: &dyn std::fmt::Display| {
                Error::invalid(format!("chart `{}`", self.title), e.to_string())
            };
            root.fill(&WHITE).map_err(|e| fail(&e))?;
            let (y_lo, y_hi) = drawable;
            match self.y_scale {
                YScale::Linear => self.draw(&root, x_range, y_lo..y_hi),
                YScale::Log => self.draw(&root, x_range, (y_lo..y_hi).log_scale()),
            }
            .map_err(|e| fail(&e))?;
            root.present().map_err(|e| fail(&e))?;
        }
        Ok(svg)
    }

    /// Whether a y value is drawn on this chart's axis.
    fn drawable(&self, y: f64) -> bool {
        y.is_finite() && (self.y_scale == YScale::Linear || y > 0.0)
    }

    /// The x range and the (padded) range of the drawable y values.
    fn ranges(&self) -> (Range<f64>, (f64, f64)) {
        let bounds = |values: &mut dyn Iterator<Item = f64>| {
            values.fold(None, |acc: Option<(f64, f64)>, v| match acc {
                None => Some((v, v)),
                Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
            })
        };
        let (x0, x1) = bounds(&mut self.x.iter().copied()).unwrap_or((0.0, 1.0));
        let (x0, x1) = if x1 > x0 {
            (x0, x1)
        } else {
            (x0 - 0.5, x1 + 0.5)
        };
        let mut ys = self
            .series
            .iter()
            .flat_map(|s| s.y.iter().copied())
            .filter(|&y| self.drawable(y));
        let y = bounds(&mut ys);
        let y = match (self.y_scale, y) {
            (YScale::Linear, None) => (0.0, 1.0),
            (YScale::Log, None) => (0.1, 10.0),
            (YScale::Linear, Some((lo, hi))) => {
                let pad = if hi > lo {
                    0.05 * (hi - lo)
                } else {
                    0.5 * lo.abs().max(1.0)
                };
                (lo - pad, hi + pad)
            }
            (YScale::Log, Some((lo, hi))) => (lo / 2.0, hi * 2.0),
        };
        (x0..x1, y)
    }

    fn draw<Y>(
        &self,
        root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        x_range: Range<f64>,
        y_range: Y,
    ) -> std::result::Result<(), DrawingAreaErrorKind<std::io::Error>>
    where
        Y: AsRangedCoord<Value = f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(x_range, y_range)?;
        chart
            .configure_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&|v| tick_label(*v))
            .y_label_formatter(&|v| tick_label(*v))
            .draw()?;
        for (k, s) in self.series.iter().enumerate() {
            let colour = COLOURS[k % COLOURS.len()];
            let points: Vec<(f64, f64)> = self
                .x
                .iter()
                .zip(&s.y)
                .filter(|&(_, &y)| self.drawable(y))
                .map(|(&x, &y)| (x, y))
                .collect();
            chart
                .draw_series(LineSeries::new(points, colour.stroke_width(2)))?
                .label(s.name.as_str())
                // A filled square as the legend mark, so the only polylines are the series.
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 4), (x + 12, y + 4)], colour.filled())
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

/// A short axis tick label: up to 4 decimals in [1e-3, 1e5), else `1.25e-7` style, trailing
/// zeros dropped.
pub(super) fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        return "0".to_string();
    }
    let trim = |m: &str| -> String {
        if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            m.to_string()
        }
    };
    if (1e-3..1e5).contains(&a) {
        trim(&format!("{v:.4}"))
    } else {
        let text = format!("{v:.2e}");
        match text.split_once('e') {
            Some((mantissa, exponent)) => format!("{}e{exponent}", trim(mantissa)),
            None => text,
        }
    }
}

/// A CSV field: quoted (with doubled quotes) when it holds a comma, a quote or a line break.
fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}
