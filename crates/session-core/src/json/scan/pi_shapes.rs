//! The fast paths for the lines Pi writes itself: a message entry's fixed prefix, its usual
//! message fields, content blocks and `usage` object, each read straight through and recorded
//! exactly as the general walk would record it, or left to the walk.

use super::*;

/// How Pi writes the start of a message entry (`JSON.stringify` of `{type, id, parentId,
/// timestamp, message: {role, ...}}` with 8-character ids): its fixed parts, and where its
/// variable parts (two ids and a time, 8, 8 and 24 bytes) lie. Most lines start so; for them
/// [`scan`] checks the prefix in a few wide comparisons instead of walking its twelve tokens.
pub(super) const PI_PREFIX: &[u8; 114] =
    br#"{"type":"message","id":"________","parentId":"________","timestamp":"________________________","message":{"role":""#;
pub(super) const PI_PREFIX_VARIABLE: [(usize, usize); 3] = [(24, 32), (46, 54), (69, 93)];

/// The fields the walk records for [`PI_PREFIX`]: key and value spans (inside the quotes).
pub(super) const PI_PREFIX_FIELDS: [((u32, u32), (u32, u32)); 4] = {
    let [(id, id_end), (parent, parent_end), (time, time_end)] = PI_PREFIX_VARIABLE;
    [
        ((2, 6), (9, 16)),
        ((19, 21), (id as u32, id_end as u32)),
        ((35, 43), (parent as u32, parent_end as u32)),
        ((57, 66), (time as u32, time_end as u32)),
    ]
};
pub(super) const PI_MESSAGE_KEY: (u32, u32) = (96, 103);
pub(super) const PI_MESSAGE_OPEN: usize = 105;
pub(super) const PI_ROLE_KEY: (u32, u32) = (107, 111);

/// Whether `b` starts with [`PI_PREFIX`]: its fixed bytes, and plain string bytes (no quote,
/// backslash or control byte) in its variable parts.
#[inline(always)]
pub(super) fn pi_message_prefix(b: &[u8]) -> bool {
    let Some(head) = b.first_chunk::<{ PI_PREFIX.len() }>() else { return false };
    #[inline(always)]
    fn word(head: &[u8; PI_PREFIX.len()], k: usize) -> u64 {
        u64::from_le_bytes([
            head[k],
            head[k + 1],
            head[k + 2],
            head[k + 3],
            head[k + 4],
            head[k + 5],
            head[k + 6],
            head[k + 7],
        ])
    }
    let word = |k: usize| word(head, k);
    // Written out so that every length is a constant (compared inline, not by `memcmp`).
    let [(id, _), (parent, _), (time, _)] = PI_PREFIX_VARIABLE;
    head[..id] == PI_PREFIX[..id]
        && head[id + 8..parent] == PI_PREFIX[id + 8..parent]
        && head[parent + 8..time] == PI_PREFIX[parent + 8..time]
        && head[time + 24..] == PI_PREFIX[time + 24..]
        && specials(word(id))
            | specials(word(parent))
            | specials(word(time))
            | specials(word(time + 8))
            | specials(word(time + 16))
            == 0
}

/// The four fields of [`PI_PREFIX`] as the walk records them.
pub(super) const PI_PREFIX_RECORDED: [RawProperty; 4] = {
    let mut fields = [RawProperty { key: (0, 0), value: Span { start: 0, end: 0, kind: SpanKind::Null } }; 4];
    let mut k = 0;
    while k < 4 {
        let (key, value) = PI_PREFIX_FIELDS[k];
        fields[k] =
            RawProperty { key, value: Span { start: value.0, end: value.1, kind: SpanKind::Str { escaped: false } } };
        k += 1;
    }
    fields
};

/// Records the four fields of [`PI_PREFIX`] as the walk would, in one copy.
#[inline(always)]
pub(super) fn record_pi_prefix(out: &mut Scanned) {
    out.fields.extend_from_slice(&PI_PREFIX_RECORDED);
}

/// After [`PI_PREFIX`], the rest of a message line as Pi writes it, read straight through and
/// recorded as the walk records it: the role (a string), the fields [`pi_message_fields`] reads,
/// `"content"` with a string or an array of blocks that [`pi_block`] reads, the fields again,
/// then `}}` and the line's end. Returns where the line ends; else `None` with `out` as the
/// prefix left it, and the walk reads the line.
#[inline(never)]
pub(super) fn pi_message_rest<const BLOCKS: bool, const ENDS: u8>(b: &[u8], out: &mut Scanned) -> Option<usize> {
    let read = pi_message_rest_read::<BLOCKS>(b, out).filter(|&end| {
        matches!((ENDS, b.get(end)), (_, None) | (NEWLINE, Some(b'\n')) | (READLINE, Some(b'\n' | b'\r')))
    });
    if read.is_none() {
        out.fields.truncate(PI_PREFIX_FIELDS.len());
        out.message_fields.clear();
        out.message_slots = [None; 3];
        out.tool_calls.clear();
        out.text_blocks.clear();
        out.usage_at = None;
    }
    read
}

/// [`pi_message_rest`] up to the end of the top-level object: where that is.
#[inline(always)]
pub(super) fn pi_message_rest_read<const BLOCKS: bool>(b: &[u8], out: &mut Scanned) -> Option<usize> {
    let (i, role) = string_at(b, PI_PREFIX.len() - 1)?;
    out.message_fields.push(RawProperty { key: PI_ROLE_KEY, value: role });
    out.message_slots[ROLE_SLOT] = Some(role);
    let comma = pi_message_fields(b, i, out);
    let open = piece(b, comma, b",\"content\":")?;
    let (end, kind) = match b.get(open)? {
        b'"' => {
            let (end, span) = string_at(b, open)?;
            (end, span.kind)
        }
        b'[' if b.get(open + 1) == Some(&b']') => (open + 2, SpanKind::Array),
        b'[' => {
            let mut i = open + 1;
            loop {
                let block = pi_block(b, i)?;
                if BLOCKS {
                    match block.kind {
                        BlockType::ToolCall => out.tool_calls.push(block.span),
                        BlockType::Text => out.text_blocks.push(block.span),
                        BlockType::Other => {}
                    }
                }
                match b.get(block.end)? {
                    b',' => i = block.end + 1,
                    b']' => break (block.end + 1, SpanKind::Array),
                    _ => return None,
                }
            }
        }
        _ => return None,
    };
    let content = value_span(open, end, kind);
    out.message_fields.push(RawProperty { key: ((comma + 2) as u32, (comma + 9) as u32), value: content });
    out.message_slots[CONTENT_SLOT] = Some(content);
    let close = piece(b, pi_message_fields(b, end, out), b"}}")?;
    push(&mut out.fields, PI_MESSAGE_KEY, PI_MESSAGE_OPEN, close - 1, SpanKind::Object);
    Some(close)
}

/// From the `,` at `i` after a value of the top-level `message`: the fields that follow, for as
/// long as each is written as Pi writes one of these (no whitespace, strings escaped or not):
/// `"toolCallId"`, `"toolName"`, `"api"`, `"provider"`, `"model"` and `"stopReason"` with a
/// string, `"usage"` as [`pi_usage`] reads it, `"timestamp"` with a plain number (no exponent),
/// `"isError"` with `true` or `false`. Each is recorded as the walk records a message field;
/// returns where the last one read ends (at `i` when none is read), and the walk goes on from
/// there. A field is read whole or not at all.
#[inline(never)]
pub(super) fn pi_message_fields(b: &[u8], mut i: usize, out: &mut Scanned) -> usize {
    use PiValue::{Bool, Number, Str, Usage};
    // Pi's own orders first, as straight-line code: an assistant's `api` to `timestamp`, a tool
    // result's `toolCallId` and `toolName` (before its content), `isError` and `timestamp` (after
    // it). A jump on each key's first letter, taken for every field, cost a tenth of an assistant
    // line's scan on a CPU without AVX-512. Anything else, or a field that does not follow, goes
    // to the loop below, which takes them in any order.
    macro_rules! field {
        ($key:literal, $value:expr) => {
            match pi_field(b, i, $key, $value, out) {
                Some(end) => i = end,
                None => return pi_message_fields_any(b, i, out),
            }
        };
    }
    match b.get(i + 2) {
        Some(b'a') => {
            field!(b",\"api\":", Str);
            field!(b",\"provider\":", Str);
            field!(b",\"model\":", Str);
            field!(b",\"usage\":", Usage);
            field!(b",\"stopReason\":", Str);
            field!(b",\"timestamp\":", Number);
        }
        Some(b't') if b.get(i + 3) == Some(&b'o') => {
            field!(b",\"toolCallId\":", Str);
            field!(b",\"toolName\":", Str);
        }
        Some(b'i') => {
            field!(b",\"isError\":", Bool);
            field!(b",\"timestamp\":", Number);
        }
        _ => {}
    }
    // Most lines come here at the message's end or at its `content`: no call for those.
    match b.get(i..i + 3) {
        Some([b',', b'"', c]) if *c != b'c' => pi_message_fields_any(b, i, out),
        _ => i,
    }
}

/// [`pi_message_fields`] in any order: each field by its key's first letters.
#[inline(never)]
pub(super) fn pi_message_fields_any(b: &[u8], mut i: usize, out: &mut Scanned) -> usize {
    use PiValue::{Bool, Number, Str, Usage};
    while b.get(i) == Some(&b',') {
        let found = match b.get(i + 2) {
            Some(b'a') => pi_field(b, i, b",\"api\":", Str, out),
            Some(b'p') => pi_field(b, i, b",\"provider\":", Str, out),
            Some(b'm') => pi_field(b, i, b",\"model\":", Str, out),
            Some(b'u') => pi_field(b, i, b",\"usage\":", Usage, out),
            Some(b's') => pi_field(b, i, b",\"stopReason\":", Str, out),
            Some(b'i') => pi_field(b, i, b",\"isError\":", Bool, out),
            Some(b't') => match b.get(i + 3) {
                Some(b'i') => pi_field(b, i, b",\"timestamp\":", Number, out),
                _ if b.get(i + 6) == Some(&b'l') => pi_field(b, i, b",\"toolCallId\":", Str, out),
                _ => pi_field(b, i, b",\"toolName\":", Str, out),
            },
            _ => None,
        };
        match found {
            Some(end) => i = end,
            None => return i,
        }
    }
    i
}

/// The kind of value [`pi_field`] reads.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum PiValue {
    /// A string, escaped or not.
    Str,
    /// As [`pi_usage`] reads it.
    Usage,
    /// A plain number (no exponent): only `timestamp` has one, and it fills the message's slot.
    Number,
    /// `true` or `false`.
    Bool,
}

/// The field at `i` if it is `key` (`,"name":`, of constant length, compared inline) and a
/// value of the kind given: recorded as the walk records a message field, and where it ends.
#[inline(always)]
pub(super) fn pi_field<const N: usize>(
    b: &[u8],
    i: usize,
    key: &[u8; N],
    value: PiValue,
    out: &mut Scanned,
) -> Option<usize> {
    let start = piece(b, i, key)?;
    let (end, span) = match value {
        PiValue::Str => string_at(b, start)?,
        PiValue::Usage => {
            let end = pi_usage(b, start, &mut out.usage_marks)?;
            out.usage_at = Some(start as u32);
            (end, value_span(start, end, SpanKind::Object))
        }
        PiValue::Number => {
            let end = plain_number(b, start)?;
            (end, value_span(start, end, SpanKind::Number))
        }
        PiValue::Bool => piece(b, start, b"true")
            .or_else(|| piece(b, start, b"false"))
            .map(|end| (end, value_span(start, end, SpanKind::Bool)))?,
    };
    out.message_fields.push(RawProperty { key: ((i + 2) as u32, (i + N - 2) as u32), value: span });
    if value == PiValue::Number {
        out.message_slots[TIMESTAMP_SLOT] = Some(span);
    }
    Some(end)
}

/// A content block read by [`pi_block`]: where it ends, its type, and the span of a text
/// block's `text` or a tool call's `name`.
pub(super) struct PiBlock {
    pub(super) end: usize,
    pub(super) kind: BlockType,
    pub(super) span: Option<Span>,
}

/// Past `piece` at `i`.
#[inline(always)]
pub(super) fn piece<const N: usize>(b: &[u8], i: usize, piece: &[u8; N]) -> Option<usize> {
    (b.get(i..i + N)? == piece).then_some(i + N)
}

/// Past the string at `i`, and its span (inside the quotes).
#[inline(always)]
pub(super) fn string_at(b: &[u8], i: usize) -> Option<(usize, Span)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let (end, escaped) = string(b, i).ok()?;
    Some((end, value_span(i, end, SpanKind::Str { escaped })))
}

/// The content block at `i`, if it is written exactly as Pi writes one of these (any strings,
/// escaped or not):
/// - `{"type":"text","text":"…"}`
/// - `{"type":"thinking","thinking":"…","thinkingSignature":"…"}`
/// - `{"type":"toolCall","id":"…","name":"…","arguments":{…}}`, the arguments an object of
///   strings, plain numbers (no exponent), `true`, `false` and `null`, nothing nested
/// - `{"type":"image","data":"…","mimeType":"…"}`
///
/// else `None`, and the walk reads it. Such a block is what the walk would accept, and of what
/// is inside it the walk records only the text or the name, which this returns.
#[inline(never)]
pub(super) fn pi_block(b: &[u8], i: usize) -> Option<PiBlock> {
    let i = piece(b, i, br#"{"type":""#)?;
    let (kind, span, i) = if let Some(i) = piece(b, i, br#"text","text":"#) {
        let (i, text) = string_at(b, i)?;
        (BlockType::Text, Some(text), i)
    } else if let Some(i) = piece(b, i, br#"thinking","thinking":"#) {
        let (i, _) = string_at(b, i)?;
        let (i, _) = string_at(b, piece(b, i, br#","thinkingSignature":"#)?)?;
        (BlockType::Other, None, i)
    } else if let Some(i) = piece(b, i, br#"toolCall","id":"#) {
        let (i, _) = string_at(b, i)?;
        let (i, name) = string_at(b, piece(b, i, br#","name":"#)?)?;
        let i = flat_object(b, piece(b, i, br#","arguments":"#)?)?;
        (BlockType::ToolCall, Some(name), i)
    } else {
        let (i, _) = string_at(b, piece(b, i, br#"image","data":"#)?)?;
        let (i, _) = string_at(b, piece(b, i, br#","mimeType":"#)?)?;
        (BlockType::Other, None, i)
    };
    Some(PiBlock { end: piece(b, i, b"}")?, kind, span })
}

/// Past the object at `i`, if it has no whitespace and its values are strings, plain numbers
/// (no exponent), `true`, `false` or `null`.
#[inline(always)]
pub(super) fn flat_object(b: &[u8], i: usize) -> Option<usize> {
    let mut i = piece(b, i, b"{")?;
    if b.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        let (key_end, _) = string_at(b, i)?;
        i = piece(b, key_end, b":")?;
        i = match b.get(i)? {
            b'"' => string_at(b, i)?.0,
            b'-' | b'0'..=b'9' => match number(b, i) {
                Ok((end, false)) => end,
                _ => return None,
            },
            b't' => piece(b, i, b"true")?,
            b'f' => piece(b, i, b"false")?,
            b'n' => piece(b, i, b"null")?,
            _ => return None,
        };
        match b.get(i)? {
            b',' => i += 1,
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// Where the object at `i` ends, if it is written as Pi writes an assistant message's `usage`
/// (`JSON.stringify` of pi-ai's `Usage`: five token counts, then `cost` with five amounts) with
/// plain numbers (no exponent); else `None`, and the walk reads it. Such an object is what the
/// walk would accept, and it holds nothing the walk records (nor a number that could overflow);
/// its twenty-one tokens are checked here as eleven fixed pieces and ten numbers.
#[inline(never)]
pub(super) fn pi_usage(b: &[u8], i: usize, marks: &mut [u32; 5]) -> Option<usize> {
    /// Past `pieces` at `i`, then past a plain number: where that starts and ends.
    #[inline(always)]
    fn then_number<const N: usize>(b: &[u8], i: usize, pieces: &[u8; N]) -> Option<(usize, usize)> {
        let start = piece(b, i, pieces)?;
        Some((start, plain_number(b, start)?))
    }
    let (_, input) = then_number(b, i, USAGE_INPUT)?;
    let (_, output) = then_number(b, input, USAGE_OUTPUT)?;
    let (_, cache_read) = then_number(b, output, USAGE_CACHE_READ)?;
    let (_, cache_write) = then_number(b, cache_read, USAGE_CACHE_WRITE)?;
    let (_, i) = then_number(b, cache_write, br#","totalTokens":"#)?;
    let (_, i) = then_number(b, i, br#","cost":{"input":"#)?;
    let (_, i) = then_number(b, i, br#","output":"#)?;
    let (_, i) = then_number(b, i, br#","cacheRead":"#)?;
    let (_, i) = then_number(b, i, br#","cacheWrite":"#)?;
    let (total, i) = then_number(b, i, br#","total":"#)?;
    let end = piece(b, i, b"}}")?;
    // Only a usage read whole changes the marks: those of an earlier one stay good.
    *marks = [input, output, cache_read, cache_write, total].map(|at| at as u32);
    Some(end)
}

/// Past the number at `i` if it has no exponent (a shaped field's number): [`short_plain_number`]
/// where it answers, else [`number`].
#[inline(always)]
pub(super) fn plain_number(b: &[u8], i: usize) -> Option<usize> {
    match short_plain_number(b, i) {
        Some(end) => Some(end),
        None => match number(b, i) {
            Ok((end, false)) => Some(end),
            _ => None,
        },
    }
}

/// Past the number at `i` if it is written as digits, then maybe a `.` and digits, without a
/// leading zero or an exponent, in fewer than 32 bytes (every time in ms and every count and
/// amount Pi writes in a usage, but the rare tiny amount with an exponent): found from one mask of
/// the digits among the next 32 bytes, without a loop over them. `None` for anything else, which
/// [`number`] then reads.
#[inline(always)]
pub(super) fn short_plain_number(b: &[u8], i: usize) -> Option<usize> {
    use wide::u8x16;
    let window = b.get(i..i + 32)?;
    let digits_of = |half: &[u8]| {
        let v = u8x16::new(half.try_into().unwrap_or([0; 16]));
        // A digit is a byte whose distance above '0' (wrapping) is at most 9.
        let above_zero = v - u8x16::splat(b'0');
        u64::from(above_zero.min(u8x16::splat(9)).simd_eq(above_zero).to_bitmask())
    };
    let digits = digits_of(&window[..16]) | digits_of(&window[16..]) << 16;
    let whole = (!digits).trailing_zeros() as usize;
    if whole == 0 || (whole > 1 && window[0] == b'0') {
        return None;
    }
    let len = if window.get(whole) == Some(&b'.') {
        let fraction = (!(digits >> (whole + 1))).trailing_zeros() as usize;
        if fraction == 0 {
            return None;
        }
        whole + 1 + fraction
    } else {
        whole
    };
    // An exponent is `number`'s to read.
    (len < 32 && window[len] | 0x20 != b'e').then_some(i + len)
}

/// The pieces before the first four numbers of a usage as Pi writes it ([`pi_usage`]); their
/// lengths also place those numbers ([`Scanned::usage_numbers`]).
pub(super) const USAGE_INPUT: &[u8; 9] = br#"{"input":"#;
pub(super) const USAGE_OUTPUT: &[u8; 10] = br#","output":"#;
pub(super) const USAGE_CACHE_READ: &[u8; 13] = br#","cacheRead":"#;
pub(super) const USAGE_CACHE_WRITE: &[u8; 14] = br#","cacheWrite":"#;
