//! The angle-driven servos of a body whose horn nodes are pinned to the horn's rigid rotation
//! (the SoftRobots servo; the step's prescribed-motion stage, `scene::step::free::prescribed`,
//! moves them).

use crate::actuator::{ActuatorKind, Drive, Servo};

use super::actuation::BodyActuation;

/// An angle-driven servo whose horn nodes are pinned to its rigid rotation.
#[derive(Debug, Clone, PartialEq)]
pub struct PinnedServo {
    /// Its index in [`BodyActuation::actuators`].
    pub actuator: usize,
    /// Every node it selects (nodes on the axis included: they stay put).
    pub nodes: Vec<usize>,
}

/// The servo of a pinned entry (asserts it is one).
pub fn servo_of<'a>(act: &'a BodyActuation, p: &PinnedServo) -> (&'a Servo, f64) {
    let a = &act.actuators[p.actuator];
    match (&a.kind, a.drive) {
        (ActuatorKind::Servo(s), Drive::Target(t)) => (s, t),
        _ => panic!("pinned actuator {} is not an angle-driven servo", a.name),
    }
}
