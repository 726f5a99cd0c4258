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
/// m as little-endian `Float32` base64, soft bodies coloured by displacement magnitude in m),
/// a legend, a colour bar, a time slider and orbit controls. Opening the page with
/// `#frame=last` (or `#frame=N`) shows that frame first.
pub fn write_page(run: &RunFrames) -> String {
    let title = run.dir.display().to_string();
    let u_max = run
        .bodies
        .iter()
        .flat_map(|b| b.displacement.iter().flatten())
        .fold(0.0f32, |m, &u| m.max(u));
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
            })
        })
        .collect();
    let data = json!({
        "times": run.times,
        "displacementMax": u_max,
        "cameraDirection": camera_direction(run),
        "bodies": bodies,
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

/// The unit vector from the centre of the first frame towards the camera: horizontal along
/// the axis (x or z) in which the bodies are thinnest, so their longest side faces the
/// viewer, raised by about 15° so that +y stays up on screen.
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
    let (elevation, horizontal) = (0.27, (1.0f64 - 0.27 * 0.27).sqrt());
    if hi[0] - lo[0] <= hi[2] - lo[2] {
        [horizontal, elevation, 0.0]
    } else {
        [0.0, elevation, horizontal]
    }
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
            }],
        };
        let html = write_page(&run);
        assert_eq!(html.matches("</script>").count(), 6);
        assert!(html.contains("&lt;/script&gt;&lt;b&gt; (rigid)"));
        // Triangle (0, 1, 2) as little-endian u32: 12 bytes.
        assert!(html.contains(&BASE64.encode([0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0])));
    }
}
