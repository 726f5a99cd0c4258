//! A synthetic experiment made realistic, on the committed cable-driven Finger
//! (`scenes/finger.toml`, its markers `tip_post` and `middle_post` on 10 mm posts): a "true"
//! robot with known E, Rayleigh β, cable gain, offset and lag; two trials of 1 s (a staircase
//! of commands on the log's clock from 0, and a two-tone sine on a clock from 12 s) run from
//! rest under their first commands; a camera at 60 Hz with ±1 ms jitter of its sample times,
//! 10 % of the samples lost, Gaussian noise of σ = 0.1 mm per coordinate, in its own frame
//! (scene = R(ω)·camera + τ, unknown to the fit).
#![allow(dead_code)]

use std::fmt::Write as _;
use std::path::Path;

use diffsoro::math::{Mat3, SplitMix64, Vec3};
use diffsoro::scene::{CommandLog, CommandRun, MarkerTracks, RunStart, Scene, Track};

/// The fitted parameters, in fit order.
pub const PARAMS: [&str; 5] = [
    "young_modulus:finger",
    "rayleigh_stiffness:finger",
    "gain:cable",
    "offset:cable",
    "time_constant:cable",
];
/// Their true values: Pa, s, N per command unit, N, s.
pub const TRUTH: [f64; 5] = [5.0e5, 0.005, 1.3, 0.05, 0.03];
/// The noise per coordinate (m).
pub const SIGMA: f64 = 1e-4;
/// The camera's rate (Hz), jitter of its sample times (± s) and the fraction of samples lost.
pub const RATE: f64 = 60.0;
pub const JITTER: f64 = 1e-3;
pub const DROPPED: f64 = 0.1;
/// Each trial's length (s).
pub const DURATION: f64 = 1.0;

/// The committed Finger.
pub fn finger() -> Scene {
    Scene::load(&root().join("scenes/finger.toml"), &[]).unwrap()
}

/// The Finger with the true values.
pub fn true_finger() -> Scene {
    let sets: Vec<String> = [
        "soft_body.finger.young_modulus",
        "soft_body.finger.rayleigh_stiffness",
        "soft_body.finger.cable.cable.gain",
        "soft_body.finger.cable.cable.offset",
        "soft_body.finger.cable.cable.time_constant",
    ]
    .iter()
    .zip(TRUTH)
    .map(|(path, v)| format!("{path}={v}"))
    .collect();
    Scene::load(&root().join("scenes/finger.toml"), &sets).unwrap()
}

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The two trials' command logs (command units; every input g·c + o stays inside the cable's
/// range, so nothing is clamped): a staircase every 0.15 s from t = 0 s, and a sine of 1.5 Hz
/// plus one of 4.1 Hz from t = 12 s, rows every 0.02 s.
pub fn logs() -> Vec<CommandLog> {
    let stairs = [0.1, 0.45, 0.2, 0.38, 0.05, 0.3, 0.15, 0.42];
    let times: Vec<f64> = (0..stairs.len()).map(|k| 0.15 * k as f64).collect();
    let first = CommandLog::from_columns(
        "stairs.csv",
        times,
        vec![("cable".to_string(), stairs.to_vec())],
    )
    .unwrap();
    let rows = (DURATION / 0.02).round() as usize + 1;
    let times: Vec<f64> = (0..rows).map(|k| 12.0 + 0.02 * k as f64).collect();
    let commands = times
        .iter()
        .map(|t| {
            let s = t - 12.0;
            0.25 + 0.18 * (2.0 * std::f64::consts::PI * 1.5 * s).sin()
                + 0.05 * (2.0 * std::f64::consts::PI * 4.1 * s).sin()
        })
        .collect();
    let second =
        CommandLog::from_columns("sines.csv", times, vec![("cable".to_string(), commands)])
            .unwrap();
    vec![first, second]
}

/// The true markers of a trial at every saved state (0, dt, 2 dt, … s after t₀; markers in
/// scene order), from rest under the first commands.
pub fn true_run(truth: &Scene, log: &CommandLog) -> Vec<Vec<Vec3>> {
    let mut scene = truth.clone();
    let steps = (DURATION / scene.simulation.dt).round() as usize;
    let (mut run, mut state) =
        CommandRun::start(&mut scene, log.clone(), Some(steps), RunStart::Static).unwrap();
    let mut states = vec![scene.markers.positions(&state)];
    for _ in 0..steps {
        run.step(&mut scene, &mut state).unwrap();
        states.push(scene.markers.positions(&state));
    }
    states
}

/// The names of `scene`'s markers, in scene order.
pub fn marker_names(scene: &Scene) -> Vec<String> {
    scene
        .markers
        .names()
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// What `camera` records of the true robot `truth` following `log` ([`true_run`] then
/// [`observe`], `rng` drawing the camera's randomness).
pub fn record(
    truth: &Scene,
    log: &CommandLog,
    camera: &Camera,
    rng: &mut SplitMix64,
) -> MarkerTracks {
    let states = true_run(truth, log);
    observe(
        &states,
        truth.simulation.dt,
        log.t0(),
        &marker_names(truth),
        camera,
        rng,
    )
}

/// The experiment: each trial of [`logs`] with what `camera` records of `truth` following it,
/// the camera's randomness one stream seeded with `seed` over the trials in order.
pub fn experiment(truth: &Scene, camera: &Camera, seed: u64) -> Vec<(CommandLog, MarkerTracks)> {
    let mut rng = SplitMix64::new(seed);
    logs()
        .into_iter()
        .map(|log| {
            let tracks = record(truth, &log, camera, &mut rng);
            (log, tracks)
        })
        .collect()
}

/// A camera → scene frame: scene = R(ω)·camera + τ.
#[derive(Debug, Clone, Copy)]
pub struct Camera {
    pub translation: Vec3,
    pub rotation: Vec3,
}

impl Camera {
    fn matrix(&self) -> Mat3 {
        *nalgebra::Rotation3::new(self.rotation).matrix()
    }
}

/// A number uniform in [0, 1) (`SplitMix64::uniform` is in [−1, 1)).
fn unit(rng: &mut SplitMix64) -> f64 {
    0.5 * (rng.uniform() + 1.0)
}

/// A standard normal deviate (Box–Muller).
fn normal(rng: &mut SplitMix64) -> f64 {
    let u = 1.0 - unit(rng);
    let v = unit(rng);
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// What the camera records of a true run `states` (dt apart from t₀, file clock): samples at
/// t₀ + k/RATE + U(−JITTER, JITTER) within the run, each marker's lost with probability
/// DROPPED, the true marker linear in time between the states around the sample (as the
/// model compares), in the camera's frame, plus N(0, SIGMA²) per coordinate (m).
pub fn observe(
    states: &[Vec<Vec3>],
    dt: f64,
    t0: f64,
    names: &[String],
    camera: &Camera,
    rng: &mut SplitMix64,
) -> MarkerTracks {
    let end = dt * (states.len() - 1) as f64;
    let r_t = camera.matrix().transpose();
    let mut tracks = vec![Track::default(); names.len()];
    let samples = (end * RATE).floor() as usize;
    for k in 0..=samples {
        let s = (k as f64 / RATE + JITTER * rng.uniform()).clamp(0.0, end);
        for (m, track) in tracks.iter_mut().enumerate() {
            if unit(rng) < DROPPED {
                continue;
            }
            let a = ((s / dt).floor() as usize).min(states.len() - 2);
            let w = (s - a as f64 * dt) / dt;
            let p = states[a][m] + (states[a + 1][m] - states[a][m]) * w;
            let noise = Vec3::new(normal(rng), normal(rng), normal(rng)) * SIGMA;
            let y = r_t * (p - camera.translation) + noise;
            if track.times.last().is_some_and(|&last| t0 + s <= last) {
                continue;
            }
            track.times.push(t0 + s);
            track.positions.push(y);
        }
    }
    MarkerTracks {
        names: names.to_vec(),
        tracks,
    }
}

/// `tracks` as a long CSV file `time,marker,x,y,z` in mm, rows in time order, a lost sample
/// as a row with empty coordinates now and then (as a tracker writes it).
pub fn tracks_csv(tracks: &MarkerTracks) -> String {
    let mut rows: Vec<(f64, usize, Vec3)> = Vec::new();
    for (m, t) in tracks.tracks.iter().enumerate() {
        rows.extend(t.times.iter().zip(&t.positions).map(|(&t, &p)| (t, m, p)));
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut text = String::from("time,marker,x,y,z\n");
    for (i, (t, m, p)) in rows.iter().enumerate() {
        let p = p * 1e3;
        writeln!(
            text,
            "{t:.6},{},{:.6},{:.6},{:.6}",
            tracks.names[*m], p.x, p.y, p.z
        )
        .unwrap();
        if i % 37 == 5 {
            writeln!(text, "{:.6},{},,,", t + 1e-6, tracks.names[*m]).unwrap();
        }
    }
    text
}

/// A command log as its CSV file.
pub fn log_csv(log: &CommandLog) -> String {
    let mut text = format!("time,{}\n", log.names.join(","));
    for (k, t) in log.times.iter().enumerate() {
        let row: Vec<String> = log.columns.iter().map(|c| format!("{}", c[k])).collect();
        writeln!(text, "{t},{}", row.join(",")).unwrap();
    }
    text
}

/// The camera of the committed recordings (`scenes/recordings/`).
pub const RECORDING_CAMERA: Camera = Camera {
    translation: Vec3::new(0.12, -0.35, 0.8),
    rotation: Vec3::new(-0.3, 0.15, 1.1),
};

/// The files of the committed recordings of the true Finger (`scenes/recordings/finger_*`):
/// per trial (`stairs`, `sines`) its command log and the camera's tracks (mm, seed 42), as
/// (file name, text).
pub fn recordings() -> Vec<(String, String)> {
    let mut files = Vec::new();
    for (log, tracks) in experiment(&true_finger(), &RECORDING_CAMERA, 42) {
        let stem = log.file.trim_end_matches(".csv");
        files.push((format!("finger_{stem}_inputs.csv"), log_csv(&log)));
        files.push((format!("finger_{stem}_markers.csv"), tracks_csv(&tracks)));
    }
    files
}
