//! staff.
