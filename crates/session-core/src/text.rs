//! JavaScript string semantics the reference relies on: `trim`, whitespace, `Date.parse` of ISO
//! timestamps, and lossy display of WTF-8 strings.

/// True for the characters JavaScript's `String.prototype.trim` removes.
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{d}'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    )
}

/// Length of a JS whitespace character encoded at the start of `b`, if there is one.
fn leading_ws_len(b: &[u8]) -> Option<usize> {
    match b {
        [0x09..=0x0d | b' ', ..] => Some(1),
        [0xc2, 0xa0, ..] => Some(2),
        [0xe1, 0x9a, 0x80, ..]
        | [0xe2, 0x80, 0x80..=0x8a | 0xa8 | 0xa9 | 0xaf, ..]
        | [0xe2, 0x81, 0x9f, ..]
        | [0xe3, 0x80, 0x80, ..]
        | [0xef, 0xbb, 0xbf, ..] => Some(3),
        _ => None,
    }
}

/// Length of a JS whitespace character encoded at the end of `b`, if there is one.
fn trailing_ws_len(b: &[u8]) -> Option<usize> {
    let n = b.len();
    for len in [1, 2, 3] {
        if n >= len && leading_ws_len(&b[n - len..]) == Some(len) {
            return Some(len);
        }
    }
    None
}

/// `String.prototype.trim` over WTF-8 bytes.
pub fn js_trim(mut b: &[u8]) -> &[u8] {
    while let Some(n) = leading_ws_len(b) {
        b = &b[n..];
    }
    while let Some(n) = trailing_ws_len(b) {
        b = &b[..b.len() - n];
    }
    b
}

/// Milliseconds since the epoch for `Date.parse(s)`, or `None` where JavaScript gives `NaN`.
///
/// Implements the ECMAScript date-time string format (`YYYY[-MM[-DD]][THH:mm[:ss[.sss]]][Z|±HH:mm]`,
/// with six-digit signed years). A date-time without an offset is taken as UTC (the reference
/// would use the machine's local zone); V8's non-ISO fallback formats give `None`.
pub fn parse_js_date(s: &[u8]) -> Option<f64> {
    match iso_fields(s) {
        Some(fields) => date_time_value(fields),
        None => parse_date_time(s),
    }
}

/// [`parse_js_date`] for every shape the format allows, a part at a time.
fn parse_date_time(s: &[u8]) -> Option<f64> {
    let mut p = DateCursor { s, i: 0 };
    let year: i64 = match p.peek() {
        Some(sign @ (b'+' | b'-')) => {
            p.i += 1;
            let y = p.digits(6)? as i64;
            if sign == b'-' {
                if y == 0 {
                    return None;
                }
                -y
            } else {
                y
            }
        }
        _ => p.digits(4)? as i64,
    };
    let (mut month, mut day) = (1, 1);
    if p.eat(b'-') {
        month = p.digits(2)?;
        if p.eat(b'-') {
            day = p.digits(2)?;
        }
    }
    let (mut hour, mut minute, mut second, mut millis) = (0, 0, 0, 0.0);
    let mut offset_min: i64 = 0;
    if p.eat(b'T') || p.eat(b't') {
        hour = p.digits(2)?;
        if !p.eat(b':') {
            return None;
        }
        minute = p.digits(2)?;
        if p.eat(b':') {
            second = p.digits(2)?;
            if p.eat(b'.') {
                let start = p.i;
                while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                    p.i += 1;
                }
                let frac = &s[start..p.i];
                if frac.is_empty() {
                    return None;
                }
                let mut ms = 0u32;
                for (k, d) in frac.iter().take(3).enumerate() {
                    ms += u32::from(d - b'0') * [100, 10, 1][k];
                }
                millis = f64::from(ms);
            }
        }
        match p.peek() {
            Some(b'Z' | b'z') => p.i += 1,
            Some(sign @ (b'+' | b'-')) => {
                p.i += 1;
                let oh = p.digits(2)? as i64;
                if !p.eat(b':') {
                    return None;
                }
                let om = p.digits(2)? as i64;
                if oh > 23 || om > 59 {
                    return None;
                }
                offset_min = (oh * 60 + om) * if sign == b'-' { -1 } else { 1 };
            }
            _ => {}
        }
    } else if matches!(p.peek(), Some(b'Z' | b'z')) {
        p.i += 1;
    }
    if p.i != s.len() {
        return None;
    }
    date_time_value(DateFields { year, month, day, hour, minute, second, millis, offset_min })
}

/// The parts of a date-time string, as read.
struct DateFields {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    millis: f64,
    offset_min: i64,
}

/// The fields of `YYYY-MM-DDTHH:mm:ss.sssZ` (what `toISOString` writes, so nearly every time in
/// a session), read a word at a time; `None` for any other shape, which the full reader takes.
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
    Some(DateFields {
        year: i64::from(n(0, 4)),
        month: n(5, 2),
        day: n(8, 2),
        hour: n(11, 2),
        minute: n(14, 2),
        second: n(17, 2),
        millis: f64::from(n(20, 3)),
        offset_min: 0,
    })
}

/// The time value of read fields, or `None` where they are out of range.
fn date_time_value(f: DateFields) -> Option<f64> {
    let DateFields { year, month, day, hour, minute, second, millis, offset_min } = f;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 24 || minute > 59 || second > 59 || (hour == 24 && (minute, second, millis) != (0, 0, 0.0)) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let ms = (days * 86_400 + i64::from(hour) * 3600 + i64::from(minute) * 60 + i64::from(second) - offset_min * 60)
        as f64
        * 1000.0
        + millis;
    (ms.abs() <= 8.64e15).then_some(ms)
}

struct DateCursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl DateCursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        self.i += usize::from(hit);
        hit
    }
    fn digits(&mut self, n: usize) -> Option<u32> {
        let d = self.s.get(self.i..self.i + n)?;
        if !d.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.i += n;
        Some(d.iter().fold(0, |acc, c| acc * 10 + u32::from(c - b'0')))
    }
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
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

/// `00` to `99`, two bytes each.
const TWO_DIGITS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// `Date.prototype.toISOString()` for a valid time value in milliseconds.
pub fn js_iso_string(ms: f64) -> String {
    let mut out = Vec::with_capacity(27);
    push_js_iso_string(ms, &mut out);
    // Only ASCII is written.
    String::from_utf8(out).unwrap_or_default()
}

/// [`js_iso_string`] appended to `out`. Digits are written directly: through `format!` the two
/// dates of a listing row cost about 7,000 instructions, a tenth of a small session's listing.
pub fn push_js_iso_string(ms: f64, out: &mut Vec<u8>) {
    let total = ms as i64;
    let days = total.div_euclid(86_400_000);
    let rem = total.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let digits = |out: &mut Vec<u8>, n: u64, width: u32| {
        // Two digits at a time: the widths are 2, 3, 4 and 6.
        let mut text = [b'0'; 6];
        let mut n = n;
        let mut k = 6;
        while n > 0 && k > 0 {
            let pair = &TWO_DIGITS[(n % 100) as usize * 2..][..2];
            text[k - 2..k].copy_from_slice(pair);
            n /= 100;
            k -= 2;
        }
        out.extend_from_slice(&text[6 - width as usize..]);
    };
    match y {
        0..=9999 => digits(out, y as u64, 4),
        ..0 => {
            out.push(b'-');
            digits(out, y.unsigned_abs(), 6);
        }
        _ => {
            out.push(b'+');
            digits(out, y as u64, 6);
        }
    }
    let rem = rem as u64;
    for (sep, n, width) in [
        (b'-', u64::from(m), 2),
        (b'-', u64::from(d), 2),
        (b'T', rem / 3_600_000, 2),
        (b':', rem / 60_000 % 60, 2),
        (b':', rem / 1000 % 60, 2),
        (b'.', rem % 1000, 3),
    ] {
        out.push(sep);
        digits(out, n, width);
    }
    out.push(b'Z');
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_like_javascript() {
        assert_eq!(js_trim(" \u{a0}ab c\u{2028}\t".as_bytes()), b"ab c");
        assert_eq!(js_trim("\u{feff}".as_bytes()), b"");
        assert_eq!(js_trim(b"\x00x"), b"\x00x");
    }

    #[test]
    fn parses_iso_dates_like_date_parse() {
        assert_eq!(parse_js_date(b"2025-02-01T10:00:01.000Z"), Some(1_738_404_001_000.0));
        assert_eq!(parse_js_date(b"2025-03-01T00:00:00Z"), Some(1_740_787_200_000.0));
        assert_eq!(parse_js_date(b"2025-03-01"), Some(1_740_787_200_000.0));
        assert_eq!(parse_js_date(b"2025-03-01T01:00:00+01:00"), Some(1_740_787_200_000.0));
        assert_eq!(parse_js_date(b"1970-01-01T00:00:00.0009Z"), Some(0.0));
        assert_eq!(parse_js_date(b"not a date"), None);
        assert_eq!(parse_js_date(b"2025-02-30"), None);
        assert_eq!(parse_js_date(b""), None);
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
        let mut checked = 0;
        for base in bases {
            assert_eq!(parse_js_date(base.as_bytes()), parse_date_time(base.as_bytes()), "{base}");
            for at in 0..24 {
                for &c in swaps {
                    let mut s = base.as_bytes().to_vec();
                    s[at] = c;
                    assert_eq!(parse_js_date(&s), parse_date_time(&s), "{}", String::from_utf8_lossy(&s));
                    checked += 1;
                }
            }
        }
        assert!(checked > 3000);
        assert!(iso_fields(b"2026-01-01T02:44:00.431Z").is_some());
        assert_eq!(parse_js_date(b"2025-02-29T00:00:00.000Z"), None);
        assert_eq!(parse_js_date(b"2025-13-01T00:00:00.000Z"), None);
        assert_eq!(parse_js_date(b"2025-01-01T24:00:00.000Z"), Some(1_735_776_000_000.0));
    }

    #[test]
    fn iso_string_round_trips() {
        for s in ["2025-02-01T10:00:01.000Z", "1969-12-31T23:59:59.999Z", "+275760-09-13T00:00:00.000Z"] {
            let ms = parse_js_date(s.as_bytes()).unwrap();
            assert_eq!(js_iso_string(ms), s);
        }
    }

    /// The digits written directly, against `format!` over the whole range of valid times.
    #[test]
    fn iso_string_equals_the_formatted_one() {
        let formatted = |ms: f64| {
            let total = ms as i64;
            let rem = total.rem_euclid(86_400_000);
            let (y, m, d) = civil_from_days(total.div_euclid(86_400_000));
            let year = match y {
                0..=9999 => format!("{y:04}"),
                ..0 => format!("-{:06}", -y),
                _ => format!("+{y:06}"),
            };
            let (h, min, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
            format!("{year}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{milli:03}Z")
        };
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut checked = 0;
        for edge in [0.0, -1.0, 8.64e15, -8.64e15, -62_167_219_200_000.0, -62_167_219_200_001.0, 253_402_300_800_000.0]
        {
            assert_eq!(js_iso_string(edge), formatted(edge), "{edge}");
            checked += 1;
        }
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let ms = (state % 17_280_000_000_000_001) as f64 - 8.64e15;
            assert_eq!(js_iso_string(ms), formatted(ms), "{ms}");
            checked += 1;
        }
        assert_eq!(checked, 200_007);
    }
}
