//! Folders left behind by killed runs. A run stages its frames in
//! `OUT/.diffsoro-partial-<pid>/` and removes that folder when it finishes or fails; a run
//! killed outright (SIGKILL, Ctrl-C, power loss) cannot, so the next run into the same `OUT`
//! removes the staging folders whose process is gone. The built-in demo does the same with the
//! folder it unpacks its scene into (`diffsoro-demo-<pid>` in the temporary folder). Liveness is
//! read from `/proc/<pid>` on Linux; elsewhere nothing is removed (a folder of a live run must
//! never be taken from under it).

use std::path::{Path, PathBuf};

/// The name of a staging folder is this prefix followed by the decimal pid of its run.
pub(in crate::scene) const STAGING_PREFIX: &str = ".diffsoro-partial-";

/// The staging folder's name for the process `pid`.
pub(in crate::scene) fn staging_name(pid: u32) -> String {
    format!("{STAGING_PREFIX}{pid}")
}

/// Removes the staging folders in `dir` whose process is not alive and returns them
/// ([`remove_stale_folders`] with the staging prefix).
pub(in crate::scene) fn remove_stale_staging(dir: &Path) -> Vec<PathBuf> {
    remove_stale_folders(dir, STAGING_PREFIX)
}

/// Removes the folders in `dir` named `prefix` followed by the decimal pid of a process that
/// is not alive, and returns them. Best effort: an unreadable `dir` or a folder that cannot be
/// removed is left as it is (it costs space, not correctness). Only names that are exactly the
/// prefix and digits are considered; a pid whose liveness cannot be decided keeps its folder.
pub fn remove_stale_folders(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| folder_pid(n, prefix)) else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && process_is_gone(pid) && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed.push(entry.path());
        }
    }
    removed
}

/// The pid in a folder's name made of `prefix` and digits, or `None` for any other name.
fn folder_pid(name: &str, prefix: &str) -> Option<u32> {
    let digits = name.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// True when the process `pid` certainly does not exist: on Linux `/proc` is mounted (it
/// shows this process) and has no entry for `pid`. False wherever that cannot be told.
fn process_is_gone(pid: u32) -> bool {
    if !cfg!(target_os = "linux") {
        return false;
    }
    let proc = Path::new("/proc");
    proc.join(std::process::id().to_string()).exists() && !proc.join(pid.to_string()).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn staging_pid(name: &str) -> Option<u32> {
        folder_pid(name, STAGING_PREFIX)
    }

    #[test]
    fn only_exact_staging_names_carry_a_pid() {
        assert_eq!(staging_pid(".diffsoro-partial-123"), Some(123));
        assert_eq!(staging_pid(&staging_name(42)), Some(42));
        assert_eq!(staging_pid(".diffsoro-partial-"), None);
        assert_eq!(staging_pid(".diffsoro-partial-12x"), None);
        assert_eq!(staging_pid(".diffsoro-partial--1"), None);
        assert_eq!(staging_pid("diffsoro-partial-12"), None);
        assert_eq!(staging_pid(".diffsoro-partial-99999999999"), None); // beyond u32
    }

    #[test]
    fn this_process_is_alive() {
        assert!(!process_is_gone(std::process::id()));
    }
}
