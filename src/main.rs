//! The `diffsoro` command (layer 8): arguments → scene → job → JSON. No physics here.
//!
//! Every command prints its JSON result on stdout, human progress on stderr, and exits
//! non-zero with a one-line error on bad input (docs/cli.md).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use diffsoro::rigid::{DynamicsCase, dynamics_report};
use diffsoro::scene::{FinalState, FrameSeries, RunStart, Scene, Stepper};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

mod bench_command;
mod calibrate_command;
mod control_command;
mod cpu_id;
mod simulate_command;
use control_command::{ControlFlags, control};
use simulate_command::{InputsFlags, MarkerFlags, simulate};
mod bench_reduced;
mod gradient_command;
mod optimize_command;
mod reduce_command;
use gradient_command::ContactGradient;
mod out_folder;
use out_folder::with_out_folder;
mod view_frames;

/// diffsoro: a differentiable soft-robot simulator (tetrahedral FEM, exact frictional contact,
/// implicit differentiation). With no command, prints this help and runs the built-in demo.
#[derive(Parser)]
#[command(name = "diffsoro", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Summarise a tetrahedral mesh: counts, volume, bounding box, physical groups, as JSON.
    ///
    /// Reads Gmsh .msh 2.2 and 4.1, VTK .vtk and .vtu (the format detected from the content)
    /// and prints the node, tetrahedron and surface-triangle counts, the volume, the bounding
    /// box and the size of each physical group, in the file's units.
    Info {
        /// The mesh file; the format is detected from its content.
        mesh: PathBuf,
    },
    /// Simulate a scene (TOML) and print its final state as JSON.
    Simulate {
        /// The scene file (TOML, SI units).
        scene: PathBuf,
        /// Number of time steps (default: the scene's `simulation.steps`).
        #[arg(long)]
        steps: Option<usize>,
        /// Output folder: `final.json`, a `.vtu` frame per step and body, a `.pvd` per body.
        #[arg(long)]
        out: Option<PathBuf>,
        /// With `--out DIR`: also write `DIR/view.html`, the run in 3D (`diffsoro view DIR`).
        #[arg(long, requires = "out")]
        view: bool,
        /// Write every marker's position (`[[soft_body.marker]]`) at every saved state to
        /// this CSV file (`time,marker,x,y,z`: the initial state at t = 0 and the state after
        /// each step; with `--static`, the equilibrium at t = 0), written completely or not at
        /// all; with or without `--out`. An error if the scene has no marker.
        #[arg(long, value_name = "FILE.csv")]
        markers_out: Option<PathBuf>,
        /// The unit of the coordinates of `--markers-out` and `--observed-markers`: `m`
        /// (default) or `mm`; times are in s.
        #[arg(long, value_name = "m|mm")]
        marker_unit: Option<diffsoro::scene::MarkerUnit>,
        /// Compare the run's markers with a recording of them (long CSV `time,marker,x,y,z`,
        /// on the command log's clock under `--inputs`): adds `"marker_error": {"rms",
        /// "per_marker", …}` (m) to the JSON; samples outside the run are not compared.
        #[arg(long, value_name = "FILE.csv")]
        observed_markers: Option<PathBuf>,
        /// With `--observed-markers`: compare `absolute` positions (default) or each track's
        /// `displacement` from its first sample.
        #[arg(
            long,
            value_name = "absolute|displacement",
            requires = "observed_markers"
        )]
        compare: Option<String>,
        /// With `--observed-markers`: the camera → scene frame fitted to this run before
        /// comparing, `none` (default), `translation` or `rigid`; reported in `marker_error`.
        #[arg(
            long,
            value_name = "none|translation|rigid",
            requires = "observed_markers"
        )]
        register: Option<String>,
        /// Override one scene value by dotted path, e.g. `soft_body.beam.young_modulus=3e5`
        /// (arrays of tables addressed by `name`); repeatable.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// Solve for static equilibrium under the scene's loads instead of stepping in time.
        #[arg(long = "static")]
        statics: bool,
        /// Fail (non-zero exit) when a step's contact NCP stops at its iteration limit,
        /// instead of warning on stderr and going on with the solver's last iterate.
        #[arg(long)]
        strict: bool,
        /// Also compute d(final positions)/d(parameter) through the whole run (forward mode)
        /// for each comma-separated name: `young_modulus:BODY`, `poisson_ratio:BODY`,
        /// `actuator:NAME` (its force held constant over the run), `friction:OBSTACLE` (an
        /// obstacle's Coulomb coefficient, by its `name` or `obstacleK`), `rayleigh_mass:BODY`
        /// (α, 1/s), `rayleigh_stiffness:BODY` (β, s), `density:BODY` (ρ, kg/m³, lumped or
        /// consistent mass); for rigid bodies
        /// (written as `rigid_sensitivities`, tangents of q and v) `q:ROBOT`, `v:ROBOT`,
        /// `tau:ROBOT`, `target:ROBOT` (a PD robot's target, rad or m, as a constant offset over
        /// the run), `position:BODY`, `velocity:BODY`, `angular_velocity:BODY` (every
        /// component, or `velocity:cube[2]`), `mass:BODY` (a free body's mass in kg, its
        /// inertia scaled with it); repeatable.
        #[arg(long, value_name = "NAME,…", value_delimiter = ',')]
        sensitivity: Vec<String>,
        /// With `--sensitivity` in a scene of rigid bodies and robots: instead of the forward
        /// tangents, the gradient of one final rigid coordinate (the loss; a leading `-`
        /// flips it), e.g. `position:cube[2]`, `-velocity:cube[0]`, `q:arm[1]`, with respect
        /// to each `--sensitivity` name, by one reverse sweep; written as `"gradient"`.
        #[arg(
            long,
            value_name = "[-]NAME[k]",
            requires = "sensitivity",
            allow_hyphen_values = true
        )]
        gradient_of: Option<String>,
        /// How `--gradient-of` treats a contact touching with no force (a contact-mode
        /// boundary): `one-sided` (as open) or `complementarity-aware` (closed when the loss
        /// would fall if it pushed; Werling et al. 2021, §IV-D). Forward tangents are always
        /// one-sided.
        #[arg(long, value_enum, default_value = "one-sided")]
        contact_gradient: ContactGradient,
        /// Actuator commands over time: a CSV file `time,NAME,…` (s, then each named
        /// actuator's command, mapped to its input by its `gain`, `offset` and
        /// `time_constant`). Time 0 is the first row's time; step k takes the commands at
        /// t₀ + (k+1)·dt, linear between rows; without `--steps` the run ends at the last row.
        #[arg(long, value_name = "FILE.csv")]
        inputs: Option<PathBuf>,
        /// With `--inputs`: where the run starts, `static` (default: at rest at the static
        /// equilibrium under the first commands) or `scene` (the scene's initial state).
        #[arg(long, value_enum, value_name = "static|scene")]
        start: Option<StartFlag>,
        /// Step this reduced model (`diffsoro reduce`) instead of the full one; outputs are
        /// still every node's position (docs/reduced.md).
        #[arg(long, value_name = "MODEL.reduced")]
        reduced: Option<PathBuf>,
    },
    /// Fit a scene's parameters to an observed final state (Levenberg-Marquardt), as JSON.
    ///
    /// Fits material parameters (Young's modulus, Poisson's ratio per body), actuator inputs,
    /// an obstacle's friction, a free rigid body's mass or initial velocity so that the scene's
    /// final state matches an observed one, by Levenberg-Marquardt with every iterate strictly
    /// inside each parameter's range; prints `{"params", "iterations", "loss", "converged",
    /// "stopped", "at_bound", "restarts", …}`. `converged` is true only when the loss fell to
    /// 1e-6 of the initial loss with no parameter held by a bound; `stopped` says why it
    /// stopped otherwise (a local minimum, a bound, the iteration limit).
    Calibrate {
        /// The scene file (TOML, SI units).
        scene: PathBuf,
        /// The observed final state (the JSON `simulate` writes); or give `--trial`.
        #[arg(
            long,
            value_name = "FILE.json",
            required_unless_present = "trial",
            conflicts_with = "trial"
        )]
        observed: Option<PathBuf>,
        /// A trial of a real experiment, `INPUTS.csv:MARKERS.csv`: the command log the robot
        /// followed (as for `--inputs`) and the marker tracks observed meanwhile (long CSV
        /// `time,marker,x,y,z` on the same clock; missing rows, empty or NaN coordinates
        /// skipped); repeatable, one set of parameters for all trials. Parameters may also be
        /// the logged actuators' `gain:NAME`, `offset:NAME` and `time_constant:NAME`
        /// (docs/calibration.md#real-experiments).
        #[arg(long, value_name = "INPUTS.csv:MARKERS.csv", conflicts_with = "inputs")]
        trial: Vec<String>,
        /// With `--trial`: the unit of the marker files' coordinates, `m` (default) or `mm`.
        #[arg(long, value_name = "m|mm", requires = "trial")]
        marker_unit: Option<diffsoro::scene::MarkerUnit>,
        /// With `--trial`: compare `absolute` positions (default) or each track's
        /// `displacement` from its first valid sample (no `--register` then).
        #[arg(long, value_name = "absolute|displacement", requires = "trial")]
        compare: Option<String>,
        /// With `--trial`: the camera → scene frame fitted with the parameters, one for all
        /// trials: `none` (default), `translation` or `rigid` (rotation and translation).
        #[arg(long, value_name = "none|translation|rigid", requires = "trial")]
        register: Option<String>,
        /// A parameter to fit: `young_modulus:BODY`, `poisson_ratio:BODY`, `actuator:NAME`,
        /// `friction:OBSTACLE` (an obstacle's Coulomb coefficient), `mass:BODY` (a free rigid
        /// body's mass, kg), `rayleigh_mass:BODY` (α, 1/s), `rayleigh_stiffness:BODY` (β, s) or
        /// `density:BODY` (ρ, kg/m³), fitted to the soft bodies' final positions; or components of one
        /// free body's initial velocity (`velocity:BODY[k]`, `angular_velocity:BODY`), fitted
        /// to its final position; repeatable.
        #[arg(long = "param", value_name = "NAME", required = true)]
        params: Vec<String>,
        /// Starting value of a parameter (default: the scene's), e.g.
        /// `young_modulus:beam=1e5`, within its range (a value on a closed end starts just
        /// inside it); repeatable.
        #[arg(long = "init", value_name = "NAME=VALUE")]
        init: Vec<String>,
        /// The admissible range of a parameter, `NAME=LO,HI` (either end may be empty for the
        /// default end), e.g. `poisson_ratio:beam=0,0.45`, `young_modulus:beam=1e5,`,
        /// `actuator:c1=0,2`. Defaults: E > 0 (Pa), 0 ≤ ν < 0.5, actuators unbounded, μ > 0, m > 0 (kg), α, β, ρ > 0. Iterates
        /// stay strictly inside (by 1e-6 of the range's width); repeatable.
        #[arg(long = "bounds", value_name = "NAME=LO,HI", allow_hyphen_values = true)]
        bounds: Vec<String>,
        /// When the first fit misses the answer (a local minimum or a bound), how many more
        /// fits to start from evenly spaced points of the parameters' finite ranges (ν, or
        /// any parameter with both `--bounds` ends); the best fit is reported.
        #[arg(long, value_name = "N", default_value_t = diffsoro::calibrate::DEFAULT_RESTARTS)]
        restarts: usize,
        /// Output folder: `calibration.json`, `loss.svg`/`.csv`, one plot (+ CSV) per
        /// parameter and `summary.svg` (every plot and the key numbers on one page). Created
        /// (or checked writable) before the fit starts; removed again if the fit fails and it
        /// was created for it.
        #[arg(long)]
        out: Option<PathBuf>,
        /// The y scale of the loss plot (`loss.svg` and in `summary.svg`): `auto` (logarithmic when its values span more than
        /// two decades, else linear), `linear` or `log`.
        #[arg(long, value_name = "auto|linear|log", default_value = "auto")]
        error_scale: diffsoro::chart::ScaleChoice,
        /// With `--out DIR`: also simulate the scene once more at the fitted values and write
        /// its frames (`BODY_NNNNNN.vtu`, `BODY.pvd`, `final.json`, as `simulate --out` does)
        /// and `DIR/view.html`, the fitted run in 3D.
        #[arg(long, requires = "out")]
        view: bool,
        /// Override one scene value by dotted path, as for `simulate` (e.g.
        /// `simulation.steps=20`); repeatable.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// Actuator commands over time (CSV `time,NAME,…`, as for `simulate`): every
        /// simulation of the fit runs under them, to the file's last row (not
        /// `simulation.steps`). Needs `--start scene`.
        #[arg(long, value_name = "FILE.csv")]
        inputs: Option<PathBuf>,
        /// With `--inputs`: where each simulation of the fit starts; only `scene` (the
        /// scene's initial state) for now. With `--trial`: where each trial's run starts,
        /// `static` (default: at rest under its first commands) or `scene`.
        #[arg(long, value_enum, value_name = "static|scene")]
        start: Option<StartFlag>,
    },
    /// Drive an effector to a target by QP inverse control of the actuators, as JSON.
    ///
    /// Prints `{"target", "final_position", "final_error", "error_history",
    /// "actuation_history"}`. With `--contact-weight`, limit the contact forces while driving
    /// one or more effectors toward their grasp origins (Ménager et al. 2025, Eq. 17; the
    /// Gripper: one effector per finger).
    Control {
        /// The scene file (TOML, SI units).
        scene: PathBuf,
        /// The effector to drive (an effector name of the scene, e.g. `tip`), or a robot's
        /// joint coordinate `q:ROBOT[k]` (e.g. `q:key[0]`, the piano key's angle of
        /// `scenes/pianist.toml`, moved through contact); repeatable with `--contact-weight`,
        /// one `--target` each.
        #[arg(long, required = true)]
        effector: Vec<String>,
        /// The target position `X,Y,Z` (m); for a joint effector `q:ROBOT[k]` one number
        /// (rad, or m for a prismatic joint); with `--contact-weight`, the effector's grasp
        /// origin.
        #[arg(
            long,
            value_name = "X,Y,Z|θ",
            allow_hyphen_values = true,
            required_unless_present = "target_path"
        )]
        target: Vec<String>,
        /// A moving target: a CSV file `time,x,y,z` (s, m), linear between its rows and held
        /// outside them; the target of step k is the path at the step's end time. Replaces
        /// `--target` (one effector). The report adds `tracking_rms`.
        #[arg(long, value_name = "FILE.csv")]
        target_path: Vec<PathBuf>,
        /// With a target (path): `tracking_rms` covers the steps ending after S seconds.
        #[arg(long, value_name = "S")]
        settle: Option<f64>,
        /// The robot under control is a second copy of the scene with this value overridden
        /// (`PATH=VALUE` as for `--set`, e.g. `soft_body.trunk.young_modulus=562500`); the
        /// controller's model is the scene as given and sees only the robot's effector.
        /// Repeatable.
        #[arg(long = "plant-set", value_name = "PATH=VALUE")]
        plant_set: Vec<String>,
        /// Standard deviation σ (m) of Gaussian noise on each coordinate of the effector
        /// position the controller sees (default 0).
        #[arg(long, value_name = "SIGMA")]
        measurement_noise: Option<f64>,
        /// Seed of `--measurement-noise` (default 0).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Number of control steps (default: the scene's `simulation.steps`).
        #[arg(long)]
        steps: Option<usize>,
        /// Output folder: `control.json`, `error.svg`/`.csv`, `actuation.svg`/`.csv` (and
        /// `contact_force.svg`/`.csv` with `--contact-weight`) and `summary.svg` (the
        /// effector's path, the error, the actuation and the key numbers on one page).
        /// Created (or checked writable) before the run starts; removed again if the run fails
        /// and it was created for it.
        #[arg(long)]
        out: Option<PathBuf>,
        /// The y scale of the error plot (`error.svg` and in `summary.svg`): `auto` (logarithmic when its values span more than
        /// two decades, else linear), `linear` or `log`.
        #[arg(long, value_name = "auto|linear|log", default_value = "auto")]
        error_scale: diffsoro::chart::ScaleChoice,
        /// Override one scene value by dotted path, as for `simulate` (e.g.
        /// `soft_body.trunk.cable.c2.max_force=0.5`); repeatable.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// The largest input of a force-driven actuator, `NAME=VALUE` (a cable's tension in N,
        /// a cavity's pressure in Pa, a servo's torque in N·m, which is then bounded by
        /// ±VALUE), as the scene's `max_force`/`max_pressure`/`max_torque` would; repeatable.
        /// Bounds come only from the scene and this flag: without one a cable's tension is
        /// only ≥ 0 (and a cavity's pressure or a servo's torque unbounded), and the change
        /// per step is limited (0.02 in the actuators' units by default, `--max-change`),
        /// which keeps steps small.
        #[arg(long = "max-force", value_name = "NAME=VALUE")]
        max_force: Vec<String>,
        /// β (1/N²): minimise α‖X_e‖² + β‖λ_c‖² (Ménager et al. 2025, Eq. 17) over every
        /// force-driven actuator and angle-driven servo, with the contact forces' derivatives.
        #[arg(long, value_name = "BETA")]
        contact_weight: Option<f64>,
        /// α (1/m²) of Eq. 17.
        #[arg(long, value_name = "ALPHA", default_value_t = 1.0)]
        effector_weight: f64,
        /// The largest change of each input per control step (the actuators' units: N, Pa,
        /// N·m, or rad for an angle-driven servo; default the scene's `[control] max_change`,
        /// else 0.02).
        #[arg(long, value_name = "D")]
        max_change: Option<f64>,
        /// The QP's relative damping ε of the change, ½ ε s ‖Δλ‖² with s = tr(WᵀW)/k
        /// (default the scene's `[control] regularisation`, else 1e-3; docs/control.md). Not
        /// with `--contact-weight`, whose QP has its own weights.
        #[arg(long, value_name = "EPS")]
        regularisation: Option<f64>,
        /// With `--contact-weight`: run the paper's heuristic instead (every actuator at its
        /// maximal closing all along) and report its loss with the same weights.
        #[arg(long)]
        heuristic: bool,
        /// Static inverse control: find the actuation whose static equilibrium puts the
        /// effector on the target (a pose, not a trajectory); `--steps` then bounds the
        /// number of iterations (each a static solve and a QP).
        #[arg(long = "static")]
        static_mode: bool,
        /// With `--out DIR`: also write the run's frames (`BODY_NNNNNN.vtu`, `BODY.pvd`,
        /// `final.json`, as `simulate --out` does) and `DIR/view.html`, the run in 3D. Not
        /// with `--static` (its iterates are poses, not a motion).
        #[arg(long, requires = "out")]
        view: bool,
    },
    /// Find actuation knots that take an effector through waypoints, as JSON.
    ///
    /// Open-loop optimal control: each actuator's input piecewise linear between `--knots`
    /// knots spread over the run, within the actuators' bounds, minimising the waypoint
    /// errors plus `--effort` times the squared inputs (docs/optimize.md). Prints
    /// `{"knot_times", "actuation", "waypoint_errors", "loss", "iterations", "converged", …}`.
    Optimize {
        /// The scene file (TOML, SI units).
        scene: PathBuf,
        /// The effector to drive (an effector name of the scene, e.g. `tip`).
        #[arg(long)]
        effector: String,
        /// The waypoints: CSV `time,x,y,z` (s from the run's start, m in the scene frame).
        #[arg(long, value_name = "FILE.csv")]
        waypoints: PathBuf,
        /// Knots per actuator, spread evenly over the run (default: one more than the
        /// waypoints).
        #[arg(long, value_name = "K")]
        knots: Option<usize>,
        /// The effort weight W (m² per squared input unit: (m/N)² for a cable's tension);
        /// default 1e-9.
        #[arg(long, value_name = "W", allow_hyphen_values = true)]
        effort: Option<f64>,
        /// Number of time steps (default: the whole steps that reach the last waypoint).
        #[arg(long)]
        steps: Option<usize>,
        /// Where the run starts: `static` (default; at rest at the static equilibrium under
        /// the inputs at t = 0) or `scene` (the scene's initial state; needed with contact or
        /// rigid bodies).
        #[arg(long, value_enum, value_name = "static|scene")]
        start: Option<StartFlag>,
        /// The actuators whose knots are found (default: every actuator of every soft
        /// body; the others keep their scene inputs); repeatable.
        #[arg(long = "actuator", value_name = "NAME")]
        actuators: Vec<String>,
        /// Iteration limit (each iteration one run with sensitivities).
        #[arg(long, default_value_t = 30)]
        iterations: usize,
        /// Output folder: `optimize.json`, `effector.svg`/`.csv`, `actuation.svg`/`.csv`,
        /// `loss.svg`/`.csv` and `summary.svg`. Created (or checked writable) before the
        /// optimisation starts; removed again if it fails and it was created for it.
        #[arg(long)]
        out: Option<PathBuf>,
        /// With `--out DIR`: also write the optimised run's frames and `DIR/view.html`.
        #[arg(long, requires = "out")]
        view: bool,
        /// Override one scene value by dotted path, as for `simulate`; repeatable.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
    },
    /// Time a scene's step: median milliseconds over the steps, as JSON.
    Bench {
        /// The scene file.
        scene: PathBuf,
        /// Number of steps to time.
        #[arg(long, default_value_t = 50)]
        steps: usize,
        /// Override one scene value by dotted path, as for `simulate`; repeatable.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// Fail (exit code 1, no timings) at the first step whose contact NCP stops at its
        /// iteration limit, instead of timing it with a warning.
        #[arg(long)]
        strict: bool,
        /// Threads for the step's parallel loops (default: RAYON_NUM_THREADS, or the cores).
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
        /// Actuator commands over time (CSV `time,NAME,…`, as for `simulate`): each timed
        /// step takes its inputs from the file (the warm-up step is the file's first step).
        #[arg(long, value_name = "FILE.csv")]
        inputs: Option<PathBuf>,
        /// With `--inputs`: where the run starts, `static` (default) or `scene`.
        #[arg(long, value_enum, value_name = "static|scene")]
        start: Option<StartFlag>,
        /// Time this reduced model's step against the full step, alternating in one run:
        /// prints `step_ms` (reduced), `full_step_ms` and `speedup`.
        #[arg(long, value_name = "MODEL.reduced")]
        reduced: Option<PathBuf>,
    },
    /// Build a reduced model of a scene's soft body from training command logs, as JSON.
    ///
    /// Runs the full model on each `--train` log, builds a POD basis of its displacements and
    /// an ECSW sample of weighted elements, writes them to `--out` and re-runs the reduced
    /// model on the training logs (docs/reduced.md). Prints `{"modes", "elements_kept",
    /// "training_error", "offline_s", …}`.
    Reduce {
        /// The scene file (TOML, SI units): one soft body, force-driven actuators, no contact.
        scene: PathBuf,
        /// A training command log (CSV `time,NAME,…`, as for `simulate --inputs`); repeatable.
        #[arg(long = "train", value_name = "INPUTS.csv", required = true)]
        train: Vec<PathBuf>,
        /// Keep exactly K modes (instead of --basis-tolerance).
        #[arg(long, value_name = "K", conflicts_with = "basis_tolerance")]
        modes: Option<usize>,
        /// Keep the fewest modes that leave out at most this share of the snapshots' energy
        /// (dimensionless; default 1e-6).
        #[arg(long, value_name = "T")]
        basis_tolerance: Option<f64>,
        /// The sampled elements' relative error on the training forces (dimensionless;
        /// default 1e-3).
        #[arg(long, value_name = "T")]
        force_tolerance: Option<f64>,
        /// Where the training runs start: `static` (default) or `scene`.
        #[arg(long, value_enum, value_name = "static|scene")]
        start: Option<StartFlag>,
        /// The model file to write (all or nothing).
        #[arg(long, value_name = "MODEL.reduced")]
        out: PathBuf,
        /// Override one scene value by dotted path, as for `simulate`; repeatable.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
    },
    /// A URDF robot's dynamics at one state (RNEA, CRBA, ABA, derivatives), as JSON.
    ///
    /// Rigid-body dynamics of a URDF robot at the state `--case` gives: RNEA, CRBA, ABA and
    /// their analytical derivatives.
    Dynamics {
        /// The robot (URDF).
        urdf: PathBuf,
        /// The state: `{"q", "v", "tau", "a", "base"}` (`base`: "fixed", the default, or
        /// "free_flyer").
        #[arg(long)]
        case: PathBuf,
    },
    /// Write a run's output folder as one interactive 3D HTML page.
    ///
    /// The folder a run wrote (`simulate --out DIR`), viewed in one self-contained page:
    /// surfaces coloured by displacement, a time slider.
    View {
        /// The run's output folder (its `NAME.pvd` files and `.vtu` frames).
        dir: PathBuf,
        /// The page to write (default: `DIR/view.html`).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run the built-in demo (the Trunk under gravity) into `out/demo/`.
    ///
    /// The Trunk scene of `scenes/trunk.toml` (built into the binary) under gravity, written
    /// to `out/demo/` in the working folder for ParaView.
    Demo {
        /// Override one scene value by dotted path, as for `simulate` (e.g.
        /// `soft_body.trunk.cable.c2.force=0.3`); repeatable.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
    },
}

/// `--start`: where a run under `--inputs` starts.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum StartFlag {
    /// At rest at the static equilibrium under the first commands.
    Static,
    /// The scene's initial state.
    Scene,
}

impl From<StartFlag> for RunStart {
    fn from(flag: StartFlag) -> RunStart {
        match flag {
            StartFlag::Static => RunStart::Static,
            StartFlag::Scene => RunStart::Scene,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The command runs on a worker of a rayon pool (as many threads as RAYON_NUM_THREADS or
    // the cores): each parallel loop of a step then starts on the thread that runs the step,
    // instead of being handed from the main thread to the pool and waited for (a futex wake
    // and sleep per loop: a tenth of a small contact step on one thread).
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(Command::Bench {
        threads: Some(n), ..
    }) = &cli.command
    {
        pool = pool.num_threads(usize::from(*n));
    }
    let result = match pool.build() {
        Ok(pool) => pool.install(|| run(cli)),
        Err(_) => run(cli),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the command of `cli`.
fn run(cli: Cli) -> diffsoro::Result<()> {
    match cli.command {
        Some(Command::Info { mesh }) => info(&mesh),
        Some(Command::Simulate {
            scene,
            steps,
            out,
            view,
            markers_out,
            marker_unit,
            observed_markers,
            compare,
            register,
            set,
            statics,
            strict,
            sensitivity,
            gradient_of,
            contact_gradient,
            inputs,
            start,
            reduced,
        }) => simulate(
            &scene,
            steps,
            out.as_deref(),
            &set,
            statics,
            strict,
            &sensitivity,
            gradient_of.as_deref(),
            contact_gradient,
            MarkerFlags {
                out: markers_out.as_deref(),
                unit: marker_unit,
                observed: observed_markers.as_deref(),
                compare: compare.as_deref(),
                register: register.as_deref(),
            },
            InputsFlags {
                inputs: inputs.as_deref(),
                start: start.map(RunStart::from),
                reduced: reduced.as_deref(),
            },
        )
        .and_then(|f| {
            if let (true, Some(dir)) = (view, out.as_deref()) {
                write_run_view(dir)?;
            }
            print_json_compact(&f)
        }),
        Some(Command::Calibrate {
            scene,
            observed,
            params,
            init,
            bounds,
            restarts,
            out,
            error_scale,
            view,
            set,
            inputs,
            start,
            trial,
            marker_unit,
            compare,
            register,
        }) => calibrate_command::calibrate(
            &scene,
            calibrate_command::Observed::new(
                observed.as_deref(),
                &trial,
                calibrate_command::TrialFlags {
                    unit: marker_unit.unwrap_or_default(),
                    compare: compare.as_deref(),
                    register: register.as_deref(),
                },
            ),
            &calibrate_command::CalibrateFlags {
                params: &params,
                bounds: &bounds,
                init: &init,
                restarts,
                error_scale,
                view,
                inputs: InputsFlags {
                    inputs: inputs.as_deref(),
                    start: start.map(RunStart::from),
                    reduced: None,
                },
            },
            out.as_deref(),
            &set,
        ),
        Some(Command::Control {
            scene,
            effector,
            target,
            target_path,
            settle,
            plant_set,
            measurement_noise,
            seed,
            steps,
            out,
            error_scale,
            set,
            max_force,
            contact_weight,
            effector_weight,
            max_change,
            regularisation,
            heuristic,
            static_mode,
            view,
        }) => control(
            &scene,
            &ControlFlags {
                effectors: &effector,
                targets: &target,
                steps,
                set: &set,
                max_force: &max_force,
                error_scale,
                view,
                regularisation,
                max_change,
                target_paths: &target_path,
                settle,
                plant_set: &plant_set,
                measurement_noise,
                seed,
            },
            out.as_deref(),
            contact_weight.map(|beta| (effector_weight, beta, max_change, heuristic)),
            heuristic,
            static_mode,
        ),
        Some(Command::Optimize {
            scene,
            effector,
            waypoints,
            knots,
            effort,
            steps,
            start,
            actuators,
            iterations,
            out,
            view,
            set,
        }) => optimize_command::optimize(
            &scene,
            &optimize_command::OptimizeFlags {
                effector: &effector,
                waypoints: &waypoints,
                knots,
                effort,
                steps,
                start: start.map_or(RunStart::Static, RunStart::from),
                actuators: &actuators,
                iterations,
                set: &set,
                view,
            },
            out.as_deref(),
        ),
        Some(Command::Bench {
            scene,
            steps,
            set,
            strict,
            threads: _,
            inputs,
            start,
            reduced,
        }) => {
            let inputs = InputsFlags {
                inputs: inputs.as_deref(),
                start: start.map(RunStart::from),
                reduced: None,
            };
            match reduced {
                Some(model) => bench_reduced::bench_reduced(&scene, &model, steps, &set, inputs),
                None => bench_command::bench(&scene, steps, &set, strict, inputs),
            }
        }
        Some(Command::Reduce {
            scene,
            train,
            modes,
            basis_tolerance,
            force_tolerance,
            start,
            out,
            set,
        }) => reduce_command::reduce(
            &scene,
            &reduce_command::ReduceFlags {
                train: &train,
                modes,
                basis_tolerance,
                force_tolerance,
                start: start.map(RunStart::from),
                set: &set,
            },
            &out,
        ),
        Some(Command::Dynamics { urdf, case }) => dynamics(&urdf, &case),
        Some(Command::View { dir, out }) => view(&dir, out.as_deref()),
        Some(Command::Demo { set }) => demo(&set),
        None => {
            eprintln!("{}", Cli::command().render_help());
            eprintln!("\nNo command given: running the built-in demo (`diffsoro demo`).\n");
            demo(&[])
        }
    }
}

/// Writes the viewer page of the run in `dir` and prints a summary of it as JSON.
fn view(dir: &Path, out: Option<&Path>) -> diffsoro::Result<()> {
    let (page, run) = diffsoro::view::write_view(dir, out)?;
    print_json(&serde_json::json!({
        "page": page,
        "frames": run.times.len(),
        "bodies": run.bodies.iter().map(|b| &b.name).collect::<Vec<_>>(),
    }))?;
    eprintln!("wrote {}: open it in a browser", page.display());
    Ok(())
}

/// Simulates `steps` steps of `scene` from its initial state and writes the frames, `.pvd`
/// files and `final.json` into `dir` as `simulate --out` does (staged, all or nothing); with
/// `inputs`, the run under those logged commands from the scene's initial state (to the log's
/// last row, as `simulate --inputs --start scene`) instead.
fn write_frames(
    scene: &Scene,
    steps: usize,
    dir: &Path,
    inputs: Option<&diffsoro::scene::CommandLog>,
) -> diffsoro::Result<()> {
    let mut scene = scene.clone();
    let mut frames = FrameSeries::create(dir, &scene)?;
    let (mut run, mut stepper, mut state, steps) = match inputs {
        Some(log) => {
            let (run, state) =
                diffsoro::scene::CommandRun::start(&mut scene, log.clone(), None, RunStart::Scene)?;
            let steps = run.steps();
            (Some(run), None, state, steps)
        }
        None => (
            None,
            Some(Stepper::new(&scene)?),
            scene.initial_state(),
            steps,
        ),
    };
    frames.write(&scene, &state)?;
    let bar = progress(steps as u64, "simulate (fitted values)");
    for _ in 0..steps {
        let report = match (&mut run, &mut stepper) {
            (Some(run), _) => run.step(&mut scene, &mut state)?,
            (None, Some(stepper)) => stepper.step(&scene, &mut state)?,
            (None, None) => unreachable!("a run or a stepper"),
        };
        frames.write_with_contacts(&scene, &state, Some(&report.contact))?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut final_state = FinalState::new(&scene, &state);
    final_state.inputs = run.as_ref().map(diffsoro::scene::CommandRun::output);
    let json = serde_json::to_vec(&final_state)
        .map_err(|e| diffsoro::Error::invalid("final state", e.to_string()))?;
    frames.finish(&scene, &json)?;
    Ok(())
}

/// Writes `DIR/view.html` for the run just written into `dir` and says where it is on stderr.
fn write_run_view(dir: &Path) -> diffsoro::Result<()> {
    let (page, _) = diffsoro::view::write_view(dir, None)?;
    eprintln!(
        "wrote {}: the run in 3D, open it in a browser",
        page.display()
    );
    Ok(())
}

/// Prints `value` as JSON on stdout.
fn print_json(value: &impl Serialize) -> diffsoro::Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| diffsoro::Error::invalid("JSON output", e.to_string()))?;
    write_stdout(&text)
}

/// Writes `text` and a newline on stdout; a closed pipe (`| head`) is not an error.
fn write_stdout(text: &str) -> diffsoro::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(diffsoro::Error::io("stdout", e))
        }
        _ => Ok(()),
    }
}

/// Prints `value` as one-line JSON on stdout (large outputs: final states).
fn print_json_compact(value: &impl Serialize) -> diffsoro::Result<()> {
    let text = serde_json::to_string(value)
        .map_err(|e| diffsoro::Error::invalid("JSON output", e.to_string()))?;
    write_stdout(&text)
}

fn info(path: &Path) -> diffsoro::Result<()> {
    let mesh = diffsoro::mesh::read_mesh(path)?;
    if mesh.tetrahedra().is_empty() {
        return Err(diffsoro::Error::invalid(
            path.display().to_string(),
            format!(
                "the mesh has no tetrahedra ({} nodes, {} triangles): diffsoro needs a tetrahedral volume mesh",
                mesh.node_count(),
                mesh.triangles().len()
            ),
        ));
    }
    if let (count @ 1.., Some(first)) = mesh.reoriented() {
        eprintln!(
            "warning: {}: {count} tetrahedra had a negative signed volume and were re-oriented (first: tetrahedron {first})",
            path.display()
        );
    }
    print_json(&mesh.info())
}

/// Loads a scene (`Scene::load`) and prints its warnings on stderr, once each.
fn load_scene(path: &Path, set: &[String]) -> diffsoro::Result<Scene> {
    let scene = Scene::load(path, set)?;
    for warning in scene.warnings() {
        eprintln!("warning: {warning}");
    }
    Ok(scene)
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
fn progress(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{msg} [{bar:40}] {pos}/{len} steps, {elapsed} elapsed, ETA {eta}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar
}

fn dynamics(urdf: &Path, case: &Path) -> diffsoro::Result<()> {
    let text = std::fs::read_to_string(case).map_err(|e| diffsoro::Error::io(case, e))?;
    let case: DynamicsCase = serde_json::from_str(&text).map_err(|e| {
        diffsoro::Error::parse(
            case.display().to_string(),
            diffsoro::error::Location::Line(e.line()),
            e.to_string(),
        )
    })?;
    print_json_compact(&dynamics_report(urdf, &case)?)
}

/// The demo's scene, built into the binary (so an installed `diffsoro demo` needs no clone).
const DEMO_SCENE: &str = include_str!("../scenes/trunk.toml");
/// The demo scene's mesh, built into the binary.
const DEMO_MESH: &[u8] = include_bytes!("../meshes/trunk.msh");

/// The prefix of the folder the demo unpacks into, followed by the pid of its run.
const DEMO_PREFIX: &str = "diffsoro-demo-";

/// The built-in demo: the Trunk under gravity for 1 s (with the `--set` overrides), frames in
/// `out/demo/` under the working folder. The scene and its mesh are the ones built into the
/// binary, unpacked into a private temporary folder for the run (as `scenes/trunk.toml` and
/// `meshes/trunk.msh`, so the scene's relative mesh path holds) and removed afterwards; the
/// folders of earlier demos that were killed before removing theirs go first.
fn demo(set: &[String]) -> diffsoro::Result<()> {
    let tmp = std::env::temp_dir();
    diffsoro::scene::remove_stale_folders(&tmp, DEMO_PREFIX);
    let unpacked = tmp.join(format!("{DEMO_PREFIX}{}", std::process::id()));
    let result = unpack_demo(&unpacked).and_then(|scene| demo_run(&scene, set));
    let _ = std::fs::remove_dir_all(&unpacked);
    result
}

/// Writes the built-in demo scene and mesh under `dir` and returns the scene's path.
fn unpack_demo(dir: &Path) -> diffsoro::Result<PathBuf> {
    let scene = dir.join("scenes/trunk.toml");
    let mesh = dir.join("meshes/trunk.msh");
    for (path, bytes) in [(&scene, DEMO_SCENE.as_bytes()), (&mesh, DEMO_MESH)] {
        let folder = path.parent().unwrap_or(dir);
        std::fs::create_dir_all(folder).map_err(|e| diffsoro::Error::io(folder, e))?;
        std::fs::write(path, bytes).map_err(|e| diffsoro::Error::io(path, e))?;
    }
    Ok(scene)
}

/// Runs the demo scene at `scene` into `out/demo/` and prints where its output went.
fn demo_run(scene: &Path, set: &[String]) -> diffsoro::Result<()> {
    let out = PathBuf::from("out/demo");
    eprintln!(
        "demo: simulating the built-in Trunk (scenes/trunk.toml, under gravity, 1 s) into {}/",
        out.display()
    );
    let final_state = simulate(
        scene,
        Some(100),
        Some(&out),
        set,
        false,
        false,
        &[],
        None,
        ContactGradient::OneSided,
        MarkerFlags::default(),
        InputsFlags::default(),
    )?;
    let body = &final_state.soft_bodies[0];
    let sag = body
        .positions
        .iter()
        .map(|p| p[1])
        .fold(f64::INFINITY, f64::min);
    print_json(&serde_json::json!({
        "scene": "scenes/trunk.toml (built in)",
        "steps": final_state.steps,
        "time": final_state.time,
        "output": out,
        "final_state": out.join("final.json"),
        "paraview": out.join(format!("{}.pvd", body.name)),
        "lowest_y_m": sag,
    }))?;
    eprintln!(
        "demo: open {} in ParaView to watch the Trunk sag, or run `diffsoro view {}` for a page any browser opens",
        out.join(format!("{}.pvd", body.name)).display(),
        out.display()
    );
    Ok(())
}
