//! Days on the command line: `--since` and `--until` dates (`YYYY-MM-DD` or `YYYYMMDD`,
//! inclusive) in a time zone (`--timezone`, default the machine's).

use jiff::civil::Date;
use jiff::tz::TimeZone;

/// A date as `--since` and `--until` take it.
fn parse_day(s: &str) -> Result<Date, String> {
    let iso = if s.len() == 8 && s.bytes().all(|b| b.is_ascii_digit()) {
        format!("{}-{}-{}", &s[..4], &s[4..6], &s[6..])
    } else {
        s.to_string()
    };
    iso.parse().map_err(|e| format!("not a date {s:?} (YYYY-MM-DD or YYYYMMDD): {e}"))
}

/// The zone named (IANA), else the machine's.
fn time_zone(name: Option<&str>) -> Result<TimeZone, String> {
    match name {
        Some(name) => TimeZone::get(name).map_err(|e| format!("--timezone {name:?}: {e}")),
        None => Ok(TimeZone::system()),
    }
}

/// The days from `since` to `until`, both included, in `tz`.
#[derive(Debug, Clone)]
pub struct DayRange {
    /// First day.
    pub since: Option<Date>,
    /// Last day.
    pub until: Option<Date>,
    /// The zone whose days they are.
    pub tz: TimeZone,
}

impl DayRange {
    /// Every day (no bound; the zone does not matter then).
    pub fn all() -> DayRange {
        DayRange { since: None, until: None, tz: TimeZone::UTC }
    }

    /// From the command line's values.
    pub fn parse(since: Option<&str>, until: Option<&str>, tz: Option<&str>) -> Result<DayRange, String> {
        Ok(DayRange {
            since: since.map(parse_day).transpose().map_err(|e| format!("--since: {e}"))?,
            until: until.map(parse_day).transpose().map_err(|e| format!("--until: {e}"))?,
            tz: time_zone(tz)?,
        })
    }

    /// No bound.
    pub fn is_all(&self) -> bool {
        self.since.is_none() && self.until.is_none()
    }

    /// Whether a time (ms) falls on one of the days; a time that is not known falls on none,
    /// unless the range is unbounded.
    pub fn holds(&self, ms: f64) -> bool {
        if self.is_all() {
            return true;
        }
        let Some(ts) = ms.is_finite().then(|| jiff::Timestamp::from_millisecond(ms as i64).ok()).flatten() else {
            return false;
        };
        let day = self.tz.to_datetime(ts).date();
        self.since.is_none_or(|s| day >= s) && self.until.is_none_or(|u| day <= u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_hold_times_of_their_zone() {
        let range = DayRange::parse(Some("20260102"), Some("2026-01-02"), Some("Asia/Kolkata")).unwrap();
        let ms = |s: &str| s.parse::<jiff::Timestamp>().unwrap().as_millisecond() as f64;
        // Kolkata is UTC+05:30: its 2 January runs from 18:30 UTC on the 1st.
        assert!(!range.holds(ms("2026-01-01T18:29:59Z")));
        assert!(range.holds(ms("2026-01-01T18:30:00Z")));
        assert!(range.holds(ms("2026-01-02T18:29:59Z")));
        assert!(!range.holds(ms("2026-01-02T18:30:00Z")));
        assert!(!range.holds(f64::NAN));
        assert!(DayRange::parse(None, None, Some("UTC")).unwrap().holds(f64::NAN));
        assert!(DayRange::parse(Some("2026-13-01"), None, None).is_err());
        assert!(DayRange::parse(None, None, Some("Mars/Olympus")).is_err());
    }
}
