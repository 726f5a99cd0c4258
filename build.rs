//! Build script: sets `cfg(chromium)` when a Chromium is on `PATH` at build time, so that
//! the viewer's tests (`tests/view.rs`, `tests/view_context.rs`, `tests/view_stress.rs`) run
//! their headless-browser tests there and mark them `#[ignore]` (with the reason) elsewhere.
//! After installing Chromium, `touch build.rs` (or run the tests with `--ignored`).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(chromium)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=PATH");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).any(|dir| {
        ["chromium", "chromium-browser"]
            .iter()
            .any(|n| dir.join(n).is_file())
    });
    if found {
        println!("cargo::rustc-cfg=chromium");
    }
}
