//! One top-level property of an entry as JavaScript sees it: absent (`undefined`), `null`, a
//! string, or any other JSON value kept as raw text.

use std::borrow::Cow;

use bumpalo::Bump;

use crate::json::{self, JsStr, Span, Value, scan::SpanKind};

/// A property value read without a full parse. Equal as JavaScript's `Map` keys compare
/// (`SameValueZero`) for what ids can be: strings by their text, numbers by their value (`0`,
/// `-0` and `0.0` are one key, as are `1` and `1e0`); other raw values by their text.
#[derive(Debug, Clone, Default)]
pub enum PropertyValue<'a> {
    /// The key is missing (`undefined`).
    #[default]
    Absent,
    /// `null`.
    Null,
    /// A string.
    Str(JsStr<'a>),
    /// Any other JSON value, as its raw text (numbers, booleans, objects, arrays).
    Raw(Cow<'a, [u8]>),
}

impl PartialEq for PropertyValue<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (PropertyValue::Absent, PropertyValue::Absent) | (PropertyValue::Null, PropertyValue::Null) => true,
            (PropertyValue::Str(a), PropertyValue::Str(b)) => a == b,
            (PropertyValue::Raw(a), PropertyValue::Raw(b)) => match (self.raw_number(), other.raw_number()) {
                (Some(x), Some(y)) => x == y,
                (None, None) => a == b,
                _ => false,
            },
            _ => false,
        }
    }
}

impl Eq for PropertyValue<'_> {}

impl std::hash::Hash for PropertyValue<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            PropertyValue::Absent => state.write_u8(0),
            PropertyValue::Null => state.write_u8(1),
            PropertyValue::Str(s) => {
                state.write_u8(2);
                s.hash(state);
            }
            PropertyValue::Raw(raw) => match self.raw_number() {
                // `-0` and `0` hash alike (`+ 0.0` turns the one into the other).
                Some(n) => {
                    state.write_u8(3);
                    state.write_u64((n + 0.0).to_bits());
                }
                None => {
                    state.write_u8(4);
                    raw.hash(state);
                }
            },
        }
    }
}

impl<'a> PropertyValue<'a> {
    /// The value of a raw number (its text starts with `-` or a digit).
    fn raw_number(&self) -> Option<f64> {
        match self {
            PropertyValue::Raw(raw) if matches!(raw.first(), Some(b'-' | b'0'..=b'9')) => Some(self.to_number()),
            _ => None,
        }
    }

    /// Reads the value at `span` of `line`.
    pub fn from_span(line: &'a [u8], span: Option<Span>) -> Self {
        let Some(span) = span else { return PropertyValue::Absent };
        let raw = &line[span.start as usize..span.end as usize];
        match span.kind {
            SpanKind::Null => PropertyValue::Null,
            SpanKind::Str { escaped } => PropertyValue::Str(decode_string(raw, escaped)),
            _ => PropertyValue::Raw(Cow::Borrowed(raw)),
        }
    }

    /// [`PropertyValue::time_value`] of the field at `span`, without decoding a plain string first (a
    /// time is ASCII, and bytes that are not decode to text that is not a time either).
    pub fn time_of_span(line: &[u8], span: Option<Span>, local: &jiff::tz::TimeZone) -> f64 {
        match span {
            Some(Span { start, end, kind: SpanKind::Str { escaped: false } }) => {
                crate::jsdate::parse_js_date(&line[start as usize..end as usize], local).unwrap_or(f64::NAN)
            }
            _ => PropertyValue::from_span(line, span).time_value(local),
        }
    }

    /// Converts a parsed value (used where a line needed a full parse).
    pub fn from_value(v: Option<&Value<'_>>) -> PropertyValue<'static> {
        match v {
            None => PropertyValue::Absent,
            Some(Value::Null) => PropertyValue::Null,
            Some(Value::String(s)) => PropertyValue::Str(s.clone().into_owned()),
            Some(other) => PropertyValue::Raw(Cow::Owned(json::to_json(other).into_bytes())),
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&JsStr<'a>> {
        match self {
            PropertyValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// `String(value)`, as a regular expression's `test` reads a value: a string as it is
    /// (borrowed), `undefined`, `null`, numbers as JavaScript prints them, arrays joined, objects
    /// as `[object Object]`.
    pub fn to_js_string(&self) -> Cow<'_, [u8]> {
        if let PropertyValue::Str(s) = self {
            return Cow::Borrowed(s.as_bytes());
        }
        let mut out = Vec::new();
        match self.to_value() {
            None => out.extend_from_slice(b"undefined"),
            Some(Value::Null) => out.extend_from_slice(b"null"),
            Some(v) => crate::info::join_text(Some(&v), &mut out),
        }
        Cow::Owned(out)
    }

    /// Whether the value equals the string `s`.
    pub fn is(&self, s: &str) -> bool {
        matches!(self, PropertyValue::Str(v) if v.as_bytes() == s.as_bytes())
    }

    /// JavaScript truthiness.
    pub fn is_truthy(&self) -> bool {
        match self {
            PropertyValue::Absent | PropertyValue::Null => false,
            PropertyValue::Str(s) => !s.is_empty(),
            PropertyValue::Raw(raw) => match raw.first() {
                Some(b'{' | b'[') => true,
                Some(b't') => true,
                Some(b'f') => false,
                _ => std::str::from_utf8(raw).ok().and_then(|t| t.parse::<f64>().ok()).is_some_and(|n| n != 0.0),
            },
        }
    }

    /// JavaScript's `ToNumber` (`undefined` is `NaN`, `null` 0, strings trimmed and parsed;
    /// objects and arrays `NaN`).
    pub fn to_number(&self) -> f64 {
        match self {
            PropertyValue::Absent => f64::NAN,
            PropertyValue::Null => 0.0,
            PropertyValue::Str(s) => json::string_to_number(s.as_bytes()),
            PropertyValue::Raw(raw) => match raw.first() {
                Some(b't') => 1.0,
                Some(b'f') => 0.0,
                Some(b'-' | b'0'..=b'9') => short_decimal(raw)
                    .unwrap_or_else(|| std::str::from_utf8(raw).ok().and_then(|t| t.parse().ok()).unwrap_or(f64::NAN)),
                _ => f64::NAN,
            },
        }
    }

    /// The full value; `None` for `undefined`.
    pub fn to_value(&self) -> Option<Value<'a>> {
        match self {
            PropertyValue::Absent => None,
            PropertyValue::Null => Some(Value::Null),
            PropertyValue::Str(s) => Some(Value::String(s.clone())),
            PropertyValue::Raw(raw) => {
                let arena = Bump::new();
                json::parse_value(raw.as_ref(), &arena).ok().map(Value::into_owned)
            }
        }
    }

    /// `new Date(value).getTime()`: strings through `Date.parse` (a time without an offset in
    /// `local`), numbers as they are, `null` as 0.
    pub fn time_value(&self, local: &jiff::tz::TimeZone) -> f64 {
        match self {
            PropertyValue::Absent => f64::NAN,
            PropertyValue::Null => 0.0,
            PropertyValue::Str(s) => crate::jsdate::parse_js_date(s.as_bytes(), local).unwrap_or(f64::NAN),
            PropertyValue::Raw(raw) => match raw.first() {
                Some(b't') => 1.0,
                Some(b'f') => 0.0,
                Some(b'-' | b'0'..=b'9') => {
                    let n = short_decimal(raw)
                        .or_else(|| std::str::from_utf8(raw).ok().and_then(|t| t.parse::<f64>().ok()))
                        .unwrap_or(f64::NAN);
                    if n.abs() <= 8.64e15 { n.trunc() + 0.0 } else { f64::NAN }
                }
                _ => f64::NAN,
            },
        }
    }

    /// Detaches the value from its input.
    pub fn into_owned(self) -> PropertyValue<'static> {
        match self {
            PropertyValue::Absent => PropertyValue::Absent,
            PropertyValue::Null => PropertyValue::Null,
            PropertyValue::Str(s) => PropertyValue::Str(s.into_owned()),
            PropertyValue::Raw(raw) => PropertyValue::Raw(Cow::Owned(raw.into_owned())),
        }
    }
}

/// Whether a string's raw text is UTF-8. Short ASCII strings (ids, types, timestamps) are most:
/// a plain loop beats the SIMD check on them.
fn is_utf8(raw: &[u8]) -> bool {
    if raw.len() <= 64 {
        raw.is_ascii() || std::str::from_utf8(raw).is_ok()
    } else {
        simdutf8::basic::from_utf8(raw).is_ok()
    }
}

/// Appends a raw string's text to `out`, decoded as [`decode_string`] decodes it.
pub fn append_decoded(raw: &[u8], escaped: bool, out: &mut Vec<u8>) {
    append_checked(raw, escaped, is_utf8(raw), out);
}

/// Appends a raw string's text as `JSON.stringify` writes it (without the quotes): what
/// [`append_decoded`] gives, escaped again. Text that already reads so (UTF-8, escaped only where
/// and as `JSON.stringify` escapes) is copied as it is, which is nearly all of it.
pub fn append_restringified(raw: &[u8], escaped: bool, out: &mut Vec<u8>) {
    if is_utf8(raw) && (!escaped || escapes_as_stringify_writes(raw)) {
        out.extend_from_slice(raw);
        return;
    }
    let mut decoded = Vec::new();
    append_decoded(raw, escaped, &mut decoded);
    json::write_string_body(&decoded, out);
}

/// Whether every escape of a valid string's raw text is one `JSON.stringify` writes: `\"`,
/// `\\`, the short forms `\b \f \n \r \t`, and `\u00xx` in lowercase for the other C0
/// controls. (It writes `/`, other characters and surrogate pairs as they are; lone surrogates
/// are left to the slow path.)
fn escapes_as_stringify_writes(raw: &[u8]) -> bool {
    let mut i = 0;
    while let Some(k) = memchr::memchr(b'\\', &raw[i..]) {
        let at = i + k;
        i = match raw.get(at + 1..) {
            Some([b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't', ..]) => at + 2,
            Some([b'u', b'0', b'0', high @ (b'0' | b'1'), low @ (b'0'..=b'9' | b'a'..=b'f'), ..]) => {
                let low = if low.is_ascii_digit() { low - b'0' } else { low - b'a' + 10 };
                if matches!((high - b'0') << 4 | low, 8 | 9 | 10 | 12 | 13) {
                    return false;
                }
                at + 6
            }
            _ => return false,
        };
    }
    true
}

/// [`append_decoded`] once UTF-8 validity is known: invalid bytes become U+FFFD, as Node decodes.
fn append_checked(raw: &[u8], escaped: bool, valid: bool, out: &mut Vec<u8>) {
    match (valid, escaped) {
        (true, false) => out.extend_from_slice(raw),
        (true, true) => json::unescape_into(raw, out),
        (false, _) => {
            let text = String::from_utf8_lossy(raw);
            if escaped { json::unescape_into(text.as_bytes(), out) } else { out.extend_from_slice(text.as_bytes()) }
        }
    }
}

/// The value of a JSON number written `[-]digits[.digits]` with at most 15 digits in all (token
/// counts and costs, as Pi writes them), exactly: the digits make a whole number below 2^53 and
/// the power of ten is exact, so one division rounds as a full parse does. `None` for any other
/// text (exponents, longer numbers), which the full parse takes.
pub(crate) fn short_decimal(raw: &[u8]) -> Option<f64> {
    const POW10: [f64; 16] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];
    const POW10_INT: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];
    let (negative, body) = match raw.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, raw),
    };
    // At most 15 digits, and one point after the first.
    if body.is_empty() || body.len() > 16 {
        return None;
    }
    // A whole number of nine to fifteen digits (a time in milliseconds has thirteen) in two
    // reads of eight bytes, the second one ending with the last digit: 98 instructions a call
    // where a byte-by-byte loop takes 161 (callgrind, the picker on 129 files of the bench
    // store).
    if body.len() > 8
        && body.len() < 16
        && let (Some(&head), Some(&tail)) = (body.first_chunk::<8>(), body.last_chunk::<8>())
    {
        let rest = body.len() - 8;
        // The tail's bytes already in the head become zeros.
        let overlap = 8 * (8 - rest);
        let tail = u64::from_le_bytes(tail) >> overlap << overlap | ZERO_DIGITS >> (64 - overlap);
        if let (Some(high), Some(low)) = (eight_digits(u64::from_le_bytes(head)), eight_digits(tail)) {
            let value = (high * POW10_INT[rest] + low) as f64;
            return Some(if negative { -value } else { value });
        }
    }
    let (mut n, mut point) = (0u64, None);
    for (k, &c) in body.iter().enumerate() {
        match c {
            b'0'..=b'9' => n = n * 10 + u64::from(c - b'0'),
            b'.' if k > 0 && point.is_none() => point = Some(k),
            _ => return None,
        }
    }
    let value = match point {
        None if body.len() <= 15 => n as f64,
        Some(at) => n as f64 / POW10[body.len() - at - 1],
        None => return None,
    };
    Some(if negative { -value } else { value })
}

/// Eight ASCII zeros.
const ZERO_DIGITS: u64 = 0x3030_3030_3030_3030;

/// The number eight ASCII digits make (the first in the lowest byte of `w`), if they all are.
#[inline(always)]
fn eight_digits(w: u64) -> Option<u64> {
    if !all_digits(w) {
        return None;
    }
    // Pairs of digits, then fours, then all eight, each step within its lanes.
    let w = w - ZERO_DIGITS;
    let w = (w.wrapping_mul(10) + (w >> 8)) & 0x00FF_00FF_00FF_00FF;
    let w = (w.wrapping_mul(100) + (w >> 16)) & 0x0000_FFFF_0000_FFFF;
    Some((w.wrapping_mul(10_000) + (w >> 32)) & 0xFFFF_FFFF)
}

/// Whether each of the eight bytes of `w` is an ASCII digit (in either byte order): its high
/// nibble is 3, and adding 6 keeps it so.
#[inline(always)]
fn all_digits(w: u64) -> bool {
    const HIGH_NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    w & HIGH_NIBBLES == ZERO_DIGITS && w.wrapping_add(0x0606_0606_0606_0606) & HIGH_NIBBLES == ZERO_DIGITS
}

/// A number of exactly thirteen digits (a time in milliseconds from 2001 to 2286) as its first and
/// last eight bytes read big-endian: two such pairs compare as their numbers do, without parsing.
#[inline(always)]
pub(crate) fn thirteen_digits(raw: &[u8]) -> Option<(u64, u64)> {
    let digits: &[u8; 13] = raw.try_into().ok()?;
    let (high, low) = (u64::from_be_bytes(*digits.first_chunk()?), u64::from_be_bytes(*digits.last_chunk()?));
    (all_digits(high) && all_digits(low)).then_some((high, low))
}

/// The number a [`thirteen_digits`] pair stands for.
pub(crate) fn thirteen_digits_value((high, low): (u64, u64)) -> f64 {
    let mut digits = [0u8; 13];
    digits[..8].copy_from_slice(&high.to_be_bytes());
    digits[5..].copy_from_slice(&low.to_be_bytes());
    short_decimal(&digits).unwrap_or(f64::NAN)
}

/// Decodes a string's raw text (between the quotes) into WTF-8, borrowing when it needs no work.
pub fn decode_string(raw: &[u8], escaped: bool) -> JsStr<'_> {
    let valid = is_utf8(raw);
    if !escaped && valid {
        return JsStr::borrowed(raw);
    }
    let mut out = Vec::with_capacity(raw.len());
    append_checked(raw, escaped, valid, &mut out);
    JsStr(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A raw string's text escaped again is what `JSON.stringify` writes of its decoded value,
    /// whether it is copied (escapes as `JSON.stringify` writes them) or decoded and escaped: on
    /// drawn strings of quotes, backslashes, `/`, every C0 control, DEL, accents, emoji, line
    /// separators and lone surrogates, each written in the ways JSON allows (raw, short escapes,
    /// `\u` in either case, surrogate pairs), and bytes that are not UTF-8.
    #[test]
    fn restringified_text_is_stringify_of_the_decoded_text() {
        let chars: Vec<u32> = (0u32..0x20)
            .chain([0x22, 0x5c, 0x2f, 0x41, 0x7a, 0x20, 0x7f, 0xe9, 0x2028, 0x1f600, 0xd800, 0xdfff])
            .collect();
        let mut next = crate::json::scan::tests::xorshift(0x7e57_0f57_1e0f_a11d);
        let (mut copied, mut rewritten) = (0, 0);
        for _ in 0..50_000 {
            let mut raw = Vec::new();
            for _ in 0..(next() % 12) {
                let c = chars[(next() % chars.len() as u64) as usize];
                let how = next() % 4;
                let short = match c {
                    0x22 => Some('"'),
                    0x5c => Some('\\'),
                    0x2f => Some('/'),
                    8 => Some('b'),
                    12 => Some('f'),
                    10 => Some('n'),
                    13 => Some('r'),
                    9 => Some('t'),
                    _ => None,
                };
                let units: Vec<u32> = match char::from_u32(c) {
                    Some(ch) => ch.encode_utf16(&mut [0; 2]).iter().map(|&u| u32::from(u)).collect(),
                    None => vec![c], // a lone surrogate
                };
                match (how, short, char::from_u32(c)) {
                    (0, Some(e), _) => raw.extend_from_slice(format!("\\{e}").as_bytes()),
                    (1, _, _) | (_, _, None) => {
                        units.iter().for_each(|u| raw.extend_from_slice(format!("\\u{u:04x}").as_bytes()))
                    }
                    (2, _, _) => units.iter().for_each(|u| raw.extend_from_slice(format!("\\u{u:04X}").as_bytes())),
                    (_, _, Some(ch)) if c >= 0x20 && c != 0x22 && c != 0x5c => {
                        raw.extend_from_slice(ch.to_string().as_bytes())
                    }
                    _ => raw.extend_from_slice(format!("\\u{c:04x}").as_bytes()),
                }
                if next().is_multiple_of(40) {
                    raw.push(0xff); // not UTF-8
                }
            }
            let escaped = raw.contains(&b'\\');
            let mut decoded = Vec::new();
            append_decoded(&raw, escaped, &mut decoded);
            let mut expected = Vec::new();
            json::write_string_body(&decoded, &mut expected);
            let mut ours = Vec::new();
            append_restringified(&raw, escaped, &mut ours);
            assert_eq!(ours, expected, "{}", String::from_utf8_lossy(&raw));
            if ours == raw { copied += 1 } else { rewritten += 1 }
        }
        assert!(copied > 5_000 && rewritten > 5_000, "too narrow a draw: {copied} copied, {rewritten} rewritten");
    }

    /// Every eight bytes of digits read as their number, and eight bytes with any other byte among
    /// them (the bytes just outside `0`..=`9` above all) are not digits.
    #[test]
    fn eight_digits_read_as_their_number() {
        let mut next = crate::json::scan::tests::xorshift(0x0dd5_ee11_8a7e_d161);
        for _ in 0..200_000 {
            let value = next() % 100_000_000;
            let text = format!("{value:08}");
            assert_eq!(eight_digits(u64::from_le_bytes(text.as_bytes().try_into().unwrap())), Some(value), "{text}");
            let mut bytes: [u8; 8] = text.as_bytes().try_into().unwrap();
            let odd = [b'/', b':', b'.', b'-', b' ', 0, 0x80, 0xb0, 0x39 + 0x10, b'0' - 0x10, b'e'];
            bytes[(next() % 8) as usize] = odd[(next() % odd.len() as u64) as usize];
            assert_eq!(eight_digits(u64::from_le_bytes(bytes)), None, "{bytes:?}");
        }
    }

    /// Thirteen digits compare as their numbers do; anything else is not taken.
    #[test]
    fn thirteen_digits_order_as_numbers() {
        let mut next = crate::json::scan::tests::xorshift(0x1234_5678_9abc_def1);
        for _ in 0..100_000 {
            let (a, b) =
                (1_000_000_000_000 + next() % 9_000_000_000_000, 1_000_000_000_000 + next() % 9_000_000_000_000);
            let (da, db) = (thirteen_digits(a.to_string().as_bytes()), thirteen_digits(b.to_string().as_bytes()));
            assert_eq!(da.cmp(&db), a.cmp(&b), "{a} {b}");
        }
        for odd in
            ["176723426803", "17672342680331", "1767234268.03", "-176723426803", "17672342680e3", "1767234268:33"]
        {
            assert_eq!(thirteen_digits(odd.as_bytes()), None, "{odd}");
        }
    }

    /// Plain decimals of up to 15 digits read exactly as the full parse reads them (bit for
    /// bit, signs and zeros included); longer ones and exponents are left to it.
    #[test]
    fn short_decimals_equal_the_full_parse() {
        let mut next = crate::json::scan::tests::xorshift(0x5eed_1234_abcd_ef01);
        let mut fast = 0;
        for _ in 0..300_000 {
            let whole_len = 1 + (next() % 16) as usize;
            let fraction_len = (next() % 16) as usize;
            let mut text = String::new();
            if next().is_multiple_of(4) {
                text.push('-');
            }
            let digit = |r: u64| char::from(b'0' + (r % 10) as u8);
            // Costs are mostly 0.000something: many leading zeros.
            if next().is_multiple_of(2) {
                text.push('0');
            } else {
                (0..whole_len).for_each(|_| text.push(digit(next())));
            }
            if fraction_len > 0 {
                text.push('.');
                let zeros = (next() % 8) as usize;
                (0..fraction_len).for_each(|k| text.push(if k < zeros { '0' } else { digit(next()) }));
            }
            let expected: f64 = text.parse().unwrap();
            let got = PropertyValue::Raw(Cow::Borrowed(text.as_bytes())).to_number();
            assert_eq!(got.to_bits(), expected.to_bits(), "{text}");
            fast += usize::from(short_decimal(text.as_bytes()).is_some());
        }
        assert!(fast > 100_000, "too few drawn numbers took the short path: {fast}");
        let times = ["1767515207491", "-123456789", "100000000", "999999999999999", "-000000000", "12345678.9"];
        for text in ["1e5", "-0.0", "0", "123456789012345678", "9007199254740993", "0.1", "-", "1.5e-3"]
            .into_iter()
            .chain(times)
        {
            let expected = text.parse::<f64>().unwrap_or(f64::NAN);
            let got = PropertyValue::Raw(Cow::Borrowed(text.as_bytes())).to_number();
            assert!(got.to_bits() == expected.to_bits() || got.is_nan() && expected.is_nan(), "{text}");
        }
    }
}
