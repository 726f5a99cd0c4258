//! The 100 × 10 × 10 mm beam of meshes/beam_1.msh (x ∈ [0, 0.1] m) clamped at x = 0 under
//! gravity, which many derivative tests build from TOML: its scene text ([`text`]), the
//! pieces they vary (damping, cables) and its scene ([`build`]).

use std::path::Path;

use diffsoro::scene::{Scene, SceneFile};

/// Rayleigh damping α = 0.5 /s, β = 0.01 s (soft-body keys for [`text`]).
pub const DAMPED: &str = "rayleigh_mass = 0.5\nrayleigh_stiffness = 0.01";

/// An off-axis cable `c` along the top, pulled with 0.3 N (its tangent K_a is in the step's
/// matrix).
pub const CABLE_C: &str = r#"
[[soft_body.cable]]
name = "c"
points = [[0.1, 0.0, 0.004], [0.05, 0.0, 0.004], [0.0, 0.0, 0.004]]
force = 0.3
"#;

/// The scene TOML of the beam: dt = 0.01 s, one step, gravity −9.81 m/s² along z; soft body
/// `beam` of law `law`, E = 2e5 Pa, ν = 0.35, ρ = 1000 kg/m³, clamped by its group `clamp`,
/// with the soft-body keys `body_keys` (TOML lines: mass kind, damping) and then `extra`
/// (TOML tables of the body: cables, regions).
pub fn text(law: &str, body_keys: &str, extra: &str) -> String {
    format!(
        r#"
[simulation]
dt = 0.01
steps = 1
gravity = [0.0, 0.0, -9.81]
[[soft_body]]
name = "beam"
mesh = "beam_1.msh"
law = "{law}"
young_modulus = 2.0e5
poisson_ratio = 0.35
density = 1000.0
fixed_group = "clamp"
{body_keys}
{extra}
"#
    )
}

/// The scene of the beam's `text` with the overrides `sets` (as `--set` gives them), its mesh
/// read from meshes/ (panics on any error).
pub fn build(text: &str, sets: &[String]) -> Scene {
    let file = SceneFile::parse("beam.toml", text, sets).unwrap();
    Scene::build(&file, &Path::new(env!("CARGO_MANIFEST_DIR")).join("meshes")).unwrap()
}
