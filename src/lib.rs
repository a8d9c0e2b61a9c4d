//! Umbrella package.
