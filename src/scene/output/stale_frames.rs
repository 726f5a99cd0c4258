//! Frames of an earlier run in a reused `--out` folder. A body's frames are named
//! `NAME_NNNNNN.vtu` (the step number, zero-padded to at least 6 digits); when a run finishes it
//! removes the files of that form for each body it wrote that its new `.pvd` does not list, so
//! the folder never shows an earlier, longer run's frames beside a shorter index. Nothing else
//! in the folder is touched.

use std::collections::HashSet;
use std::path::Path;

use crate::error::{Error, Result};

/// True when `file` is a frame of the body (or rigid system) `body`: `BODY_` followed by at
/// least 6 ASCII digits and `.vtu`. A body named `a` does not claim `a_b_000001.vtu` (the
/// frames of a body named `a_b`), because what follows `a_` is not all digits.
pub(in crate::scene) fn is_frame_of(file: &str, body: &str) -> bool {
    let Some(digits) = file
        .strip_prefix(body)
        .and_then(|rest| rest.strip_prefix('_'))
        .and_then(|rest| rest.strip_suffix(".vtu"))
    else {
        return false;
    };
    digits.len() >= 6 && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Removes from `dir` the frames of `body` (see [`is_frame_of`]) whose names are not in `keep`.
/// Errors: the folder cannot be listed or a frame cannot be removed (naming the path).
pub(in crate::scene) fn remove_unlisted_frames(
    dir: &Path,
    body: &str,
    keep: &HashSet<&str>,
) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if is_frame_of(name, body) && !keep.contains(name) && entry.path().is_file() {
            std::fs::remove_file(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_recognised_by_name_and_step_digits() {
        assert!(is_frame_of("beam_000000.vtu", "beam"));
        assert!(is_frame_of("beam_1234567.vtu", "beam")); // steps beyond 10⁶ widen the field
        assert!(!is_frame_of("beam_00001.vtu", "beam")); // 5 digits: not written by diffsoro
        assert!(!is_frame_of("beam_000001.vtk", "beam"));
        assert!(!is_frame_of("beam_000001.vtu.bak", "beam"));
        assert!(!is_frame_of("beam.pvd", "beam"));
        assert!(!is_frame_of("beam000001.vtu", "beam"));
        assert!(!is_frame_of("beam_x_000001.vtu", "beam"));
        assert!(is_frame_of("beam_x_000001.vtu", "beam_x"));
        assert!(!is_frame_of("my_beam_000001.vtu", "beam"));
    }
}
