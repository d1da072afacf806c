//! Walking raw JSON text that the scan has already validated: skipping values and reading a
//! few fields of content blocks without building values.

/// Walks one object starting at `i`: returns where it ends, the contents of its `type` string
/// and the raw span and first byte of its `other` field, last occurrences winning; `None` for
/// escaped keys or an escaped `type` (callers then take the full parse).
#[allow(clippy::type_complexity)]
pub fn block_fields(
    a: &[u8],
    i: usize,
    other: &[u8],
) -> Option<(usize, Option<(usize, usize)>, Option<(usize, usize, u8)>)> {
    let (mut ty, mut text, mut escaped_type) = (None, None, false);
    let end = members(a, i, |key, v, end| {
        if key == b"type" {
            ty = None;
            if a[v] == b'"' {
                escaped_type |= memchr::memchr(b'\\', &a[v + 1..end - 1]).is_some();
                ty = Some((v + 1, end - 1));
            }
        } else if key == other {
            text = Some((v, end, a[v]));
        }
    })?;
    (!escaped_type).then_some((end, ty, text))
}

/// Calls `f` with each member of the object starting at `a[at]` (valid JSON text): its raw key
/// and where its value lies; returns where the object ends. `None` (having stopped) at a key
/// that holds an escape. Keys and numbers are read with the scan's word-at-a-time code.
pub fn members(a: &[u8], at: usize, mut f: impl FnMut(&[u8], usize, usize)) -> Option<usize> {
    use crate::json::scan::{number, string};
    let mut i = ws(a, at + 1);
    loop {
        match a.get(i) {
            Some(b'"') => {
                let (key_end, escaped) = string(a, i).ok()?;
                if escaped {
                    return None;
                }
                let value = ws(a, ws(a, key_end) + 1);
                let end = match a.get(value) {
                    Some(b'-' | b'0'..=b'9') => number(a, value).ok()?.0,
                    _ => skip_value(a, value),
                };
                f(&a[i + 1..key_end - 1], value, end);
                i = ws(a, end);
            }
            Some(b',') => i = ws(a, i + 1),
            Some(b'}') => return Some(i + 1),
            _ => return None,
        }
    }
}

/// Walks a content array (validated JSON text) and calls `f` with the raw span and first byte of
/// the `name` of each block whose `type` is the string `toolCall`. `None` when a block's keys or
/// `type` hold escapes (the caller then reads the full value). Arrays without the bytes
/// `"toolCall"` and without `\u` escapes (the only way to spell it otherwise) are not walked.
pub fn tool_call_blocks(a: &[u8], mut f: impl FnMut(Option<(usize, usize, u8)>)) -> Option<()> {
    if memchr::memmem::find(a, b"\"toolCall\"").is_none() && memchr::memmem::find(a, b"\\u").is_none() {
        return Some(());
    }
    let mut i = ws(a, 1);
    while let Some(&c) = a.get(i) {
        match c {
            b']' => break,
            b',' => i = ws(a, i + 1),
            b'{' => {
                let (end, ty, name) = block_fields(a, i, b"name")?;
                i = ws(a, end);
                if ty.is_some_and(|(s, e)| &a[s..e] == b"toolCall") {
                    f(name);
                }
            }
            _ => i = ws(a, skip_value(a, i)),
        }
    }
    Some(())
}

/// Past any JSON whitespace at `i`.
pub fn ws(a: &[u8], mut i: usize) -> usize {
    while matches!(a.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Past the string opening at `i` (valid JSON: the first quote after an even run of backslashes).
pub fn skip_string(a: &[u8], i: usize) -> usize {
    let mut from = i + 1;
    while let Some(j) = memchr::memchr(b'"', &a[from..]) {
        let q = from + j;
        if a[i + 1..q].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0 {
            return q + 1;
        }
        from = q + 1;
    }
    a.len()
}

/// Past the value starting at `i` (valid JSON).
pub fn skip_value(a: &[u8], i: usize) -> usize {
    match a.get(i) {
        Some(b'"') => skip_string(a, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while let Some(&c) = a.get(j) {
                match c {
                    b'"' => {
                        j = skip_string(a, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            a.len()
        }
        _ => {
            let mut j = i;
            while !matches!(a.get(j), None | Some(b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')) {
                j += 1;
            }
            j
        }
    }
}
