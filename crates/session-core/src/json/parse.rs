//! Full parsing of one line into a [`Value`], with `simd-json` as the parser.
//!
//! `simd-json` rewrites its input, so the line is first copied into the caller's arena (after
//! replacing invalid UTF-8 with U+FFFD, as Node's decoder does); strings without escapes then
//! borrow from that copy. The few lines `simd-json` refuses but `JSON.parse` accepts (lone
//! surrogate escapes, numbers beyond the double range) go through a small exact fallback.

use std::borrow::Cow;

use bumpalo::Bump;
use simd_json::{Node, StaticNode};

use super::{JsStr, Object, Value, scan};

/// Deepest nesting a full parse accepts (`simd-json`'s own bound). Deeper lines give an error.
pub const MAX_DEPTH: usize = 1024;

/// Why a line could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset within the line.
    pub offset: usize,
    /// What was wrong.
    pub reason: &'static str,
}

/// Parses one line as `JSON.parse` would, borrowing strings from `arena`.
pub fn parse_value<'b>(line: &[u8], arena: &'b Bump) -> Result<Value<'b>, ParseError> {
    let text: Cow<'_, str> = match simdutf8::basic::from_utf8(line) {
        Ok(t) => Cow::Borrowed(t),
        Err(_) => String::from_utf8_lossy(line),
    };
    let copy: &'b mut [u8] = arena.alloc_slice_copy(text.as_bytes());
    let fallback_input: &'b [u8] = arena.alloc_slice_copy(text.as_bytes());
    match simd_json::to_tape(copy) {
        Ok(tape) => {
            let mut nodes = tape.0.into_iter();
            build(&mut nodes).ok_or(ParseError { offset: 0, reason: "malformed tape" })
        }
        Err(_) => {
            // Validate first so that the error names the position JSON.parse would reject.
            if let Err(e) = scan::scan_line(fallback_input) {
                return Err(ParseError { offset: e.offset, reason: e.reason });
            }
            let mut p = Fallback { b: fallback_input, i: 0, depth: 0 };
            let v = p.value()?;
            Ok(v)
        }
    }
}

fn build<'b>(nodes: &mut std::vec::IntoIter<Node<'b>>) -> Option<Value<'b>> {
    Some(match nodes.next()? {
        Node::String(s) => Value::String(JsStr::borrowed(s.as_bytes())),
        Node::Static(StaticNode::Null) => Value::Null,
        Node::Static(StaticNode::Bool(b)) => Value::Bool(b),
        Node::Static(StaticNode::I64(n)) => Value::Number(n as f64),
        Node::Static(StaticNode::U64(n)) => Value::Number(n as f64),
        Node::Static(StaticNode::F64(n)) => Value::Number(n),
        Node::Array { len, .. } => {
            let mut items = Vec::with_capacity(len);
            for _ in 0..len {
                items.push(build(nodes)?);
            }
            Value::Array(items)
        }
        Node::Object { len, .. } => {
            let mut props = Vec::with_capacity(len);
            for _ in 0..len {
                let Node::String(k) = nodes.next()? else { return None };
                props.push((JsStr::borrowed(k.as_bytes()), build(nodes)?));
            }
            Value::Object(Object::from_source_order(props))
        }
    })
}

/// Recursive-descent parser for what `simd-json` refuses; the input was validated by the scan.
struct Fallback<'b> {
    b: &'b [u8],
    i: usize,
    depth: usize,
}

impl<'b> Fallback<'b> {
    fn err(&self, reason: &'static str) -> ParseError {
        ParseError { offset: self.i, reason }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn value(&mut self) -> Result<Value<'b>, ParseError> {
        self.ws();
        let v = match self.b.get(self.i) {
            Some(b'{') | Some(b'[') if self.depth >= MAX_DEPTH => return Err(self.err("nesting too deep")),
            Some(b'{') => {
                self.i += 1;
                self.depth += 1;
                let mut props = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b'}') {
                    self.i += 1;
                } else {
                    loop {
                        self.ws();
                        let k = self.string()?;
                        self.ws();
                        self.i += 1; // ':' (validated)
                        let v = self.value()?;
                        props.push((k, v));
                        self.ws();
                        let c = self.b.get(self.i).copied();
                        self.i += 1;
                        if c == Some(b'}') {
                            break;
                        }
                    }
                }
                self.depth -= 1;
                Value::Object(Object::from_source_order(props))
            }
            Some(b'[') => {
                self.i += 1;
                self.depth += 1;
                let mut items = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b']') {
                    self.i += 1;
                } else {
                    loop {
                        items.push(self.value()?);
                        self.ws();
                        let c = self.b.get(self.i).copied();
                        self.i += 1;
                        if c == Some(b']') {
                            break;
                        }
                    }
                }
                self.depth -= 1;
                Value::Array(items)
            }
            Some(b'"') => Value::String(self.string()?),
            Some(b't') => {
                self.i += 4;
                Value::Bool(true)
            }
            Some(b'f') => {
                self.i += 5;
                Value::Bool(false)
            }
            Some(b'n') => {
                self.i += 4;
                Value::Null
            }
            _ => {
                let start = self.i;
                while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = self.b.get(self.i) {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.b[start..self.i]).map_err(|_| self.err("invalid number"))?;
                Value::Number(text.parse::<f64>().map_err(|_| self.err("invalid number"))?)
            }
        };
        Ok(v)
    }

    fn string(&mut self) -> Result<JsStr<'b>, ParseError> {
        let open = self.i;
        let mut j = open + 1;
        let mut escaped = false;
        while let Some(&c) = self.b.get(j) {
            match c {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    j += 2;
                }
                _ => j += 1,
            }
        }
        let raw = self.b.get(open + 1..j).ok_or(self.err("unterminated string"))?;
        self.i = j + 1;
        if !escaped {
            return Ok(JsStr::borrowed(raw));
        }
        let mut out = Vec::with_capacity(raw.len());
        unescape_into(raw, &mut out);
        Ok(JsStr(Cow::Owned(out)))
    }
}

/// Decodes the raw text of a validated JSON string into WTF-8: escapes are resolved, a
/// surrogate pair becomes one character and a lone surrogate keeps its own 3-byte encoding.
pub fn unescape_into(raw: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < raw.len() {
        let Some(k) = memchr::memchr(b'\\', &raw[i..]) else {
            out.extend_from_slice(&raw[i..]);
            return;
        };
        out.extend_from_slice(&raw[i..i + k]);
        i += k;
        let Some(&e) = raw.get(i + 1) else { return };
        i += 2;
        let simple = match e {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            b'/' => Some(b'/'),
            b'b' => Some(8),
            b'f' => Some(12),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            continue;
        }
        let Some(unit) = hex4(raw.get(i..i + 4)) else { return };
        i += 4;
        let code = if (0xd800..0xdc00).contains(&unit) {
            match (raw.get(i..i + 2), hex4(raw.get(i + 2..i + 6))) {
                (Some(b"\\u"), Some(low)) if (0xdc00..0xe000).contains(&low) => {
                    i += 6;
                    0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)
                }
                _ => unit,
            }
        } else {
            unit
        };
        push_wtf8(code, out);
    }
}

fn hex4(h: Option<&[u8]>) -> Option<u32> {
    let h = h?;
    let s = std::str::from_utf8(h).ok()?;
    u32::from_str_radix(s, 16).ok()
}

/// Appends a code point, surrogates included, in generalised UTF-8.
fn push_wtf8(c: u32, out: &mut Vec<u8>) {
    match c {
        0..=0x7f => out.push(c as u8),
        0x80..=0x7ff => out.extend_from_slice(&[0xc0 | (c >> 6) as u8, 0x80 | (c & 0x3f) as u8]),
        0x800..=0xffff => {
            out.extend_from_slice(&[0xe0 | (c >> 12) as u8, 0x80 | ((c >> 6) & 0x3f) as u8, 0x80 | (c & 0x3f) as u8])
        }
        _ => out.extend_from_slice(&[
            0xf0 | (c >> 18) as u8,
            0x80 | ((c >> 12) & 0x3f) as u8,
            0x80 | ((c >> 6) & 0x3f) as u8,
            0x80 | (c & 0x3f) as u8,
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::to_json;

    fn round_trip(input: &str) -> String {
        let arena = Bump::new();
        to_json(&parse_value(input.as_bytes(), &arena).unwrap())
    }

    #[test]
    fn duplicate_keys_keep_first_position_and_last_value() {
        // spec format.md §4: `{"role":…,"2":"x"}` orders integer keys first; duplicates collapse.
        assert_eq!(round_trip(r#"{"a":1,"b":2,"a":3,"2":"x"}"#), r#"{"2":"x","a":3,"b":2}"#);
    }

    #[test]
    fn numbers_are_doubles_printed_like_javascript() {
        assert_eq!(
            round_trip(r#"[1.0,1e21,-0,1e400,9007199254740993,1e-7,0.000001,5e-324,12345678901234567890]"#),
            "[1,1e+21,0,null,9007199254740992,1e-7,0.000001,5e-324,12345678901234567000]"
        );
    }

    #[test]
    fn lone_surrogates_survive() {
        assert_eq!(round_trip(r#""a\ud800b\udc00\ud83d\ude80""#), "\"a\\ud800b\\udc00\u{1f680}\"");
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let arena = Bump::new();
        let v = parse_value(b"\"a\xffb\xe2\x82\"", &arena).unwrap();
        assert_eq!(to_json(&v), "\"a\u{fffd}b\u{fffd}\"");
    }

    #[test]
    fn rejects_what_json_parse_rejects() {
        let arena = Bump::new();
        for bad in ["", "{", "{\"a\":}", "[1,]", "\u{a0}{}", "01", "\"\t\"", "nul", "{} x"] {
            assert!(parse_value(bad.as_bytes(), &arena).is_err(), "{bad:?}");
        }
    }
}
#[cfg(test)]
mod precision {
    #[test]
    fn doubles_are_correctly_rounded() {
        // JSON.parse rounds to the nearest double; so must we (these come from Pi's own files).
        let arena = bumpalo::Bump::new();
        for t in ["0.011935649999999999", "0.00023939999999999996", "1.7976931348623157e308", "0.1", "5e-324"] {
            let v = super::parse_value(t.as_bytes(), &arena).unwrap();
            assert_eq!(v, crate::json::Value::Number(t.parse().unwrap()), "{t}");
        }
    }
}
