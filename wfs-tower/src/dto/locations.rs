//! locations wire types.
