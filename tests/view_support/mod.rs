//! Shared helpers of the viewer's tests (`tests/view.rs`, `tests/view_context.rs`): the data
//! a page embeds, headless-Chromium screenshots, and the page's camera rebuilt from its
//! description (docs/view.md).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value;

pub fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The run data the page embeds (the JSON of its `run-data` script element).
pub fn embedded_run(html: &str) -> Value {
    let start_tag = "<script type=\"application/json\" id=\"run-data\">";
    let start = html.find(start_tag).expect("run-data element") + start_tag.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

/// The little-endian `f32` values of base64 `text`.
pub fn floats(text: &Value) -> Vec<f32> {
    BASE64
        .decode(text.as_str().unwrap())
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// A Chromium on `PATH` (`chromium` or `chromium-browser`).
pub fn chromium() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())
        .expect("no chromium on PATH: apt-get install chromium")
}

/// An RGB screenshot: width, height, pixels row by row.
pub struct Shot {
    pub width: usize,
    pub height: usize,
    pub rgb: Vec<[u8; 3]>,
}

/// Opens `page#fragment` in headless Chromium (software WebGL) at 800×600 and returns the
/// screenshot and the console messages Chromium logged, apart from its GL driver's
/// performance notes (the `ReadPixels` the screenshot costs).
pub fn screenshot(page: &Path, fragment: &str, dir: &Path) -> (Shot, Vec<String>) {
    let png_path = dir.join(format!("{}.png", fragment.replace(['=', '#'], "_")));
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--disable-gpu",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--no-sandbox",
            "--no-first-run",
            "--window-size=800,600",
            "--virtual-time-budget=5000",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", png_path.display()))
        .arg(format!("file://{}#{fragment}", page.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed().as_secs() > 120 {
            let _ = child.kill();
            panic!("chromium took more than 120 s on {}", page.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    let console: Vec<String> = log
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .filter(|l| !l.contains("GL Driver Message (OpenGL, Performance"))
        .map(str::to_string)
        .collect();
    let mut decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png_path).unwrap_or_else(|e| panic!("no screenshot ({e}): {log}")),
    ));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let (width, height) = (info.width as usize, info.height as usize);
    let rgb = (0..width * height)
        .map(|i| {
            let (row, col) = (i / width, i % width);
            let at = row * info.line_size + col * channels;
            if channels >= 3 {
                [buf[at], buf[at + 1], buf[at + 2]]
            } else {
                [buf[at]; 3]
            }
        })
        .collect();
    (Shot { width, height, rgb }, console)
}

/// The page's 3D view: the window less the 180-pixel side panel (page.html).
pub const CANVAS_WIDTH: usize = 800 - 180;
/// The page's background (page.js: `0xf4f4f4`).
pub const BACKGROUND: [u8; 3] = [0xf4; 3];

/// The pixels of the 3D view that are not background: (count, [left, top, right, bottom],
/// centroid row).
pub fn coloured_region(shot: &Shot) -> (usize, [usize; 4], f64) {
    let (mut n, mut bbox, mut rows) = (0, [usize::MAX, usize::MAX, 0, 0], 0.0);
    for row in 0..shot.height {
        for col in 0..CANVAS_WIDTH.min(shot.width) {
            let p = shot.rgb[row * shot.width + col];
            if (0..3).any(|k| p[k].abs_diff(BACKGROUND[k]) > 40) {
                n += 1;
                bbox = [
                    bbox[0].min(col),
                    bbox[1].min(row),
                    bbox[2].max(col),
                    bbox[3].max(row),
                ];
                rows += row as f64;
            }
        }
    }
    (n, bbox, rows / n.max(1) as f64)
}

/// The page's camera (page.js, `camera_direction` in src/view/page.rs), rebuilt from its
/// description: it looks at the centre of the first frame's bounding box, from the
/// horizontal axis (x or z) in which the body is thinnest, raised by asin(0.27), +y up,
/// vertical field of view 35°, at 1.15 r / sin(17.5°) from the centre (r: half the box's
/// diagonal). Returns the pixel (column, row) of a point, for a `width`×`height` view.
pub fn camera(first: &[[f64; 3]], width: f64, height: f64) -> impl Fn([f64; 3]) -> [f64; 2] {
    camera_up(first, 1, width, height)
}

/// [`camera`] for a scene whose gravity is along −(world axis `up`): the camera looks from
/// the other two axes' thinner one (the first on a tie), raised by asin(0.27) towards `up`,
/// which stays up on screen.
pub fn camera_up(
    first: &[[f64; 3]],
    up_axis: usize,
    width: f64,
    height: f64,
) -> impl Fn([f64; 3]) -> [f64; 2] + use<> {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in first {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let centre: [f64; 3] = [0, 1, 2].map(|k| (lo[k] + hi[k]) / 2.0);
    let r = (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt() / 2.0;
    let h = (1.0f64 - 0.27 * 0.27).sqrt();
    let others: Vec<usize> = (0..3).filter(|&k| k != up_axis).collect();
    let side = if hi[others[0]] - lo[others[0]] <= hi[others[1]] - lo[others[1]] {
        others[0]
    } else {
        others[1]
    };
    let mut dir = [0.0; 3];
    dir[side] = h;
    dir[up_axis] = 0.27;
    let mut world_up = [0.0; 3];
    world_up[up_axis] = 1.0;
    let half_fov = 17.5f64.to_radians();
    let distance = 1.15 * r / half_fov.sin();
    let eye: [f64; 3] = [0, 1, 2].map(|k| centre[k] + distance * dir[k]);
    let forward = dir.map(|x| -x);
    // right = forward × up, up' = right × forward (a right-handed camera).
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let right = cross(forward, world_up);
    let norm = right.iter().map(|x| x * x).sum::<f64>().sqrt();
    let right = right.map(|x| x / norm);
    let up = cross(right, forward);
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    move |p: [f64; 3]| {
        let d: [f64; 3] = [0, 1, 2].map(|k| p[k] - eye[k]);
        let depth = dot(d, forward);
        let t = half_fov.tan();
        let x = dot(d, right) / (depth * t * width / height);
        let y = dot(d, up) / (depth * t);
        [(x + 1.0) / 2.0 * width, (1.0 - y) / 2.0 * height]
    }
}

/// The pixel bounding box [left, top, right, bottom] of `points` seen by `project`.
pub fn projected_box(points: &[[f64; 3]], project: &impl Fn([f64; 3]) -> [f64; 2]) -> [f64; 4] {
    points.iter().fold(
        [
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ],
        |b, &p| {
            let [x, y] = project(p);
            [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)]
        },
    )
}
