//! staff tests.
