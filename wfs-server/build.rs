//! Finds the outside programs some tests drive (Redis, Chromium): see
//! `test_programs.rs`.
include!("test_programs.rs");
