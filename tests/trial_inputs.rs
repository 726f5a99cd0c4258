//! A trial fit's residual Jacobian against central finite differences of the residuals (the
//! runs from the static start re-simulated with each parameter moved, the frame moved; no
//! contact, so no mode switches), a run that fails at a trial point (a rejected step, not an
//! error), and the bad inputs of `calibrate --trial` (one line naming the file and line, or
//! the argument).

use diffsoro::calibrate::trials::{Comparison, Frame, Registration, Trial, TrialFit, TrialOptions};
use diffsoro::calibrate::{CalibrationProgress, LeastSquares, Parametrisation};
use diffsoro::math::{DMat, DVec, SplitMix64, Vec3};
use diffsoro::scene::{CommandLog, RunStart};

use crate::cli_support::{run, scratch};
use crate::trial_support::*;

/// The first 0.25 s of a log (its rows up to then).
fn short(log: &CommandLog) -> CommandLog {
    let t0 = log.t0();
    let keep = log.times.iter().filter(|&&t| t <= t0 + 0.25).count();
    CommandLog::from_columns(
        &log.file,
        log.times[..keep].to_vec(),
        log.names
            .iter()
            .cloned()
            .zip(log.columns.iter().map(|c| c[..keep].to_vec()))
            .collect(),
    )
    .unwrap()
}

/// A fit of both trials shortened to 0.25 s against noisy observations, through `options`.
fn short_fit<'p>(
    options: TrialOptions,
    progress: &'p mut dyn FnMut(CalibrationProgress<'_>),
) -> TrialFit<'p> {
    let truth = true_finger();
    let scene = finger();
    let camera = Camera {
        translation: Vec3::new(0.01, -0.02, 0.03),
        rotation: Vec3::new(0.05, -0.1, 0.2),
    };
    let mut rng = SplitMix64::new(5);
    let trials = logs()
        .iter()
        .map(|log| {
            let log = short(log);
            let mut tracks = record(&truth, &log, &camera, &mut rng);
            for t in &mut tracks.tracks {
                let keep = t.times.iter().filter(|&&s| s <= log.t0() + 0.25).count();
                t.times.truncate(keep);
                t.positions.truncate(keep);
            }
            Trial::new(&scene, log.file.clone(), log, "markers".into(), tracks).unwrap()
        })
        .collect();
    let params: Vec<String> = PARAMS.iter().map(|s| s.to_string()).collect();
    let map = Parametrisation::parse(&params).unwrap();
    TrialFit::new(&scene, &map, trials, options, progress).unwrap()
}

/// Column by column, norm-wise: ∂r/∂(θ, τ, ω) of the residuals against central differences
/// (steps 1e-5 of each parameter's value, 1e-6 m and rad for the frame), within 1e-6, with
/// absolute positions through a rigid frame and with displacements; the columns move r far
/// above round-off.
#[test]
fn the_residual_jacobian_matches_central_differences() {
    let values = [5.3e5, 0.006, 1.2, 0.04, 0.025];
    let frame = Frame {
        translation: Vec3::new(0.011, -0.018, 0.029),
        rotation: Vec3::new(0.04, -0.12, 0.21),
    };
    for (comparison, registration) in [
        (Comparison::Absolute, Registration::Rigid),
        (Comparison::Displacement, Registration::None),
    ] {
        let mut progress = |_: CalibrationProgress<'_>| {};
        let options = TrialOptions {
            start: RunStart::Static,
            comparison,
            registration,
        };
        let mut fit = short_fit(options, &mut progress);
        let frame = if registration == Registration::None {
            Frame::default()
        } else {
            frame
        };
        let at = fit.residuals(&values, &frame).unwrap();
        let coordinates = frame.coordinates(registration);
        let columns = values.len() + coordinates.len();
        assert_eq!(at.jacobian.ncols(), columns);
        let mut residual = |k: usize, h: f64| -> DVec {
            let mut v = values.to_vec();
            let mut c = coordinates.clone();
            if k < values.len() {
                v[k] += h;
            } else {
                c[k - values.len()] += h;
            }
            fit.residuals(&v, &Frame::from_coordinates(registration, &c))
                .unwrap()
                .values
        };
        for k in 0..columns {
            let h = if k < values.len() {
                1e-5 * values[k]
            } else {
                1e-6
            };
            let fd = (residual(k, h) - residual(k, -h)) / (2.0 * h);
            let column = at.jacobian.column(k).into_owned();
            let error = (&column - &fd).norm() / fd.norm();
            let name = PARAMS.get(k).copied().unwrap_or("frame");
            assert!(
                error < 1e-6,
                "{comparison:?} {name} ({k}): relative error {error:.2e}"
            );
            assert!(fd.norm() * h > 1e-10, "{name} moves the residuals");
        }
    }
}

/// A trial point whose run fails (E = 1 Pa: the Finger cannot hold itself up, so its static
/// start fails) is a rejected step: `evaluate` gives a NaN residual, which Levenberg–Marquardt
/// rejects, and reports the failure; the same point as the fit's start is an error.
#[test]
fn a_run_that_fails_at_a_trial_point_is_a_rejected_step() {
    let mut failures = Vec::new();
    let mut progress = |event: CalibrationProgress<'_>| {
        if let CalibrationProgress::Failed { error, .. } = event {
            failures.push(error.to_string());
        }
    };
    let options = TrialOptions {
        start: RunStart::Static,
        comparison: Comparison::Absolute,
        registration: Registration::Translation,
    };
    let mut fit = short_fit(options, &mut progress);
    let map = fit.map().clone();
    let good = map.coordinates(&TRUTH).unwrap();
    let mut s = good.clone();
    s.extend([0.0, 0.0, 0.0]);
    let (r, _): (DVec, DMat) = fit.evaluate(&s).unwrap();
    assert!(r.iter().all(|v| v.is_finite()));
    let mut bad = TRUTH;
    bad[0] = 1.0;
    let mut s = map.coordinates(&bad).unwrap();
    s.extend([0.0, 0.0, 0.0]);
    let (r, _) = fit.evaluate(&s).unwrap();
    assert!(
        r.iter().all(|v| v.is_nan()),
        "a failed run's residuals are NaN"
    );
    drop(fit);
    assert_eq!(failures.len(), 1, "{failures:?}");
    // As a start, the same failure is an error.
    let mut progress = |_: CalibrationProgress<'_>| {};
    let mut fit = short_fit(options, &mut progress);
    let start: Vec<Option<f64>> = bad.iter().map(|&v| Some(v)).collect();
    let e = diffsoro::calibrate::trials::fit_trials(
        &mut fit,
        &start,
        &diffsoro::calibrate::LmOptions::default(),
    );
    assert!(e.is_err());
}

/// Bad inputs of `calibrate --trial`: each a one-line error naming the file and line, or the
/// argument.
#[test]
fn bad_trial_inputs_are_one_line_errors_naming_file_and_line() {
    let dir = scratch("bad");
    let log = dir.join("log.csv");
    std::fs::write(&log, "time,cable\n0.0,0.1\n0.1,0.2\n").unwrap();
    let good = "time,marker,x,y,z\n0.0,tip_post,1,2,3\n0.05,tip_post,,,\n0.1,tip_post,1,2,3.1\n";
    let cases: &[(&str, &str, &[&str], &[&str])] = &[
        (
            "unknown marker",
            "time,marker,x,y,z\n0.0,tip_post,1,2,3\n0.02,thumb,1,2,3\n",
            &[],
            &["markers.csv: line 3", "`thumb`", "tip_post, middle_post"],
        ),
        (
            "times not increasing",
            "time,marker,x,y,z\n0.0,tip_post,1,2,3\n0.05,middle_post,1,2,3\n0.05,tip_post,1,2,3\n0.04,tip_post,1,2,3\n",
            &[],
            &[
                "markers.csv: line 5",
                "`tip_post`",
                "not after its previous time",
                "line 4",
            ],
        ),
        (
            "wrong columns",
            "time,name,x,y,z\n0.0,tip_post,1,2,3\n",
            &[],
            &["markers.csv: line 1", "time,marker,x,y,z"],
        ),
        (
            "a field missing",
            "time,marker,x,y,z\n0.0,tip_post,1,2\n",
            &[],
            &["markers.csv: line 2", "5 fields"],
        ),
        (
            "not a number",
            "time,marker,x,y,z\n0.0,tip_post,1,2,3\n0.1,tip_post,1,two,3\n",
            &[],
            &["markers.csv: line 3", "`two`"],
        ),
        (
            "displacement with a frame",
            good,
            &["--compare", "displacement", "--register", "translation"],
            &["--register", "displacement", "cannot be identified"],
        ),
        (
            "an unknown comparison",
            good,
            &["--compare", "relative"],
            &["--compare", "`relative`"],
        ),
        (
            "a command term of an actuator no log drives",
            good,
            &["--param", "gain:tendon"],
            &["gain:tendon"],
        ),
    ];
    for (what, markers, extra, expected) in cases {
        let file = dir.join("markers.csv");
        std::fs::write(&file, markers).unwrap();
        let trial = format!("{}:{}", log.display(), file.display());
        let mut args = vec![
            "calibrate",
            "scenes/finger.toml",
            "--trial",
            &trial,
            "--param",
            "young_modulus:finger",
        ];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert!(!out.status.success(), "{what}: accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let line = stderr.trim_end();
        assert_eq!(line.lines().count(), 1, "{what}: {stderr}");
        for e in *expected {
            assert!(line.contains(e), "{what}: `{e}` missing in {line}");
        }
    }
    // A log naming an actuator the scene lacks: its file, line 1.
    let bad_log = dir.join("bad_log.csv");
    std::fs::write(&bad_log, "time,tendon\n0.0,0.1\n").unwrap();
    let file = dir.join("markers.csv");
    std::fs::write(&file, good).unwrap();
    let trial = format!("{}:{}", bad_log.display(), file.display());
    let out = run(&[
        "calibrate",
        "scenes/finger.toml",
        "--trial",
        &trial,
        "--param",
        "young_modulus:finger",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("bad_log.csv") && stderr.contains("tendon"),
        "{stderr}"
    );
    // No colon: the argument is named.
    let out = run(&[
        "calibrate",
        "scenes/finger.toml",
        "--trial",
        "log.csv",
        "--param",
        "young_modulus:finger",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--trial `log.csv`") && stderr.contains("INPUTS.csv:MARKERS.csv"),
        "{stderr}"
    );
}
