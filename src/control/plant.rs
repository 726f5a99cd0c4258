//! The robot of a control run when it is not the model (`control --plant-set`,
//! `--measurement-noise`): a second copy of the scene with other values, stepped with the
//! controller's commands, whose effector the controller sees through Gaussian noise.

use crate::error::{Error, Result};
use crate::math::{SplitMix64, Vec3};
use crate::scene::{Scene, State, StepReport, Stepper};

use super::feedback::Controller;

/// A simulated robot and what its sensor adds.
#[derive(Debug, Clone)]
pub struct Plant {
    /// The robot's scene: the model's with the `--plant-set` overrides (same mesh,
    /// actuators and effectors).
    pub scene: Scene,
    /// Standard deviation σ (m) of the Gaussian noise added to each coordinate of the
    /// measured effector position (0: exact).
    pub noise: f64,
    /// Seed of the noise (`--seed`).
    pub seed: u64,
}

impl Plant {
    /// A robot `scene` measured with noise σ = `noise` (m) seeded by `seed`. Errors naming
    /// `--measurement-noise`: σ not finite and ≥ 0.
    pub fn new(scene: Scene, noise: f64, seed: u64) -> Result<Plant> {
        if !(noise.is_finite() && noise >= 0.0) {
            return Err(Error::invalid(
                "--measurement-noise",
                format!("{noise} m must be a finite standard deviation ≥ 0"),
            ));
        }
        Ok(Plant { scene, noise, seed })
    }

    /// The robot at its initial state, its actuators at `controller`'s commands. Errors:
    /// the robot's scene lacks one of the model's actuators, or cannot be stepped.
    pub fn start(&self, controller: &Controller) -> Result<PlantRun> {
        let mut scene = self.scene.clone();
        controller.apply(&mut scene)?;
        Ok(PlantRun {
            stepper: Stepper::new(&scene)?,
            state: scene.initial_state(),
            scene,
        })
    }
}

/// A simulated robot running.
pub struct PlantRun {
    /// The robot's scene, its actuators at the commands of the current step.
    pub scene: Scene,
    /// Its state.
    pub state: State,
    stepper: Stepper,
}

impl PlantRun {
    /// One step of the robot under `controller`'s current commands.
    pub fn step(&mut self, controller: &Controller) -> Result<StepReport> {
        controller.apply(&mut self.scene)?;
        self.stepper.step(&self.scene, &mut self.state)
    }
}

/// The measurement noise of a run: three independent N(0, σ²) per sample (Box-Muller on
/// SplitMix64), zero without a plant or with σ = 0.
pub struct Noise {
    sigma: f64,
    random: SplitMix64,
}

impl Noise {
    /// The noise of `plant` (none without one).
    pub fn new(plant: Option<&Plant>) -> Noise {
        Noise {
            sigma: plant.map_or(0.0, |p| p.noise),
            random: SplitMix64::new(plant.map_or(0, |p| p.seed)),
        }
    }

    /// One sample (m): each coordinate σ times a standard normal number.
    pub fn sample(&mut self) -> Vec3 {
        if self.sigma == 0.0 {
            return Vec3::zeros();
        }
        Vec3::new(
            self.random.normal(),
            self.random.normal(),
            self.random.normal(),
        ) * self.sigma
    }
}
