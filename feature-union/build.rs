//! Present so that the manifest's build-dependencies (the features of the crates that
//! build scripts and proc macros use) take part in feature resolution.
fn main() {}
