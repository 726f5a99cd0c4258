//! `simulate --gradient-of [-]NAME --sensitivity NAMES [--contact-gradient …]`: the gradient of
//! one coordinate of the final rigid state (the loss ℓ, its sign flipped by a leading `-`)
//! with respect to the `--sensitivity` names, by one reverse sweep over the run
//! (`diff::record_rigid_trajectory`, `RigidTape::adjoint`). The reverse sweep is where the
//! contact-mode boundary can be chosen per loss (`contact::BoundaryGradient`, paper 003
//! §IV-D), which forward tangents cannot do. No physics here.

use std::collections::BTreeMap;

use diffsoro::contact::BoundaryGradient;
use diffsoro::diff::{
    Parameter, RigidParameter, RigidSeed, parse_rigid_parameter, record_rigid_trajectory,
};
use diffsoro::scene::{Scene, mode_tolerance};

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
                tied_velocity: mode_tolerance(scene.contact.settings.tolerance).velocity,
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

/// The gradient of the loss `gradient_of` after `steps` steps of `scene` from its initial
/// state with respect to the initial-state names `rigid` and the step parameters
/// `parameters`, by name. Errors on a scene with soft bodies, a loss that is not one final
/// rigid coordinate, and as `diff::record_rigid_trajectory`.
pub fn rigid_gradient(
    scene: &Scene,
    steps: usize,
    gradient_of: &str,
    rigid: &[RigidParameter],
    parameters: &[Parameter],
    contact_gradient: ContactGradient,
) -> diffsoro::Result<BTreeMap<String, f64>> {
    if !scene.bodies.is_empty() {
        return Err(diffsoro::Error::invalid(
            "--gradient-of",
            "is computed for scenes of rigid bodies and robots only (for soft bodies, the library's diff::adjoint with Recorder::with_boundary)",
        ));
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
