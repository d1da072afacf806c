//! Tests of the scan: every shape and every fast path held to the general walk and to a
//! JSON parser.

use super::*;

fn text(line: &[u8], s: Option<Span>) -> &[u8] {
    let s = s.unwrap();
    &line[s.start as usize..s.end as usize]
}

/// The start of a message line as Pi writes it, up to the role's value.
const PI_LINE_HEAD: &str = r#"{"type":"message","id":"a1b2c3d4","parentId":"e5f6a7b8","timestamp":"2026-01-01T02:24:53.736Z","message":{"role":"#;

/// The message lines Pi writes are read by `pi_message_rest` to their end; a line that strays
/// from that shape is left to the walk, with the scan as the prefix left it. (That both give
/// what the walk gives is `tests/scan_shapes.rs`.)
#[test]
fn message_lines_as_pi_writes_them_are_read_straight_through() {
    let rests = [
        r#""user","content":"hi \"there\"","timestamp":1767234268033}}"#,
        r#""user","content":[{"type":"text","text":"a"},{"type":"image","data":"QUJD","mimeType":"image/png"}],"timestamp":1}}"#,
        r#""assistant","content":[{"type":"thinking","thinking":"t","thinkingSignature":"s"},{"type":"text","text":"x"},{"type":"toolCall","id":"c1","name":"ls","arguments":{"path":"a","n":1}}],"api":"messages","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.30000000000000004}},"stopReason":"toolUse","timestamp":5}}"#,
        r#""toolResult","toolCallId":"c1","toolName":"ls","content":[{"type":"text","text":"out"}],"isError":false,"timestamp":6}}"#,
        r#""assistant","content":[],"timestamp":7}}"#,
    ];
    for rest in rests {
        let line = format!("{PI_LINE_HEAD}{rest}");
        let b = line.as_bytes();
        assert!(pi_message_prefix(b), "{line}");
        let prefixed = || {
            let mut out = Scanned::default();
            record_pi_prefix(&mut out);
            out
        };
        for blocks in [false, true] {
            let mut out = prefixed();
            let end = scan_line_with(b, ScanOptions { blocks }).unwrap();
            let read = if blocks {
                pi_message_rest::<true, NEWLINE>(b, &mut out)
            } else {
                pi_message_rest::<false, NEWLINE>(b, &mut out)
            };
            assert_eq!(read, Some(b.len()), "{line}");
            assert_eq!(out.message_fields[..], end.message_fields[..], "{line}");
            assert_eq!(out.fields[..], end.fields[..], "{line}");
            assert_eq!((out.tool_calls, out.text_blocks), (end.tool_calls, end.text_blocks), "{line}");
            let ended = format!("{line}\n");
            assert_eq!(pi_message_rest::<false, NEWLINE>(ended.as_bytes(), &mut prefixed()), Some(b.len()));
        }
        for stray in [format!("{line} "), format!("{line}x"), line.replacen("\"content\"", "\"content\" ", 1)] {
            let mut out = prefixed();
            assert_eq!(pi_message_rest::<true, NEWLINE>(stray.as_bytes(), &mut out), None, "{stray}");
            assert_eq!(out.fields.len(), PI_PREFIX_FIELDS.len());
            assert!(out.message_fields.is_empty() && out.message_slots == [None; 3] && out.text_blocks.is_empty());
        }
    }
}

#[test]
fn records_top_level_and_message_fields() {
    let line = br#"{"type":"message","id":"a\"1","parentId":null,"message":{"role":"user","content":[{"type":"text"}],"timestamp":5},"timestamp":"t"}"#;
    let s = scan_line(line).unwrap();
    assert!(s.is_object());
    assert_eq!(text(line, s.field(line, "type")), b"message");
    assert_eq!(s.field(line, "id").unwrap().kind, SpanKind::Str { escaped: true });
    assert_eq!(s.field(line, "parentId").unwrap().kind, SpanKind::Null);
    assert_eq!(text(line, s.field(line, "timestamp")), b"t");
    assert_eq!(text(line, s.message_field(line, "role")), b"user");
    assert_eq!(text(line, s.message_field(line, "content")), br#"[{"type":"text"}]"#);
    assert_eq!(text(line, s.message_field(line, "timestamp")), b"5");
    // Nested `type` keys are not top-level fields.
    assert_eq!(s.fields.len(), 5);
}

#[test]
fn duplicate_keys_resolve_to_the_last() {
    // Edge case 22 (spec format.md §5): `"parentId":null,"parentId":"a1"` means "a1".
    let line = br#"{"id":"u2","parentId":null,"parentId":"a1","message":{"role":"x"},"message":"s"}"#;
    let s = scan_line(line).unwrap();
    assert_eq!(text(line, s.field(line, "parentId")), b"a1");
    assert_eq!(s.field(line, "message").unwrap().kind, SpanKind::Str { escaped: false });
    assert!(s.message_fields.is_empty());
}

/// `role`, `content` and `timestamp` of the message come from slots kept by the scan; they
/// must be what a search of the message's fields gives (the last of a repeated key, nothing
/// for a key written with escapes, the last `message` object's), with and without Pi's prefix.
#[test]
fn message_slots_equal_the_search() {
    let pi = r#"{"type":"message","id":"0123abcd","parentId":"89efcdab","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"#;
    let lines = [
        format!(r#"{pi}"user","content":"a","timestamp":1}}}}"#),
        format!(r#"{pi}"user","content":"a","role":"assistant","timestamp":1,"timestamp":"2"}}}}"#),
        format!(r#"{pi}"user","content":[{{"role":"x","content":1}}],"r\u006fle":"y"}}}}"#),
        format!(r#"{pi}"user","content":"a"}},"message":{{"content":null}}}}"#),
        format!(r#"{pi}"user","content":"a"}},"message":"text"}}"#),
        r#"{"message":{"timestamp":5,"role":"tool","nested":{"role":"no"}},"role":"top"}"#.to_string(),
        r#"{"role":"top","content":"top"}"#.to_string(),
    ];
    let mut found = 0;
    for line in &lines {
        let b = line.as_bytes();
        for sc in [scan_line(b).unwrap(), scan_line_with_blocks(b).unwrap()] {
            for key in ["role", "content", "timestamp"] {
                let searched = find(&sc.message_fields, b, key);
                assert_eq!(sc.message_field(b, key), searched, "{key} in {line}");
                found += usize::from(searched.is_some());
            }
        }
    }
    assert_eq!(found, 2 * 11);
}

/// A scan kept from call to call (`with_line_scan`, `scan_line_into`) leaves nothing of an
/// earlier line behind, and a call nested in another scans into its own.
#[test]
fn kept_scans_equal_fresh_ones() {
    let lines: [&[u8]; 5] = [
        br#"{"type":"message","id":"a1b2c3d4","parentId":"e5f6a7b8","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"bash","arguments":{}}],"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}},"timestamp":1}}"#,
        br#"{"a":1,"b":[1,2],"c":{"d":null},"e":"\u0041","f":true,"g":1e400}"#,
        b"{\"x\":",
        b"[1,2]",
        br#"{"type":"session","id":"s","message":{"content":[null]}}"#,
    ];
    let mut slot = Scanned::default();
    for options in [ScanOptions { blocks: false }, ScanOptions { blocks: true }] {
        for _ in 0..2 {
            for line in lines {
                let fresh = describe(scan_line_with(line, options).as_ref().map_err(|e| *e), 0);
                let into = scan_line_into(line, options, &mut slot).map(|()| &slot);
                assert_eq!(describe(into, 0), fresh);
                let kept = with_line_scan(line, options, |sc| {
                    let nested = with_line_scan(br#"{"x":2}"#, options, |inner| inner.map(|s| s.fields.len()));
                    assert_eq!(nested, Ok(1));
                    describe(sc, 0)
                });
                assert_eq!(kept, fresh);
            }
        }
    }
}

#[test]
fn top_level_values_that_are_not_objects() {
    for (line, kind) in [
        (&b"null"[..], SpanKind::Null),
        (b" 42 ", SpanKind::Number),
        (b"[1,[2]]", SpanKind::Array),
        (b"\"s\"", SpanKind::Str { escaped: false }),
    ] {
        assert_eq!(scan_line(line).unwrap().top, Some(kind));
    }
}

/// A small deterministic generator for drawn inputs.
/// One to eight of `pieces`, drawn with `next`, end to end.
fn draw_pieces(next: &mut impl FnMut() -> u64, pieces: &[&[u8]]) -> Vec<u8> {
    let mut b = Vec::new();
    for _ in 0..(1 + next() % 8) {
        b.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
    }
    b
}

pub(crate) fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// `string` as the grammar states it, one byte at a time.
fn string_bytewise(b: &[u8], open: usize) -> Result<(usize, bool), ScanError> {
    let (mut i, mut escaped) = (open + 1, false);
    loop {
        match b.get(i) {
            None => return Err(ScanError { offset: open, reason: "unterminated string" }),
            Some(b'"') => return Ok((i + 1, escaped)),
            Some(b'\\') => {
                escaped = true;
                match b.get(i + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                    Some(b'u') if b.get(i + 2..i + 6).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) => i += 6,
                    Some(b'u') => return Err(ScanError { offset: i, reason: "invalid unicode escape" }),
                    _ => return Err(ScanError { offset: i, reason: "invalid escape" }),
                }
            }
            Some(0..=0x1f) => return Err(ScanError { offset: i, reason: "control character in string" }),
            Some(_) => i += 1,
        }
    }
}

/// [`string_bytewise`] for a string as `JSON.stringify` prints it: its end, if it is one.
fn printed_string_bytewise(b: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    loop {
        match b.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => match b.get(i + 1)? {
                b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                b'u' => {
                    let hex = std::str::from_utf8(b.get(i + 2..i + 6)?).ok()?;
                    let code = u32::from_str_radix(hex, 16).ok()?;
                    let printed = hex == hex.to_ascii_lowercase()
                        && code < 0x20
                        && !matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d);
                    if !printed {
                        return None;
                    }
                    i += 6;
                }
                _ => return None,
            },
            0..=0x1f => return None,
            _ => i += 1,
        }
    }
}

/// The word-at-a-time and block-at-a-time string scan agrees with the byte-by-byte grammar
/// on long strings dense in quotes, runs of backslashes, escapes (valid and not), control
/// bytes and UTF-8, placed across 8-, 64- and 128-byte boundaries.
#[test]
fn string_scan_agrees_with_the_grammar_byte_by_byte() {
    const PIECES: &[&[u8]] = &[
        b"\"",
        b"\\",
        b"\\\\",
        b"\\\\\\",
        b"\\\"",
        b"\\n",
        b"\\t",
        b"\\u001b",
        b"\\u00E9",
        b"\\u12",
        b"\\u12g4",
        b"\\uD83D",
        b"\\uabc",
        b"\\u",
        b"\\x",
        b"\\/",
        b"\\r",
        b"\\b",
        b"\\f",
        b"n",
        b"t",
        b"u",
        b"0123abcdef",
        b"plain text without specials, long enough to fill a block ",
        b"\x01",
        b"\n",
        b"\x1f",
        b"\xc3\xa9",
    ];
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    let (mut ok, mut errors) = (0, 0);
    for round in 0..300_000 {
        let mut b = vec![b'"'];
        // Mostly plain bytes, so that runs reach the block scan; then a random mix.
        let plain = (next() % 200) as usize;
        b.extend(std::iter::repeat_n(b'a', plain));
        for _ in 0..(next() % 40) {
            let piece = PIECES[(next() % PIECES.len() as u64) as usize];
            // Keep most strings free of errors so that they run long.
            if round % 4 != 0
                && matches!(piece, b"\\x" | b"\\u12" | b"\\u12g4" | b"\\uabc" | b"\\u" | b"\x01" | b"\n" | b"\x1f")
            {
                continue;
            }
            b.extend_from_slice(piece);
        }
        if !next().is_multiple_of(8) {
            b.push(b'"');
        }
        let well_formed = string_agrees_with_the_grammar(&mut b);
        if well_formed { ok += 1 } else { errors += 1 }
    }
    assert!(ok > 10_000 && errors > 10_000, "too narrow a draw: {ok} ok, {errors} errors");
}

/// After a drawn string (its opening quote first) comes another value: the scan of the string
/// equals the byte-by-byte grammar's; whether it is well-formed.
fn string_agrees_with_the_grammar(b: &mut Vec<u8>) -> bool {
    b.extend_from_slice(b",\"next\\n\"");
    let expected = string_bytewise(b, 0);
    assert_eq!(string(b, 0), expected, "{}", String::from_utf8_lossy(b));
    // Every kind of lanes the CPU has, not only the widest, which `string` takes.
    assert_eq!(string_long_with::<false>(Lanes16, b, 0), expected, "16-byte lanes: {}", String::from_utf8_lossy(b));
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        let lanes = LongString::<_, false> { lanes: Lanes32(simd), b, open: 0 };
        assert_eq!(simd.vectorize(lanes), expected, "AVX2 lanes: {}", String::from_utf8_lossy(b));
    }
    // The scan of a string as `JSON.stringify` prints it, on every kind of lanes too.
    let printed = printed_string_bytewise(b, 0);
    assert_eq!(printed_string(b, 0).ok(), printed, "printed: {}", String::from_utf8_lossy(b));
    let end = |scanned: Result<(usize, bool), ScanError>| scanned.ok().map(|(end, _)| end);
    assert_eq!(end(string_long_with::<true>(Lanes16, b, 0)), printed, "printed, 16-byte lanes");
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        let lanes = LongString::<_, true> { lanes: Lanes32(simd), b, open: 0 };
        assert_eq!(end(simd.vectorize(lanes)), printed, "printed, AVX2 lanes: {}", String::from_utf8_lossy(b));
    }
    expected.is_ok()
}

/// Strings of up to a few hundred blocks, most of them with escapes that the masks do not
/// pass (`\u` above all, with its hex digits in the next block at times); one string in three
/// has one escape that is not well-formed, anywhere in it. Every other string holds only escapes
/// `JSON.stringify` prints, but for the bad one, so that the printed scan passes many of them.
#[test]
fn long_strings_with_many_rare_escapes_agree_with_the_grammar() {
    const GOOD: &[&[u8]] = &[
        b"\\u001b[31m",
        b"\\u001B",
        b"\\u0007\\r\\t\\\"",
        b"\\u000a",
        b"\\u00e9",
        b"\\b\\f\\r\\/",
        b"\\n",
        b"\\\\",
        b"\\\\\\u0041",
        b"plain text of some length, ",
        b"0123456789abcdef",
        b"\xc3\xa9\xe6\x95\xb0",
    ];
    const PRINTED: &[&[u8]] = &[
        b"\\u001b[31m",
        b"\\u0007\\r\\t\\\"",
        b"\\b\\f",
        b"\\n",
        b"\\\\",
        b"plain text of some length, ",
        b"\xc3\xa9\xe6\x95\xb0",
    ];
    const BAD: &[&[u8]] = &[b"\\u12g4", b"\\x", b"\\u00\"", b"\\uabc\\n", b"\x01", b"\\u"];
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    let (mut ok, mut errors, mut printed) = (0, 0, 0);
    for round in 0..20_000 {
        let good = if round % 2 == 0 { GOOD } else { PRINTED };
        let mut b = vec![b'"'];
        let pieces = (next() % 400) as usize;
        let bad_at = (round % 3 == 0).then(|| (next() % (pieces as u64 + 1)) as usize);
        for k in 0..=pieces {
            if bad_at == Some(k) {
                b.extend_from_slice(BAD[(next() % BAD.len() as u64) as usize]);
            }
            if k < pieces {
                b.extend_from_slice(good[(next() % good.len() as u64) as usize]);
            }
        }
        if !next().is_multiple_of(16) {
            b.push(b'"');
        }
        let well_formed = string_agrees_with_the_grammar(&mut b);
        if well_formed {
            ok += 1
        } else {
            errors += 1
        }
        printed += usize::from(printed_string(&b, 0).is_ok());
    }
    assert!(ok > 5_000 && errors > 5_000, "too narrow a draw: {ok} ok, {errors} errors");
    assert!(printed > 3_000, "too few strings as JSON.stringify prints them: {printed}");
}

/// Every kind of lanes the CPU has gives the masks as they are defined, byte by byte, on
/// blocks of every byte value, dense in the bytes the masks pick out (the string scan above
/// checks the whole loop on each kind as well).
#[test]
fn every_kind_of_lanes_gives_the_defined_masks() {
    const DENSE: &[u8] = b"\"\\ntu\x00\x1f\x20\x7f\x80\xff";
    let bytewise = |block: &[u8; 64]| {
        let bits = |f: &dyn Fn(u8) -> bool| block.iter().enumerate().fold(0u64, |m, (k, &c)| m | u64::from(f(c)) << k);
        (bits(&|c| c == b'"' || c < 0x20), bits(&|c| c == b'\\'), bits(&|c| matches!(c, b'n' | b'"' | b't')))
    };
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    #[cfg(target_arch = "x86_64")]
    let kinds = 1 + usize::from(pulp::x86::V3::try_new().is_some()) + usize::from(pulp::x86::V4::try_new().is_some());
    #[cfg(not(target_arch = "x86_64"))]
    let kinds = 1;
    for _ in 0..100_000 {
        let mut block = [0u8; 64];
        for byte in &mut block {
            let r = next();
            *byte = if r.is_multiple_of(3) { DENSE[(r >> 8) as usize % DENSE.len()] } else { (r >> 16) as u8 };
        }
        let expected = bytewise(&block);
        assert_eq!(Lanes16.masks(&block), expected, "{block:?}");
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(simd) = pulp::x86::V3::try_new() {
                assert_eq!(simd.vectorize(|| Lanes32(simd).masks(&block)), expected, "{block:?}");
            }
            if let Some(simd) = pulp::x86::V4::try_new() {
                assert_eq!(simd.vectorize(|| Lanes64(simd).masks(&block)), expected, "{block:?}");
            }
        }
    }
    eprintln!("kinds of lanes compared on this CPU: {kinds}");
}

/// Every kind of lanes finds the same escapes not well-formed as the byte-by-byte check, on
/// blocks dense in escape letters and hex digits, with `u` near the block's end and the bytes
/// after the block sometimes cut short.
#[test]
fn every_kind_of_lanes_finds_the_same_odd_escapes() {
    const DENSE: &[u8] = b"\"\\/bfnrtu0123456789abcdefABCDEFgxGX\x00\x80\xff";
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    let mut well_formed = 0usize;
    for round in 0..200_000 {
        let mut b = [0u8; 68];
        for byte in &mut b {
            let r = next();
            *byte = if r.is_multiple_of(5) { (r >> 16) as u8 } else { DENSE[(r >> 8) as usize % DENSE.len()] };
        }
        // Up to four bytes after the block: a `u` there needs them, or is cut short.
        let b = &b[..64 + round % 5];
        let block = first_64(b);
        // Many escaped bytes, or one or two (so that a block is often all well-formed).
        let letters = if round % 2 == 0 { next() & next() } else { 1 << (next() % 64) | 1 << (next() % 64) };
        let expected = odd_escapes_by_byte(b, 0, block, letters);
        if expected == 0 {
            well_formed += 1;
        }
        assert_eq!(Lanes16.odd_escapes(b, 0, block, letters), expected, "{b:?} {letters:#x}");
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(simd) = pulp::x86::V3::try_new() {
                let got = simd.vectorize(|| Lanes32(simd).odd_escapes(b, 0, block, letters));
                assert_eq!(got, expected, "AVX2 lanes: {b:?} {letters:#x}");
            }
            if let Some(simd) = pulp::x86::V4::try_new() {
                let got = simd.vectorize(|| Lanes64(simd).odd_escapes(b, 0, block, letters));
                assert_eq!(got, expected, "AVX-512 lanes: {b:?} {letters:#x}");
            }
        }
    }
    assert!((2_000..190_000).contains(&well_formed), "too narrow a draw: {well_formed} blocks well-formed");
}

/// `number` as the grammar states it, one byte at a time.
fn number_bytewise(b: &[u8], start: usize) -> Result<(usize, bool), ScanError> {
    let digits = |i: usize| i + b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = start + usize::from(b.get(start) == Some(&b'-'));
    i = match b.get(i) {
        Some(b'0') => i + 1,
        Some(b'1'..=b'9') => digits(i),
        _ => return Err(ScanError { offset: start, reason: "invalid number" }),
    };
    if b.get(i) == Some(&b'.') {
        if digits(i + 1) == i + 1 {
            return Err(ScanError { offset: i, reason: "invalid number" });
        }
        i = digits(i + 1);
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1 + usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        if digits(i) == i {
            return Err(ScanError { offset: i, reason: "invalid number" });
        }
        return Ok((digits(i), true));
    }
    Ok((i, false))
}

/// The word-at-a-time digit runs agree with the grammar on numbers of every length up to
/// past two words, followed by each kind of byte (digits' neighbours '/' and ':' included).
#[test]
fn number_scan_agrees_with_the_grammar_byte_by_byte() {
    const PIECES: &[&[u8]] =
        &[b"-", b"0", b"7", b"1234567", b"99999999", b".", b"e", b"E", b"+", b"/", b":", b"\x80", b","];
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    let mut ok = 0;
    for _ in 0..200_000 {
        let b = draw_pieces(&mut next, PIECES);
        let expected = number_bytewise(&b, 0);
        assert_eq!(number(&b, 0), expected, "{}", String::from_utf8_lossy(&b));
        ok += usize::from(expected.is_ok());
    }
    assert!(ok > 20_000, "too few valid numbers drawn: {ok}");
}

/// The one-mask number read answers only where [`number`] reads a number without an exponent,
/// and then ends it at the same byte; it answers for every such number below 32 bytes without
/// a sign (every one Pi writes in a usage or a time), whatever follows within its window,
/// but a `0` that a digit follows.
#[test]
fn short_plain_numbers_end_where_the_number_scan_ends() {
    const PIECES: &[&[u8]] =
        &[b"-", b"0", b"7", b"1234567", b"99999999", b".", b"e", b"E", b"+", b"/", b":", b"\x80", b",", b"}"];
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    let mut answered = 0;
    for _ in 0..200_000 {
        let mut b = draw_pieces(&mut next, PIECES);
        // The window always holds 32 bytes: what follows the number is arbitrary.
        b.extend_from_slice(&[b'}'; 32]);
        let scanned = number(&b, 0);
        match short_plain_number(&b, 0) {
            Some(end) => {
                assert_eq!(scanned, Ok((end, false)), "{}", String::from_utf8_lossy(&b));
                answered += 1;
            }
            None => {
                if let Ok((end, false)) = scanned {
                    // Only a sign, a length of 32 or more, or a zero before a digit (a
                    // number of its own, then a digit no grammar takes) goes to `number`.
                    let zero_then_digit = b[0] == b'0' && b[1].is_ascii_digit();
                    assert!(b[0] == b'-' || end >= 32 || zero_then_digit, "{}", String::from_utf8_lossy(&b));
                }
            }
        }
    }
    assert!(answered > 20_000, "too few plain numbers drawn: {answered}");
    let amounts = [
        ("0", Some(1)),
        ("16465", Some(5)),
        ("0.0033710999999999997", Some(21)),
        ("0.02364", Some(7)),
        ("1e-7", None),
        ("-1", None),
        ("007", None),
        ("1.", None),
        (".5", None),
    ];
    for (amount, expected) in amounts {
        let b = format!("{amount},\"total\":0}}}}{}", " ".repeat(32));
        assert_eq!(short_plain_number(b.as_bytes(), 0), expected, "{amount}");
    }
}

#[test]
fn rejects_what_json_parse_rejects_with_offsets() {
    assert_eq!(scan_line(b"{\"a\":1,}").unwrap_err().offset, 7);
    assert_eq!(scan_line(b"{\"a\":\"x").unwrap_err().reason, "unterminated string");
    assert_eq!(scan_line(b"{\"a\":\"\\x\"}").unwrap_err().reason, "invalid escape");
    assert_eq!(scan_line(b"{\"a\":\"\x01\"}").unwrap_err().reason, "control character in string");
    assert!(scan_line(b"\xef\xbb\xbf{}").is_err());
    assert!(scan_line(b"{\"a\":\"\\\\\"}").is_ok());
    assert!(scan_line(b"{}\r").is_ok());
    assert!(scan_line(b"-").is_err());
    assert!(scan_line(b"1.e5").is_err());
    // A deep line scans without recursion.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(scan_line(deep.as_bytes()).is_ok());
    // Objects and arrays alternate past the first word of open containers (64) and the next:
    // each closing bracket must match its own level.
    let levels = 300;
    let open: String = (0..levels).map(|k| if k % 2 == 0 { "{\"a\":" } else { "[" }).collect();
    let close: String = (0..levels).rev().map(|k| if k % 2 == 0 { "}" } else { "]" }).collect();
    assert!(scan_line(format!("{open}1{close}").as_bytes()).is_ok());
    for wrong in [63, 64, 65, 127, 128, 200] {
        let mut bad = close.clone().into_bytes();
        let at = levels - 1 - wrong;
        bad[at] = if bad[at] == b'}' { b']' } else { b'}' };
        let line = format!("{open}1{}", String::from_utf8(bad).unwrap());
        let err = scan_line(line.as_bytes()).unwrap_err();
        assert_eq!(err.offset, open.len() + 1 + at, "level {wrong}");
    }
}

/// A scan as comparable text, its spans moved back by `shift` bytes.
fn describe(outcome: Result<&Scanned, ScanError>, shift: u32) -> String {
    let span = |s: &Span| (s.start - shift, s.end - shift, s.kind);
    let fields =
        |f: &[RawProperty]| f.iter().map(|f| ((f.key.0 - shift, f.key.1 - shift), span(&f.value))).collect::<Vec<_>>();
    match outcome {
        Ok(s) => format!(
            "{:?} {:?} {:?} {:?} {} {} {} {:?} {:?} {} {}",
            s.top,
            fields(&s.fields),
            fields(&s.message_fields),
            s.message_slots.map(|slot| slot.map(|s| span(&s))),
            s.escaped_keys,
            s.null_in_content,
            s.overflow,
            s.tool_calls.iter().map(|t| t.as_ref().map(span)).collect::<Vec<_>>(),
            s.text_blocks.iter().map(|t| t.as_ref().map(span)).collect::<Vec<_>>(),
            s.blocks_recorded,
            s.escaped_blocks
        ),
        Err(e) => format!("error at {} ({})", e.offset - shift as usize, e.reason),
    }
}

/// Lines that start as Pi writes a message (read through the prefix check) scan exactly as
/// the same lines after a space (which the walk reads token by token): every field, flag
/// and error. Drawn from ids with quotes, backslashes, control and UTF-8 bytes, every role
/// and content shape, keys repeated after the prefix, and lines cut or broken anywhere.
#[test]
fn pi_message_prefix_scans_as_the_walk_does() {
    let ids = ["e89ccf8b", "62619164", "é9ccf8", "a\"bcdefg", "a\\bcdefg", "ab\tcdefg", "abcdefg", "abcdefghi"];
    let times = ["2026-01-01T02:44:00.431Z", "2026-01-01T02:44:00.43Z", "2026-01-01T02:44:00.431\n"];
    let rests = [
        r#"user","content":"hi"},"x":1}"#,
        r#"assistant","content":[{"type":"text","text":"a"},{"type":"toolCall","name":"bash","arguments":{}}],"usage":{"input":1}}}"#,
        r#"toolResult","content":[null],"isError":false},"type":"custom"}"#,
        r#"user","content":"hi"},"message":{"role":"assistant"}}"#,
        r#"user","content":"hi"}"#,
        r#"user","content":"hi"}}  "#,
        r#"user","content":"hi"}}x"#,
        r#"user","role":"assistant","content":1e999}}"#,
        r#"user"#,
        r#"user","content":"\u00e9"},"id":null}"#,
    ];
    let mut compared = 0;
    for id in ids {
        for parent in ids.iter().take(3) {
            for time in times {
                for rest in rests {
                    let line = format!(
                        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"{time}","message":{{"role":"{rest}"#
                    );
                    let spaced = format!(" {line}");
                    for cut in [line.len(), line.len().saturating_sub(3), 113, 114, 120] {
                        let (line, spaced) =
                            (&line.as_bytes()[..cut.min(line.len())], &spaced.as_bytes()[..cut.min(line.len()) + 1]);
                        for options in [ScanOptions::default(), ScanOptions { blocks: true }] {
                            let (a, b) = (scan_line_with(line, options), scan_line_with(spaced, options));
                            assert_eq!(
                                describe(a.as_ref().map_err(|e| *e), 0),
                                describe(b.as_ref().map_err(|e| *e), 1),
                                "{}",
                                String::from_utf8_lossy(line)
                            );
                            compared += usize::from(pi_message_prefix(line));
                        }
                    }
                }
            }
        }
    }
    assert!(compared > 200, "too few lines took the prefix: {compared}");
}

/// Scans `line` with and without the shortcut for Pi's usage objects.
fn with_and_without_shapes(line: &[u8], options: ScanOptions) -> (String, String) {
    let with = describe(scan_line_with(line, options).as_ref().map_err(|e| *e), 0);
    let without = describe(scan_line_plain(line, options).as_ref().map_err(|e| *e), 0);
    (with, without)
}

/// Each line scans the same with and without the shortcuts, blocks recorded or not.
fn assert_shapes_agree(lines: &[String]) {
    for line in lines {
        for options in [ScanOptions::default(), ScanOptions { blocks: true }] {
            let (with, without) = with_and_without_shapes(line.as_bytes(), options);
            assert_eq!(with, without, "{line}");
        }
    }
}

/// Whole message lines as Pi writes them, each broken in one byte many times over: with the
/// shortcuts (the prefix and `pi_message_rest` first of all) they scan as the plain walk scans
/// them, blocks recorded or not, and under each line rule (the line alone, or followed by
/// `\n`, `\r\n` or `\r`, as `scan_line_at` reads it from a longer input).
#[test]
fn broken_message_lines_scan_as_the_walk_does() {
    let rests = [
        r#""user","content":"hi \"there\" \u001b[0m","timestamp":1767234268033}}"#,
        r#""user","content":[{"type":"text","text":"a"},{"type":"image","data":"QUJD","mimeType":"image/png"}],"timestamp":1}}"#,
        r#""assistant","content":[{"type":"thinking","thinking":"t","thinkingSignature":"s"},{"type":"text","text":"x"},{"type":"toolCall","id":"c1","name":"ls","arguments":{"path":"a","n":1,"f":false,"z":null}}],"api":"messages","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.30000000000000004}},"stopReason":"toolUse","timestamp":5}}"#,
        r#""toolResult","toolCallId":"c1","toolName":"ls","content":[{"type":"text","text":"out\n"}],"isError":false,"timestamp":6}}"#,
        r#""assistant","content":[],"timestamp":7}}"#,
    ];
    let mut draw = xorshift(0x51_7cc1_b727_220a);
    let mut compared = 0;
    for rest in rests {
        let whole = format!("{PI_LINE_HEAD}{rest}");
        for _ in 0..2_000 {
            let line = break_one_byte(whole.clone(), &mut draw, br#" ,:"{}[]\n0-etu"#);
            for options in [ScanOptions::default(), ScanOptions { blocks: true }] {
                let (with, without) = with_and_without_shapes(line.as_bytes(), options);
                assert_eq!(with, without, "{line}");
                for (rule, end) in [(LineRule::Newline, "\n"), (LineRule::Readline, "\r\n"), (LineRule::Readline, "\r")]
                {
                    if line.contains(['\n', '\r']) {
                        continue;
                    }
                    let input = format!("{line}{end}{line}");
                    let mut out = Scanned::default();
                    let (len, outcome) = scan_line_at(input.as_bytes(), rule, options, &mut out);
                    assert_eq!(len, line.len(), "{line}");
                    assert_eq!(describe(outcome.map(|()| &out), 0), with, "{line}");
                }
            }
            compared += usize::from(pi_message_prefix(line.as_bytes()));
        }
    }
    assert!(compared > 5_000, "too few broken lines kept Pi's prefix: {compared}");
}

/// `text` with one byte, drawn with `draw`, changed to one of `into`, dropped or doubled.
fn break_one_byte(text: String, draw: &mut impl FnMut() -> u64, into: &[u8]) -> String {
    let at = (draw() as usize) % text.len();
    let mut bytes = text.into_bytes();
    match draw() % 3 {
        0 => bytes[at] = into[(draw() % into.len() as u64) as usize],
        1 => _ = bytes.remove(at),
        _ => bytes.insert(at, bytes[at]),
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `pi_usage` takes an object exactly when it has Pi's usage shape with numbers the grammar
/// accepts and no exponent, and then ends where the grammar ends it; the lines around such
/// objects scan as the plain walk scans them (fields, flags, errors and their offsets).
/// Numbers are drawn from valid and invalid pieces, and the shape is broken in every piece.
#[test]
fn pi_usage_shape_scans_as_the_walk_does() {
    const NUMBERS: &[&str] = &[
        "0",
        "9413",
        "-1",
        "0.028239",
        "0.046142550000000004",
        "12345678901234567",
        "1e5",
        "1E+2",
        "1e999",
        "01",
        "1.",
        ".5",
        "-",
        "+1",
        "1e",
        "0x1",
        "",
        "1.5.2",
        "--1",
        "00",
        "\"1\"",
        "null",
        "9_",
    ];
    const KEYS: [&str; 10] = [
        "input",
        "output",
        "cacheRead",
        "cacheWrite",
        "totalTokens",
        "input",
        "output",
        "cacheRead",
        "cacheWrite",
        "total",
    ];
    let mut next = xorshift(0x5eed_u64);
    let (mut taken, mut refused) = (0, 0);
    for round in 0..3000 {
        let numbers: Vec<&str> = (0..10)
            .map(|_| {
                let r = next();
                if r.is_multiple_of(24) {
                    NUMBERS[(r >> 8) as usize % NUMBERS.len()]
                } else {
                    NUMBERS[(r >> 8) as usize % 5]
                }
            })
            .collect();
        let mut usage = String::from("{");
        for (k, (key, number)) in KEYS.iter().zip(&numbers).enumerate() {
            match k {
                0 => {}
                5 => usage.push_str(",\"cost\":{"),
                _ => usage.push(','),
            }
            usage.push_str(&format!("\"{key}\":{number}"));
        }
        usage.push_str("}}");
        // One break of the shape in some rounds: a byte changed, dropped or doubled.
        if round % 3 == 1 {
            usage = break_one_byte(usage, &mut next, b" ,:{}\"x1");
        }
        let alone = usage.as_bytes();
        // The shape, read piece by piece with the grammar's numbers.
        let shaped = {
            let pieces = KEYS.iter().enumerate().map(|(k, key)| {
                let lead = match k {
                    0 => "{",
                    5 => ",\"cost\":{",
                    _ => ",",
                };
                format!("{lead}\"{key}\":")
            });
            let mut at = Some(0);
            for piece in pieces {
                at = at.filter(|&at| alone[at..].starts_with(piece.as_bytes())).and_then(|at| {
                    match number_bytewise(alone, at + piece.len()) {
                        Ok((end, false)) => Some(end),
                        _ => None,
                    }
                });
            }
            at.filter(|&at| alone[at..].starts_with(b"}}")).map(|at| at + 2)
        };
        let mut marks = [0; 5];
        let read = pi_usage(alone, 0, &mut marks);
        assert_eq!(read, shaped, "{usage}");
        // The numbers kept for the amounts are those of input, output, cacheRead, cacheWrite
        // and cost.total.
        if round % 3 != 1
            && let Some(end) = read
        {
            let scanned = Scanned { usage_at: Some(0), usage_marks: marks, ..Scanned::default() };
            let spans = scanned.usage_numbers(Span { start: 0, end: end as u32, kind: SpanKind::Object }).unwrap();
            let texts: Vec<&[u8]> = spans.iter().map(|&(s, e)| &alone[s as usize..e as usize]).collect();
            let expected: Vec<&[u8]> = [0, 1, 2, 3, 9].iter().map(|&k| numbers[k].as_bytes()).collect();
            assert_eq!(texts, expected, "{usage}");
        }
        match shaped {
            Some(end) => {
                taken += 1;
                let walked = scan_line_plain(&alone[..end], ScanOptions::default());
                assert!(walked.is_ok_and(|s| !s.overflow), "{usage}");
            }
            None => refused += 1,
        }
        // In a line: the same outcome as the plain walk, as message usage and elsewhere.
        assert_shapes_agree(&[
            format!(
                r#"{{"type":"message","id":"a1b2c3d4","parentId":"e5f6a7b8","timestamp":"2026-01-01T02:44:00.431Z","message":{{"role":"assistant","content":[{{"type":"text","text":"hi"}}],"usage":{usage},"stopReason":"stop","timestamp":1}}}}"#
            ),
            format!(r#"{{"type":"message","message":{{"role":"assistant","usage":{usage}}},"usage":{usage}}}"#),
            format!(r#"{{"message":{{"content":[{usage}],"usage":[{usage}]}}}}"#),
            format!(r#"{{"type":"message","message":{{"role":"assistant","usage":{usage}"#),
            format!(r#"{{"message":{{"role":"user","content":{usage}}}}}"#),
        ]);
    }
    assert!(taken > 500 && refused > 500, "taken {taken}, refused {refused}");
}

/// Content blocks in Pi's shapes scan as the plain walk scans them, in a message's content
/// (items of an array or values of an object, blocks recorded or not) and elsewhere:
/// blocks drawn from every shape with strings that hold escapes, quotes and control bytes,
/// arguments of every kind of value (nested, spaced, invalid and overflowing numbers
/// included), and one byte changed, dropped or doubled in some.
#[test]
fn pi_block_shapes_scan_as_the_walk_does() {
    const STRINGS: &[&str] = &[
        r#""hi""#,
        r#""a\nb\"c\\d\u001b[31m""#,
        r#""toolu_01KgRZiUs86jzrwZs41sAvEs""#,
        r#""""#,
        r#""bad \x escape""#,
        r#""bad \u12 escape""#,
        "\"tab\tinside\"",
        r#""unterminated"#,
        r#""a longer string that runs past the sixteen bytes of one lane and more""#,
    ];
    const VALUES: &[&str] =
        &["1", "-0.5", "true", "1e5", "1e999", "01", "false", "null", "nul", "{}", "[1]", r#"{"a":1}"#, " 1"];
    let mut next = xorshift(0xb10c_u64);
    let mut pick = |from: &[&'static str], bias: usize| -> &'static str {
        let r = next() as usize;
        if r.is_multiple_of(8) { from[(r >> 8) % from.len()] } else { from[(r >> 8) % bias.min(from.len())] }
    };
    let (mut taken, mut refused) = (0, 0);
    let mut draw = xorshift(0xd1ce_u64);
    for round in 0..4000 {
        let (a, b, c) = (pick(STRINGS, 4), pick(STRINGS, 4), pick(STRINGS, 4));
        let mut block = match round % 4 {
            0 => format!(r#"{{"type":"text","text":{a}}}"#),
            1 => format!(r#"{{"type":"thinking","thinking":{a},"thinkingSignature":{b}}}"#),
            2 => {
                let args: Vec<String> = (0..round % 5)
                    .map(|k| {
                        let value = if k % 2 == 0 { pick(STRINGS, 4) } else { pick(VALUES, 3) };
                        format!(r#"{}:{value}"#, pick(STRINGS, 4))
                    })
                    .collect();
                format!(r#"{{"type":"toolCall","id":{a},"name":{b},"arguments":{{{}}}}}"#, args.join(","))
            }
            _ => format!(r#"{{"type":"image","data":{a},"mimeType":{c}}}"#),
        };
        if round % 3 == 1 {
            block = break_one_byte(block, &mut draw, b" ,:{}\"x1\\");
        }
        match pi_block(block.as_bytes(), 0) {
            Some(found) => {
                taken += 1;
                // What it takes, the plain walk takes.
                let alone = &block.as_bytes()[..found.end];
                assert!(scan_line_plain(alone, ScanOptions::default()).is_ok(), "{block}");
            }
            None => refused += 1,
        }
        assert_shapes_agree(&[
            format!(
                r#"{{"type":"message","id":"a1b2c3d4","parentId":"e5f6a7b8","timestamp":"2026-01-01T02:44:00.431Z","message":{{"role":"assistant","content":[{block},{block}],"usage":{{"input":1}}}}}}"#
            ),
            format!(r#"{{"type":"message","message":{{"role":"user","content":[{block}]}}}}"#),
            format!(r#"{{"message":{{"content":{{"a":{block},"b":[{block}]}}}},"content":[{block}]}}"#),
            format!(r#"{{"message":{{"content":[null,{block}],"x":[{block}]}},"message":{{"content":[{block}"#),
        ]);
    }
    assert!(taken > 1000 && refused > 1000, "taken {taken}, refused {refused}");
}

/// A message's fields in Pi's shapes scan as the plain walk scans them: drawn runs of the
/// fields Pi writes after `role` (known and unknown keys, repeated ones, strings with escapes,
/// usage objects whole and broken, numbers plain, with exponents and invalid, literals right
/// and wrong, a space where Pi writes none), in messages and in other objects, cut anywhere.
#[test]
fn pi_message_fields_scan_as_the_walk_does() {
    const FIELDS: &[&str] = &[
        r#""api":"messages""#,
        r#""provider":"openrouter""#,
        r#""model":"qwen/qwen3-coder""#,
        r#""stopReason":"toolUse""#,
        r#""timestamp":1767829920095"#,
        r#""isError":false"#,
        r#""toolCallId":"toolu_6e46570766ba500e0dc0""#,
        r#""toolName":"bash""#,
        r#""usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.30000000000000004}}"#,
        r#""content":[{"type":"text","text":"hi"}]"#,
        r#""timestamp":1e999"#,
        r#""timestamp":-5"#,
        r#""timestamp":"2026""#,
        r#""timestamp":01"#,
        r#""isError":true"#,
        r#""isError":tru"#,
        r#""isError":null"#,
        r#""model":"a\"b\\c\u00e9""#,
        r#""model":"bad \q""#,
        r#""model": "spaced""#,
        r#""model":7"#,
        r#""toolsName":"x""#,
        r#""tool":"x""#,
        r#""t":1"#,
        r#""usage":{"input":1}"#,
        r#""usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":1e5,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.3}}"#,
        r#""role":"user""#,
        r#""apiKey":"x""#,
        r#""a":"#,
    ];
    let mut next = xorshift(0xf1e1d_u64);
    let mut compared = 0;
    for _ in 0..6000 {
        let count = (next() % 7) as usize;
        let fields: Vec<&str> = (0..count)
            .map(|_| {
                let r = next() as usize;
                if r.is_multiple_of(4) { FIELDS[(r >> 8) % FIELDS.len()] } else { FIELDS[(r >> 8) % 10] }
            })
            .collect();
        let rest = fields.iter().map(|f| format!(",{f}")).collect::<String>();
        let lines = [
            format!(
                r#"{{"type":"message","id":"a1b2c3d4","parentId":"e5f6a7b8","timestamp":"2026-01-01T02:44:00.431Z","message":{{"role":"assistant"{rest}}}}}"#
            ),
            format!(r#"{{"message":{{"content":[]{rest}}},"x":{{"role":"user"{rest}}}}}"#),
            format!(r#"{{"message":{{"role":"toolResult"{rest} }},"message":{{"role":"user"{rest}}}}}"#),
        ];
        for line in &lines {
            let cut = (next() as usize) % (line.len() + 1);
            for line in [line.as_str(), &line[..cut]] {
                for options in [ScanOptions::default(), ScanOptions { blocks: true }] {
                    let (with, without) = with_and_without_shapes(line.as_bytes(), options);
                    assert_eq!(with, without, "{line}");
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 50_000, "{compared}");
}

/// The tool calls the scan records agree with a walk of the raw content (`walk::tool_call_blocks`)
/// on every shape a block can take, and the scan flags the lines the walk refuses.
#[test]
fn records_the_tool_calls_of_the_content() {
    let call = |name: &str| {
        format!(r#"{{"type":"toolCall","id":"c","name":{name},"arguments":{{"type":"toolCall","name":"inner"}}}}"#)
    };
    let contents = [
        format!("[{},{}]", call(r#""bash""#), call(r#""read""#)),
        format!(r#"[{{"type":"text","text":"x"}},{},{{"type":"thinking","thinking":"t"}}]"#, call(r#""a\"b""#)),
        format!("[{},null,1,[{}]]", call("7"), call(r#""nested""#)),
        format!(r#"[{},{{"name":"untyped"}},{{}}]"#, call(r#""x""#)),
        r#"[{"type":"toolCall","type":"text","name":"x"},{"type":"text","type":"toolCall"}]"#.to_string(),
        r#"[{"name":"x","type":"toolCall","name":"y"},{"type":["toolCall"],"name":"z"}]"#.to_string(),
        r#"[{"type":"toolCall","name":"x","type":null}, {"type": "toolCall" , "name" : "spaced" }]"#.to_string(),
        "[]".to_string(),
    ];
    for content in &contents {
        let line = format!(r#"{{"type":"message","message":{{"role":"assistant","content":{content},"usage":1}}}}"#);
        let b = line.as_bytes();
        let sc = scan_line_with_blocks(b).unwrap();
        assert!(!sc.escaped_blocks, "{line}");
        let c = sc.message_field(b, "content").unwrap();
        let raw = &b[c.start as usize..c.end as usize];
        let mut walked = Vec::new();
        crate::json::walk::tool_call_blocks(raw, |name| {
            walked.push(name.map(|(s, e, first)| (&raw[s..e], first == b'"')));
        })
        .unwrap();
        let scanned: Vec<_> = sc
            .tool_calls
            .iter()
            .map(|n| {
                n.map(|n| match n.kind {
                    SpanKind::Str { .. } => (&b[n.start as usize - 1..n.end as usize + 1], true),
                    _ => (&b[n.start as usize..n.end as usize], false),
                })
            })
            .collect();
        assert_eq!(scanned, walked, "{line}");
    }
    // What the list above holds, so that the comparison is not between two empty readings.
    let sc = scan_line_with_blocks(format!(r#"{{"message":{{"content":{}}}}}"#, contents[0]).as_bytes()).unwrap();
    assert_eq!(sc.tool_calls.len(), 2);
    // A later `content` or `message` replaces the earlier one's calls.
    for line in [
        format!(r#"{{"message":{{"content":[{}],"content":"s"}}}}"#, call(r#""x""#)),
        format!(r#"{{"message":{{"content":[{}]}},"message":{{}}}}"#, call(r#""x""#)),
    ] {
        assert!(scan_line_with_blocks(line.as_bytes()).unwrap().tool_calls.is_empty(), "{line}");
    }
    // Escaped keys or types inside blocks are flagged (their reader takes the full value).
    for content in [r#"[{"typ\u0065":"toolCall","name":"x"}]"#, r#"[{"type":"tool\u0043all","name":"x"}]"#] {
        let line = format!(r#"{{"message":{{"content":{content}}}}}"#);
        assert!(scan_line_with_blocks(line.as_bytes()).unwrap().escaped_blocks, "{line}");
    }
}
