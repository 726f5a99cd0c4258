//! The `diffsoro` command line's grammar: every command, its flags with their units and
//! defaults, and their `--help` text (clap derive). `main.rs` dispatches what it parses.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use diffsoro::scene::RunStart;

use crate::gradient_command::ContactGradient;

/// diffsoro: a differentiable soft-robot simulator (tetrahedral FEM, exact frictional contact,
/// implicit differentiation). With no command, prints this help and runs the built-in demo.
#[derive(Parser)]
#[command(name = "diffsoro", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
pub(crate) enum StartFlag {
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
