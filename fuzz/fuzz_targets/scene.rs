//! Fuzz target: a scene file's TOML text must be parsed (`SceneFile::parse`) and built
//! (`Scene::build`) into `Ok` or `Err`, never a panic, hang or unbounded allocation.
//!
//! The scene's relative paths start at a base folder made once per fuzzing process in the
//! system's temporary folder, holding small copies of the project's own fixtures: `cube.msh`
//! (a Gmsh 2.2 cube), `beam.msh` (the coarse beam), `obstacle.stl` and `pendulum.urdf`.
//! A scene is built only when every string in it is a plain relative path (no root, drive
//! or `..`), so the target reads no file beyond that folder (no `/dev/zero`, no home folder).
#![no_main]

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use diffsoro::scene::{Scene, SceneFile};
use libfuzzer_sys::fuzz_target;

/// The base folder and its fixtures (name, content).
fn base_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("diffsoro-fuzz-scene-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("the fuzz base folder");
        let fixtures: [(&str, &[u8]); 4] = [
            (
                "cube.msh",
                include_bytes!("../../tests/data/cube_v22_ascii.msh"),
            ),
            ("beam.msh", include_bytes!("../../meshes/beam_1.msh")),
            (
                "obstacle.stl",
                include_bytes!("../../meshes/finger_obstacle.stl"),
            ),
            (
                "pendulum.urdf",
                include_bytes!("../../urdf/double_pendulum.urdf"),
            ),
        ];
        for (name, bytes) in fixtures {
            std::fs::write(dir.join(name), bytes).expect("a fuzz fixture");
        }
        dir
    })
}

/// True when every string value in `value` (at any depth) is a plain relative path.
fn only_plain_relative_paths(value: &toml::Value) -> bool {
    match value {
        toml::Value::String(s) => Path::new(s)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir)),
        toml::Value::Array(items) => items.iter().all(only_plain_relative_paths),
        toml::Value::Table(table) => table.values().all(only_plain_relative_paths),
        _ => true,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = SceneFile::parse("fuzz.toml", text, &[]) else {
        return;
    };
    // Parsed, so it is valid TOML.
    let Ok(value) = text.parse::<toml::Table>() else {
        return;
    };
    if only_plain_relative_paths(&toml::Value::Table(value)) {
        let _ = Scene::build(&file, base_dir());
    }
});
