//! `simulate --gradient-of [-]NAME --sensitivity NAMES [--contact-gradient …]`: the gradient of
//! one coordinate of the final state (the loss ℓ, its sign flipped by a leading `-`): a final
//! rigid coordinate, or a soft body's effector position, with respect to the `--sensitivity`
//! names, by one reverse sweep over the run (`diff::record_rigid_trajectory` and
//! `RigidTape::adjoint` in scenes of rigid bodies alone, `diff::record_trajectory` and
//! `diff::adjoint` with soft bodies). The reverse sweep is where the contact-mode boundary can
//! be chosen per loss (`contact::BoundaryGradient`, paper 003 §IV-D), which forward tangents
//! cannot do. No physics here.

use std::collections::BTreeMap;

use diffsoro::contact::{BoundaryGradient, ModeTolerance};
use diffsoro::diff::{
    Parameter, RigidParameter, RigidSeed, StateTangent, TapeOptions, adjoint,
    parse_rigid_parameter, record_rigid_trajectory, record_trajectory, rigid_seeds,
};
use diffsoro::scene::Scene;

/// The values of `--contact-gradient`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ContactGradient {
    /// A contact at a mode boundary is differentiated on the side its classification gives
    /// (touching with no force: open; on the cone's rim: sticking).
    OneSided,
    /// A touching contact with no force closes when the loss would fall if it pushed
    /// (paper 003 §IV-D); reverse mode only (`--gradient-of`).
    ComplementarityAware,
}

impl ContactGradient {
    /// The library's boundary for `scene` (a touching contact: normal velocity within the
    /// scene's mode tolerance, from `contact.tolerance`).
    pub fn boundary(self, scene: &Scene) -> BoundaryGradient {
        match self {
            ContactGradient::OneSided => BoundaryGradient::OneSided,
            ContactGradient::ComplementarityAware => BoundaryGradient::ComplementarityAware {
                tied_velocity: ModeTolerance::for_ncp_tolerance(scene.contact.settings.tolerance)
                    .velocity,
            },
        }
    }
}

/// The loss of `--gradient-of`: one final rigid coordinate, named as the initial-state names
/// (`position:cube[2]`, `q:arm[1]`, `v:arm[0]`, `velocity:`, `angular_velocity:`), with a sign.
fn parse_loss(scene: &Scene, text: &str) -> diffsoro::Result<(f64, RigidParameter)> {
    let what = format!("--gradient-of `{text}`");
    let (sign, name) = match text.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, text),
    };
    let one = parse_rigid_parameter(scene, name)?
        .and_then(|list| <[RigidParameter; 1]>::try_from(list).ok())
        .filter(|[p]| !matches!(p.seed, RigidSeed::Input | RigidSeed::Target));
    match one {
        Some([p]) => Ok((sign, p)),
        None => Err(diffsoro::Error::invalid(
            what,
            "expected one final rigid coordinate, e.g. `position:cube[2]`, `-velocity:cube[0]`, `q:arm[1]` (a leading `-` flips the loss)",
        )),
    }
}

/// The loss of `--gradient-of` in a scene with soft bodies: a final rigid coordinate (as
/// [`parse_loss`]), or `effector:NAME[k]`, component k of the final position (m) of a soft
/// body's effector.
enum SoftLoss {
    Rigid(RigidParameter),
    /// Soft body `body`'s nodes and weights (position = Σ wᵢ x(nodes[i])), and the axis.
    Effector {
        body: usize,
        nodes: [usize; 4],
        weights: [f64; 4],
        axis: usize,
    },
}

/// [`SoftLoss`] and its sign from `text`.
fn parse_soft_loss(scene: &Scene, text: &str) -> diffsoro::Result<(f64, SoftLoss)> {
    let (sign, name) = match text.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, text),
    };
    let what = || format!("--gradient-of `{text}`");
    let Some(effector) = name.strip_prefix("effector:") else {
        return match parse_loss(scene, text) {
            Ok((sign, p)) => Ok((sign, SoftLoss::Rigid(p))),
            Err(_) => Err(diffsoro::Error::invalid(
                what(),
                "expected one component of an effector's final position (`effector:tip[2]`, m) or one final rigid coordinate (`position:cube[2]`, `q:arm[1]`, …; a leading `-` flips the loss)",
            )),
        };
    };
    let (effector, axis) = effector
        .strip_suffix(']')
        .and_then(|e| e.split_once('['))
        .and_then(|(e, k)| Some((e, k.parse::<usize>().ok().filter(|&k| k < 3)?)))
        .ok_or_else(|| {
            diffsoro::Error::invalid(
                what(),
                "expected one component of an effector's final position, e.g. `effector:tip[2]` (m; components 0, 1, 2)",
            )
        })?;
    for body in 0..scene.bodies.len() {
        if let Some(e) = scene
            .body_actuation(body)
            .effectors
            .iter()
            .find(|e| e.name == effector)
        {
            let effector = SoftLoss::Effector {
                body,
                nodes: e.point.nodes,
                weights: e.point.weights,
                axis,
            };
            return Ok((sign, effector));
        }
    }
    let known: Vec<String> = (0..scene.bodies.len())
        .flat_map(|b| {
            scene
                .body_actuation(b)
                .effectors
                .iter()
                .map(|e| e.name.clone())
        })
        .collect();
    Err(diffsoro::Error::invalid(
        what(),
        format!(
            "no soft body has an effector `{effector}` (effectors: {})",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ),
    ))
}

/// The gradient of the loss `gradient_of` after `steps` steps of `scene` from its initial
/// state with respect to the initial-state names `rigid` and the step parameters
/// `parameters`, by name. Scenes with soft bodies go through [`soft_gradient`]. Errors on a
/// loss that is not one final rigid coordinate (or, with soft bodies, an effector's), and as
/// `diff::record_rigid_trajectory` / `diff::record_trajectory`.
pub fn gradient(
    scene: &Scene,
    steps: usize,
    gradient_of: &str,
    rigid: &[RigidParameter],
    parameters: &[Parameter],
    contact_gradient: ContactGradient,
) -> diffsoro::Result<BTreeMap<String, f64>> {
    if !scene.bodies.is_empty() {
        return soft_gradient(
            scene,
            steps,
            gradient_of,
            rigid,
            parameters,
            contact_gradient,
        );
    }
    let (sign, loss) = parse_loss(scene, gradient_of)?;
    let n: usize = scene.rigid.systems.iter().map(|s| s.nv()).sum();
    let (mut q_bar, mut v_bar) = (vec![0.0; n], vec![0.0; n]);
    match loss.seed {
        RigidSeed::Configuration => q_bar[loss.index] = sign,
        _ => v_bar[loss.index] = sign,
    }
    let mut state = scene.initial_state();
    let boundary = contact_gradient.boundary(scene);
    let tape = record_rigid_trajectory(scene, &mut state, steps, parameters, boundary)?;
    let g = tape.adjoint(&q_bar, &v_bar);
    let mut out: BTreeMap<String, f64> = rigid
        .iter()
        .map(|p| {
            let from = match p.seed {
                RigidSeed::Configuration => &g.q,
                RigidSeed::Velocity => &g.v,
                RigidSeed::Input | RigidSeed::Target => &g.tau,
            };
            (p.name.clone(), from[p.index] * p.input_gain(scene))
        })
        .collect();
    for (p, value) in parameters.iter().zip(&g.parameters) {
        out.insert(p.name(scene), *value);
    }
    Ok(out)
}

/// [`gradient`] in a scene with soft bodies (and possibly rigid ones sharing their NCP): the
/// loss's cotangent on the final state, then one reverse sweep of step VJPs over the recorded
/// run (`diff::adjoint`). The rigid initial-state names read the sweep's cotangent of the
/// start state along their seeds (`diff::rigid_seeds`); the parameters (E, ν, actuators,
/// friction, a robot's `tau:`/`target:` in a mixed scene, …) its parameter gradients.
fn soft_gradient(
    scene: &Scene,
    steps: usize,
    gradient_of: &str,
    rigid: &[RigidParameter],
    parameters: &[Parameter],
    contact_gradient: ContactGradient,
) -> diffsoro::Result<BTreeMap<String, f64>> {
    let (sign, loss) = parse_soft_loss(scene, gradient_of)?;
    let mut cotangent = StateTangent::zeros(scene);
    match &loss {
        SoftLoss::Effector {
            body,
            nodes,
            weights,
            axis,
        } => {
            for (&n, &w) in nodes.iter().zip(weights) {
                cotangent.bodies[*body].positions[n][*axis] += sign * w;
            }
        }
        SoftLoss::Rigid(p) => {
            let (system, c) = p.system_coordinate(scene);
            let r = &mut cotangent.rigid[system];
            match p.seed {
                RigidSeed::Configuration => r.q[c] = sign,
                _ => r.v[c] = sign,
            }
        }
    }
    let mut state = scene.initial_state();
    let options = TapeOptions {
        boundary: contact_gradient.boundary(scene),
        ..TapeOptions::default()
    };
    let bar = crate::progress(steps as u64, "record");
    let mut tape = record_trajectory(scene, &mut state, steps, options, &mut |_| bar.inc(1))?;
    bar.finish_and_clear();
    let result = adjoint(scene, &mut tape, parameters, &cotangent)?;
    let start_q: Vec<f64> = result
        .state
        .rigid
        .iter()
        .flat_map(|r| r.q.clone())
        .collect();
    let start_v: Vec<f64> = result
        .state
        .rigid
        .iter()
        .flat_map(|r| r.v.clone())
        .collect();
    let [q, v, _] = rigid_seeds(scene, rigid);
    let mut out: BTreeMap<String, f64> = rigid
        .iter()
        .enumerate()
        .map(|(c, p)| {
            let along = |bar: &[f64], seed: &diffsoro::math::DMat| -> f64 {
                bar.iter().enumerate().map(|(i, b)| b * seed[(i, c)]).sum()
            };
            (p.name.clone(), along(&start_q, &q) + along(&start_v, &v))
        })
        .collect();
    for (p, value) in parameters.iter().zip(&result.parameters) {
        out.insert(p.name(scene), *value);
    }
    Ok(out)
}
