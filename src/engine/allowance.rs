//! Free-tier allowance decisions (pure): per (family, caller wallet) a count of calls in the current
//! UTC day and the time of the last allowed call. The clock is injected. Only counts and timestamps
//! exist here; nothing about the submission is ever part of the state.

use serde::{Deserialize, Serialize};

use crate::engine::time::day_index;

/// The limits in force (from `[vars]`, defaults from the criteria: 100 per day, 5,000 ms apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub per_day: u32,
    pub min_interval_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            per_day: 100,
            min_interval_ms: 5_000,
        }
    }
}

/// What one allowance object remembers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// UTC day index (days since the epoch) the count belongs to.
    pub day: u64,
    /// Calls allowed on that day.
    pub count: u32,
    /// Time of the last allowed call; 0 when none.
    pub last_ms: u64,
}

/// The answer for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// The call is free; `used` counts it.
    Allowed { used: u32, per_day: u32 },
    /// The day's allowance is spent.
    Exhausted { per_day: u32 },
    /// Too soon after the last allowed call.
    TooSoon { wait_ms: u64 },
}

impl Decision {
    pub fn allowed(&self) -> bool {
        matches!(self, Decision::Allowed { .. })
    }
}

/// Decides one call at `now_ms` and returns the usage to remember. Refused calls change nothing.
pub fn decide(usage: Usage, now_ms: u64, limits: Limits) -> (Decision, Usage) {
    let today = day_index(now_ms);
    let count_today = if usage.day == today { usage.count } else { 0 };
    if usage.last_ms > 0 && now_ms < usage.last_ms.saturating_add(limits.min_interval_ms) {
        let wait_ms = usage.last_ms + limits.min_interval_ms - now_ms;
        return (Decision::TooSoon { wait_ms }, usage);
    }
    if count_today >= limits.per_day {
        return (
            Decision::Exhausted {
                per_day: limits.per_day,
            },
            usage,
        );
    }
    let next = Usage {
        day: today,
        count: count_today + 1,
        last_ms: now_ms,
    };
    (
        Decision::Allowed {
            used: next.count,
            per_day: limits.per_day,
        },
        next,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::DAY_MS;

    const T0: u64 = 1_796_216_991_123; // 2026-12-02T13:09:51.123Z

    #[test]
    fn exactly_per_day_calls_then_exhausted() {
        let limits = Limits::default();
        let mut usage = Usage::default();
        let mut now = T0 - (T0 % DAY_MS); // start of the UTC day
        for i in 1..=100 {
            let (d, next) = decide(usage, now, limits);
            assert_eq!(
                d,
                Decision::Allowed {
                    used: i,
                    per_day: 100
                }
            );
            usage = next;
            now += 5_000;
        }
        let (d, next) = decide(usage, now, limits);
        assert_eq!(d, Decision::Exhausted { per_day: 100 });
        assert_eq!(next, usage, "a refused call changes nothing");
    }

    #[test]
    fn spacing_is_enforced_to_the_millisecond() {
        let limits = Limits::default();
        let (_, usage) = decide(Usage::default(), T0, limits);
        assert_eq!(
            decide(usage, T0 + 4_999, limits).0,
            Decision::TooSoon { wait_ms: 1 }
        );
        assert!(decide(usage, T0 + 5_000, limits).0.allowed());
    }

    #[test]
    fn a_new_utc_day_resets_the_count() {
        let limits = Limits {
            per_day: 2,
            min_interval_ms: 0,
        };
        let end_of_day = T0 - (T0 % DAY_MS) + DAY_MS - 1;
        let (_, u) = decide(Usage::default(), end_of_day - 1, limits);
        let (_, u) = decide(u, end_of_day, limits);
        assert_eq!(
            decide(u, end_of_day, limits).0,
            Decision::Exhausted { per_day: 2 }
        );
        assert_eq!(
            decide(u, end_of_day + 1, limits).0,
            Decision::Allowed {
                used: 1,
                per_day: 2
            }
        );
    }
}
