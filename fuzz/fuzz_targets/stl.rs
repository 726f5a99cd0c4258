//! Fuzz target: `diffsoro::mesh::io::stl::read_stl` must return `Ok` or `Err` on any bytes, never
//! panic, hang or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = diffsoro::mesh::io::stl::read_stl("fuzz.input", data);
});
