//! JavaScript string semantics the reference relies on: `trim`, whitespace, `toISOString`, and
//! lossy display of WTF-8 strings (`Date.parse` is [`crate::jsdate`]).

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
pub(crate) fn leading_ws_len(b: &[u8]) -> Option<usize> {
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
    fn iso_string_round_trips() {
        for s in ["2025-02-01T10:00:01.000Z", "1969-12-31T23:59:59.999Z", "+275760-09-13T00:00:00.000Z"] {
            let ms = crate::jsdate::parse_js_date(s.as_bytes(), &jiff::tz::TimeZone::UTC).unwrap();
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
