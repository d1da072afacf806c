//! Times on the command line: the zone every command shows times in (`--timezone`, `--utc`, else
//! the machine's), and `--since` and `--until` days (`YYYY-MM-DD`, `YYYYMMDD` or an ISO date-time,
//! inclusive) in that zone.

use jiff::civil::Date;
use jiff::tz::TimeZone;

/// A day as `--since` and `--until` take it: `YYYY-MM-DD`, `YYYYMMDD`, or an ISO date-time (with
/// an offset, the day it falls on in `tz`; without one, its date).
pub fn parse_day(s: &str, tz: &TimeZone) -> Result<Date, String> {
    let bad = || format!("not a date: {s:?} (use YYYY-MM-DD, YYYYMMDD or an ISO date-time)");
    let compact = s.len() == 8 && s.bytes().all(|b| b.is_ascii_digit());
    let text = if compact { format!("{}-{}-{}", &s[..4], &s[4..6], &s[6..]) } else { s.to_string() };
    if let Ok(day) = text.parse::<Date>() {
        return Ok(day);
    }
    if let Ok(instant) = text.parse::<jiff::Timestamp>() {
        return Ok(tz.to_datetime(instant).date());
    }
    text.parse::<jiff::civil::DateTime>().map(|t| t.date()).map_err(|_| bad())
}

/// The start of a day in `tz`, in ms since the epoch.
pub fn day_start_ms(day: Date, tz: &TimeZone) -> f64 {
    let midnight = day.to_datetime(jiff::civil::Time::midnight());
    tz.to_ambiguous_timestamp(midnight).compatible().map_or(f64::NAN, |t| t.as_millisecond() as f64)
}

/// The zone times are shown in, and its name for headers and reports.
#[derive(Debug, Clone)]
pub struct Zone {
    /// The zone.
    pub tz: TimeZone,
    /// Its IANA name, the offset given, `UTC`, or `local` when the machine's has no name.
    pub label: String,
}

impl Zone {
    /// `--utc`, else `--timezone NAME` (an IANA name such as `Europe/Paris`, an offset such as
    /// `+02:00`, `-0530` or `Z`, or `UTC`), else the machine's zone (`TZ` first).
    pub fn from_args(name: Option<&str>, utc: bool) -> Result<Zone, String> {
        if utc {
            return Ok(Zone { tz: TimeZone::UTC, label: "UTC".into() });
        }
        let Some(name) = name else {
            let tz = TimeZone::system();
            let label = tz.iana_name().map_or_else(|| "local".to_string(), str::to_string);
            return Ok(Zone { tz, label });
        };
        if matches!(name, "Z" | "z" | "UTC" | "utc") {
            return Ok(Zone { tz: TimeZone::UTC, label: "UTC".into() });
        }
        if let Some(offset) = parse_offset(name) {
            return Ok(Zone { tz: TimeZone::fixed(offset), label: name.to_string() });
        }
        TimeZone::get(name).map(|tz| Zone { tz, label: name.to_string() }).map_err(|_| {
            format!("--timezone: no time zone is named {name:?} (use an IANA name such as Europe/Paris, or an offset such as +02:00)")
        })
    }
}

impl Zone {
    /// UTC, named so.
    pub fn utc() -> Zone {
        Zone { tz: TimeZone::UTC, label: "UTC".into() }
    }

    /// A time (ms since the epoch) in this zone, to the minute (`2025-01-26 08:37`); `?` when it
    /// is not a time.
    pub fn minute(&self, ms: f64) -> String {
        self.format_ms(ms, "%Y-%m-%d %H:%M").unwrap_or_else(|| "?".to_owned())
    }

    /// An ISO timestamp as a session holds it, in this zone to the second
    /// (`2025-01-26 08:37:05`); text that is not an ISO time is shown as it is.
    pub fn second(&self, iso: &str) -> String {
        match iso.parse::<jiff::Timestamp>() {
            Ok(t) => self.tz.to_datetime(t).strftime("%Y-%m-%d %H:%M:%S").to_string(),
            Err(_) => iso.to_owned(),
        }
    }

    fn format_ms(&self, ms: f64, format: &str) -> Option<String> {
        let t = ms.is_finite().then(|| jiff::Timestamp::from_millisecond(ms as i64).ok()).flatten()?;
        Some(self.tz.to_datetime(t).strftime(format).to_string())
    }
}

/// `+HH:MM`, `-HHMM` or `+HH` as a fixed offset.
fn parse_offset(s: &str) -> Option<jiff::tz::Offset> {
    let (sign, rest) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => return None,
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if !digits.bytes().all(|b| b.is_ascii_digit()) || !matches!(digits.len(), 2 | 4) || rest.len() > 5 {
        return None;
    }
    let hours: i32 = digits[..2].parse().ok()?;
    let minutes: i32 = if digits.len() == 4 { digits[2..].parse().ok()? } else { 0 };
    if hours > 23 || minutes > 59 {
        return None;
    }
    jiff::tz::Offset::from_seconds(sign * (hours * 3600 + minutes * 60)).ok()
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

    /// From the command line's values, days of `tz`.
    pub fn parse(since: Option<&str>, until: Option<&str>, tz: &TimeZone) -> Result<DayRange, String> {
        Ok(DayRange {
            since: since.map(|s| parse_day(s, tz)).transpose().map_err(|e| format!("--since: {e}"))?,
            until: until.map(|s| parse_day(s, tz)).transpose().map_err(|e| format!("--until: {e}"))?,
            tz: tz.clone(),
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
        let kolkata = TimeZone::get("Asia/Kolkata").unwrap();
        let range = DayRange::parse(Some("20260102"), Some("2026-01-02"), &kolkata).unwrap();
        let ms = |s: &str| s.parse::<jiff::Timestamp>().unwrap().as_millisecond() as f64;
        // Kolkata is UTC+05:30: its 2 January runs from 18:30 UTC on the 1st.
        assert!(!range.holds(ms("2026-01-01T18:29:59Z")));
        assert!(range.holds(ms("2026-01-01T18:30:00Z")));
        assert!(range.holds(ms("2026-01-02T18:29:59Z")));
        assert!(!range.holds(ms("2026-01-02T18:30:00Z")));
        assert!(!range.holds(f64::NAN));
        assert!(DayRange::parse(None, None, &TimeZone::UTC).unwrap().holds(f64::NAN));
        let err = DayRange::parse(Some("2026-13-01"), None, &TimeZone::UTC).unwrap_err();
        assert_eq!(err, "--since: not a date: \"2026-13-01\" (use YYYY-MM-DD, YYYYMMDD or an ISO date-time)");
        // An instant is the day it falls on in the zone.
        let range = DayRange::parse(Some("2026-01-01T20:00:00Z"), None, &kolkata).unwrap();
        assert_eq!(range.since, Some(jiff::civil::date(2026, 1, 2)));
    }

    #[test]
    fn zones_are_names_offsets_or_utc() {
        assert_eq!(Zone::from_args(None, true).unwrap().label, "UTC");
        assert_eq!(Zone::from_args(Some("Europe/Paris"), false).unwrap().label, "Europe/Paris");
        let plus2 = Zone::from_args(Some("+02:00"), false).unwrap();
        assert_eq!(plus2.tz.to_offset(jiff::Timestamp::UNIX_EPOCH).seconds(), 7200);
        assert_eq!(
            Zone::from_args(Some("-0530"), false).unwrap().tz.to_offset(jiff::Timestamp::UNIX_EPOCH).seconds(),
            -19800
        );
        let err = Zone::from_args(Some("Mars/Olympus"), false).unwrap_err();
        assert_eq!(plus2.second("2026-01-01T23:30:05.123Z"), "2026-01-02 01:30:05");
        assert_eq!(plus2.second("not a time"), "not a time");
        assert_eq!(plus2.minute(0.0), "1970-01-01 02:00");
        assert_eq!(plus2.minute(f64::NAN), "?");
        assert!(err.starts_with("--timezone: no time zone is named \"Mars/Olympus\""), "{err}");
    }
}
