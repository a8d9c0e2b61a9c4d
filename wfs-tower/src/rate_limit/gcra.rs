//! The GCRA step both stores take, in whole microseconds: the Redis script's
//! arithmetic ([`step`]) and its answer as a [`Verdict`] ([`answer_to_verdict`]), which
//! [`LocalStore`](super::local_store::LocalStore) takes on this process's clock, so
//! both stores decide alike with or without Redis.

use super::{Gcra, Verdict};
use std::time::Duration;

/// The script's answer as a [`Verdict`]: the remaining capacity is governor's
/// `floor(min(tau + T - (tat - now), tau + T) / T)`, the wait of a refused request
/// `(tat - now) - tau`.
pub(super) fn answer_to_verdict(
    gcra: Gcra,
    params: ScriptParams,
    allowed: bool,
    ahead_us: u64,
) -> Verdict {
    let span = params.tolerance_us.saturating_add(params.interval_us);
    if allowed {
        let remaining = span.saturating_sub(ahead_us).min(span) / params.interval_us;
        gcra.allowed(u32::try_from(remaining).unwrap_or(u32::MAX))
    } else {
        gcra.refused(Duration::from_micros(
            ahead_us.saturating_sub(params.tolerance_us),
        ))
    }
}

/// The script's step: with a stored TAT (`None`: none, or one in the past) at `now`,
/// whether the request is allowed, the TAT ahead of `now` after the decision, and the
/// TAT to store (`None`: unchanged, the request was refused).
pub(super) fn step(stored: Option<u64>, now: u64, p: ScriptParams) -> (bool, u64, Option<u64>) {
    let tat = stored.filter(|tat| *tat >= now).unwrap_or(now);
    if now + p.tolerance_us < tat {
        return (false, tat - now, None);
    }
    let tat = tat + p.interval_us;
    (true, tat - now, Some(tat))
}

/// The script's arguments: the GCRA in whole microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ScriptParams {
    pub(super) interval_us: u64,
    pub(super) tolerance_us: u64,
}

impl ScriptParams {
    pub(super) fn new(gcra: Gcra) -> Self {
        let interval_us = u64::try_from(gcra.interval.as_micros())
            .unwrap_or(u64::MAX)
            .max(1);
        Self {
            interval_us,
            tolerance_us: interval_us.saturating_mul(u64::from(gcra.burst.saturating_sub(1))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate_limit::Standing;
    use governor::clock::FakeRelativeClock;
    use governor::middleware::StateInformationMiddleware;
    use governor::{Quota, RateLimiter};
    use proptest::prelude::*;
    use std::num::NonZeroU32;

    /// [`step`], the script's decision, over a stored TAT (`None`: no key
    /// in Redis).
    fn script(stored: &mut Option<u64>, now: u64, p: ScriptParams) -> (bool, u64) {
        let (allowed, ahead, tat) = step(*stored, now, p);
        if tat.is_some() {
            *stored = tat;
        }
        (allowed, ahead)
    }

    fn gcra(interval_us: u64, burst: u32) -> Gcra {
        Gcra {
            burst,
            interval: Duration::from_micros(interval_us),
        }
    }

    #[test]
    fn the_arguments_are_the_interval_and_the_burst_less_one_intervals() {
        let p = ScriptParams::new(gcra(250_000, 5));
        assert_eq!(
            p,
            ScriptParams {
                interval_us: 250_000,
                tolerance_us: 1_000_000
            }
        );
        // Faster than a request a microsecond still moves the TAT.
        assert_eq!(ScriptParams::new(gcra(0, 1)).interval_us, 1);
    }

    #[test]
    fn a_burst_at_one_instant_counts_down_then_is_refused_until_one_interval_refills() {
        // 1 per second, burst 3: the same answers as governor's (rate_limit.rs tests).
        let g = gcra(1_000_000, 3);
        let p = ScriptParams::new(g);
        let mut stored = None;
        let mut answers = Vec::new();
        for _ in 0..4 {
            let (allowed, ahead) = script(&mut stored, 5_000_000, p);
            answers.push(answer_to_verdict(g, p, allowed, ahead));
        }
        let s = |remaining, secs| Standing {
            remaining,
            reset: Duration::from_secs(secs),
        };
        assert_eq!(answers[..3], [Ok(s(2, 1)), Ok(s(1, 2)), Ok(s(0, 3))]);
        assert_eq!(answers[3], Err((s(0, 3), Duration::from_secs(1))));
        // A second later one request is allowed, and the key is empty again.
        let (allowed, ahead) = script(&mut stored, 6_000_000, p);
        assert_eq!(answer_to_verdict(g, p, allowed, ahead), Ok(s(0, 3)));
        // After a whole refill the key is as new (Redis has expired it by then).
        let (allowed, ahead) = script(&mut stored, 20_000_000, p);
        assert_eq!(answer_to_verdict(g, p, allowed, ahead), Ok(s(2, 1)));
    }

    proptest! {
        /// Whatever the rate, burst and spacing of requests, the script's answers are
        /// governor's, so a key sees the same fields with or without Redis.
        #[test]
        fn the_script_decides_as_governor_does(
            interval_us in 1u64..3_000_000,
            burst in 1u32..20,
            gaps in proptest::collection::vec(0u64..2_000_000, 1..60),
        ) {
            let g = gcra(interval_us, burst);
            let p = ScriptParams::new(g);
            let quota = Quota::with_period(Duration::from_micros(interval_us))
                .unwrap()
                .allow_burst(NonZeroU32::new(burst).unwrap());
            let clock = FakeRelativeClock::default();
            let reference = RateLimiter::direct_with_clock(quota, clock.clone())
                .with_middleware::<StateInformationMiddleware>();
            let mut stored = None;
            let mut now = 1_700_000_000_000_000u64;
            for gap in gaps {
                clock.advance(Duration::from_micros(gap));
                now += gap;
                let expected = match reference.check() {
                    Ok(snapshot) => g.allowed(snapshot.remaining_burst_capacity()),
                    Err(not_until) => {
                        g.refused(not_until.wait_time_from(governor::clock::Clock::now(&clock)))
                    }
                };
                let (allowed, ahead) = script(&mut stored, now, p);
                prop_assert_eq!(answer_to_verdict(g, p, allowed, ahead), expected);
            }
        }
    }
}
