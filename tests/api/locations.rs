//! locations tests.
