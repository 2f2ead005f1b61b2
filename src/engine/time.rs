//! Calendar arithmetic on an injected clock: the edge passes milliseconds since the Unix epoch and the
//! engine renders them. No function here reads a clock.

/// Milliseconds in one UTC day.
pub const DAY_MS: u64 = 86_400_000;

/// Civil (year, month, day) of the day `days` after 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Days since 1970-01-01 of a civil date (inverse of `civil_from_days`).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DD` of the UTC day containing `ms`.
pub fn utc_day(ms: u64) -> String {
    let (y, m, d) = civil_from_days((ms / DAY_MS) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Index of the UTC day containing `ms` (days since 1970-01-01).
pub fn day_index(ms: u64) -> u64 {
    ms / DAY_MS
}

/// ISO 8601 UTC with milliseconds, exactly as JavaScript's `Date.prototype.toISOString`.
pub fn iso8601_millis(ms: u64) -> String {
    let secs_of_day = (ms % DAY_MS) / 1000;
    format!(
        "{}T{:02}:{:02}:{:02}.{:03}Z",
        utc_day(ms),
        secs_of_day / 3600,
        (secs_of_day / 60) % 60,
        secs_of_day % 60,
        ms % 1000
    )
}

/// ISO 8601 UTC to the second: `YYYY-MM-DDTHH:MM:SSZ`.
pub fn iso8601_seconds(ms: u64) -> String {
    let secs_of_day = (ms % DAY_MS) / 1000;
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        utc_day(ms),
        secs_of_day / 3600,
        (secs_of_day / 60) % 60,
        secs_of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_to_iso_string() {
        assert_eq!(iso8601_millis(0), "1970-01-01T00:00:00.000Z");
        // 2026-12-02T13:09:51.123Z
        assert_eq!(
            iso8601_millis(1_796_216_991_123),
            "2026-12-02T13:09:51.123Z"
        );
        assert_eq!(iso8601_seconds(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(utc_day(4_107_542_399_999), "2100-02-28");
    }

    #[test]
    fn civil_round_trips_over_four_centuries() {
        for days in (-200_000..200_000).step_by(37) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }
}
