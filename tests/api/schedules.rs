//! schedules tests.
