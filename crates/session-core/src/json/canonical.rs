//! Whether a line is already what `JSON.stringify(JSON.parse(line))` prints, so that a writer
//! may copy it as it is instead of parsing and printing it again. The answer errs on the safe
//! side: `false` for anything it does not prove (lone surrogates, keys JavaScript orders first or
//! treats specially, numbers it cannot check), and the caller then prints the value.
//!
//! The line is taken to be valid JSON (a record the loader accepted); what is checked is only
//! what printing would change: whitespace between tokens, escapes other than `JSON.stringify`'s
//! own, numbers not in their shortest form, repeated keys, and bytes that are not UTF-8.

/// Deeper nesting than this is not checked (the value is printed instead).
const MAX_DEPTH: usize = 256;

/// `JSON.stringify(JSON.parse(line)) == line`, proven; `false` when not proven.
pub fn is_stringified(line: &[u8]) -> bool {
    if simdutf8::basic::from_utf8(line).is_err() {
        return false;
    }
    let mut c = Checker { b: line, i: 0, keys: Vec::new() };
    c.value(0) && c.i == line.len()
}

struct Checker<'a> {
    b: &'a [u8],
    i: usize,
    /// The keys of the objects being read, innermost last (spans), to find repeated ones.
    keys: Vec<(usize, usize)>,
}

impl Checker<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn value(&mut self, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().is_some(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => false,
        }
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            true
        } else {
            false
        }
    }

    fn object(&mut self, depth: usize) -> bool {
        self.i += 1;
        if self.peek() == Some(b'}') {
            self.i += 1;
            return true;
        }
        let first_key = self.keys.len();
        loop {
            let Some((start, end)) = self.string() else { return false };
            let key = &self.b[start..end];
            // Keys JavaScript lists first (array indices) or handles apart: not proven.
            if key.first().is_some_and(u8::is_ascii_digit) || key == b"__proto__" {
                return false;
            }
            // A repeated key keeps one value (the last) at the first place: printing changes it.
            if self.keys[first_key..].iter().any(|&(s, e)| &self.b[s..e] == key) {
                return false;
            }
            self.keys.push((start, end));
            if self.peek() != Some(b':') {
                return false;
            }
            self.i += 1;
            if !self.value(depth + 1) {
                return false;
            }
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    self.keys.truncate(first_key);
                    return true;
                }
                _ => return false,
            }
        }
    }

    fn array(&mut self, depth: usize) -> bool {
        self.i += 1;
        if self.peek() == Some(b']') {
            self.i += 1;
            return true;
        }
        loop {
            if !self.value(depth + 1) {
                return false;
            }
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return true;
                }
                _ => return false,
            }
        }
    }

    /// A string with only `JSON.stringify`'s escapes; its contents' span.
    fn string(&mut self) -> Option<(usize, usize)> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.i + 1;
        // The loader's own string scan, which finds the end a SIMD block at a time, taking only
        // the escapes `JSON.stringify` prints.
        let end = super::scan::printed_string(self.b, self.i).ok()?;
        self.i = end;
        Some((start, end - 1))
    }

    /// A number in the form JavaScript prints it.
    fn number(&mut self) -> bool {
        let start = self.i;
        let mut end = start;
        while end < self.b.len() && matches!(self.b[end], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
            end += 1;
        }
        let text = &self.b[start..end];
        self.i = end;
        let digits = text.strip_prefix(b"-").unwrap_or(text);
        // Whole numbers of up to 15 digits print as written, but for leading zeros and `-0`.
        if !digits.is_empty() && digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
            return (digits == b"0" && text.len() == 1) || (digits[0] != b'0');
        }
        let Some(n) = std::str::from_utf8(text).ok().and_then(|t| t.parse::<f64>().ok()) else { return false };
        let mut printed = Vec::with_capacity(24);
        super::write_number(n, &mut printed);
        printed == text
    }
}

#[cfg(test)]
mod tests {
    use super::is_stringified;

    #[test]
    fn only_what_stringify_prints_is_proven() {
        for yes in [
            &br#"{"a":1,"b":[true,false,null],"c":"x\"y\\z\n\u001b","d":-2.5,"e":1e+21,"f":{}}"#[..],
            br#"{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"h\u0001"}}"#,
            br#"[]"#,
            br#"0.1"#,
            "{\"t\":\"é 😀 \u{2028}\"}".as_bytes(),
        ] {
            assert!(is_stringified(yes), "{}", String::from_utf8_lossy(yes));
        }
        for no in [
            &br#"{"a": 1}"#[..],
            br#"{"a":1,"a":2}"#,
            br#"{"a":"\/"}"#,
            br#"{"a":"\u0041"}"#,
            br#"{"a":"h\u00e9"}"#,
            br#"{"a":"\u001B"}"#,
            br#"{"a":"\u000a"}"#,
            br#"{"a":"\ud83d\ude00"}"#,
            br#"{"a":1.0}"#,
            br#"{"a":-0}"#,
            br#"{"a":1E5}"#,
            br#"{"a":007}"#,
            br#"{"10":1,"2":2}"#,
            br#"{"__proto__":1}"#,
            b"{\"a\":1}\r",
            b"{\"a\":\"\xff\"}",
        ] {
            assert!(!is_stringified(no), "{}", String::from_utf8_lossy(no));
        }
    }
}
