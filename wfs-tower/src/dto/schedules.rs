//! schedules wire types.
