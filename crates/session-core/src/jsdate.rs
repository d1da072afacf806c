//! `Date.parse` as Node (V8) reads a string: the ECMAScript date-time format first, then V8's
//! lenient fallback for every other shape (`Jan 5 2026 10:00 PM`, `2026/01/05`, `0`), with times
//! without an offset taken in the local time zone.
//!
//! The reference reads `created` from `new Date(header.timestamp)` and an entry's time from
//! `Date.parse(entry.timestamp)` (spec format.md §9, format.md §6). Pi itself writes `toISOString()`, which the fast
//! path `iso_fields` reads; hand-edited and foreign files bring the rest. The rules below were
//! taken from Node 20's answers (`corpora/dates/`, checked by the tests):
//! - the ISO format, `[+-YY]YYYY[-MM[-DD]][THH:mm[:ss[.s+]][Z|±HH:mm|±HHmm]]`: days run to 31 in
//!   every month (February 30 is March 2), hour 24 only at its first instant, a date alone is
//!   UTC and a date with a time and no offset is local;
//! - what is left after the longest ISO prefix goes to the fallback: numbers, words (month
//!   names by their first three letters, `am`/`pm`, zone names), signs and parenthesised
//!   comments, composed into a day, a time and an offset.

use jiff::tz::TimeZone;

/// Milliseconds since the epoch for `Date.parse(s)` (the string's WTF-8 bytes), or `None` where
/// JavaScript gives `NaN`; a time without an offset is taken in `local`, the zone Node would run
/// in (the machine's, `TZ` first), which the program passes down.
pub fn parse_js_date(s: &[u8], local: &TimeZone) -> Option<f64> {
    match iso_fields(s) {
        Some(fields) => fields.utc_value(),
        None => parse_in(s, || local),
    }
}

/// [`parse_js_date`] with the zone asked for only when the time has no offset.
fn parse_in<'z>(s: &[u8], zone: impl FnOnce() -> &'z TimeZone) -> Option<f64> {
    let fields = compose(s)?;
    match fields.offset_seconds {
        Some(_) => fields.utc_value(),
        None => {
            let local = fields.local_value()?;
            // Local times may lie ten days past the range; the result is clipped to it.
            if local.abs() > MAX_TIME + 864e6 {
                return None;
            }
            clip(local - local_offset_ms(local, zone()))
        }
    }
}

/// `Math.round`: to the nearest integer, a half up (toward +∞); `NaN` and infinities as they are.
pub fn js_round(x: f64) -> f64 {
    let floor = x.floor();
    if x - floor >= 0.5 { floor + 1.0 } else { floor }
}

/// The largest time value JavaScript keeps: 100,000,000 days either side of the epoch.
const MAX_TIME: f64 = 8.64e15;

fn clip(ms: f64) -> Option<f64> {
    (ms.abs() <= MAX_TIME).then_some(ms)
}

/// The offset of `zone` for a local time (ms as if it were UTC), as V8 asks the zone: a time
/// that a change skips takes the offset before the change, one that repeats its first
/// occurrence (`compatible`). A time beyond the years the zone can be asked about (±9999) is
/// moved by whole 400-year cycles, which repeat the calendar day for day, so that the zone's
/// rules for that date apply, as they do in V8.
fn local_offset_ms(local: f64, zone: &TimeZone) -> f64 {
    const DAY_MS: i64 = 86_400_000;
    const CYCLE_MS: i64 = 146_097 * DAY_MS;
    let (low, high) = (days_from_civil(-9999, 1, 3) * DAY_MS, days_from_civil(9999, 12, 29) * DAY_MS);
    let mut ms = local as i64;
    if ms > high {
        ms -= ((ms - high) / CYCLE_MS + 1) * CYCLE_MS;
    } else if ms < low {
        ms += ((low - ms) / CYCLE_MS + 1) * CYCLE_MS;
    }
    let Ok(instant) = jiff::Timestamp::from_millisecond(ms) else { return 0.0 };
    let civil = TimeZone::UTC.to_datetime(instant);
    zone.to_ambiguous_timestamp(civil).compatible().map_or(0.0, |utc| (ms - utc.as_millisecond()) as f64)
}

/// A date and time as read: the day, the time of day, and the offset from UTC if one was given.
#[derive(Debug, Clone, Copy, PartialEq)]
struct DateFields {
    year: i64,
    /// 1 to 12.
    month: u32,
    /// 1 to 31, whatever the month (V8 carries the excess into the next month).
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    millis: u32,
    offset_seconds: Option<i64>,
}

impl DateFields {
    /// The time value as if the fields were UTC, before any offset; `None` past the years V8
    /// computes with.
    fn local_value(&self) -> Option<f64> {
        if self.year.abs() > 1_000_000 {
            return None;
        }
        let days = days_from_civil(self.year, self.month, 1) + i64::from(self.day) - 1;
        let time = i64::from(self.hour) * 3_600_000
            + i64::from(self.minute) * 60_000
            + i64::from(self.second) * 1000
            + i64::from(self.millis);
        Some((days * 86_400_000 + time) as f64)
    }

    /// The time value of fields with an offset (none is UTC).
    fn utc_value(&self) -> Option<f64> {
        clip(self.local_value()? - self.offset_seconds.unwrap_or(0) as f64 * 1000.0)
    }
}

/// The fields of `YYYY-MM-DDTHH:mm:ss.sssZ` (what `toISOString` writes, so nearly every time in
/// a session), read a word at a time; `None` for any other shape, which [`compose`] reads.
fn iso_fields(s: &[u8]) -> Option<DateFields> {
    let s: &[u8; 24] = s.try_into().ok()?;
    let word =
        |k: usize| u64::from_le_bytes([s[k], s[k + 1], s[k + 2], s[k + 3], s[k + 4], s[k + 5], s[k + 6], s[k + 7]]);
    let (a, b, c) = (word(0), word(8), word(16));
    // The separators, and a mask of the digit positions, of each word.
    const SEP_A: (u64, u64) = (0x2d00_002d_0000_0000, 0x00ff_ff00_ffff_ffff); // "YYYY-MM-"
    const SEP_B: (u64, u64) = (0x0000_3a00_0054_0000, 0xffff_00ff_ff00_ffff); // "DDTHH:mm"
    const SEP_C: (u64, u64) = (0x5a00_0000_2e00_003a, 0x00ff_ffff_00ff_ff00); // ":ss.sssZ"
    let fits = |w: u64, (sep, digits): (u64, u64)| {
        // Digits: high nibble 3, low nibble at most 9 (adding 6 does not reach 16).
        let high_is_3 = ((w & 0xf0f0_f0f0_f0f0_f0f0) ^ 0x3030_3030_3030_3030) & digits == 0;
        let low_at_most_9 = ((w & 0x0f0f_0f0f_0f0f_0f0f) + 0x0606_0606_0606_0606) & 0x1010_1010_1010_1010 & digits == 0;
        high_is_3 && low_at_most_9 && w & !digits == sep
    };
    if !(fits(a, SEP_A) && fits(b, SEP_B) && fits(c, SEP_C)) {
        return None;
    }
    let n = |k: usize, len: usize| s[k..k + len].iter().fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'));
    let (month, day, hour, minute, second, millis) = (n(5, 2), n(8, 2), n(11, 2), n(14, 2), n(17, 2), n(20, 3));
    let in_range = (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && minute < 60
        && second < 60
        && (hour < 24 || (hour, minute, second, millis) == (24, 0, 0, 0));
    in_range.then_some(DateFields {
        year: i64::from(n(0, 4)),
        month,
        day,
        hour,
        minute,
        second,
        millis,
        offset_seconds: Some(0),
    })
}

/// A token of a date string.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    /// Digits: the value of their first nine significant digits, and how many there are.
    Number {
        value: i64,
        len: usize,
    },
    /// One of `:`, `-`, `+`, `.` and `)`.
    Symbol(u8),
    /// A run of letters (and of every character from `A` up, but for whitespace), by what its
    /// first three letters name.
    Word {
        kind: WordKind,
        len: usize,
    },
    Space,
    /// Any other character, or a parenthesised comment.
    Other,
    End,
}

impl Token {
    fn is_number(self) -> bool {
        matches!(self, Token::Number { .. })
    }
    fn is_number_of(self, digits: usize) -> Option<i64> {
        match self {
            Token::Number { value, len } if len == digits => Some(value),
            _ => None,
        }
    }
    fn sign(self) -> Option<i64> {
        match self {
            Token::Symbol(b'+') => Some(1),
            Token::Symbol(b'-') => Some(-1),
            _ => None,
        }
    }
    fn is_zone_z(self) -> bool {
        self == Token::Word { kind: WordKind::Zone(0), len: 1 }
    }
}

/// What a word names.
#[derive(Debug, Clone, Copy, PartialEq)]
enum WordKind {
    /// 1 to 12.
    Month(i64),
    /// The hours `am` (0) or `pm` (12) adds.
    AmPm(i64),
    /// A zone by name, in hours from UTC (`z`, `ut`, `utc` and `gmt` are 0).
    Zone(i64),
    /// `t`, between a date and its time.
    TimeSeparator,
    Unknown,
}

/// The word of `len` characters whose first three (lowercased; `0` past the end) are `head`.
/// Only a month's name may be longer than its three letters.
fn word_kind(head: [u32; 3], len: usize) -> WordKind {
    const MONTHS: [&[u8; 3]; 12] =
        [b"jan", b"feb", b"mar", b"apr", b"may", b"jun", b"jul", b"aug", b"sep", b"oct", b"nov", b"dec"];
    const OTHERS: [(&[u8], WordKind); 15] = [
        (b"am", WordKind::AmPm(0)),
        (b"pm", WordKind::AmPm(12)),
        (b"ut", WordKind::Zone(0)),
        (b"utc", WordKind::Zone(0)),
        (b"z", WordKind::Zone(0)),
        (b"gmt", WordKind::Zone(0)),
        (b"cdt", WordKind::Zone(-5)),
        (b"cst", WordKind::Zone(-6)),
        (b"edt", WordKind::Zone(-4)),
        (b"est", WordKind::Zone(-5)),
        (b"mdt", WordKind::Zone(-6)),
        (b"mst", WordKind::Zone(-7)),
        (b"pdt", WordKind::Zone(-7)),
        (b"pst", WordKind::Zone(-8)),
        (b"t", WordKind::TimeSeparator),
    ];
    let is = |name: &[u8]| (0..3).all(|k| head[k] == name.get(k).map_or(0, |&c| u32::from(c)));
    if let Some(m) = MONTHS.iter().position(|name| is(*name)) {
        return WordKind::Month(m as i64 + 1);
    }
    if len > 3 {
        return WordKind::Unknown;
    }
    OTHERS.iter().find(|(name, _)| is(name)).map_or(WordKind::Unknown, |&(_, kind)| kind)
}

/// The characters of a date string as UTF-16 code units would be seen: ASCII as it is, any
/// other character as one from `A` up (whitespace apart). A NUL ends the string, as in V8.
struct Tokens<'a> {
    s: &'a [u8],
    i: usize,
    next: Token,
}

impl<'a> Tokens<'a> {
    fn new(s: &'a [u8]) -> Self {
        let end = memchr::memchr(0, s).unwrap_or(s.len());
        let mut tokens = Tokens { s: &s[..end], i: 0, next: Token::End };
        tokens.next = tokens.scan();
        tokens
    }

    fn peek(&self) -> Token {
        self.next
    }

    fn next(&mut self) -> Token {
        let scanned = self.scan();
        std::mem::replace(&mut self.next, scanned)
    }

    fn skip_symbol(&mut self, c: u8) -> bool {
        let hit = self.next == Token::Symbol(c);
        if hit {
            self.next();
        }
        hit
    }

    /// The character at `i` and its length in bytes; a byte that does not start a well-formed
    /// sequence is a character of its own.
    fn char_at(&self, i: usize) -> Option<(u32, usize)> {
        let b = *self.s.get(i)?;
        if b < 0x80 {
            return Some((u32::from(b), 1));
        }
        let len = match b {
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf7 => 4,
            _ => return Some((0xfffd, 1)),
        };
        let Some(bytes) = self.s.get(i..i + len) else { return Some((0xfffd, 1)) };
        if bytes[1..].iter().any(|&c| c & 0xc0 != 0x80) {
            return Some((0xfffd, 1));
        }
        let first = u32::from(b) & (0x7f >> len);
        Some((bytes[1..].iter().fold(first, |acc, &c| acc << 6 | u32::from(c & 0x3f)), len))
    }

    fn is_space(c: u32) -> bool {
        char::from_u32(c).is_some_and(crate::text::is_js_whitespace)
    }

    fn scan(&mut self) -> Token {
        let Some((c, len)) = self.char_at(self.i) else { return Token::End };
        if c < 0x80 && (c as u8).is_ascii_digit() {
            let start = self.i;
            let mut value = 0i64;
            let mut significant = 0;
            while let Some(&d) = self.s.get(self.i).filter(|d| d.is_ascii_digit()) {
                if significant > 0 || d != b'0' {
                    if significant < 9 {
                        value = value * 10 + i64::from(d - b'0');
                    }
                    significant += 1;
                }
                self.i += 1;
            }
            return Token::Number { value, len: self.i - start };
        }
        if matches!(c, 0x3a | 0x2d | 0x2b | 0x2e | 0x29) {
            self.i += 1;
            return Token::Symbol(c as u8);
        }
        if c >= u32::from(b'A') && !Self::is_space(c) {
            let mut head = [0u32; 3];
            let mut units = 0;
            while let Some((c, len)) = self.char_at(self.i).filter(|&(c, _)| c >= u32::from(b'A') && !Self::is_space(c))
            {
                // Characters past the BMP are two UTF-16 units.
                let pair = [0xd800, 0xdc00];
                let single = [c];
                for unit in if c > 0xffff { &pair[..] } else { &single[..] } {
                    if units < 3 {
                        head[units] = unit | 0x20;
                    }
                    units += 1;
                }
                self.i += len;
            }
            return Token::Word { kind: word_kind(head, units), len: units };
        }
        if Self::is_space(c) {
            self.i += len;
            return Token::Space;
        }
        if c == u32::from(b'(') {
            // A comment, nested, to its closing parenthesis or the end.
            let mut depth = 0;
            while let Some(&b) = self.s.get(self.i) {
                depth += i32::from(b == b'(') - i32::from(b == b')');
                self.i += 1;
                if depth == 0 {
                    break;
                }
            }
            return Token::Other;
        }
        self.i += len;
        Token::Other
    }
}

/// Up to `N` numbers, in the order read.
struct Parts<const N: usize> {
    values: [i64; N],
    count: usize,
}

impl<const N: usize> Default for Parts<N> {
    fn default() -> Self {
        Parts { values: [0; N], count: 0 }
    }
}

impl<const N: usize> Parts<N> {
    fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// Adds `n`; false when all `N` are read.
    fn add(&mut self, n: i64) -> bool {
        let room = self.count < N;
        if room {
            self.values[self.count] = n;
            self.count += 1;
        }
        room
    }
    /// The numbers, those not read as `missing`.
    fn filled(mut self, missing: i64) -> [i64; N] {
        self.values[self.count..].fill(missing);
        self.values
    }
}

/// The day as read: up to three numbers, and a month by name.
#[derive(Default)]
struct Day {
    parts: Parts<3>,
    named_month: Option<i64>,
    iso: bool,
}

impl Day {
    /// Year, month and day: in the ISO order, else the order the parts' values allow; a
    /// missing part is 1, a two-digit year is of 1950 to 2049 (outside the ISO format).
    fn compose(self) -> Option<(i64, u32, u32)> {
        if self.parts.is_empty() {
            return None;
        }
        let [a, b, c] = self.parts.filled(1);
        let is_day = |n: i64| (1..=31).contains(&n);
        let (year, month, day) = match self.named_month {
            None if self.iso || !is_day(a) => (a, b, c),
            None => (c, a, b),
            Some(month) if !is_day(a) => (a, month, b),
            Some(month) => (b, month, a),
        };
        let year = match year {
            _ if self.iso => year,
            0..=49 => year + 2000,
            50..=99 => year + 1900,
            _ => year,
        };
        ((1..=12).contains(&month) && is_day(day)).then_some((year, month as u32, day as u32))
    }
}

/// The time of day as read: hour, minute, second and millisecond, and `am`/`pm`.
#[derive(Default)]
struct Time {
    parts: Parts<4>,
    hour_offset: Option<i64>,
}

impl Time {
    /// Adds `n` and closes the time (the parts after it are 0).
    fn add_last(&mut self, n: i64) -> bool {
        let added = self.parts.add(n);
        self.parts.count = 4;
        added
    }
    /// Whether `n` can be the next part after an hour.
    fn expects(&self, n: i64) -> bool {
        match self.parts.count {
            1 | 2 => (0..60).contains(&n),
            3 => (0..1000).contains(&n),
            _ => false,
        }
    }
    fn compose(self) -> Option<(u32, u32, u32, u32)> {
        let [mut hour, minute, second, millis] = self.parts.filled(0);
        if let Some(offset) = self.hour_offset {
            if !(0..=12).contains(&hour) {
                return None;
            }
            hour = hour % 12 + offset;
        }
        let valid = (0..24).contains(&hour)
            && (0..60).contains(&minute)
            && (0..60).contains(&second)
            && (0..1000).contains(&millis);
        (valid || (hour, minute, second, millis) == (24, 0, 0, 0)).then_some((
            hour as u32,
            minute as u32,
            second as u32,
            millis as u32,
        ))
    }
}

/// The offset from UTC as read: its sign, hours and minutes.
#[derive(Default)]
struct Offset {
    sign: Option<i64>,
    hours: Option<i64>,
    minutes: Option<i64>,
}

impl Offset {
    fn set_hours(&mut self, hours: i64) {
        self.sign = Some(if hours < 0 { -1 } else { 1 });
        self.hours = Some(hours.abs());
        self.minutes = Some(0);
    }
    fn expects_minutes(&self, n: i64) -> bool {
        self.hours.is_some() && self.minutes.is_none() && (0..60).contains(&n)
    }
    fn is_utc(&self) -> bool {
        self.hours == Some(0) && self.minutes == Some(0)
    }
    /// Seconds east of UTC, `Some(None)` for local time, `None` when too large to hold.
    fn compose(&self) -> Option<Option<i64>> {
        let Some(sign) = self.sign else { return Some(None) };
        // In 32-bit unsigned arithmetic, as V8 sums them: a huge hour wraps.
        let part = |n: Option<i64>, unit: u32| (n.unwrap_or(0) as u32).wrapping_mul(unit);
        let seconds = part(self.hours, 3600).wrapping_add(part(self.minutes, 60));
        (seconds <= i32::MAX as u32).then_some(Some(sign * i64::from(seconds)))
    }
}

/// Milliseconds from the digits of a fraction: its first three, by their count (`.5` is 500).
fn fraction_millis(value: i64, len: usize) -> i64 {
    match len {
        1 => value * 100,
        2 => value * 10,
        3 => value,
        // The value holds at most nine significant digits, whatever the leading zeros.
        _ => value / 10i64.pow(len.min(9) as u32 - 3),
    }
}

/// Reads `s` as `Date.parse` does: the fields, or `None` for `NaN`.
fn compose(s: &[u8]) -> Option<DateFields> {
    let mut tokens = Tokens::new(s);
    let (mut day, mut time, mut offset) = (Day::default(), Time::default(), Offset::default());
    let rest = iso_prefix(&mut tokens, &mut day, &mut time, &mut offset)?;
    if rest != Token::End {
        fallback(&mut tokens, rest, &mut day, &mut time, &mut offset)?;
    }
    let (year, month, day) = day.compose()?;
    let (hour, minute, second, millis) = time.compose()?;
    Some(DateFields { year, month, day, hour, minute, second, millis, offset_seconds: offset.compose()? })
}

/// The ISO format's part of `s`: `None` where a string that starts as one is broken past
/// repair; else the first token it leaves (`End` when it read the whole string).
fn iso_prefix(tokens: &mut Tokens, day: &mut Day, time: &mut Time, offset: &mut Offset) -> Option<Token> {
    if let Some(sign) = tokens.peek().sign() {
        let sign_token = tokens.next();
        let Some(year) = tokens.peek().is_number_of(6) else { return Some(sign_token) };
        tokens.next();
        if sign < 0 && year == 0 {
            return Some(sign_token);
        }
        day.parts.add(sign * year);
    } else if let Some(year) = tokens.peek().is_number_of(4) {
        tokens.next();
        day.parts.add(year);
    } else {
        return Some(tokens.next());
    }
    if tokens.skip_symbol(b'-') {
        match tokens.peek().is_number_of(2) {
            Some(month) if (1..=12).contains(&month) => day.parts.add(tokens.next().is_number_of(2)?),
            _ => return Some(tokens.next()),
        };
        if tokens.skip_symbol(b'-') {
            match tokens.peek().is_number_of(2) {
                Some(d) if (1..=31).contains(&d) => day.parts.add(tokens.next().is_number_of(2)?),
                _ => return Some(tokens.next()),
            };
        }
    }
    if tokens.peek() != (Token::Word { kind: WordKind::TimeSeparator, len: 1 }) {
        return match tokens.peek() {
            Token::End => {
                offset.set_hours(0);
                day.iso = true;
                Some(Token::End)
            }
            _ => Some(tokens.next()),
        };
    }
    tokens.next();
    let two_digits = |tokens: &Tokens, max: i64| tokens.peek().is_number_of(2).filter(|n| (0..=max).contains(n));
    let hour = two_digits(tokens, 24)?;
    tokens.next();
    time.parts.add(hour);
    // Hour 24 only as the day's end: every later part zero.
    let at_24 = hour == 24;
    if !tokens.skip_symbol(b':') {
        return None;
    }
    let minute = two_digits(tokens, 59).filter(|&m| !at_24 || m == 0)?;
    tokens.next();
    time.parts.add(minute);
    if tokens.skip_symbol(b':') {
        let second = two_digits(tokens, 59).filter(|&s| !at_24 || s == 0)?;
        tokens.next();
        time.parts.add(second);
        if tokens.skip_symbol(b'.') {
            let Token::Number { value, len } = tokens.peek() else { return None };
            if at_24 && value > 0 {
                return None;
            }
            tokens.next();
            time.parts.add(fraction_millis(value, len));
        }
    }
    if tokens.peek().is_zone_z() {
        tokens.next();
        offset.set_hours(0);
    } else if let Some(sign) = tokens.peek().sign() {
        tokens.next();
        offset.sign = Some(sign);
        if let Some(hhmm) = tokens.peek().is_number_of(4) {
            tokens.next();
            let (hours, minutes) = (hhmm / 100, hhmm % 100);
            if hours > 23 || minutes > 59 {
                return None;
            }
            (offset.hours, offset.minutes) = (Some(hours), Some(minutes));
        } else {
            let hours = two_digits(tokens, 23)?;
            tokens.next();
            if !tokens.skip_symbol(b':') {
                return None;
            }
            let minutes = two_digits(tokens, 59)?;
            tokens.next();
            (offset.hours, offset.minutes) = (Some(hours), Some(minutes));
        }
    }
    if tokens.peek() != Token::End {
        return None;
    }
    day.iso = true;
    Some(Token::End)
}

/// V8's fallback over the tokens from `token` on: `None` where it gives up.
fn fallback(tokens: &mut Tokens, mut token: Token, day: &mut Day, time: &mut Time, offset: &mut Offset) -> Option<()> {
    let mut read_number = !day.parts.is_empty();
    loop {
        match token {
            Token::End => return Some(()),
            Token::Number { value: n, .. } => {
                read_number = true;
                if tokens.skip_symbol(b':') {
                    if tokens.skip_symbol(b':') {
                        // `n::` is an hour and a zero minute.
                        if !time.parts.is_empty() {
                            return None;
                        }
                        time.parts.add(n);
                        time.parts.add(0);
                    } else {
                        if !time.parts.add(n) {
                            return None;
                        }
                        tokens.skip_symbol(b'.');
                    }
                } else if tokens.skip_symbol(b'.') && time.expects(n) {
                    // The dot is taken whether or not a time goes on.
                    time.parts.add(n);
                    let Token::Number { value, len } = tokens.peek() else { return None };
                    tokens.next();
                    time.add_last(fraction_millis(value, len));
                } else if offset.expects_minutes(n) {
                    offset.minutes = Some(n);
                } else if time.expects(n) {
                    time.add_last(n);
                    let next = tokens.peek();
                    if !(next == Token::End || next == Token::Space || next.is_zone_z() || next.sign().is_some()) {
                        return None;
                    }
                } else {
                    if !day.parts.add(n) {
                        return None;
                    }
                    tokens.skip_symbol(b'-');
                }
            }
            Token::Word { kind, .. } => match kind {
                WordKind::AmPm(hours) if !time.parts.is_empty() => time.hour_offset = Some(hours),
                WordKind::Month(month) => {
                    day.named_month = Some(month);
                    tokens.skip_symbol(b'-');
                }
                WordKind::Zone(hours) if read_number => offset.set_hours(hours),
                // Any other word is ignored before the first number, if apart from it.
                _ if read_number || tokens.peek().is_number() => return None,
                _ => {}
            },
            Token::Symbol(c @ (b'+' | b'-')) if offset.is_utc() || !time.parts.is_empty() => {
                // An offset after a zone name or a time: `+5`, `+0530`, `+05:30`.
                offset.sign = Some(if c == b'-' { -1 } else { 1 });
                let (n, len) = match tokens.peek() {
                    Token::Number { value, len } => {
                        tokens.next();
                        (value, len)
                    }
                    _ => (0, 0),
                };
                read_number = true;
                if tokens.peek() == Token::Symbol(b':') {
                    (offset.hours, offset.minutes) = (Some(n), None);
                } else if (1..=2).contains(&len) {
                    (offset.hours, offset.minutes) = (Some(n), Some(0));
                } else if (3..=4).contains(&len) {
                    (offset.hours, offset.minutes) = (Some(n / 100), Some(n % 100));
                } else {
                    return None;
                }
            }
            Token::Symbol(b'+' | b'-' | b')') if read_number => return None,
            _ => {}
        }
        token = tokens.next();
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every string of `corpora/dates/` (hand-picked and drawn at random, `cargo xtask dates`)
    /// gives what Node 20's `Date.parse` gave, in UTC and in New York.
    #[test]
    fn date_parse_agrees_with_node() {
        let corpus = include_str!("../../../corpora/dates/date-parse.jsonl");
        let new_york = TimeZone::get("America/New_York").unwrap();
        let (mut checked, mut valid) = (0, 0);
        let mut wrong = Vec::new();
        for line in corpus.lines() {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            let s = row["s"].as_str().unwrap();
            for (zone, key) in [(&TimeZone::UTC, "utc"), (&new_york, "new_york")] {
                let expected = row[key].as_f64();
                let got = parse_js_date(s.as_bytes(), zone);
                if got != expected {
                    wrong.push(format!("{s:?} in {key}: Node {expected:?}, ours {got:?}"));
                }
                checked += 1;
                valid += usize::from(expected.is_some());
            }
        }
        assert!(wrong.is_empty(), "{} of {checked} differ:\n{}", wrong.len(), wrong[..wrong.len().min(40)].join("\n"));
        assert!(checked > 24_000 && valid > 6_000, "{checked} checked, {valid} valid");
    }

    /// `Math.round` as Node gave it, for the rounding of `stats.mtimeMs` into `stats.mtime`.
    #[test]
    fn rounds_as_math_round() {
        for (x, rounded) in [
            (1_767_225_600_746.5, 1_767_225_600_747.0),
            (1_767_225_600_746.4, 1_767_225_600_746.0),
            (-0.399_999_999_999_977_26, 0.0),
            (-0.5, 0.0),
            (-0.6, -1.0),
            (-1.5, -1.0),
            (2.5, 3.0),
        ] {
            assert_eq!(js_round(x), rounded, "{x}");
        }
        assert!(js_round(f64::NAN).is_nan());
        assert_eq!(js_round(f64::INFINITY), f64::INFINITY);
    }

    /// The word-at-a-time reader of `toISOString`'s shape agrees with the full reader on
    /// canonical times and on every one-byte change of them (digits, separators, signs, case,
    /// non-ASCII), out-of-range parts included.
    #[test]
    fn iso_shape_read_whole_agrees_with_the_full_reader() {
        let bases = [
            "2026-01-01T02:44:00.431Z",
            "2024-02-29T23:59:59.999Z",
            "2025-02-28T24:00:00.000Z",
            "1970-01-01T00:00:00.000Z",
            "0000-12-31T12:30:45.678Z",
            "9999-06-30T09:08:07.006Z",
        ];
        let swaps = b"0123456789-:.TZtz+ /\x80\xffa9";
        let utc = TimeZone::UTC;
        let (mut checked, mut fast) = (0, 0);
        for base in bases {
            for at in 0..=24 {
                for &c in swaps {
                    let mut s = base.as_bytes().to_vec();
                    if at < 24 {
                        s[at] = c;
                    }
                    fast += usize::from(iso_fields(&s).is_some());
                    assert_eq!(
                        parse_js_date(&s, &TimeZone::UTC),
                        parse_in(&s, || &utc),
                        "{}",
                        String::from_utf8_lossy(&s)
                    );
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 6 * 25 * swaps.len());
        assert!(fast > 900, "{fast}");
    }

    /// Spec format.md §9: `created` is `new Date(header.timestamp)` and `modified` reads
    /// `Date.parse(entry.timestamp)`; V8 carries a day past the month's end into the next month
    /// and takes what is not ISO by its fallback.
    #[test]
    fn reads_what_v8_reads() {
        let utc = |s: &str| parse_js_date(s.as_bytes(), &TimeZone::UTC);
        assert_eq!(utc("2025-02-29T00:00:00.000Z"), utc("2025-03-01T00:00:00.000Z"));
        assert_eq!(utc("2025-02-30"), utc("2025-03-02"));
        assert_eq!(utc("2025-01-01T24:00:00.000Z"), Some(1_735_776_000_000.0));
        assert_eq!(utc("2025-13-01T00:00:00.000Z"), None);
        assert_eq!(utc("0"), utc("2000-01-01T00:00:00Z"));
        assert_eq!(utc("Thu, 01 Jan 2026 00:00:00 GMT"), utc("2026-01-01T00:00:00Z"));
        assert_eq!(utc("Jan 5 2026 10:00 PM EST"), utc("2026-01-06T03:00:00Z"));
        assert_eq!(utc("2026-01-05T10:00:00.000Z "), None);
        let new_york = TimeZone::get("America/New_York").unwrap();
        // A date alone is UTC; with a time and no offset it is local.
        assert_eq!(parse_js_date(b"2026-01-05", &new_york), utc("2026-01-05T00:00:00Z"));
        assert_eq!(parse_js_date(b"2026-01-05T10:00", &new_york), utc("2026-01-05T15:00:00Z"));
        // Skipped by the change to summer time: the offset before it; repeated: the first.
        assert_eq!(parse_js_date(b"2026-03-08T02:30:00", &new_york), utc("2026-03-08T07:30:00Z"));
        assert_eq!(parse_js_date(b"2026-11-01T01:30:00", &new_york), utc("2026-11-01T05:30:00Z"));
    }
}
