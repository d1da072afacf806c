//! `JSON.stringify` output: JavaScript number formatting and string escaping.

use super::{JsStr, Value};

/// Serialises a value as `JSON.stringify(value)` does (no indentation).
pub fn to_json(v: &Value<'_>) -> String {
    let mut out = Vec::new();
    write_json(v, &mut out);
    // The writer only emits UTF-8: lone surrogates are escaped.
    String::from_utf8(out).unwrap_or_default()
}

/// Appends `JSON.stringify(value)` to `out`.
pub fn write_json(v: &Value<'_>, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(*n, out),
        Value::String(s) => write_string(s.as_bytes(), out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json(item, out);
            }
            out.push(b']');
        }
        Value::Object(o) => {
            out.push(b'{');
            for (i, (k, v)) in o.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(k.as_bytes(), out);
                out.push(b':');
                write_json(v, out);
            }
            out.push(b'}');
        }
    }
}

/// Appends a number as JavaScript prints it; `NaN` and infinities become `null`.
pub fn write_number(n: f64, out: &mut Vec<u8>) {
    if !n.is_finite() {
        out.extend_from_slice(b"null");
    } else if n == 0.0 {
        out.push(b'0');
    } else if n.fract() == 0.0 && n.abs() < 1e15 {
        // Whole numbers (counts, tokens, times in ms) print as their digits, as JavaScript's do
        // below 1e21; exact as an i64 here.
        let mut buf = itoa::Buffer::new();
        out.extend_from_slice(buf.format(n as i64).as_bytes());
    } else {
        let mut buf = ryu_js::Buffer::new();
        out.extend_from_slice(buf.format_finite(n).as_bytes());
    }
}

/// Appends a WTF-8 string with `JSON.stringify`'s escaping: `"` and `\`, the C0 controls
/// (short forms where JSON has them, lowercase `\u00xx` otherwise) and lone surrogates.
pub fn write_string(s: &[u8], out: &mut Vec<u8>) {
    // Room for the string as it is: the copies between escapes then never grow `out`.
    out.reserve(s.len() + 2);
    out.push(b'"');
    write_string_body(s, out);
    out.push(b'"');
}

/// [`write_string`] without the quotes.
pub fn write_string_body(s: &[u8], out: &mut Vec<u8>) {
    let mut start = 0;
    let mut i = 0;
    while i < s.len() {
        // Skip eight bytes at a time while none needs escaping (or may start a surrogate).
        while let Some(chunk) = s.get(i..i + 8) {
            let w =
                u64::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7]]);
            let m = super::scan::specials(w) | super::scan::eq_byte(w, 0xed);
            if m != 0 {
                i += (m.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        let Some(&c) = s.get(i) else { break };
        let esc: Option<&[u8]> = match c {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            8 => Some(b"\\b"),
            12 => Some(b"\\f"),
            _ => None,
        };
        if let Some(e) = esc {
            out.extend_from_slice(&s[start..i]);
            out.extend_from_slice(e);
            i += 1;
            start = i;
        } else if c < 0x20 {
            out.extend_from_slice(&s[start..i]);
            unicode_escape(u32::from(c), out);
            i += 1;
            start = i;
        } else if c == 0xed && s.get(i + 1).is_some_and(|&b| b >= 0xa0) && i + 2 < s.len() {
            // A surrogate code point (only lone ones are stored this way).
            let unit = 0xd000 | (u32::from(s[i + 1] & 0x3f) << 6) | u32::from(s[i + 2] & 0x3f);
            out.extend_from_slice(&s[start..i]);
            unicode_escape(unit, out);
            i += 3;
            start = i;
        } else {
            i += 1;
        }
    }
    out.extend_from_slice(&s[start..]);
}

/// Appends `\u` and the four lowercase hex digits of a UTF-16 unit, as `JSON.stringify` writes it.
fn unicode_escape(unit: u32, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digit = |shift: u32| HEX[(unit >> shift & 0xf) as usize];
    out.extend_from_slice(&[b'\\', b'u', digit(12), digit(8), digit(4), digit(0)]);
}

impl std::fmt::Display for JsStr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_str_lossy())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Control bytes and lone surrogates come out as `JSON.stringify` writes them: the short
    /// escapes where it has them, else `\u` and four lowercase hex digits.
    #[test]
    fn escapes_control_bytes_and_lone_surrogates() {
        for c in 0u8..0x20 {
            let mut out = Vec::new();
            write_string(&[b'a', c, b'b'], &mut out);
            let short = match c {
                8 => "\\b".to_string(),
                9 => "\\t".to_string(),
                10 => "\\n".to_string(),
                12 => "\\f".to_string(),
                13 => "\\r".to_string(),
                _ => format!("\\u{c:04x}"),
            };
            assert_eq!(String::from_utf8(out).unwrap(), format!("\"a{short}b\""));
        }
        // WTF-8 of the lone surrogates U+D83D and U+DFFF, then one that is not (U+ED9F).
        let mut out = Vec::new();
        write_string(b"x\xed\xa0\xbdy\xed\xbf\xbf\xed\x9e\x9f", &mut out);
        assert_eq!(out, b"\"x\\ud83dy\\udfff\xed\x9e\x9f\"");
    }

    /// Whole numbers written by their digits equal what `ryu_js` (JavaScript's printing) gives.
    #[test]
    fn whole_numbers_print_as_javascript_prints_them() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut checked = 0;
        for k in 0..200_000u64 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let magnitude = 10f64.powi((k % 17) as i32);
            let n =
                ((state >> 11) as f64 / (1u64 << 53) as f64 * magnitude).trunc() * if k % 2 == 0 { 1.0 } else { -1.0 };
            for n in [n, n + 1.0, n - 1.0, 1e15 - 1.0, 1e15, -1e15 + 1.0] {
                let mut ours = Vec::new();
                write_number(n, &mut ours);
                let mut js = ryu_js::Buffer::new();
                let expected = if n == 0.0 { "0" } else { js.format_finite(n) };
                assert_eq!(String::from_utf8_lossy(&ours), expected, "{n}");
                checked += 1;
            }
        }
        assert_eq!(checked, 1_200_000);
    }
}
