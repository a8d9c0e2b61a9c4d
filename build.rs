//! Finds the outside programs the end-to-end suite drives (Redis, Chromium), as
//! wfs-server's build script does: see `wfs-server/test_programs.rs`.
include!("wfs-server/test_programs.rs");
