//! A line chart: named series over a shared x axis, rendered as SVG (plotters' SVG backend,
//! no system fonts: text is emitted as SVG `<text>` for the viewer to render) and as the CSV
//! of the same numbers.

use std::ops::Range;

use plotters::prelude::*;

use crate::error::{Error, Result};

/// How the y axis is scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YScale {
    /// Linear.
    Linear,
    /// Base-10 logarithmic; values ≤ 0 are left out of the drawn lines (kept in the CSV).
    /// Drawn as log₁₀ y on a linear axis whose ticks are labelled with the values (`1e-12`),
    /// so the labels span the whole range however many decades it covers.
    Log,
}

/// One named line: a y value per x value of the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The CSV column header, and the legend entry (followed by the unit, if any).
    pub name: String,
    /// The unit of its values (`N`, `Pa`, `N·m`, `rad`), or empty when the chart's y label
    /// already says it. Shown in the legend and, when every series has the same one, on the
    /// y axis.
    pub unit: String,
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

/// Colours of the first ten series (the "tab10" palette); further series get colours spread
/// around the hue circle (`colour`), so every series of a chart has its own.
const COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The colour of series `k`: the palette, then hues 137.5° apart (golden angle) at varying
/// lightness, distinct for every `k` a chart can hold.
pub(super) fn colour(k: usize) -> RGBColor {
    if let Some(c) = COLOURS.get(k) {
        return *c;
    }
    let j = k - COLOURS.len();
    let hue = (j as f64 * 137.507_764) % 360.0;
    let lightness = [0.35, 0.5, 0.65][j % 3];
    let (r, g, b) = hsl_to_rgb(hue, 0.7, lightness);
    RGBColor(r, g, b)
}

/// HSL (hue in degrees, saturation and lightness in [0, 1]) to 8-bit RGB.
fn hsl_to_rgb(hue: f64, saturation: f64, lightness: f64) -> (u8, u8, u8) {
    let c = (1.0 - (2.0 * lightness - 1.0).abs()) * saturation;
    let h = hue / 60.0;
    let x = c * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = lightness - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    (byte(r), byte(g), byte(b))
}

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

    /// Adds a series whose unit the y label already gives.
    pub fn with_series(self, name: impl Into<String>, y: Vec<f64>) -> LineChart {
        self.with_series_in(name, "", y)
    }

    /// Adds a series with its own unit (`N`, `Pa`, `N·m`, `rad`; see [`Series::unit`]).
    pub fn with_series_in(
        mut self,
        name: impl Into<String>,
        unit: impl Into<String>,
        y: Vec<f64>,
    ) -> LineChart {
        self.series.push(Series {
            name: name.into(),
            unit: unit.into(),
            y,
        });
        self
    }

    /// The y axis title as drawn: the y label, followed by the series' unit in parentheses
    /// when they all share one, or by their distinct units "per series" when they differ;
    /// on a log axis followed by "(log scale)".
    pub fn y_axis_title(&self) -> String {
        let mut units: Vec<&str> = Vec::new();
        for s in &self.series {
            if !s.unit.is_empty() && !units.contains(&s.unit.as_str()) {
                units.push(&s.unit);
            }
        }
        let mut title = match units.len() {
            0 => self.y_label.clone(),
            1 => format!("{} ({})", self.y_label, units[0]),
            _ => format!("{} ({} per series)", self.y_label, units.join(", ")),
        };
        if self.y_scale == YScale::Log {
            title.push_str(", log scale");
        }
        title
    }

    /// The legend entry of series `k`: its name, and its unit in parentheses if it has one.
    fn legend(&self, k: usize) -> String {
        let s = &self.series[k];
        if s.unit.is_empty() {
            s.name.clone()
        } else {
            format!("{} ({})", s.name, s.unit)
        }
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
    /// its own colour (`colour`), through its drawable points (finite, and positive on a
    /// log axis); 1 px black polylines for the axes and ticks; a legend entry per series
    /// (name and unit), the title and axis titles (with units, [`LineChart::y_axis_title`]) as
    /// `<text>`.
    pub fn to_svg(&self) -> Result<String> {
        self.validate()?;
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
            let fail = |e: &dyn std::fmt::Display| {
                Error::invalid(format!("chart `{}`", self.title), e.to_string())
            };
            root.fill(&WHITE).map_err(|e| fail(&e))?;
            self.draw_on(&root).map_err(|e| fail(&e))?;
            root.present().map_err(|e| fail(&e))?;
        }
        Ok(svg)
    }

    /// Draws the chart (title, axes, lines, legend) into `area`, e.g. one panel of a
    /// summary. The chart must be [valid](LineChart::validate).
    pub(super) fn draw_on<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, plotters::coord::Shift>,
    ) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let (x_range, (y_lo, y_hi), y_labels) = self.ranges();
        self.draw(area, x_range, y_lo..y_hi, y_labels)
    }

    /// Whether a y value is drawn on this chart's axis.
    fn drawable(&self, y: f64) -> bool {
        y.is_finite() && (self.y_scale == YScale::Linear || y > 0.0)
    }

    /// Where a drawable value sits on the y axis: y, or log₁₀ y on a log axis.
    fn axis_value(&self, y: f64) -> f64 {
        match self.y_scale {
            YScale::Linear => y,
            YScale::Log => y.log10(),
        }
    }

    /// The x range, the (padded) range of the drawable y values on the axis (log₁₀ of them
    /// on a log axis, widened to whole label steps, [`log_axis`]) and how many y labels to
    /// ask for.
    fn ranges(&self) -> (Range<f64>, (f64, f64), usize) {
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
            .filter(|&y| self.drawable(y))
            .map(|y| self.axis_value(y));
        let y = bounds(&mut ys);
        if self.y_scale == YScale::Log {
            let (lo, hi, labels) = match y {
                None => log_axis(-1.0, 1.0),
                Some((lo, hi)) => log_axis(lo, hi),
            };
            return (x0..x1, (lo, hi), labels);
        }
        let y = match (self.y_scale, y) {
            (_, None) => (0.0, 1.0),
            (YScale::Linear, Some((lo, hi))) => {
                let pad = if hi > lo {
                    0.05 * (hi - lo)
                } else {
                    0.5 * lo.abs().max(1.0)
                };
                (lo - pad, hi + pad)
            }
            (YScale::Log, Some(_)) => unreachable!("handled above"),
        };
        (x0..x1, y, LINEAR_Y_LABELS)
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, plotters::coord::Shift>,
        x_range: Range<f64>,
        y_range: Range<f64>,
        y_labels: usize,
    ) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let log = self.y_scale == YScale::Log;
        let y_title = self.y_axis_title();
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(x_range, y_range)?;
        chart
            .configure_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(y_title.as_str())
            .y_labels(y_labels)
            .x_label_formatter(&|v| tick_label(*v))
            .y_label_formatter(&|v| {
                if log {
                    log_tick_label(*v)
                } else {
                    tick_label(*v)
                }
            })
            .draw()?;
        for (k, s) in self.series.iter().enumerate() {
            let colour = colour(k);
            let points: Vec<(f64, f64)> = self
                .x
                .iter()
                .zip(&s.y)
                .filter(|&(_, &y)| self.drawable(y))
                .map(|(&x, &y)| (x, self.axis_value(y)))
                .collect();
            chart
                .draw_series(LineSeries::new(points, colour.stroke_width(2)))?
                .label(self.legend(k))
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

/// How many labels a linear y axis asks for (plotters' default).
const LINEAR_Y_LABELS: usize = 10;

/// The label steps of a log axis, in decades (plotters' 1-2-5 steps, so it picks them).
const LOG_STEPS: [f64; 10] = [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0];

/// Most label intervals on a log axis.
const LOG_MAX_INTERVALS: f64 = 12.0;

/// The log axis over log₁₀ values in [`lo`, `hi`]: the smallest step of [`LOG_STEPS`] with
/// at most 12 intervals, the range widened to the multiples of it at or beyond both ends
/// (by a hair more, so rounding cannot drop an end label), and the number of labels (one per
/// multiple). The lowest label is at or below every value, the highest at or above: the
/// labels span the whole range however many decades it covers.
pub(super) fn log_axis(lo: f64, hi: f64) -> (f64, f64, usize) {
    let snapped = |step: f64| {
        let a = (lo / step).floor();
        let b = (hi / step).ceil().max(a + 1.0);
        (a, b)
    };
    let step = LOG_STEPS
        .into_iter()
        .find(|&s| {
            let (a, b) = snapped(s);
            b - a <= LOG_MAX_INTERVALS
        })
        .unwrap_or_else(|| ((hi - lo) / LOG_MAX_INTERVALS).ceil().max(1.0));
    let (a, b) = snapped(step);
    let hair = 1e-6 * step;
    (a * step - hair, b * step + hair, (b - a) as usize + 1)
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

/// The label of a log-axis tick at log₁₀ y = `e`: the value 10^e as [`tick_label`] writes it
/// (`1e-12`, `0.01`, `3.16e-7`), exact at whole decades.
pub(super) fn log_tick_label(e: f64) -> String {
    let rounded = e.round();
    if (e - rounded).abs() < 1e-9 {
        tick_label(10f64.powi(rounded as i32))
    } else {
        tick_label(10f64.powf(e))
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
