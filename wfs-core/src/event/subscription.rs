//! Which events an endpoint receives: its subscription to the catalogue.

use super::EventType;
use crate::error::{Error, Field, Result};

/// What an endpoint subscribes to: every type (stored as the empty list), or these.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Subscription(Vec<EventType>);

impl Subscription {
    /// Parses `eventTypes`: every name must be in the catalogue; duplicates collapse;
    /// an empty list means every type.
    pub fn parse(names: &[String]) -> Result<Self> {
        let mut types = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            let t = EventType::parse(name.trim()).ok_or_else(|| {
                Error::invalid_field(
                    Field::new("eventTypes").index(i),
                    format!("is not an event type of the catalogue ('{}')", name.trim()),
                )
            })?;
            if !types.contains(&t) {
                types.push(t);
            }
        }
        types.sort();
        Ok(Self(types))
    }

    /// Whether an event of type `t` goes to this endpoint. `webhook.test` never does
    /// by subscription: only the test route sends it, to its own endpoint.
    pub fn wants(&self, t: EventType) -> bool {
        t != EventType::Test && (self.0.is_empty() || self.0.contains(&t))
    }

    /// The wire names (empty for every type).
    pub fn names(&self) -> Vec<String> {
        self.0.iter().map(|t| t.as_str().to_owned()).collect()
    }

    /// Storage form: space-separated names, empty for every type.
    pub fn to_stored(&self) -> String {
        self.names().join(" ")
    }

    /// Reads the stored form; names no longer in the catalogue are dropped.
    pub fn from_stored(stored: &str) -> Self {
        Self(
            stored
                .split_whitespace()
                .filter_map(EventType::parse)
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_round_trips_and_test_events_are_never_subscribed() {
        for t in EventType::ALL {
            assert_eq!(EventType::parse(t.as_str()), Some(*t));
        }
        assert_eq!(EventType::ALL.len(), 14);
        let every = Subscription::parse(&[]).unwrap();
        assert!(every.wants(EventType::ShiftCreated));
        assert!(!every.wants(EventType::Test));
        let some = Subscription::parse(&["shift.created".into(), "shift.created".into()]).unwrap();
        assert_eq!(some.names(), ["shift.created"]);
        assert!(!some.wants(EventType::ShiftUpdated));
        assert_eq!(Subscription::from_stored(&some.to_stored()), some);
        let err =
            Subscription::parse(&["shift.created".into(), "shift.exploded".into()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "eventTypes[1] is not an event type of the catalogue ('shift.exploded')"
        );
    }
}
