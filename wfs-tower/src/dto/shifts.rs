//! shifts wire types.
