//! shifts.
