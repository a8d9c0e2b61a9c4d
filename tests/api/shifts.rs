//! shifts tests.
