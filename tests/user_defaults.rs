//! Defaults that follow the user: a body whose size suggests a unit mistake is warned about
//! (with the `scale` that would fix it), and the built-in demo runs from any folder with no
//! clone beside it, writing only under the working folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

// Scratch folders removed when dropped, also when a test fails (`cli_support::scratch`).
use cli_support::scratch;

use crate::cli_support;

fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// The beam scene (100 mm long) with its mesh read at `scale`.
fn beam_scene(dir: &Path, scale: f64) -> PathBuf {
    let text = std::fs::read_to_string(root().join("scenes/beam.toml"))
        .unwrap()
        .replace(
            "../meshes/beam_2.msh",
            &root().join("meshes/beam_2.msh").display().to_string(),
        )
        .replace(
            "fixed_group = \"clamp\"",
            &format!("fixed_group = \"clamp\"\nscale = {scale:?}"),
        )
        // The effector is in world coordinates: keep it inside the scaled beam.
        .replace(
            "point = [0.1, 0.0, 0.0]",
            &format!("point = [{:?}, 0.0, 0.0]", 0.1 * scale),
        );
    let path = dir.join(format!("beam_{scale}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_body_larger_than_10_m_or_smaller_than_1_mm_is_warned_about() {
    let dir = scratch("size");
    // (scale, expected warning): the beam's largest side is 0.1 m × scale.
    for (scale, expected) in [
        (
            1000.0,
            Some(
                "100 m across, larger than 10 m; is its mesh in millimetres? did you mean scale = 0.001?",
            ),
        ),
        (
            0.001,
            Some(
                "0.0001 m across, smaller than 1 mm; is its mesh already in metres? did you mean scale = 1",
            ),
        ),
        (1.0, None),
        (50.0, None),
    ] {
        let scene = beam_scene(&dir, scale);
        let out = run_in(&dir, &["simulate", scene.to_str().unwrap(), "--steps", "0"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let err = String::from_utf8_lossy(&out.stderr);
        match expected {
            Some(text) => {
                let warning: Vec<_> = err.lines().filter(|l| l.contains("across")).collect();
                assert_eq!(warning.len(), 1, "{err}");
                assert!(warning[0].starts_with("warning: soft_body.beam: "), "{err}");
                assert!(warning[0].contains(text), "{err}");
            }
            None => assert!(!err.contains("across"), "scale {scale}: {err}"),
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn size_warning_thresholds() {
    use diffsoro::scene::{LARGEST_PLAUSIBLE_SIZE, SMALLEST_PLAUSIBLE_SIZE, size_warning};
    assert_eq!(
        (LARGEST_PLAUSIBLE_SIZE, SMALLEST_PLAUSIBLE_SIZE),
        (10.0, 1e-3)
    );
    assert!(size_warning("b", 10.0,).is_none());
    assert!(size_warning("b", 10.000001).is_some());
    assert!(size_warning("b", 1e-3).is_none());
    assert!(size_warning("b", 0.999e-3).is_some());
}

#[test]
fn the_demo_runs_from_an_empty_folder_and_writes_only_there() {
    // An installed binary run far from the clone: a copy of the binary in one empty folder,
    // run from another.
    let bin_dir = scratch("demo-bin");
    let work = scratch("demo-work");
    let bin = bin_dir.join("diffsoro");
    std::fs::copy(env!("CARGO_BIN_EXE_diffsoro"), &bin).unwrap();
    // Its own temporary folder, holding the unpacked folder of an earlier demo whose process
    // is gone (killed before it could remove it) and one of a live process (this one).
    let tmp = scratch("demo-tmp");
    let mut gone = Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    let stale = tmp.join(format!("diffsoro-demo-{gone_pid}"));
    let live = tmp.join(format!("diffsoro-demo-{}", std::process::id()));
    for folder in [&stale, &live] {
        std::fs::create_dir_all(folder.join("scenes")).unwrap();
    }
    let out = Command::new(&bin)
        .arg("demo")
        .current_dir(&work)
        .env("TMPDIR", &*tmp)
        .output()
        .unwrap();
    // The stale folder is gone, the live one kept, and the run left none of its own.
    assert!(!stale.exists() && live.exists());
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, [live.file_name().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // It says where its output went, and it is there: 100 frames, the index, the final state.
    assert_eq!(report["output"], "out/demo");
    assert_eq!(report["steps"], 100);
    let demo = work.join("out/demo");
    assert!(demo.join("final.json").is_file() && demo.join("trunk.pvd").is_file());
    let frames = std::fs::read_dir(&demo)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".vtu")
        })
        .count();
    assert_eq!(frames, 101, "frames 0..=100");
    // The built-in scene is the clone's Trunk: the same 704 nodes.
    let final_state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(demo.join("final.json")).unwrap()).unwrap();
    assert_eq!(
        final_state["soft_bodies"][0]["positions"]
            .as_array()
            .unwrap()
            .len(),
        704
    );
    // Nothing mentions the clone's folder, and the working folder holds only `out/`.
    let clone = root().display().to_string();
    assert!(!String::from_utf8_lossy(&out.stdout).contains(&clone));
    assert!(!err.contains(&clone), "{err}");
    let entries: Vec<_> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, ["out"]);
    // The three scratch folders are removed as their guards drop.
}
