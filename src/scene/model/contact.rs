//! The scene's contact model ([`SceneContact`]): its static obstacles with their Coulomb
//! coefficients and names, the soft bodies' contact points, and the `[contact]` settings the
//! contact stage (`scene::step::contact::stage`) solves with.

use std::path::Path;

use crate::contact::{ContactPoints, Obstacle};
use crate::error::Result;

use crate::scene::file::contact::{ContactSection, ObstacleSection};

/// The scene's contact model: static obstacles, each with its Coulomb coefficient, and the
/// NCP solver settings (which also say whether bodies touch themselves and each other).
#[derive(Debug, Clone, Default)]
pub struct SceneContact {
    /// The obstacles, in file order.
    pub obstacles: Vec<Obstacle>,
    /// Coulomb coefficient μ of each obstacle (its own `friction` or `[contact].friction`).
    pub friction: Vec<f64>,
    /// The obstacles' names (`[[obstacle]] name`), where given; see
    /// [`SceneContact::obstacle_name`].
    pub names: Vec<Option<String>>,
    /// Solver, tolerance, iteration limit, self- and inter-body contact.
    pub settings: ContactSection,
    /// Each soft body's contact points (scene order; a body past the end meets with its
    /// boundary nodes): `[soft_body.contact] surface` embeds a surface of its own.
    pub points: Vec<ContactPoints>,
    /// Warnings of the embedded contact surfaces (vertices outside the mesh).
    pub warnings: Vec<String>,
}

impl SceneContact {
    /// The contact model of a scene file's `[contact]` and `[[obstacle]]` sections; mesh
    /// obstacle files are read relative to `dir` (the scene file's folder).
    pub fn build(
        contact: &ContactSection,
        obstacles: &[ObstacleSection],
        dir: &Path,
    ) -> Result<SceneContact> {
        contact.validate()?;
        Ok(SceneContact {
            obstacles: obstacles
                .iter()
                .enumerate()
                .map(|(i, o)| o.to_obstacle(i, dir))
                .collect::<Result<_>>()?,
            friction: obstacles
                .iter()
                .map(|o| o.friction.unwrap_or(contact.friction))
                .collect(),
            names: obstacles.iter().map(|o| o.name.clone()).collect(),
            settings: contact.clone(),
            points: Vec::new(),
            warnings: Vec::new(),
        })
    }

    /// Soft body `i`'s contact points (its boundary nodes unless it embeds a surface).
    pub fn points(&self, i: usize) -> ContactPoints {
        self.points.get(i).cloned().unwrap_or_default()
    }

    /// Obstacle `i`'s name: its `name`, or `obstacleK` with K = i (0-based file order).
    pub fn obstacle_name(&self, i: usize) -> String {
        match self.names.get(i) {
            Some(Some(name)) => name.clone(),
            _ => format!("obstacle{i}"),
        }
    }

    /// Whether the contact stage has anything to detect: an obstacle, self-contact or
    /// contact between bodies.
    pub fn is_active(&self) -> bool {
        !self.obstacles.is_empty() || self.settings.self_contact || self.settings.between_bodies
    }
}
