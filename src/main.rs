//! The `diffsoro` command (layer 7): arguments → scene → job → JSON. No physics here.
fn main() {}
