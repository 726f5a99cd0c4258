//! Fuzz target: `diffsoro::rigid::parse_urdf` must return `Ok` or `Err` on any text, never
//! panic, hang or allocate without bound. The first byte picks the base (fixed or free-flyer),
//! the rest is the URDF. Mesh paths resolve against a folder that does not exist; the parser only
//! checks whether a mesh file exists (it reads no file).
#![no_main]

use std::path::Path;

use diffsoro::rigid::{Base, parse_urdf};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let base = if first & 1 == 0 {
        Base::Fixed
    } else {
        Base::FreeFlyer
    };
    let _ = parse_urdf(
        text,
        "fuzz.urdf",
        Path::new("diffsoro-fuzz-no-such-folder"),
        base,
    );
});
