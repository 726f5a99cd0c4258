//! The `--out` folder across runs: staging folders of killed runs are removed by the next run,
//! and a rerun replaces the previous run's frames as one unit (no stale frames beside a shorter
//! `.pvd`), while files that are not diffsoro's are left alone.

use std::path::Path;
use std::process::Command;

use crate::cli_support::scratch;

/// Runs `diffsoro simulate SCENE --steps STEPS --out OUT` and asserts it succeeded.
fn simulate(scene: &str, steps: usize, out: &Path) {
    let run = Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .args(["simulate", scene, "--steps", &steps.to_string(), "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// A pid with no process: the highest free one below the kernel's `pid_max` (pids are handed
/// out upwards from low numbers and wrap around only at `pid_max`, so one near the top is
/// free and stays free for the few seconds of the test).
fn dead_pid() -> u32 {
    let max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (2..max)
        .rev()
        .find(|pid| !Path::new(&format!("/proc/{pid}")).exists())
        .unwrap()
}

/// The names of the entries of `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// A staging folder of a dead process is removed; one of a live process (this test's) stays,
/// with its content.
#[cfg(target_os = "linux")]
#[test]
fn staging_folders_of_dead_runs_are_removed() {
    let out = scratch("stale-staging");
    let dead = out.join(format!(".diffsoro-partial-{}", dead_pid()));
    let live = out.join(format!(".diffsoro-partial-{}", std::process::id()));
    for dir in [&dead, &live] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("beam_000001.vtu"), b"partial frame").unwrap();
    }
    simulate("scenes/beam.toml", 2, &out);
    assert!(!dead.exists(), "{} is still there", dead.display());
    assert_eq!(
        std::fs::read(live.join("beam_000001.vtu")).unwrap(),
        b"partial frame"
    );
}

/// The frame files a `.pvd` index lists, in order (its `file="…"` attributes).
fn pvd_files(pvd: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(pvd).unwrap();
    text.split("file=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_string())
        .collect()
}

/// A run of 20 steps, then a run of 5 into the same folder: the folder holds the second run's
/// 6 frames (steps 0 to 5, one per step plus the initial state), its `.pvd`, `final.json`
/// and `summary.svg`, and the files that are not the beam's frames (a note, another body's frame, a 5-digit
/// name diffsoro never writes), untouched.
#[test]
fn a_rerun_replaces_the_earlier_frames() {
    let out = scratch("rerun");
    simulate("scenes/beam.toml", 20, &out);
    assert_eq!(pvd_files(&out.join("beam.pvd")).len(), 21);
    let user_files = ["notes.txt", "other_000007.vtu", "beam_00007.vtu"];
    for name in user_files {
        std::fs::write(out.join(name), name).unwrap();
    }
    simulate("scenes/beam.toml", 5, &out);
    let frames: Vec<String> = (0..=5).map(|s| format!("beam_{s:06}.vtu")).collect();
    assert_eq!(pvd_files(&out.join("beam.pvd")), frames);
    let mut expected: Vec<String> = frames.clone();
    expected.extend(["beam.pvd", "final.json"].map(String::from));
    // The beam has an effector (its `tip`): the run's summary, replaced like the rest.
    let beam = diffsoro::scene::Scene::load(Path::new("scenes/beam.toml"), &[]).unwrap();
    if !beam.body_actuation(0).effectors.is_empty() {
        expected.push("summary.svg".into());
    }
    expected.extend(user_files.map(String::from));
    expected.sort();
    assert_eq!(listing(&out), expected);
    for name in user_files {
        assert_eq!(std::fs::read_to_string(out.join(name)).unwrap(), name);
    }
}

/// `simulate --static --out` writes the rest state and then the equilibrium, both at step 0:
/// one frame, the equilibrium (its displacement field is not zero), listed once.
#[test]
fn a_static_solve_writes_its_equilibrium_as_one_frame() {
    let out = scratch("static");
    let run = Command::new(env!("CARGO_BIN_EXE_diffsoro"))
        .args(["simulate", "scenes/beam.toml", "--static", "--out"])
        .arg(&*out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(pvd_files(&out.join("beam.pvd")), ["beam_000000.vtu"]);
    let frame = diffsoro::mesh::read_mesh(out.join("beam_000000.vtu")).unwrap();
    let rest = diffsoro::scene::Scene::load(Path::new("scenes/beam.toml"), &[]).unwrap();
    let moved = frame
        .positions()
        .iter()
        .zip(rest.bodies[0].rest_positions())
        .map(|(x, x0)| (x - x0).norm())
        .fold(0.0, f64::max);
    assert!(moved > 1e-4, "the frame is the rest state: {moved} m");
}
