//! Staging folders left behind by killed runs. A run stages its frames in
//! `OUT/.diffsoro-partial-<pid>/` and removes that folder when it finishes or fails; a run
//! killed outright (SIGKILL, power loss) cannot, so the next run into the same `OUT` removes
//! the staging folders whose process is gone. Liveness is read from `/proc/<pid>` on Linux;
//! elsewhere nothing is removed (a folder of a live run must never be taken from under it).

use std::path::{Path, PathBuf};

/// The name of a staging folder is this prefix followed by the decimal pid of its run.
pub(super) const STAGING_PREFIX: &str = ".diffsoro-partial-";

/// The staging folder's name for the process `pid`.
pub(super) fn staging_name(pid: u32) -> String {
    format!("{STAGING_PREFIX}{pid}")
}

/// Removes the staging folders in `dir` whose process is not alive and returns them.
/// Best effort: an unreadable `dir` or a folder that cannot be removed is left as it is (it
/// costs space, not correctness). Only folders named exactly `.diffsoro-partial-<digits>` are
/// considered; a pid whose liveness cannot be decided keeps its folder.
pub(super) fn remove_stale_staging(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(staging_pid) else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && process_is_gone(pid) && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed.push(entry.path());
        }
    }
    removed
}

/// The pid in a staging folder's name, or `None` for any other name.
fn staging_pid(name: &str) -> Option<u32> {
    let digits = name.strip_prefix(STAGING_PREFIX)?;
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
