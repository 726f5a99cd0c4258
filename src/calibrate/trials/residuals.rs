//! The residuals of a trial fit: every valid observed sample of every marker of every trial
//! against the simulated marker at the sample's time, three rows (x, y, z) per sample, and
//! their Jacobian with respect to the physical parameters and the frame's coordinates.
//!
//! A simulated marker p(t) between two saved states of the run is linear in time
//! (`scene::interpolation_weights`, as `scene::interpolate`), and so is its tangent ∂p/∂θ (the
//! same combination of the two states' tangents). With y an observed sample (m, camera frame),
//! R(ω), τ the camera → scene frame ([`super::Frame`]):
//!
//! ```text
//! absolute:      r = R y(t) + τ − p(t)                          ∂r/∂θ = −∂p(t)/∂θ
//!                                                               ∂r/∂τ = I,  ∂r/∂ω = −R [y]× J_r(ω)
//! displacement:  r = (y(t) − y(t₁)) − (p(t) − p(t₁))            ∂r/∂θ = −(∂p(t)/∂θ − ∂p(t₁)/∂θ)
//! ```
//!
//! t₁ the track's first valid sample (its own rows, identically zero, are left out), the
//! simulated marker taken at the same times as the observed one.

use crate::error::{Error, Result};
use crate::math::{DMat, DVec, Vec3};
use crate::scene::{MarkerTracks, interpolation_weights};

use super::frame::{Frame, Registration, initial_frame};

/// How observed tracks are compared with simulated ones (`--compare`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Comparison {
    /// Positions: R y + τ − p (the default).
    #[default]
    Absolute,
    /// Each track relative to its first valid sample, observed and simulated alike: no frame
    /// (a translation cancels, so it cannot be registered).
    Displacement,
}

impl Comparison {
    /// `absolute` or `displacement`; errors name `what` (the flag).
    pub fn parse(what: &str, text: &str) -> Result<Comparison> {
        match text {
            "absolute" => Ok(Comparison::Absolute),
            "displacement" => Ok(Comparison::Displacement),
            other => Err(Error::invalid(
                what,
                format!("expected `absolute` or `displacement`, got `{other}`"),
            )),
        }
    }

    /// `absolute` or `displacement`.
    pub fn label(self) -> &'static str {
        match self {
            Comparison::Absolute => "absolute",
            Comparison::Displacement => "displacement",
        }
    }
}

/// The comparison and the frame registration given as `compare` and `register` (`None`: the
/// defaults, absolute and none; [`Comparison::parse`], [`Registration::parse`]), checked
/// together ([`check_registration`]); errors name `flags`, the two options' names
/// (`["--compare", "--register"]` on the command line).
pub fn parse_comparison(
    compare: Option<&str>,
    register: Option<&str>,
    flags: [&str; 2],
) -> Result<(Comparison, Registration)> {
    let comparison = compare
        .map(|c| Comparison::parse(flags[0], c))
        .transpose()?
        .unwrap_or_default();
    let registration = register
        .map(|r| Registration::parse(flags[1], r))
        .transpose()?
        .unwrap_or_default();
    check_registration(comparison, registration, flags[1])?;
    Ok((comparison, registration))
}

/// Whether a frame `registration` can be fitted under `comparison`: not with `displacement`,
/// where a translation cancels (error naming `flag`, the registration's option).
pub fn check_registration(
    comparison: Comparison,
    registration: Registration,
    flag: &str,
) -> Result<()> {
    if comparison == Comparison::Displacement && registration != Registration::None {
        return Err(Error::invalid(
            flag,
            format!(
                "`{}` registers a camera frame, and `--compare displacement` compares each track relative to its first sample, where a translation cancels (it cannot be identified): use --register none, or --compare absolute",
                registration.label()
            ),
        ));
    }
    Ok(())
}

/// A trial's simulated markers at every saved state of its run (the start, then after each
/// step) and their tangents with respect to each fitted parameter (m per unit of it; zero for
/// a parameter the trial does not depend on).
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatedMarkers {
    /// The saved states' simulation times (s, strictly increasing; 0 is the log's t₀).
    pub times: Vec<f64>,
    /// Markers per state (the scene's, in scene order).
    pub markers: usize,
    /// Tangent columns per marker (the fitted parameters, in order).
    pub columns: usize,
    /// `positions[k·markers + m]`: marker m at state k (m, scene frame).
    pub positions: Vec<Vec3>,
    /// `tangents[(k·markers + m)·columns + j]`: ∂p_m/∂θ_j at state k.
    pub tangents: Vec<Vec3>,
}

impl SimulatedMarkers {
    /// No state yet, for `markers` markers and `columns` parameters.
    pub fn new(markers: usize, columns: usize) -> SimulatedMarkers {
        SimulatedMarkers {
            times: Vec::new(),
            markers,
            columns,
            positions: Vec::new(),
            tangents: Vec::new(),
        }
    }

    /// Appends the state at simulation time `time` (s, after the last one): each marker's
    /// position (m) and `tangent(m, j)`, its tangent along parameter j.
    pub fn push(&mut self, time: f64, positions: &[Vec3], tangent: impl Fn(usize, usize) -> Vec3) {
        assert_eq!(positions.len(), self.markers, "one position per marker");
        assert!(
            self.times.last().is_none_or(|&t| time > t),
            "saved states in time order"
        );
        self.times.push(time);
        self.positions.extend_from_slice(positions);
        for m in 0..self.markers {
            for j in 0..self.columns {
                self.tangents.push(tangent(m, j));
            }
        }
    }

    /// Marker `m` at simulation time `t` (s), linear between the saved states around it, and
    /// its tangents (one per column, the same combination) written into `tangents`; `None`
    /// outside the run.
    pub fn at(&self, m: usize, t: f64, tangents: &mut [Vec3]) -> Option<Vec3> {
        assert_eq!(tangents.len(), self.columns, "one tangent per column");
        let (a, b, w) = interpolation_weights(&self.times, t)?;
        let (ia, ib) = (a * self.markers + m, b * self.markers + m);
        let (ta, tb) = (
            &self.tangents[ia * self.columns..(ia + 1) * self.columns],
            &self.tangents[ib * self.columns..(ib + 1) * self.columns],
        );
        if a == b {
            tangents.copy_from_slice(ta);
            return Some(self.positions[ia]);
        }
        for (d, (ta, tb)) in tangents.iter_mut().zip(ta.iter().zip(tb)) {
            *d = ta + (tb - ta) * w;
        }
        let (pa, pb) = (self.positions[ia], self.positions[ib]);
        Some(pa + (pb - pa) * w)
    }

    /// The last saved state's time (s).
    pub fn end(&self) -> f64 {
        self.times.last().copied().unwrap_or(0.0)
    }
}

/// One trial's observed tracks (m, camera frame, file times in s), its log's first row time t₀
/// (s) and its simulated markers.
#[derive(Debug, Clone, Copy)]
pub struct TrialTracks<'a> {
    /// The observed tracks, in the scene's marker order.
    pub observed: &'a MarkerTracks,
    /// t₀ (s, the files' clock): simulation time 0.
    pub t0: f64,
    /// The run's markers.
    pub simulated: &'a SimulatedMarkers,
}

/// One compared sample: three residual rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ComparedSample {
    /// The trial (argument order).
    pub trial: usize,
    /// The marker (scene order).
    pub marker: usize,
    /// The sample's time (s, the files' clock).
    pub time: f64,
    /// The observed value in the scene frame (m): R y + τ, or y(t) − y(t₁) with
    /// `displacement`.
    pub measured: Vec3,
    /// The simulated value (m): p(t), or p(t) − p(t₁).
    pub simulated: Vec3,
}

impl ComparedSample {
    /// measured − simulated (m): the sample's three residuals.
    pub fn residual(&self) -> Vec3 {
        self.measured - self.simulated
    }
}

/// The residual vector r (m) of every compared sample (trial by trial, marker by marker, time
/// by time, x y z), its Jacobian (one column per parameter in the parameters' physical units,
/// then one per frame coordinate: τ in m, ω in rad) and the samples themselves.
#[derive(Debug, Clone, PartialEq)]
pub struct Residuals {
    /// r (m).
    pub values: DVec,
    /// ∂r/∂(θ, τ, ω).
    pub jacobian: DMat,
    /// The samples, three rows each in order.
    pub samples: Vec<ComparedSample>,
}

/// The residuals of `trials` under `comparison` with the frame `frame` of `registration`
/// (module doc): `columns` parameter columns (each trial's [`SimulatedMarkers::columns`]),
/// then [`Registration::parameters`] frame columns.
///
/// # Panics
/// If a sample lies outside its trial's run by more than 10⁻⁹ of a step (a trial is simulated
/// to its last sample: `Trial::steps`), or a trial's columns differ from `columns`.
pub fn assemble(
    trials: &[TrialTracks<'_>],
    comparison: Comparison,
    registration: Registration,
    frame: &Frame,
    columns: usize,
) -> Residuals {
    assert!(
        comparison == Comparison::Absolute || registration == Registration::None,
        "a frame is registered with absolute positions only"
    );
    let frame_columns = registration.parameters();
    let rows: usize = trials
        .iter()
        .flat_map(|t| &t.observed.tracks)
        .map(|track| match comparison {
            Comparison::Absolute => track.len(),
            Comparison::Displacement => track.len().saturating_sub(1),
        })
        .sum::<usize>()
        * 3;
    let mut values = DVec::zeros(rows);
    let mut jacobian = DMat::zeros(rows, columns + frame_columns);
    let mut samples = Vec::with_capacity(rows / 3);
    let rotation = frame.rotation_matrix();
    let mut d = vec![Vec3::zeros(); columns];
    let mut d_first = vec![Vec3::zeros(); columns];
    let mut row = 0;
    for (i, trial) in trials.iter().enumerate() {
        let sim = trial.simulated;
        assert_eq!(sim.columns, columns, "one tangent per parameter column");
        // A sample is at most 1e-9 of a step past the run's end (Trial::steps).
        let end = sim.end();
        let at = |m: usize, t: f64, d: &mut [Vec3]| {
            let s = (t - trial.t0).min(end);
            sim.at(m, s, d).unwrap_or_else(|| {
                panic!(
                    "sample time {t} s lies outside the trial's run (t₀ {} s, {end} s long)",
                    trial.t0
                )
            })
        };
        for (m, track) in trial.observed.tracks.iter().enumerate() {
            let Some((&t1, &y1)) = track.times.first().zip(track.positions.first()) else {
                continue;
            };
            let p1 = match comparison {
                Comparison::Absolute => Vec3::zeros(),
                Comparison::Displacement => at(m, t1, &mut d_first),
            };
            let skip = usize::from(comparison == Comparison::Displacement);
            for (&t, &y) in track.times.iter().zip(&track.positions).skip(skip) {
                let p = at(m, t, &mut d);
                let (measured, simulated) = match comparison {
                    Comparison::Absolute => (rotation * y + frame.translation, p),
                    Comparison::Displacement => {
                        for (dj, fj) in d.iter_mut().zip(&d_first) {
                            *dj -= fj;
                        }
                        (y - y1, p - p1)
                    }
                };
                let r = measured - simulated;
                for c in 0..3 {
                    values[row + c] = r[c];
                    for (j, dj) in d.iter().enumerate() {
                        jacobian[(row + c, j)] = -dj[c];
                    }
                }
                if frame_columns >= 3 {
                    for c in 0..3 {
                        jacobian[(row + c, columns + c)] = 1.0;
                    }
                }
                if frame_columns == 6 {
                    let dw = frame.rotation_jacobian(&rotation, y);
                    for c in 0..3 {
                        for k in 0..3 {
                            jacobian[(row + c, columns + 3 + k)] = dw[(c, k)];
                        }
                    }
                }
                samples.push(ComparedSample {
                    trial: i,
                    marker: m,
                    time: t,
                    measured,
                    simulated,
                });
                row += 3;
            }
        }
    }
    assert_eq!(row, rows, "every row filled");
    Residuals {
        values,
        jacobian,
        samples,
    }
}

/// The least-squares frame of `registration` between the observed samples of `trials` and
/// the runs as they are, under `comparison` ([`initial_frame`] of every compared sample's
/// observed and simulated values with the identity frame: the mean offset for a translation,
/// Kabsch for a rigid map); the identity for [`Registration::None`]. A fit starts from it; a
/// run compared with a recording is judged after it.
pub fn best_frame(
    trials: &[TrialTracks<'_>],
    comparison: Comparison,
    registration: Registration,
) -> Frame {
    if registration == Registration::None {
        return Frame::default();
    }
    let columns = trials.first().map_or(0, |t| t.simulated.columns);
    let identity = assemble(
        trials,
        comparison,
        Registration::None,
        &Frame::default(),
        columns,
    );
    let pairs: Vec<(Vec3, Vec3)> = identity
        .samples
        .iter()
        .map(|s| (s.measured, s.simulated))
        .collect();
    initial_frame(registration, &pairs)
}
