//! The marker track file's reader and writer against its format (docs/outputs.md), and the
//! interpolation in time against hand-computed values.

use super::interpolate::interpolate;
use super::tracks::{MarkerTracks, MarkerUnit, Track};
use crate::math::Vec3;

const NAMES: [&str; 2] = ["tip", "base"];

fn parse(text: &str) -> crate::Result<MarkerTracks> {
    MarkerTracks::parse("obs.csv", text, &NAMES, MarkerUnit::Metres)
}

fn error(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

/// Tracks of two markers over `n` samples with awkward values: tiny, huge, negative zero,
/// thirds, times k·dt as a run computes them (steps × dt).
fn awkward_tracks(n: usize) -> MarkerTracks {
    let mut tracks = MarkerTracks::new(NAMES.iter().map(|s| s.to_string()).collect());
    let dt = 0.01;
    for k in 0..n {
        let s = k as f64;
        tracks.record(
            s * dt,
            &[
                Vec3::new(1.0 / 3.0 + s, -0.0, 1e-300 * (s + 1.0)),
                Vec3::new(
                    -1234.5678e-9 * s,
                    6.02214076e23,
                    std::f64::consts::PI / (s + 7.0),
                ),
            ],
        );
    }
    tracks
}

#[test]
fn written_in_metres_the_file_reads_back_bit_for_bit() {
    let tracks = awkward_tracks(7);
    let text = tracks.to_csv(MarkerUnit::Metres);
    assert!(text.starts_with("time,marker,x,y,z\n"));
    assert_eq!(text.lines().count(), 1 + 2 * 7);
    // By time, then in marker order.
    let second: Vec<&str> = text.lines().nth(2).unwrap().split(',').collect();
    assert_eq!(second[1], "base");
    let back = parse(&text).unwrap();
    assert_eq!(back.names, tracks.names);
    for (a, b) in back.tracks.iter().zip(&tracks.tracks) {
        let bits = |t: &Track| -> Vec<u64> {
            t.times
                .iter()
                .chain(t.positions.iter().flat_map(|p| p.iter()))
                .map(|v| v.to_bits())
                .collect()
        };
        assert_eq!(bits(a), bits(b));
    }
}

#[test]
fn written_in_millimetres_the_file_reads_back_to_rounding() {
    let tracks = awkward_tracks(5);
    let text = tracks.to_csv(MarkerUnit::Millimetres);
    let back = MarkerTracks::parse("obs.csv", &text, &NAMES, MarkerUnit::Millimetres).unwrap();
    for (a, b) in back.tracks.iter().zip(&tracks.tracks) {
        assert_eq!(a.times, b.times);
        for (p, q) in a.positions.iter().zip(&b.positions) {
            for i in 0..3 {
                assert!(
                    (p[i] - q[i]).abs() <= 1e-12 * q[i].abs(),
                    "{} vs {}",
                    p[i],
                    q[i]
                );
            }
        }
    }
    // A coordinate written in mm is 1000 times the metres (0.5 m is exactly 500 mm).
    let mut half = MarkerTracks::new(vec!["tip".into()]);
    half.record(0.0, &[Vec3::new(0.5, -0.25, 0.0)]);
    assert_eq!(
        half.to_csv(MarkerUnit::Millimetres),
        "time,marker,x,y,z\n0.0,tip,500.0,-250.0,0.0\n"
    );
}

#[test]
fn a_millimetre_file_is_read_in_metres() {
    let text = "time,marker,x,y,z\n0.000,tip,0.87,1.24,108.96\n";
    let t = MarkerTracks::parse("obs.csv", text, &NAMES, MarkerUnit::Millimetres).unwrap();
    let tip = t.track("tip").unwrap();
    assert_eq!(tip.times, [0.0]);
    for (got, want) in tip.positions[0].iter().zip([0.00087, 0.00124, 0.10896]) {
        assert!((got - want).abs() <= 1e-12 * want, "{got} vs {want}");
    }
    assert!(t.track("base").unwrap().is_empty());
}

#[test]
fn whitespace_blank_lines_crlf_and_a_byte_order_mark_are_tolerated() {
    let text =
        "\u{feff} time , marker ,x, y ,z \r\n\r\n0.1 , tip , 1 , 2 , 3\r\n  \n0.2,tip,4,5,6\r\n";
    let t = parse(text).unwrap();
    let tip = t.track("tip").unwrap();
    assert_eq!(tip.times, [0.1, 0.2]);
    assert_eq!(
        tip.positions,
        [Vec3::new(1.0, 2.0, 3.0), Vec3::new(4.0, 5.0, 6.0)]
    );
}

#[test]
fn rows_with_empty_or_nan_values_are_no_samples() {
    let text = "time,marker,x,y,z\n\
                0.0,tip,1,2,3\n\
                0.1,tip,,2,3\n\
                0.2,tip,NaN,nan,NAN\n\
                0.3,tip,1,2,\n\
                NaN,tip,1,2,3\n\
                ,base,1,2,3\n\
                0.4,tip,7,8,9\n\
                0.4,base,1,1,1\n";
    let t = parse(text).unwrap();
    let tip = t.track("tip").unwrap();
    assert_eq!(tip.times, [0.0, 0.4]);
    assert_eq!(
        tip.positions,
        [Vec3::new(1.0, 2.0, 3.0), Vec3::new(7.0, 8.0, 9.0)]
    );
    assert_eq!(t.track("base").unwrap().times, [0.4]);
    assert_eq!(t.samples(), 3);
}

#[test]
fn every_reader_error_is_one_line_naming_the_file_and_line() {
    let cases: &[(&str, &str)] = &[
        (
            "",
            "obs.csv: line 1: expected the header `time,marker,x,y,z`, got ``",
        ),
        (
            "t,marker,x,y,z\n0,tip,1,2,3\n",
            "obs.csv: line 1: expected the header `time,marker,x,y,z`, got `t,marker,x,y,z`",
        ),
        (
            "time,marker,x,y,z,w\n",
            "obs.csv: line 1: expected the header `time,marker,x,y,z`, got `time,marker,x,y,z,w`",
        ),
        (
            "time,marker,x,y,z\n0,tip,1,2,3\n0.1,tip,1,2\n",
            "obs.csv: line 3: expected 5 fields `time,marker,x,y,z`, got 4",
        ),
        (
            "time,marker,x,y,z\n0,tip,1,2,3,4\n",
            "obs.csv: line 2: expected 5 fields `time,marker,x,y,z`, got 6",
        ),
        (
            "time,marker,x,y,z\nzero,tip,1,2,3\n",
            "obs.csv: line 2: time `zero` is not a number (s)",
        ),
        (
            "time,marker,x,y,z\n0,tip,1,two,3\n",
            "obs.csv: line 2: y `two` is not a number (m)",
        ),
        (
            "time,marker,x,y,z\n0,tip,1,2,inf\n",
            "obs.csv: line 2: z `inf` is not finite (m)",
        ),
        (
            "time,marker,x,y,z\n0,tip,1,2,3\n0.1,elbow,1,2,3\n",
            "obs.csv: line 3: marker `elbow` is not a marker of the scene (the scene's markers: tip, base)",
        ),
        (
            "time,marker,x,y,z\n0,tip,1,2,3\n0,base,1,2,3\n0.2,tip,1,2,3\n0.1,tip,1,2,3\n",
            "obs.csv: line 5: marker `tip`: time 0.1 s is not after its previous time 0.2 s (line 4); times must increase strictly per marker",
        ),
        (
            // A repeated time, even on a row without coordinates.
            "time,marker,x,y,z\n0.5,tip,1,2,3\n0.5,tip,,,\n",
            "obs.csv: line 3: marker `tip`: time 0.5 s is not after its previous time 0.5 s (line 2); times must increase strictly per marker",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(&error(text), expected, "{text:?}");
    }
    let none = MarkerTracks::parse(
        "obs.csv",
        "time,marker,x,y,z\n0,tip,1,2,3\n",
        &[],
        MarkerUnit::Metres,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        none,
        "obs.csv: line 2: marker `tip` is not a marker of the scene (the scene has no marker)"
    );
    let mm = MarkerTracks::parse(
        "obs.csv",
        "time,marker,x,y,z\n0,tip,1,?,3\n",
        &NAMES,
        MarkerUnit::Millimetres,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(mm, "obs.csv: line 2: y `?` is not a number (mm)");
}

#[test]
fn the_unit_parses_from_m_and_mm_only() {
    assert_eq!("m".parse::<MarkerUnit>(), Ok(MarkerUnit::Metres));
    assert_eq!("mm".parse::<MarkerUnit>(), Ok(MarkerUnit::Millimetres));
    assert!("cm".parse::<MarkerUnit>().unwrap_err().contains("m or mm"));
}

#[test]
fn interpolation_is_linear_in_time_between_the_samples_around_t() {
    // Two saved states 0.01 s apart; a sample at 0.0125 s is a quarter of the way:
    // x = 1 + 0.25·(3 − 1) = 1.5, y = −2 + 0.25·(−6 + 2) = −3, z = 0.5 + 0.25·(0.5 − 0.5) = 0.5.
    let track = Track {
        times: vec![0.0, 0.01, 0.02],
        positions: vec![
            Vec3::new(9.0, 9.0, 9.0),
            Vec3::new(1.0, -2.0, 0.5),
            Vec3::new(3.0, -6.0, 0.5),
        ],
    };
    let p = interpolate(&track, 0.0125).unwrap();
    let expected = Vec3::new(1.5, -3.0, 0.5);
    assert!((p - expected).norm() < 1e-12, "{p} vs {expected}");
    // At a saved state's time: that state, exactly.
    assert_eq!(interpolate(&track, 0.01), Some(Vec3::new(1.0, -2.0, 0.5)));
    assert_eq!(interpolate(&track, 0.0), Some(Vec3::new(9.0, 9.0, 9.0)));
    assert_eq!(interpolate(&track, 0.02), Some(Vec3::new(3.0, -6.0, 0.5)));
    // No extrapolation, no sample.
    assert_eq!(interpolate(&track, -1e-9), None);
    assert_eq!(interpolate(&track, 0.0200001), None);
    assert_eq!(interpolate(&track, f64::NAN), None);
    assert_eq!(interpolate(&Track::default(), 0.0), None);
}
