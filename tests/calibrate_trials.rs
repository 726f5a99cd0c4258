//! Calibration against a synthetic experiment made realistic (`trial_support`): the fit of E,
//! Rayleigh β and the cable's gain, offset and lag with an unknown camera frame, from the
//! command line in mm with a rigid frame (every σ̂ within 5 % of its value, the truth within
//! a few σ̂), and the coverage of the standard errors over 50 noise draws (the pooled
//! (θ̂ − θ)/σ̂ has a standard deviation near 1).

use diffsoro::calibrate::trials::{
    Comparison, Registration, Trial, TrialFit, TrialOptions, fit_trials,
};
use diffsoro::calibrate::{LmOptions, Parametrisation};
use diffsoro::math::{SplitMix64, Vec3};
use diffsoro::scene::RunStart;

use crate::cli_support::{run_json, scratch};
use crate::trial_support::*;

/// `calibrate --trial stairs.csv:stairs_markers.csv --trial sines.csv:sines_markers.csv
/// --marker-unit mm --register rigid` from the committed Finger's values (E = 600 kPa,
/// β = 0.1 s → started at 0.01 s, gain 1, offset 0, τ started at 0.01 s): the report's
/// values within 4 σ̂ of the truth, each σ̂ at most 5 % of its value, σ̂ and the RMS residuals
/// within 10 % of the noise's 0.1 mm, the frame within 4 σ̂ of the camera's, and the plots
/// written.
#[test]
fn a_rigid_registered_fit_recovers_the_true_robot_from_its_markers_in_mm() {
    let dir = scratch("rigid");
    let truth = true_finger();
    let camera = Camera {
        translation: Vec3::new(0.2, -0.1, 0.5),
        rotation: Vec3::new(0.1, -0.2, 0.3),
    };
    let names = marker_names(&truth);
    let mut args: Vec<String> = vec!["calibrate".into(), "scenes/finger.toml".into()];
    for (log, tracks) in experiment(&truth, &camera, 7) {
        let stem = log.file.trim_end_matches(".csv");
        let inputs = dir.join(&log.file);
        let markers = dir.join(format!("{stem}_markers.csv"));
        std::fs::write(&inputs, log_csv(&log)).unwrap();
        std::fs::write(&markers, tracks_csv(&tracks)).unwrap();
        args.push("--trial".into());
        args.push(format!("{}:{}", inputs.display(), markers.display()));
    }
    let out = dir.join("fit");
    for a in [
        "--marker-unit",
        "mm",
        "--register",
        "rigid",
        "--init",
        "rayleigh_stiffness:finger=0.01",
        "--init",
        "time_constant:cable=0.01",
        "--out",
        out.to_str().unwrap(),
    ] {
        args.push(a.into());
    }
    for p in PARAMS {
        args.push("--param".into());
        args.push(p.into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let report = run_json(&args);
    for (name, truth) in PARAMS.iter().zip(TRUTH) {
        let value = report["params"][name].as_f64().unwrap();
        let sigma = report["std_errors"][name].as_f64().unwrap();
        assert!(sigma <= 0.05 * value.abs(), "{name}: σ̂ {sigma} of {value}");
        assert!(
            (value - truth).abs() <= 4.0 * sigma,
            "{name}: {value} ± {sigma}, truth {truth}"
        );
    }
    let residual_std = report["residual_std"].as_f64().unwrap();
    assert!((residual_std / SIGMA - 1.0).abs() < 0.1, "σ̂ {residual_std}");
    let rms = report["rms"]["all"].as_f64().unwrap();
    assert!((rms / SIGMA - 1.0).abs() < 0.1, "RMS {rms}");
    for name in &names {
        let r = report["rms"]["per_marker"][name].as_f64().unwrap();
        assert!((r / SIGMA - 1.0).abs() < 0.15, "{name}: RMS {r}");
    }
    assert_eq!(report["rms"]["per_trial"].as_array().unwrap().len(), 2);
    let frame = &report["frame"];
    for (key, truth) in [
        ("translation", camera.translation),
        ("rotation", camera.rotation),
    ] {
        for c in 0..3 {
            let v = frame[key][c].as_f64().unwrap();
            let s = frame["std_errors"][key][c].as_f64().unwrap();
            assert!(
                (v - truth[c]).abs() <= 4.0 * s,
                "{key}[{c}]: {v} ± {s}, truth {}",
                truth[c]
            );
        }
    }
    let correlation = report["correlation"].as_array().unwrap();
    assert_eq!(correlation.len(), 5);
    for (k, row) in correlation.iter().enumerate() {
        assert!((row[k].as_f64().unwrap() - 1.0).abs() < 1e-12);
    }
    for file in [
        "calibration.json",
        "summary.svg",
        "loss.svg",
        "trial1_tip_post.svg",
        "trial1_tip_post.csv",
        "trial2_middle_post_residuals.svg",
        "trial2_middle_post_residuals.csv",
    ] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
}

/// The coverage of the standard errors: 50 seeded draws of the camera's noise, lost samples
/// and jitter, each fitted (Gauss–Newton from the true values, at most 4 iterations: the
/// problem is near-linear over a few σ̂, so these converge), with a translation registered.
/// Over the 50 × (5 parameters + 3 translation coordinates) values, (θ̂ − θ)/σ̂ has a standard
/// deviation in [0.75, 1.3] (1 if σ̂ is honest) and a mean within 3/√50 of 0; every
/// parameter's σ̂ is at most 5 % of its value.
#[test]
fn the_standard_errors_cover_the_truth_over_fifty_noise_draws() {
    let truth = true_finger();
    let camera = Camera {
        translation: Vec3::new(0.2, -0.1, 0.5),
        rotation: Vec3::zeros(),
    };
    let names = marker_names(&truth);
    let logs = logs();
    let runs: Vec<_> = logs.iter().map(|log| true_run(&truth, log)).collect();
    let scene = finger();
    let draw = |seed: u64| -> Vec<Trial> {
        let mut rng = SplitMix64::new(1000 + seed);
        logs.iter()
            .zip(&runs)
            .map(|(log, states)| {
                let tracks = observe(
                    states,
                    truth.simulation.dt,
                    log.t0(),
                    &names,
                    &camera,
                    &mut rng,
                );
                Trial::new(&scene, log.file.clone(), log.clone(), "draw".into(), tracks).unwrap()
            })
            .collect()
    };
    let params: Vec<String> = PARAMS.iter().map(|s| s.to_string()).collect();
    let map = Parametrisation::parse(&params).unwrap();
    let options = TrialOptions {
        start: RunStart::Static,
        comparison: Comparison::Absolute,
        registration: Registration::Translation,
    };
    let mut progress = |_: diffsoro::calibrate::CalibrationProgress<'_>| {};
    let mut fit = TrialFit::new(&scene, &map, draw(0), options, &mut progress).unwrap();
    let start: Vec<Option<f64>> = TRUTH.iter().map(|&v| Some(v)).collect();
    let lm = LmOptions {
        max_iterations: 4,
        initial_damping: 1e-9,
        loss_tolerance: 1e-6,
        ..LmOptions::default()
    };
    let mut z = Vec::new();
    for seed in 0..50 {
        if seed > 0 {
            fit.replace_trials(draw(seed)).unwrap();
        }
        let report =
            fit_trials(&mut fit, &start, &lm).unwrap_or_else(|e| panic!("draw {seed}: {e}"));
        assert!(
            report.calibration.iterations >= 1,
            "draw {seed}: no step taken"
        );
        for (name, &t) in PARAMS.iter().zip(&TRUTH) {
            let value = report.calibration.params[*name];
            let sigma = report.std_errors[*name].unwrap();
            assert!(
                sigma <= 0.05 * value.abs(),
                "draw {seed}, {name}: σ̂ {sigma} of {value}"
            );
            z.push((value - t) / sigma);
        }
        let frame = report.frame.as_ref().unwrap();
        let errors = frame.std_errors.translation.unwrap();
        for (c, sigma) in errors.iter().enumerate() {
            z.push((frame.translation[c] - camera.translation[c]) / sigma);
        }
    }
    let n = z.len() as f64;
    let mean = z.iter().sum::<f64>() / n;
    let sd = (z.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    eprintln!("pooled (θ̂ − θ)/σ̂ over {n} values: mean {mean:.3}, standard deviation {sd:.3}");
    assert!((0.75..=1.3).contains(&sd), "standard deviation {sd}");
    // The values of one draw are correlated (the correlations reach 0.9), the draws are
    // not: the mean's standard error is at most 1/√50.
    assert!(mean.abs() <= 3.0 / 50f64.sqrt(), "mean {mean}");
}

/// The recordings of docs/calibration.md's worked example (`scenes/recordings/`) are this
/// synthetic experiment's (the true Finger, seed 42, a rigid camera): every number within
/// 1e-5 of the regenerated one (mm, s, command units). `DIFFSORO_WRITE_RECORDINGS=1` writes
/// them.
#[test]
fn the_committed_recordings_are_the_synthetic_experiment() {
    let dir = root().join("scenes/recordings");
    for (name, text) in recordings() {
        let path = dir.join(&name);
        if std::env::var_os("DIFFSORO_WRITE_RECORDINGS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap();
        assert_eq!(committed.lines().count(), text.lines().count(), "{name}");
        for (a, b) in committed.lines().zip(text.lines()) {
            for (x, y) in a.split(',').zip(b.split(',')) {
                match (x.parse::<f64>(), y.parse::<f64>()) {
                    (Ok(x), Ok(y)) => assert!((x - y).abs() <= 1e-5, "{name}: {a} vs {b}"),
                    _ => assert_eq!(x, y, "{name}"),
                }
            }
        }
    }
}
