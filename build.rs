//! Build script: sets `cfg(chromium)` when a Chromium is on `PATH` at build time, so that
//! `tests/view.rs` runs its headless-browser test there and marks it `#[ignore]` (with the
//! reason) elsewhere. After installing Chromium, `touch build.rs` (or run the test with
//! `--ignored`).

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
