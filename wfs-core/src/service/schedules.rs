//! schedules.
