//! staff wire types.
