//! The CSV parses back to the chart's numbers; the SVG is well-formed XML with one polyline
//! per series holding its drawable points; bad charts are errors; files appear together.

use super::*;

fn sample() -> LineChart {
    let x: Vec<f64> = (0..12).map(|i| i as f64).collect();
    let loss: Vec<f64> = x.iter().map(|i| 10f64.powf(-i)).collect();
    let e: Vec<f64> = x.iter().map(|i| 3e5 * (1.0 + 0.5f64.powf(*i))).collect();
    LineChart::new("fit", "iteration", "value", x)
        .with_series("loss", loss)
        .with_series("young_modulus:beam", e)
}

/// Parses CSV without quoted fields: (header, rows of numbers).
fn parse_csv(text: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let mut lines = text.lines();
    let header = lines
        .next()
        .expect("a header")
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| {
            l.split(',')
                .map(|v| v.parse::<f64>().expect("a number"))
                .collect()
        })
        .collect();
    (header, rows)
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn csv_parses_back_to_the_data_exactly() {
    let mut chart = sample();
    chart.series[0].y[3] = f64::NAN;
    chart.series[1].y[4] = f64::INFINITY;
    chart.series[1].y[5] = 1.0 / 3.0;
    let (header, rows) = parse_csv(&chart.to_csv().unwrap());
    assert_eq!(header, ["iteration", "loss", "young_modulus:beam"]);
    assert_eq!(rows.len(), chart.x.len());
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), 3);
        assert!(same(row[0], chart.x[i]));
        assert!(same(row[1], chart.series[0].y[i]), "row {i}");
        assert!(same(row[2], chart.series[1].y[i]), "row {i}");
    }
}

#[test]
fn csv_quotes_awkward_headers() {
    let chart = LineChart::new("t", "x", "y", vec![0.0]).with_series("a, \"b\"", vec![1.0]);
    let csv = chart.to_csv().unwrap();
    assert_eq!(csv.lines().next().unwrap(), "x,\"a, \"\"b\"\"\"");
}

/// The point counts of the series' polylines (drawn 2 px wide; axes and ticks are 1 px
/// polylines), checking that each series has its own colour.
fn polylines(svg: &str) -> Vec<usize> {
    let doc = roxmltree::Document::parse(svg).expect("well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let lines: Vec<_> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "polyline")
        .filter(|n| n.attribute("stroke-width") == Some("2"))
        .collect();
    let colours: std::collections::BTreeSet<_> =
        lines.iter().map(|n| n.attribute("stroke")).collect();
    assert_eq!(colours.len(), lines.len(), "one colour per series");
    lines
        .iter()
        .map(|n| {
            n.attribute("points")
                .unwrap_or("")
                .split_whitespace()
                .count()
        })
        .collect()
}

fn texts(svg: &str) -> String {
    let doc = roxmltree::Document::parse(svg).expect("well-formed XML");
    doc.descendants()
        .filter(|n| n.tag_name().name() == "text")
        .filter_map(|n| n.text())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn svg_is_well_formed_with_one_polyline_per_series() {
    let chart = sample();
    let svg = chart.to_svg().unwrap();
    assert_eq!(polylines(&svg), vec![12, 12]);
    let text = texts(&svg);
    for expected in ["fit", "iteration", "value", "loss", "young_modulus:beam"] {
        assert!(text.contains(expected), "missing text `{expected}`");
    }
    let log = chart.with_y_scale(YScale::Log).to_svg().unwrap();
    assert_eq!(polylines(&log), vec![12, 12]);
}

#[test]
fn undrawable_values_leave_the_line_but_stay_in_the_csv() {
    let mut chart = sample().with_y_scale(YScale::Log);
    chart.series[0].y[11] = 0.0; // a loss that reached exactly zero
    chart.series[1].y[2] = f64::NAN;
    assert_eq!(polylines(&chart.to_svg().unwrap()), vec![11, 11]);
    let (_, rows) = parse_csv(&chart.to_csv().unwrap());
    assert_eq!(rows[11][1], 0.0);
    assert!(rows[2][2].is_nan());
    // On a linear axis the zero is drawn.
    chart.y_scale = YScale::Linear;
    assert_eq!(polylines(&chart.to_svg().unwrap()), vec![12, 11]);
}

#[test]
fn bad_charts_are_errors_naming_the_chart() {
    let cases = [
        (LineChart::new("empty", "x", "y", vec![0.0]), "no series"),
        (
            LineChart::new("short", "x", "y", vec![0.0, 1.0]).with_series("a", vec![1.0]),
            "1 values for 2 x values",
        ),
        (
            LineChart::new("twice", "x", "y", vec![0.0])
                .with_series("a", vec![1.0])
                .with_series("a", vec![2.0]),
            "used twice",
        ),
        (
            LineChart::new("nan x", "x", "y", vec![f64::NAN]).with_series("a", vec![1.0]),
            "x value 0",
        ),
    ];
    for (chart, expected) in cases {
        for e in [chart.to_svg().unwrap_err(), chart.to_csv().unwrap_err()] {
            let e = e.to_string();
            assert!(e.contains(&chart.title) && e.contains(expected), "{e}");
        }
    }
}

#[test]
fn write_chart_writes_both_files_or_neither() {
    let dir = std::env::temp_dir().join(format!("diffsoro-chart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (svg, csv) = write_chart(&sample(), &dir, "loss").unwrap();
    assert_eq!(svg, dir.join("loss.svg"));
    assert_eq!(
        polylines(&std::fs::read_to_string(&svg).unwrap()),
        vec![12, 12]
    );
    assert_eq!(
        parse_csv(&std::fs::read_to_string(&csv).unwrap()).1.len(),
        12
    );
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // A bad chart writes nothing.
    let bad = LineChart::new("bad", "x", "y", vec![0.0]);
    assert!(write_chart(&bad, &dir, "bad").is_err());
    assert!(!dir.join("bad.svg").exists() && !dir.join("bad.csv").exists());
    // A missing folder is an I/O error naming the file, and writes nothing.
    let missing = dir.join("missing");
    let e = write_chart(&sample(), &missing, "loss")
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tick_labels_are_short() {
    use super::line_chart::tick_label;
    for (v, want) in [
        (0.0, "0"),
        (0.01, "0.01"),
        (2.0, "2"),
        (12.5, "12.5"),
        (450_000.0, "4.5e5"),
        (9.999_999_999_998e-6, "1e-5"),
        (-1.25e-7, "-1.25e-7"),
    ] {
        assert_eq!(tick_label(v), want, "{v}");
    }
}

/// The numbers among the SVG's `<text>` elements (tick labels).
fn numeric_labels(svg: &str) -> Vec<f64> {
    texts(svg)
        .lines()
        .filter_map(|t| t.trim().parse::<f64>().ok())
        .collect()
}

#[test]
fn every_series_has_its_own_colour_and_legend_entry_with_its_unit() {
    // The Trunk's 8 cables (the old palette had 6 colours), and 30 series beyond any palette:
    // `polylines` asserts one distinct stroke colour per series.
    for n in [8, 30] {
        let x: Vec<f64> = (0..5).map(f64::from).collect();
        let mut chart = LineChart::new("Actuation", "step", "cable tension", x);
        for k in 0..n {
            let y = (0..5).map(|i| (i * (k + 1)) as f64).collect();
            chart = chart.with_series_in(format!("c{}", k + 1), "N", y);
        }
        let svg = chart.to_svg().unwrap();
        assert_eq!(polylines(&svg), vec![5; n]);
        let text = texts(&svg);
        for k in 1..=n {
            assert!(
                text.lines().any(|l| l == format!("c{k} (N)")),
                "legend c{k}"
            );
        }
        assert!(text.contains("cable tension (N)"), "{text}");
    }
    // Mixed units: each legend entry says its own, the axis lists them.
    let chart = LineChart::new("Actuation", "step", "actuation", vec![0.0, 1.0])
        .with_series_in("cable", "N", vec![0.1, 0.2])
        .with_series_in("cavity", "Pa", vec![1e3, 2e3]);
    let text = texts(&chart.to_svg().unwrap());
    for expected in ["cable (N)", "cavity (Pa)", "actuation (N, Pa per series)"] {
        assert!(text.contains(expected), "missing `{expected}` in {text}");
    }
}

#[test]
fn a_log_axis_is_labelled_over_its_whole_range() {
    // A loss falling over 27 decades (as a converged calibration's does): x from 100 so the
    // x tick labels (≥ 100) are not taken for y labels.
    let x: Vec<f64> = (0..28).map(|i| 100.0 + f64::from(i)).collect();
    let loss: Vec<f64> = (0..28).map(|i| 10f64.powi(-i)).collect();
    let chart = LineChart::new("loss", "iteration", "loss (m²)", x)
        .with_series("loss", loss)
        .with_y_scale(YScale::Log);
    let svg = chart.to_svg().unwrap();
    let labels: Vec<f64> = numeric_labels(&svg)
        .into_iter()
        .filter(|&v| v < 50.0)
        .collect();
    assert!(labels.len() >= 4, "{labels:?}");
    let lo = labels.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = labels.iter().copied().fold(0.0, f64::max);
    // Labels reach within a factor 1000 of both ends of the data, [1e-27, 1].
    assert!(lo <= 1e-24 && lo > 0.0, "lowest label {lo}: {labels:?}");
    assert!(hi >= 1e-3, "highest label {hi}: {labels:?}");
    assert!(texts(&svg).contains("loss (m²), log scale"));
}

#[test]
fn log_tick_labels_are_the_values() {
    use super::line_chart::log_tick_label;
    for (e, want) in [
        (-12.0, "1e-12"),
        (0.0, "1"),
        (-2.0, "0.01"),
        (5.0, "1e5"),
        (-6.5, "3.16e-7"),
    ] {
        assert_eq!(log_tick_label(e), want, "{e}");
    }
}

/// The log axis ends on label steps at or beyond the values, whatever their span, with at
/// most 12 intervals of a 1-2-5 step.
#[test]
fn log_axes_are_labelled_over_the_whole_range() {
    use super::line_chart::log_axis;
    for (lo, hi) in [
        (-1.82, -1.62),
        (-5.9, -1.6),
        (-23.17, -1.36),
        (-300.0, 300.0),
        (2.0, 2.0),
        (-0.5, 0.0),
    ] {
        let (a, b, labels) = log_axis(lo, hi);
        assert!(a <= lo && b >= hi, "[{a}, {b}] over [{lo}, {hi}]");
        assert!((2..=13).contains(&labels), "{labels}");
        let step = (b - a) / (labels - 1) as f64;
        let decade = 10f64.powf(step.log10().floor());
        let mantissa = (step / decade * 1e3).round() / 1e3;
        assert!([1.0, 2.0, 5.0].contains(&mantissa), "step {step}");
        // Ends within a hair of a multiple of the step, and less than a step beyond the values.
        for end in [a, b] {
            let k = end / step;
            assert!((k - k.round()).abs() < 1e-4, "{end} / {step}");
        }
        assert!(lo - a < step + 1e-9 && b - hi < step + 1e-9);
    }
}

/// A chart's log-axis tick labels include a label at or below its smallest value and at or
/// above its largest (22 decades here).
#[test]
fn log_chart_labels_cover_its_values() {
    let x: Vec<f64> = (0..9).map(|i| i as f64).collect();
    let y = vec![
        4.4e-2, 1.3e-2, 3.5e-3, 1.4e-5, 3.5e-6, 8.4e-11, 2.8e-14, 1.3e-18, 6.7e-24,
    ];
    let svg = LineChart::new("loss", "iteration", "loss", x)
        .with_series("loss", y.clone())
        .with_y_scale(YScale::Log)
        .to_svg()
        .unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let ticks: Vec<f64> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "text" && n.attribute("text-anchor") == Some("end"))
        .map(|n| n.text().unwrap().trim().parse().unwrap())
        .collect();
    let lowest = ticks.iter().copied().fold(f64::INFINITY, f64::min);
    let highest = ticks.iter().copied().fold(0.0, f64::max);
    assert!(lowest <= 6.7e-24 && highest >= 4.4e-2, "{ticks:?}");
}

#[test]
fn a_file_set_is_written_whole_or_not_at_all() {
    let dir = std::env::temp_dir().join(format!("diffsoro-fileset-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("b.json")).unwrap();
    let set = |dir: &std::path::Path| {
        let mut set = FileSet::new(dir);
        set.add("a.txt", "first");
        set.add_chart(&sample(), "loss").unwrap();
        set.add("b.json", "{}");
        set
    };
    // A folder where a file goes: an error naming it, and nothing written.
    let e = set(&dir).write().unwrap_err().to_string();
    assert!(e.contains("b.json") && e.contains("is a folder"), "{e}");
    let names = |dir: &std::path::Path| {
        let mut n: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        n.sort();
        n
    };
    assert_eq!(names(&dir), ["b.json"]);
    std::fs::remove_dir(dir.join("b.json")).unwrap();
    // Otherwise every file, in the order added, and no temporary file.
    let written = set(&dir).write().unwrap();
    let expected: Vec<_> = ["a.txt", "loss.svg", "loss.csv", "b.json"]
        .iter()
        .map(|n| dir.join(n))
        .collect();
    assert_eq!(written, expected);
    assert_eq!(names(&dir), ["a.txt", "b.json", "loss.csv", "loss.svg"]);
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "first");
    std::fs::remove_dir_all(&dir).unwrap();
}
