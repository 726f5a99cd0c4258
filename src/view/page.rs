//! The viewer's HTML page: the run's surfaces as base64 arrays in a JSON block, three.js and
//! the viewer script (`page.js`) inlined, so the one file opens in any browser offline.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::json;

use super::frames::RunFrames;

/// three.js r171 (MIT), vendored from the npm package; see `vendor/README.md`.
const THREE_CORE: &str = include_str!("vendor/three.core.min.js");
/// three.js's WebGL renderer module; it imports the core as `./three.core.min.js`.
const THREE_MODULE: &str = include_str!("vendor/three.module.min.js");
/// three.js's orbit controls (examples/jsm/controls), importing `three`.
const THREE_ORBIT: &str = include_str!("vendor/OrbitControls.js");
/// The page around the data: `{{NAME}}` placeholders filled by [`write_page`].
const TEMPLATE: &str = include_str!("page.html");
/// The viewer script (an ES module importing `three` and the orbit controls).
const VIEW_JS: &str = include_str!("page.js");

/// The HTML of the viewer page of `run`: every body's surface at every frame (positions in
/// m as little-endian `Float32` base64, soft bodies coloured by displacement magnitude in m
/// or von Mises stress in Pa), the obstacles, the effector paths, a control run's targets and
/// each frame's contact forces (N), a legend, a colour bar, a time slider and orbit controls.
/// Opening the page with `#frame=last` (or `#frame=N`) shows that frame first.
pub fn write_page(run: &RunFrames) -> String {
    let title = run.dir.display().to_string();
    let u_max = run
        .bodies
        .iter()
        .flat_map(|b| b.displacement.iter().flatten())
        .fold(0.0f32, |m, &u| m.max(u));
    let stress_max = run
        .bodies
        .iter()
        .flat_map(|b| b.stress.iter().flatten())
        .fold(0.0f32, |m, &s| m.max(s));
    let bodies: Vec<_> = run
        .bodies
        .iter()
        .map(|b| {
            json!({
                "name": b.name,
                "soft": b.soft,
                "triangles": base64_of(b.triangles.iter().flatten().map(|i| i.to_le_bytes())),
                "positions": b.positions.iter().map(|frame| {
                    base64_of(frame.iter().flatten().map(|x| x.to_le_bytes()))
                }).collect::<Vec<_>>(),
                "displacement": b.displacement.iter().map(|frame| {
                    base64_of(frame.iter().map(|u| u.to_le_bytes()))
                }).collect::<Vec<_>>(),
                "stress": b.stress.iter().map(|frame| {
                    base64_of(frame.iter().map(|u| u.to_le_bytes()))
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    let effectors: Vec<_> = run
        .effectors
        .iter()
        .map(|e| json!({"name": e.name, "body": e.body, "path": e.positions}))
        .collect();
    // Per frame, every soft body's contact forces (N) at their nodes (m).
    let contacts: Vec<Vec<[f64; 6]>> = (0..run.times.len())
        .map(|k| {
            run.bodies
                .iter()
                .filter_map(|b| b.contacts.get(k))
                .flatten()
                .copied()
                .collect()
        })
        .collect();
    let force_max = contacts
        .iter()
        .flatten()
        .map(|c| (c[3] * c[3] + c[4] * c[4] + c[5] * c[5]).sqrt())
        .fold(0.0f64, f64::max);
    let data = json!({
        "times": run.times,
        "displacementMax": u_max,
        "stressMax": stress_max,
        "cameraDirection": camera_direction(run),
        "cameraUp": up(run),
        "bodies": bodies,
        "obstacles": run.obstacles,
        "effectors": effectors,
        "targets": run.targets,
        "contacts": if force_max > 0.0 { contacts } else { Vec::new() },
        "contactForceMax": force_max,
    });
    let legend: String = run
        .bodies
        .iter()
        .map(|b| {
            let (swatch, kind) = if b.soft {
                ("background:linear-gradient(#fde725,#440154)", "soft")
            } else {
                ("background:#9a9a9a", "rigid")
            };
            format!(
                "<div><span class=\"swatch\" style=\"{swatch}\"></span>{} ({kind})</div>",
                escape_html(&b.name)
            )
        })
        .chain(extra_legend(run))
        .collect();
    TEMPLATE
        .replace("{{TITLE}}", &escape_html(&title))
        .replace("{{LEGEND}}", &legend)
        .replace("{{UMAX}}", &format!("{u_max:.3e}"))
        .replace("{{UMID}}", &format!("{:.3e}", u_max / 2.0))
        .replace("{{THREE_CORE}}", THREE_CORE)
        .replace(
            "{{THREE_MODULE}}",
            &THREE_MODULE.replace("\"./three.core.min.js\"", "\"three/core\""),
        )
        .replace("{{THREE_ORBIT}}", THREE_ORBIT)
        .replace("{{VIEW_JS}}", VIEW_JS)
        // Last: the data may hold any text; `<\/` keeps it inside its <script> element.
        .replace("{{DATA}}", &data.to_string().replace("</", "<\\/"))
}

/// The legend rows of what is drawn beside the bodies: the obstacles, each effector's path
/// and a control run's target. The colours are page.js's.
fn extra_legend(run: &RunFrames) -> Vec<String> {
    let row = |colour: &str, text: String| {
        format!(
            "<div><span class=\"swatch\" style=\"background:{colour}\"></span>{}</div>",
            escape_html(&text)
        )
    };
    let mut rows = Vec::new();
    if !run.obstacles.is_empty() {
        rows.push(row(
            OBSTACLE_COLOUR,
            format!("obstacles ({})", run.obstacles.len()),
        ));
    }
    for e in &run.effectors {
        rows.push(row(PATH_COLOUR, format!("{} path ({})", e.name, e.body)));
    }
    if !run.targets.is_empty() {
        rows.push(row(TARGET_COLOUR, "control target".to_string()));
    }
    let touching = run.bodies.iter().flat_map(|b| b.contacts.iter().flatten());
    if let Some(max) = touching
        .map(|c| (c[3] * c[3] + c[4] * c[4] + c[5] * c[5]).sqrt())
        .reduce(f64::max)
    {
        rows.push(row(
            FORCE_COLOUR,
            format!("contact forces (longest arrow {max:.3e} N)"),
        ));
    }
    rows
}

/// The obstacles' colour (page.js `OBSTACLE`).
const OBSTACLE_COLOUR: &str = "#c8a070";
/// The effector paths' colour (page.js `PATH`).
const PATH_COLOUR: &str = "#e0201c";
/// The contact-force arrows' colour (page.js `FORCE`).
const FORCE_COLOUR: &str = "#1f5fd0";
/// The control targets' colour (page.js `TARGET`).
const TARGET_COLOUR: &str = "#10a040";

/// The page's up direction: −gravity, normalised (+y when the run does not record gravity or
/// it is zero).
fn up(run: &RunFrames) -> [f64; 3] {
    let g = run.gravity.unwrap_or([0.0; 3]);
    let norm = g.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        g.map(|x| -x / norm)
    } else {
        [0.0, 1.0, 0.0]
    }
}

/// The unit vector from the centre of the first frame towards the camera: horizontal (⟂ the
/// page's up, [`up`]) along the one of the two world axes most perpendicular to up in which
/// the bodies are thinnest, so their longest side faces the viewer, raised by about 15°
/// (0.27 of up) so that up stays up on screen. With gravity −y: along x or z.
fn camera_direction(run: &RunFrames) -> [f64; 3] {
    let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for p in run
        .bodies
        .iter()
        .filter_map(|b| b.positions.first())
        .flatten()
    {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let up = up(run);
    // The two axes most perpendicular to up (stable order: x before y before z).
    let mut axes = [0, 1, 2];
    axes.sort_by(|&a, &b| up[a].abs().total_cmp(&up[b].abs()));
    let (a, b) = (axes[0].min(axes[1]), axes[0].max(axes[1]));
    let axis = if hi[a] - lo[a] <= hi[b] - lo[b] { a } else { b };
    // The axis made horizontal, then raised.
    let mut h = [0.0; 3];
    h[axis] = 1.0;
    let along = up[axis];
    let h = [0, 1, 2].map(|k| h[k] - along * up[k]);
    let norm = h.iter().map(|x| x * x).sum::<f64>().sqrt();
    let (elevation, horizontal) = (0.27, (1.0f64 - 0.27 * 0.27).sqrt());
    [0, 1, 2].map(|k| horizontal * h[k] / norm + elevation * up[k])
}

/// The base64 of the concatenated byte groups.
fn base64_of<const N: usize>(bytes: impl Iterator<Item = [u8; N]>) -> String {
    let flat: Vec<u8> = bytes.flatten().collect();
    BASE64.encode(flat)
}

/// `text` with `&`, `<`, `>` and `"` escaped for HTML text and attributes.
fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inlined_scripts_cannot_close_their_element() {
        for (name, text) in [
            ("three.core", THREE_CORE),
            ("three.module", THREE_MODULE),
            ("OrbitControls", THREE_ORBIT),
            ("page.js", VIEW_JS),
        ] {
            assert!(!text.to_ascii_lowercase().contains("</script"), "{name}");
            assert!(!text.contains("<!--"), "{name}");
        }
        // The renderer module imports its core by the one path the page rewrites.
        assert_eq!(THREE_MODULE.matches("\"./three.core.min.js\"").count(), 2);
    }

    #[test]
    fn data_is_kept_inside_its_script_element() {
        let run = RunFrames {
            dir: "out/<x>".into(),
            times: vec![0.0],
            bodies: vec![super::super::BodyFrames {
                name: "</script><b>".into(),
                soft: false,
                triangles: vec![[0, 1, 2]],
                positions: vec![vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]],
                displacement: Vec::new(),
                stress: Vec::new(),
                contacts: Vec::new(),
            }],
            gravity: None,
            obstacles: Vec::new(),
            effectors: Vec::new(),
            targets: Vec::new(),
        };
        let html = write_page(&run);
        assert_eq!(html.matches("</script>").count(), 6);
        assert!(html.contains("&lt;/script&gt;&lt;b&gt; (rigid)"));
        // Triangle (0, 1, 2) as little-endian u32: 12 bytes.
        assert!(html.contains(&BASE64.encode([0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0])));
    }
}
