//! locations.
