//! A validating scan of one JSON line: checks it against `JSON.parse`'s grammar and records where
//! the top-level fields (and the fields of a top-level `message` object) lie, without building
//! any value. This is the indexing and listing hot path: a scan kept from line to line allocates
//! only while its lists grow to the longest line's, or when nesting is deep.

use crate::lines::LineRule;

/// What a recorded value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// A string; `start..end` excludes the quotes. `escaped` if it holds a backslash.
    Str {
        /// The raw text contains at least one escape.
        escaped: bool,
    },
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// An object.
    Object,
    /// An array.
    Array,
}

/// Where a value lies inside its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First byte (after the opening quote for strings).
    pub start: u32,
    /// One past the last byte (before the closing quote for strings).
    pub end: u32,
    /// The value's kind.
    pub kind: SpanKind,
}

/// One recorded property: the raw key and its value's span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawProperty {
    /// The key's raw bytes (between the quotes).
    pub key: (u32, u32),
    /// The value.
    pub value: Span,
}

/// The result of scanning a line that `JSON.parse` accepts.
#[derive(Debug, Clone, Default)]
pub struct Scanned {
    /// The top-level value, when it is not an object (`null`, a number, an array, ...).
    pub top: Option<SpanKind>,
    /// Properties of the top-level object, in source order (duplicates included).
    pub fields: Vec<RawProperty>,
    /// Properties of the top-level `message` object, when there is one (the last `message`).
    pub message_fields: Vec<RawProperty>,
    /// The last `role`, `content` and `timestamp` of `message_fields` (keys as written, without
    /// escapes), so that [`Scanned::message_field`] finds them without a search.
    message_slots: [Option<Span>; 3],
    /// A recorded key contains an escape; lookups by raw bytes may miss it.
    pub escaped_keys: bool,
    /// The last `message.content` holds a `null` item (the listing's text extraction throws on it).
    pub null_in_content: bool,
    /// A number is beyond the double range (JavaScript reads it as infinity, which
    /// `JSON.stringify` prints as `null`): the raw text is not what Pi would print.
    pub overflow: bool,
    /// The objects of the last `message.content` (when it is an array) whose `type` is the
    /// string `toolCall`, in order: the span of each one's `name`, `None` when it has none.
    /// Recorded by [`scan_line_with_blocks`] only.
    pub tool_calls: Vec<Option<Span>>,
    /// The objects of the last `message.content` (when it is an array) whose `type` is the
    /// string `text`, in order: the span of each one's `text`, `None` when it has none.
    /// Recorded by [`scan_line_with_blocks`] only.
    pub text_blocks: Vec<Option<Span>>,
    /// `tool_calls` and `text_blocks` were recorded (the scan was [`scan_line_with_blocks`]).
    pub blocks_recorded: bool,
    /// The line starts as Pi writes a message entry (`{"type":"message","id":"…","parentId":"…",
    /// "timestamp":"…","message":{"role":…`): the first four `fields` are those four keys with
    /// strings free of escapes, and the fifth, when there is one, is `message`. [`Scanned::field`]
    /// reads them without a search when no top-level key follows.
    pub pi_prefix: bool,
    /// A key of a content block, or a block's `type`, holds an escape: `tool_calls` and
    /// `text_blocks` may miss blocks, and the content must be read some other way.
    pub escaped_blocks: bool,
    /// Where a `usage` of the top-level message starts, when the scan read it as Pi writes it
    /// (a shortcut the plain walk does not take, so like `pi_prefix` it only says that it was
    /// taken): [`Scanned::usage_numbers`] then finds its numbers from `usage_marks`.
    pub usage_at: Option<u32>,
    /// The ends of that usage's `input`, `output`, `cacheRead` and `cacheWrite` numbers and the
    /// start of its `cost.total` (meaningless when `usage_at` is `None`).
    pub usage_marks: [u32; 5],
}

impl Scanned {
    /// Empties it for another scan, keeping its storage.
    fn clear(&mut self) {
        self.top = None;
        self.fields.clear();
        self.message_fields.clear();
        self.message_slots = [None; 3];
        self.escaped_keys = false;
        self.null_in_content = false;
        self.overflow = false;
        self.tool_calls.clear();
        self.text_blocks.clear();
        self.blocks_recorded = false;
        self.escaped_blocks = false;
        self.pi_prefix = false;
        (self.usage_at, self.usage_marks) = (None, [0; 5]);
    }

    /// The last occurrence of a top-level key (JavaScript keeps the last value). On a line written
    /// as Pi writes a message, with no top-level key repeated, the five keys are where the scan
    /// found Pi's prefix, and no other key is there: no search. Inlined, so that a literal key
    /// picks its place at compile time.
    #[inline(always)]
    pub fn field(&self, line: &[u8], key: &str) -> Option<Span> {
        if self.pi_prefix && self.fields.len() == 5 {
            let at = match key {
                "type" => 0,
                "id" => 1,
                "parentId" => 2,
                "timestamp" => 3,
                "message" => 4,
                _ => return None,
            };
            return Some(self.fields[at].value);
        }
        find(&self.fields, line, key)
    }
    /// The last occurrence of a key inside the top-level `message` object. Inlined, so that a
    /// literal key picks its slot at compile time.
    #[inline(always)]
    pub fn message_field(&self, line: &[u8], key: &str) -> Option<Span> {
        match message_slot(key.as_bytes()) {
            Some(slot) => self.message_slots[slot],
            None => find(&self.message_fields, line, key),
        }
    }
    /// Where the `input`, `output`, `cacheRead`, `cacheWrite` and `cost.total` numbers of the
    /// usage object at `usage` lie (start and end in the line), when the scan read that object as
    /// Pi writes it ([`pi_usage`]): the amounts are then read without walking it again.
    pub fn usage_numbers(&self, usage: Span) -> Option<[(u32, u32); 5]> {
        if self.usage_at != Some(usage.start) {
            return None;
        }
        // The marks are the ends of the first four numbers and the start of the last; each of the
        // first four starts after its key (`pi_usage`'s pieces), and `}}` follows the last.
        let [input, output, cache_read, cache_write, total] = self.usage_marks;
        let after = |at: u32, key: &[u8]| at + key.len() as u32;
        Some([
            (after(usage.start, USAGE_INPUT), input),
            (after(input, USAGE_OUTPUT), output),
            (after(output, USAGE_CACHE_READ), cache_read),
            (after(cache_read, USAGE_CACHE_WRITE), cache_write),
            (total, usage.end.saturating_sub(2)),
        ])
    }

    /// This scan without the marks that only say that a shortcut was taken (`pi_prefix`, the
    /// usage marks): what the plain walk gives for the same line ([`scan_line_plain`]).
    pub fn without_shortcut_marks(mut self) -> Self {
        self.pi_prefix = false;
        (self.usage_at, self.usage_marks) = (None, [0; 5]);
        self
    }

    /// Whether the top-level value is an object.
    pub fn is_object(&self) -> bool {
        self.top.is_none()
    }
}

/// The message slots of [`Scanned`]: where `role`, `content` and `timestamp` are kept.
const ROLE_SLOT: usize = 0;
const CONTENT_SLOT: usize = 1;
const TIMESTAMP_SLOT: usize = 2;

/// Which of [`Scanned`]'s message slots keeps the key written `raw`, if any.
#[inline(always)]
fn message_slot(raw: &[u8]) -> Option<usize> {
    match raw {
        b"role" => Some(ROLE_SLOT),
        b"content" => Some(CONTENT_SLOT),
        b"timestamp" => Some(TIMESTAMP_SLOT),
        _ => None,
    }
}

/// The search behind [`Scanned::field`] and [`Scanned::message_field`]; kept out of line so that
/// their inlined fast paths stay small.
#[inline(never)]
fn find(fields: &[RawProperty], line: &[u8], key: &str) -> Option<Span> {
    fields.iter().rev().find(|f| line.get(f.key.0 as usize..f.key.1 as usize) == Some(key.as_bytes())).map(|f| f.value)
}

/// Why a line is not JSON, and where (offset within the line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanError {
    /// Byte offset within the line.
    pub offset: usize,
    /// What was wrong.
    pub reason: &'static str,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Frame {
    Array,
    Object,
}

/// A line's scan made ahead of time (lines scanned in parallel); `None` when it was not made
/// (a blank line, or a caller that leaves the scan to the consumer).
pub type LineScan<'s> = Option<Result<&'s Scanned, ScanError>>;

/// What a scan records beyond the fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanOptions {
    /// Record the tool calls and text blocks of the message's content ([`Scanned::tool_calls`],
    /// [`Scanned::text_blocks`]), at a small cost to every line.
    pub blocks: bool,
}

/// Scans one line. Whitespace is JSON's (space, tab, CR, LF); anything else outside the value
/// is an error, as it is for `JSON.parse`. `tool_calls` is left empty: see
/// [`scan_line_with_blocks`].
pub fn scan_line(b: &[u8]) -> Result<Scanned, ScanError> {
    scan_line_with(b, ScanOptions::default())
}

/// [`scan_line_with`] into a scan kept by the thread (its storage reused from call to call),
/// handed to `f`; a call made inside `f` scans into a scan of its own.
pub fn with_line_scan<R>(b: &[u8], options: ScanOptions, f: impl FnOnce(Result<&Scanned, ScanError>) -> R) -> R {
    thread_local! {
        static KEPT: std::cell::RefCell<Scanned> = std::cell::RefCell::new(Scanned::default());
    }
    KEPT.with(|kept| match kept.try_borrow_mut() {
        Ok(mut scanned) => {
            let outcome = scan_line_into(b, options, &mut scanned);
            f(outcome.map(|()| &*scanned))
        }
        Err(_) => f(scan_line_with(b, options).as_ref().map_err(|e| *e)),
    })
}

/// [`scan_line`] that also records the tool calls of the message's content
/// ([`Scanned::tool_calls`]).
pub fn scan_line_with_blocks(b: &[u8]) -> Result<Scanned, ScanError> {
    scan_line_with(b, ScanOptions { blocks: true })
}

/// [`scan_line`] with its options.
pub fn scan_line_with(b: &[u8], options: ScanOptions) -> Result<Scanned, ScanError> {
    let mut out = Scanned::default();
    scan_line_into(b, options, &mut out)?;
    Ok(out)
}

/// [`scan_line_with`] into `out`, whose storage is reused.
pub fn scan_line_into(b: &[u8], options: ScanOptions, out: &mut Scanned) -> Result<(), ScanError> {
    if options.blocks {
        scan::<true, WHOLE, true>(b, out)?;
    } else {
        scan::<false, WHOLE, true>(b, out)?;
    }
    Ok(())
}

/// [`scan_line_with`] without the shortcuts for the shapes Pi usually writes (the start of a
/// message entry, the message's other fields, an assistant's `usage`, content blocks): every
/// token walked one by one. The outcome is the same, `pi_prefix` aside (never set here); tests
/// and fuzzing hold the shortcuts to it.
pub fn scan_line_plain(b: &[u8], options: ScanOptions) -> Result<Scanned, ScanError> {
    let mut out = Scanned::default();
    if options.blocks {
        scan::<true, WHOLE, false>(b, &mut out)?;
    } else {
        scan::<false, WHOLE, false>(b, &mut out)?;
    }
    Ok(out)
}

/// Scans the line that starts `rest` into `out` and finds where it ends in the same pass:
/// returns the line's length (terminator excluded) and the scan's outcome, as
/// [`scan_line_with`] gives it for `&rest[..len]`. Only a line that is not JSON is searched for
/// its terminator afterwards (no byte before the scan's error offset can be one), then scanned
/// alone for its error. Blank lines come back as errors.
pub fn scan_line_at(
    rest: &[u8],
    rule: LineRule,
    options: ScanOptions,
    out: &mut Scanned,
) -> (usize, Result<(), ScanError>) {
    let scanned = match (rule, options.blocks) {
        (LineRule::Newline, false) => scan::<false, NEWLINE, true>(rest, out),
        (LineRule::Newline, true) => scan::<true, NEWLINE, true>(rest, out),
        (LineRule::Readline, false) => scan::<false, READLINE, true>(rest, out),
        (LineRule::Readline, true) => scan::<true, READLINE, true>(rest, out),
    };
    match scanned {
        Ok(len) => (len, Ok(())),
        Err(e) => {
            // The line again on its own, for the outcome it gives alone (rare).
            let len = terminator_from(rest, e.offset, rule);
            match scan_line_with(&rest[..len], options) {
                Ok(sc) => {
                    *out = sc;
                    (len, Ok(()))
                }
                Err(e) => (len, Err(e)),
            }
        }
    }
}

/// The first line terminator under `rule` at or after `from`, else the end.
fn terminator_from(rest: &[u8], from: usize, rule: LineRule) -> usize {
    let tail = &rest[from.min(rest.len())..];
    let found = match rule {
        LineRule::Newline => memchr::memchr(b'\n', tail),
        LineRule::Readline => memchr::memchr2(b'\n', b'\r', tail),
    };
    found.map_or(rest.len(), |p| from + p)
}

/// Where a scanned value may end: the whole input is one line, or the line ends at the first
/// `\n` (the loader's rule), or at the first `\n` or `\r` (`readline`'s).
const WHOLE: u8 = 0;
const NEWLINE: u8 = 1;
const READLINE: u8 = 2;

/// Scans a value and the whitespace after it into `out`; returns where that ends (the input's
/// end, or a line terminator under `ENDS`).
fn scan<const BLOCKS: bool, const ENDS: u8, const SHAPES: bool>(
    b: &[u8],
    out: &mut Scanned,
) -> Result<usize, ScanError> {
    if b.len() >= u32::MAX as usize {
        return Err(ScanError { offset: 0, reason: "line of 4 GiB or more" });
    }
    out.clear();
    out.blocks_recorded = BLOCKS;
    let mut st = State::new(out);
    let mut stack = Frames::default();
    let mut i = if SHAPES && pi_message_prefix(b) {
        st.out.pi_prefix = true;
        // Where the walk would be after the prefix: inside `message`, at the value of `role`.
        record_pi_prefix(st.out);
        if let Some(end) = pi_message_rest::<BLOCKS, ENDS>(b, st.out) {
            return Ok(end);
        }
        st.pending = Some(PI_MESSAGE_KEY);
        st.top_start = PI_MESSAGE_OPEN;
        st.in_message = true;
        st.pending_msg = Some(PI_ROLE_KEY);
        st.pending_slot = Some(ROLE_SLOT);
        stack.push(Frame::Object);
        stack.push(Frame::Object);
        PI_PREFIX.len() - 1
    } else {
        skip_ws::<ENDS>(b, 0)
    };
    'value: loop {
        // A value starts at `i`.
        match stack.len() {
            1 => st.top_start = i,
            2 if st.in_message => st.msg_start = i,
            _ => {}
        }
        let kind = match b.get(i) {
            Some(b'{') => 'object: {
                // The usage object Pi writes in an assistant message holds nothing the scan records.
                if stack.len() == 2
                    && st.in_message
                    && !st.in_content
                    && SHAPES
                    && let Some(end) = pi_usage(b, i, &mut st.out.usage_marks)
                {
                    st.out.usage_at = Some(i as u32);
                    i = end;
                    break 'object SpanKind::Object;
                }
                // So do the content blocks Pi writes, but for a text block's text and a tool
                // call's name, which the item's end records from the block state.
                if stack.len() == 3
                    && st.in_content
                    && SHAPES
                    && let Some(block) = pi_block(b, i)
                {
                    i = block.end;
                    if BLOCKS {
                        st.block_type = block.kind;
                        match block.kind {
                            BlockType::ToolCall => st.block_name = block.span,
                            BlockType::Text => st.block_text = block.span,
                            BlockType::Other => {}
                        }
                    }
                    break 'object SpanKind::Object;
                }
                if stack.len() == 1 && st.pending.is_some_and(|k| &b[k.0 as usize..k.1 as usize] == b"message") {
                    st.in_message = true;
                }
                i = skip_ws::<ENDS>(b, i + 1);
                stack.push(Frame::Object);
                if b.get(i) == Some(&b'}') {
                    stack.pop();
                    i += 1;
                    SpanKind::Object
                } else {
                    i = key::<BLOCKS, ENDS>(b, i, &mut st, stack.len())?;
                    continue 'value;
                }
            }
            Some(b'[') => {
                i = skip_ws::<ENDS>(b, i + 1);
                stack.push(Frame::Array);
                if b.get(i) == Some(&b']') {
                    stack.pop();
                    i += 1;
                    SpanKind::Array
                } else {
                    continue 'value;
                }
            }
            Some(b'"') => {
                let (end, escaped) = string(b, i)?;
                i = end;
                SpanKind::Str { escaped }
            }
            Some(b'-' | b'0'..=b'9') => {
                let start = i;
                let exponent;
                (i, exponent) = number(b, i)?;
                if exponent || i - start > 308 {
                    let text = std::str::from_utf8(&b[start..i]).unwrap_or("0");
                    st.out.overflow |= text.parse::<f64>().is_ok_and(f64::is_infinite);
                }
                SpanKind::Number
            }
            Some(b't') => {
                i = literal(b, i, b"true")?;
                SpanKind::Bool
            }
            Some(b'f') => {
                i = literal(b, i, b"false")?;
                SpanKind::Bool
            }
            Some(b'n') => {
                i = literal(b, i, b"null")?;
                SpanKind::Null
            }
            Some(_) => return Err(ScanError { offset: i, reason: "expected a value" }),
            None => return Err(ScanError { offset: i, reason: "unexpected end of line" }),
        };
        let mut finished = Some(kind);
        // After a value: record it, then close containers or move to the next element.
        loop {
            if let Some(kind) = finished.take() {
                st.record::<BLOCKS>(b, stack.len(), i, kind);
            }
            i = skip_ws::<ENDS>(b, i);
            let Some(frame) = stack.last() else {
                let ended =
                    matches!((ENDS, b.get(i)), (_, None) | (NEWLINE, Some(b'\n')) | (READLINE, Some(b'\n' | b'\r')));
                if !ended {
                    return Err(ScanError { offset: i, reason: "unexpected data after the value" });
                }
                return Ok(i);
            };
            match (frame, b.get(i)) {
                (Frame::Object, Some(b',')) => {
                    if SHAPES && stack.len() == 2 && st.in_message {
                        // The message's other fields, as Pi writes them: read, recorded, and back
                        // here after the last one read.
                        let past = pi_message_fields(b, i, st.out);
                        if past != i {
                            i = past;
                            continue;
                        }
                    }
                    i = skip_ws::<ENDS>(b, i + 1);
                    i = key::<BLOCKS, ENDS>(b, i, &mut st, stack.len())?;
                    continue 'value;
                }
                (Frame::Array, Some(b',')) => {
                    i = skip_ws::<ENDS>(b, i + 1);
                    continue 'value;
                }
                (Frame::Object, Some(b'}')) | (Frame::Array, Some(b']')) => {
                    stack.pop();
                    i += 1;
                    finished = Some(if frame == Frame::Object { SpanKind::Object } else { SpanKind::Array });
                }
                (_, None) => return Err(ScanError { offset: i, reason: "unexpected end of line" }),
                _ => return Err(ScanError { offset: i, reason: "expected ',' or a closing bracket" }),
            }
        }
    }
}

/// How Pi writes the start of a message entry (`JSON.stringify` of `{type, id, parentId,
/// timestamp, message: {role, ...}}` with 8-character ids): its fixed parts, and where its
/// variable parts (two ids and a time, 8, 8 and 24 bytes) lie. Most lines start so; for them
/// [`scan`] checks the prefix in a few wide comparisons instead of walking its twelve tokens.
const PI_PREFIX: &[u8; 114] =
    br#"{"type":"message","id":"________","parentId":"________","timestamp":"________________________","message":{"role":""#;
const PI_PREFIX_VARIABLE: [(usize, usize); 3] = [(24, 32), (46, 54), (69, 93)];

/// The fields the walk records for [`PI_PREFIX`]: key and value spans (inside the quotes).
const PI_PREFIX_FIELDS: [((u32, u32), (u32, u32)); 4] = {
    let [(id, id_end), (parent, parent_end), (time, time_end)] = PI_PREFIX_VARIABLE;
    [
        ((2, 6), (9, 16)),
        ((19, 21), (id as u32, id_end as u32)),
        ((35, 43), (parent as u32, parent_end as u32)),
        ((57, 66), (time as u32, time_end as u32)),
    ]
};
const PI_MESSAGE_KEY: (u32, u32) = (96, 103);
const PI_MESSAGE_OPEN: usize = 105;
const PI_ROLE_KEY: (u32, u32) = (107, 111);

/// Whether `b` starts with [`PI_PREFIX`]: its fixed bytes, and plain string bytes (no quote,
/// backslash or control byte) in its variable parts.
#[inline(always)]
fn pi_message_prefix(b: &[u8]) -> bool {
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
const PI_PREFIX_RECORDED: [RawProperty; 4] = {
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
fn record_pi_prefix(out: &mut Scanned) {
    out.fields.extend_from_slice(&PI_PREFIX_RECORDED);
}

/// After [`PI_PREFIX`], the rest of a message line as Pi writes it, read straight through and
/// recorded as the walk records it: the role (a string), the fields [`pi_message_fields`] reads,
/// `"content"` with a string or an array of blocks that [`pi_block`] reads, the fields again,
/// then `}}` and the line's end. Returns where the line ends; else `None` with `out` as the
/// prefix left it, and the walk reads the line.
#[inline(never)]
fn pi_message_rest<const BLOCKS: bool, const ENDS: u8>(b: &[u8], out: &mut Scanned) -> Option<usize> {
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
fn pi_message_rest_read<const BLOCKS: bool>(b: &[u8], out: &mut Scanned) -> Option<usize> {
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
fn pi_message_fields(b: &[u8], mut i: usize, out: &mut Scanned) -> usize {
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
fn pi_message_fields_any(b: &[u8], mut i: usize, out: &mut Scanned) -> usize {
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
enum PiValue {
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
fn pi_field<const N: usize>(b: &[u8], i: usize, key: &[u8; N], value: PiValue, out: &mut Scanned) -> Option<usize> {
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
struct PiBlock {
    end: usize,
    kind: BlockType,
    span: Option<Span>,
}

/// Past `piece` at `i`.
#[inline(always)]
fn piece<const N: usize>(b: &[u8], i: usize, piece: &[u8; N]) -> Option<usize> {
    (b.get(i..i + N)? == piece).then_some(i + N)
}

/// Past the string at `i`, and its span (inside the quotes).
#[inline(always)]
fn string_at(b: &[u8], i: usize) -> Option<(usize, Span)> {
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
fn pi_block(b: &[u8], i: usize) -> Option<PiBlock> {
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
fn flat_object(b: &[u8], i: usize) -> Option<usize> {
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
fn pi_usage(b: &[u8], i: usize, marks: &mut [u32; 5]) -> Option<usize> {
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
fn plain_number(b: &[u8], i: usize) -> Option<usize> {
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
fn short_plain_number(b: &[u8], i: usize) -> Option<usize> {
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
const USAGE_INPUT: &[u8; 9] = br#"{"input":"#;
const USAGE_OUTPUT: &[u8; 10] = br#","output":"#;
const USAGE_CACHE_READ: &[u8; 13] = br#","cacheRead":"#;
const USAGE_CACHE_WRITE: &[u8; 14] = br#","cacheWrite":"#;

/// The open containers: one bit each (1 for an object). The first 64 levels live in one word
/// (every line Pi writes); deeper ones in words on the heap.
#[derive(Default)]
struct Frames {
    first: u64,
    deeper: Vec<u64>,
    depth: usize,
}

impl Frames {
    #[inline(always)]
    fn len(&self) -> usize {
        self.depth
    }
    #[inline(always)]
    fn push(&mut self, frame: Frame) {
        let bit = u64::from(frame == Frame::Object);
        if self.depth < 64 {
            self.first = (self.first & !(1 << self.depth)) | (bit << self.depth);
        } else {
            self.push_deep(bit);
        }
        self.depth += 1;
    }
    #[inline(never)]
    fn push_deep(&mut self, bit: u64) {
        let (w, at) = (self.depth / 64 - 1, self.depth % 64);
        if w == self.deeper.len() {
            self.deeper.push(0);
        }
        let word = &mut self.deeper[w];
        *word = (*word & !(1 << at)) | (bit << at);
    }
    #[inline(always)]
    fn pop(&mut self) {
        self.depth -= 1;
    }
    #[inline(always)]
    fn last(&self) -> Option<Frame> {
        let d = self.depth.checked_sub(1)?;
        let object = if d < 64 {
            self.first >> d & 1 == 1
        } else {
            self.deeper.get(d / 64 - 1).is_some_and(|w| w >> (d % 64) & 1 == 1)
        };
        Some(if object { Frame::Object } else { Frame::Array })
    }
}

struct State<'o> {
    out: &'o mut Scanned,
    /// The top-level key whose value is being scanned.
    pending: Option<(u32, u32)>,
    /// The `message` key whose value is being scanned.
    pending_msg: Option<(u32, u32)>,
    /// Its slot in [`Scanned`]'s message slots, if it has one.
    pending_slot: Option<usize>,
    /// Inside the top-level `message` object.
    in_message: bool,
    /// The `message` key being scanned is `content`.
    in_content: bool,
    top_start: usize,
    msg_start: usize,
    /// Which key of a content block is being scanned.
    block_key: BlockKey,
    /// The `type` of the content block being scanned (so far).
    block_type: BlockType,
    /// The `name` and `text` of the content block being scanned.
    block_name: Option<Span>,
    block_text: Option<Span>,
    block_value_start: usize,
}

/// The keys of a content block that the scan records.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum BlockKey {
    #[default]
    Other,
    Type,
    Name,
    Text,
}

/// The content block types the scan records.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum BlockType {
    #[default]
    Other,
    ToolCall,
    Text,
}

impl<'o> State<'o> {
    fn new(out: &'o mut Scanned) -> Self {
        State {
            out,
            pending: None,
            pending_msg: None,
            pending_slot: None,
            in_message: false,
            in_content: false,
            top_start: 0,
            msg_start: 0,
            block_key: BlockKey::Other,
            block_type: BlockType::Other,
            block_name: None,
            block_text: None,
            block_value_start: 0,
        }
    }

    /// Records a value that ended at `end`, now that the stack has `depth` open containers.
    #[inline(always)]
    fn record<const BLOCKS: bool>(&mut self, b: &[u8], depth: usize, end: usize, kind: SpanKind) {
        match depth {
            0 if kind != SpanKind::Object => self.out.top = Some(kind),
            1 => {
                if let Some(k) = self.pending.take() {
                    push(&mut self.out.fields, k, self.top_start, end, kind);
                }
                self.in_message = false;
            }
            2 if self.in_message => {
                if let Some(key) = self.pending_msg.take() {
                    let value = value_span(self.msg_start, end, kind);
                    self.out.message_fields.push(RawProperty { key, value });
                    if let Some(slot) = self.pending_slot.take() {
                        self.out.message_slots[slot] = Some(value);
                    }
                }
                self.in_content = false;
            }
            3 | 4 if BLOCKS && self.in_content => self.record_in_content(b, depth, end, kind),
            3 if self.in_content && kind == SpanKind::Null => self.out.null_in_content = true,
            _ => {}
        }
    }
    /// [`State::record`] inside the top-level message's `content`: its items and their fields.
    #[inline(never)]
    fn record_in_content(&mut self, b: &[u8], depth: usize, end: usize, kind: SpanKind) {
        if depth == 3 {
            // An item of the content ended.
            self.out.null_in_content |= kind == SpanKind::Null;
            if kind == SpanKind::Object {
                match self.block_type {
                    BlockType::ToolCall => self.out.tool_calls.push(self.block_name),
                    BlockType::Text => self.out.text_blocks.push(self.block_text),
                    BlockType::Other => {}
                }
            }
            self.block_type = BlockType::Other;
            self.block_name = None;
            self.block_text = None;
            return;
        }
        match std::mem::take(&mut self.block_key) {
            BlockKey::Other => {}
            BlockKey::Type => {
                self.block_type = match (kind, &b[self.block_value_start..end]) {
                    (SpanKind::Str { escaped: false }, b"\"toolCall\"") => BlockType::ToolCall,
                    (SpanKind::Str { escaped: false }, b"\"text\"") => BlockType::Text,
                    _ => BlockType::Other,
                };
                self.out.escaped_blocks |= kind == SpanKind::Str { escaped: true };
            }
            BlockKey::Name => self.block_name = Some(value_span(self.block_value_start, end, kind)),
            BlockKey::Text => self.block_text = Some(value_span(self.block_value_start, end, kind)),
        }
    }
}

fn push(fields: &mut Vec<RawProperty>, key: (u32, u32), start: usize, end: usize, kind: SpanKind) {
    fields.push(RawProperty { key, value: value_span(start, end, kind) });
}

/// The span of a value found at `start..end` (strings without their quotes).
#[inline(always)]
fn value_span(start: usize, end: usize, kind: SpanKind) -> Span {
    let (start, end) = match kind {
        SpanKind::Str { .. } => (start + 1, end - 1),
        _ => (start, end),
    };
    Span { start: start as u32, end: end as u32, kind }
}

/// Reads a key and its colon; returns the position of the value.
#[inline(always)]
fn key<const BLOCKS: bool, const ENDS: u8>(
    b: &[u8],
    i: usize,
    st: &mut State,
    depth: usize,
) -> Result<usize, ScanError> {
    if b.get(i) != Some(&b'"') {
        return Err(ScanError { offset: i, reason: "expected a key" });
    }
    let (end, escaped) = string(b, i)?;
    let span = ((i + 1) as u32, (end - 1) as u32);
    if depth == 1 {
        st.pending = Some(span);
        st.out.escaped_keys |= escaped;
        if &b[i + 1..end - 1] == b"message" {
            st.out.message_fields.clear();
            st.out.message_slots = [None; 3];
            st.out.null_in_content = false;
            st.out.tool_calls.clear();
            st.out.text_blocks.clear();
        }
    } else if depth == 2 && st.in_message {
        st.pending_msg = Some(span);
        st.pending_slot = message_slot(&b[i + 1..end - 1]);
        st.in_content = st.pending_slot == Some(CONTENT_SLOT);
        if st.in_content {
            st.out.null_in_content = false;
            st.out.tool_calls.clear();
            st.out.text_blocks.clear();
            st.block_type = BlockType::Other;
            st.block_name = None;
            st.block_text = None;
        }
        st.out.escaped_keys |= escaped;
    }
    let j = if b.get(end) == Some(&b':') { end } else { skip_ws::<ENDS>(b, end) };
    if b.get(j) != Some(&b':') {
        return Err(ScanError { offset: j, reason: "expected ':'" });
    }
    let value = skip_ws::<ENDS>(b, j + 1);
    if BLOCKS && depth == 4 && st.in_content {
        st.block_key = match &b[i + 1..end - 1] {
            b"type" => BlockKey::Type,
            b"name" => BlockKey::Name,
            b"text" => BlockKey::Text,
            _ => BlockKey::Other,
        };
        st.block_value_start = value;
        st.out.escaped_blocks |= escaped;
    }
    Ok(value)
}

/// Past JSON whitespace, line terminators under `ENDS` excepted.
#[inline]
fn skip_ws<const ENDS: u8>(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        let space = match ENDS {
            WHOLE => matches!(c, b' ' | b'\t' | b'\n' | b'\r'),
            NEWLINE => matches!(c, b' ' | b'\t' | b'\r'),
            _ => matches!(c, b' ' | b'\t'),
        };
        if !space {
            break;
        }
        i += 1;
    }
    i
}

fn literal(b: &[u8], i: usize, word: &[u8]) -> Result<usize, ScanError> {
    if b.get(i..i + word.len()) == Some(word) {
        Ok(i + word.len())
    } else {
        Err(ScanError { offset: i, reason: "invalid literal" })
    }
}

/// Reads a number; returns where it ends and whether it has an exponent.
#[inline(always)]
pub(crate) fn number(b: &[u8], mut i: usize) -> Result<(usize, bool), ScanError> {
    let start = i;
    #[inline(always)]
    fn digits(b: &[u8], mut i: usize) -> (usize, usize) {
        let s = i;
        loop {
            let Some(chunk) = b.get(i..i + 8) else {
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                break;
            };
            let w = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            // The lowest byte below '0' or above '9' is flagged exactly.
            let below = w.wrapping_sub(LO * u64::from(b'0')) & !w & HI;
            let above = (((w & !HI) + LO * 0x46) | w) & HI;
            let stop = below | above;
            if stop != 0 {
                i += (stop.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        (i, i - s)
    }
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(b, i).0,
        _ => return Err(ScanError { offset: start, reason: "invalid number" }),
    }
    if b.get(i) == Some(&b'.') {
        let (j, n) = digits(b, i + 1);
        if n == 0 {
            return Err(ScanError { offset: i, reason: "invalid number" });
        }
        i = j;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        let (j, n) = digits(b, i);
        if n == 0 {
            return Err(ScanError { offset: i, reason: "invalid number" });
        }
        return Ok((j, true));
    }
    Ok((i, false))
}

/// Length of a JSON escape by the byte after its backslash: 2, 6 for `\\u`, 0 when invalid.
const ESCAPE_LEN: [u8; 256] = {
    let mut t = [0u8; 256];
    let simple = *b"\"\\/bfnrt";
    let mut k = 0;
    while k < simple.len() {
        t[simple[k] as usize] = 2;
        k += 1;
    }
    t[b'u' as usize] = 6;
    t
};

/// The usual escape letters (`"`, `t`, `n`) at the index of their low four bits, for a lookup that
/// finds all three with one compare: a byte is one exactly when it equals its entry (0xFF matches
/// no byte below 0x80, and the lookup gives 0 for the others).
const USUAL_BY_LOW_BITS: [u8; 16] = {
    let mut t = [0xFFu8; 16];
    t[(b'"' & 15) as usize] = b'"';
    t[(b't' & 15) as usize] = b't';
    t[(b'n' & 15) as usize] = b'n';
    t
};

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// High bit set in the lowest byte of `w` equal to `c` (and possibly in bytes above it).
#[inline(always)]
pub(crate) fn eq_byte(w: u64, c: u8) -> u64 {
    let v = w ^ (LO * u64::from(c));
    v.wrapping_sub(LO) & !v & HI
}

/// High bit set in each byte of `w` that is `"`, `\\` or below 0x20. Only the lowest flagged
/// byte is exact (a borrow can flag a byte above it), which is all the scan uses.
#[inline(always)]
pub(crate) fn specials(w: u64) -> u64 {
    let zero = |v: u64| v.wrapping_sub(LO) & !v;
    (zero(w ^ (LO * u64::from(b'"'))) | zero(w ^ (LO * u64::from(b'\\'))) | w.wrapping_sub(LO * 0x20) & !w) & HI
}

/// Scans a string starting at its opening quote; returns the position after the closing quote
/// and whether it holds escapes. A string that closes within its first sixteen bytes, without
/// escapes (most keys, ids and names), is read here inline; any other goes to [`string_long`].
#[inline(always)]
pub(crate) fn string(b: &[u8], open: usize) -> Result<(usize, bool), ScanError> {
    if let Some(chunk) = b.get(open + 1..open + 17) {
        let (quote, stops) = stops16(chunk.try_into().unwrap_or([0; 16]));
        // The first quote, backslash or control byte is a quote: the string ends there.
        if stops & stops.wrapping_neg() & quote != 0 {
            return Ok((open + 2 + stops.trailing_zeros() as usize, false));
        }
    }
    string_long(b, open)
}

/// One bit per byte of 16: the quotes, and the bytes that stop a string's run (quotes,
/// backslashes and bytes below 0x20).
#[inline(always)]
fn stops16(chunk: [u8; 16]) -> (u32, u32) {
    use wide::u8x16;
    let v = u8x16::new(chunk);
    let quote = v.simd_eq(u8x16::splat(b'"')).to_bitmask();
    (quote, quote | (v.simd_eq(u8x16::splat(b'\\')) | v.min(u8x16::splat(0x1f)).simd_eq(v)).to_bitmask())
}

/// The rest of [`string`], with the widest lanes the CPU has: 64 bytes at a time
/// ([`string_blocks_with`]) up to the closing quote, then the byte-by-byte loop at the stop (or
/// over the last bytes of the input). One call from the scan: the lanes' CPU features are
/// enabled for the whole of it, so nothing inside is a call.
#[inline(never)]
fn string_long(b: &[u8], open: usize) -> Result<(usize, bool), ScanError> {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V4::try_new() {
        return simd.vectorize(LongString { lanes: Lanes64(simd), b, open });
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        return simd.vectorize(LongString { lanes: Lanes32(simd), b, open });
    }
    string_long_with(Lanes16, b, open)
}

/// [`string_long_with`] as the call `vectorize` makes with the lanes' CPU features. Its body is
/// always inlined there; a closure's was only while it stayed small (session 8: a larger string
/// loop in a closure was left out of line, its intrinsics became calls, and the pass took 224
/// instead of 33 ms).
struct LongString<'b, L> {
    lanes: L,
    b: &'b [u8],
    open: usize,
}

impl<L: BlockMasks> pulp::NullaryFnOnce for LongString<'_, L> {
    type Output = Result<(usize, bool), ScanError>;
    #[inline(always)]
    fn call(self) -> Self::Output {
        string_long_with(self.lanes, self.b, self.open)
    }
}

/// [`string_long`] with the given lanes; inlined, so that it is built for the lanes' CPU features.
#[inline(always)]
fn string_long_with(lanes: impl BlockMasks, b: &[u8], open: usize) -> Result<(usize, bool), ScanError> {
    // Strings of up to 32 bytes without escapes close in these two lanes.
    if let Some(chunk) = b.get(open + 1..open + 33) {
        let (q0, s0) = stops16(chunk[..16].try_into().unwrap_or([0; 16]));
        let (q1, s1) = stops16(chunk[16..].try_into().unwrap_or([0; 16]));
        let (quote, stops) = (u64::from(q1) << 16 | u64::from(q0), u64::from(s1) << 16 | u64::from(s0));
        if stops & stops.wrapping_neg() & quote != 0 {
            return Ok((open + 2 + stops.trailing_zeros() as usize, false));
        }
    }
    let mut escaped = false;
    let mut i = string_blocks_with(lanes, b, open + 1, &mut escaped);
    loop {
        // Only near the end of the input: sixteen bytes at a time, then byte by byte.
        while let Some(chunk) = b.get(i..i + 16) {
            let (_, m) = stops16(chunk.try_into().unwrap_or([0; 16]));
            if m != 0 {
                i += m.trailing_zeros() as usize;
                break;
            }
            i += 16;
        }
        let Some(&c) = b.get(i) else {
            return Err(ScanError { offset: open, reason: "unterminated string" });
        };
        match c {
            b'"' => return Ok((i + 1, escaped)),
            b'\\' => {
                escaped = true;
                let next = b.get(i + 1).copied().unwrap_or(0);
                match ESCAPE_LEN[usize::from(next)] {
                    2 => i += 2,
                    6 if b.get(i + 2..i + 6).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) => i += 6,
                    6 => return Err(ScanError { offset: i, reason: "invalid unicode escape" }),
                    _ => return Err(ScanError { offset: i, reason: "invalid escape" }),
                }
            }
            0..=0x1f => return Err(ScanError { offset: i, reason: "control character in string" }),
            _ => i += 1,
        }
    }
}

/// How [`string_blocks_with`] finds, in a 64-byte block, one bit per byte for: quotes and bytes below
/// 0x20 (the bytes that end a string's run, unless escaped), backslashes, and the usual escape
/// letters `n`, `"` and `t`.
trait BlockMasks: Copy {
    fn masks(self, block: &[u8; 64]) -> (u64, u64, u64);

    /// Of the escaped bytes `letters` of `block` (at `i` in `b`), those whose escape is not
    /// well-formed: a letter JSON does not know, or `u` without four hex digits after it. Byte by
    /// byte here; lanes with a byte shuffle classify the whole block at once.
    #[inline(always)]
    fn odd_escapes(self, b: &[u8], i: usize, block: &[u8; 64], letters: u64) -> u64 {
        odd_escapes_by_byte(b, i, block, letters)
    }
}

/// [`BlockMasks::odd_escapes`] one escaped byte at a time.
#[inline(always)]
fn odd_escapes_by_byte(b: &[u8], i: usize, block: &[u8; 64], letters: u64) -> u64 {
    let mut odd = 0u64;
    let mut unchecked = letters;
    while unchecked != 0 {
        let p = unchecked.trailing_zeros() as usize;
        let well_formed = match ESCAPE_LEN[usize::from(block[p])] {
            2 => true,
            6 => b.get(i + p + 1..i + p + 5).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)),
            _ => false,
        };
        if !well_formed {
            odd |= unchecked & unchecked.wrapping_neg();
        }
        unchecked &= unchecked - 1;
    }
    odd
}

/// The escape classes of a byte, as bits: [`ESCAPE_LETTER`], [`HEX_DIGIT`] and [`LETTER_U`]. A
/// byte's classes are those its low-nibble entry and its high-nibble entry share (the way simdjson
/// classifies bytes), so two 16-byte lookups classify every byte.
const ESCAPE_LETTER: u8 = 0x0F;
const HEX_DIGIT: u8 = 0x70;
const LETTER_U: u8 = 0x80;
/// Class bits by high nibble: `"` and `/` (0x2_), `\` (0x5_), `b f n` (0x6_), `r t u` (0x7_);
/// digits (0x3_), `A-F` (0x4_), `a-f` (0x6_); `u`.
const CLASS_BY_HIGH_NIBBLE: [u8; 16] = {
    let mut t = [0u8; 16];
    t[0x2] = 0x01;
    t[0x3] = 0x10;
    t[0x4] = 0x20;
    t[0x5] = 0x02;
    t[0x6] = 0x04 | 0x40;
    t[0x7] = 0x08 | LETTER_U;
    t
};
const CLASS_BY_LOW_NIBBLE: [u8; 16] = {
    let mut t = [0u8; 16];
    let mut lo = 0;
    while lo < 16 {
        // Digits 0-9; letters A-F and a-f have low nibbles 1-6.
        if lo <= 9 {
            t[lo] |= 0x10;
        }
        if lo >= 1 && lo <= 6 {
            t[lo] |= 0x20 | 0x40;
        }
        lo += 1;
    }
    t[0x2] |= 0x01 | 0x04 | 0x08; // " b r
    t[0xF] |= 0x01; // /
    t[0xC] |= 0x02; // \
    t[0x6] |= 0x04; // f
    t[0xE] |= 0x04; // n
    t[0x4] |= 0x08; // t
    t[0x5] |= 0x08 | LETTER_U; // u
    t
};

/// [`BlockMasks::odd_escapes`] from the class masks of the block: each `u` is checked against the
/// four bytes after it by shifts; a `u` among the block's last four bytes, whose digits lie in
/// the next block, is checked byte by byte.
#[inline(always)]
fn odd_escapes_by_class(b: &[u8], i: usize, block: &[u8; 64], letters: u64, classes: (u64, u64, u64)) -> u64 {
    const LAST_FOUR: u64 = 0xF << 60;
    let (letter, hex, u) = classes;
    let u = letters & u;
    let odd_u = u & !((hex >> 1) & (hex >> 2) & (hex >> 3) & (hex >> 4));
    let mut odd = (letters & !letter) | (odd_u & !LAST_FOUR);
    if odd_u & LAST_FOUR != 0 {
        odd |= odd_escapes_by_byte(b, i, block, odd_u & LAST_FOUR);
    }
    odd
}

/// 16-byte lanes: SSE2 on x86-64, NEON on AArch64, whatever `wide` has elsewhere.
#[derive(Clone, Copy)]
struct Lanes16;

impl BlockMasks for Lanes16 {
    #[inline(always)]
    fn masks(self, block: &[u8; 64]) -> (u64, u64, u64) {
        use wide::u8x16;
        let (mut quote_or_control, mut backslash, mut usual) = (0u64, 0u64, 0u64);
        for k in 0..4 {
            let mut lanes = [0u8; 16];
            lanes.copy_from_slice(&block[k * 16..k * 16 + 16]);
            let v = u8x16::new(lanes);
            let shift = k * 16;
            let is = |c: u8| v.simd_eq(u8x16::splat(c));
            let stops = is(b'"') | v.min(u8x16::splat(0x1f)).simd_eq(v);
            quote_or_control |= u64::from(stops.to_bitmask()) << shift;
            backslash |= u64::from(is(b'\\').to_bitmask()) << shift;
            usual |= u64::from((is(b'n') | is(b'"') | is(b't')).to_bitmask()) << shift;
        }
        (quote_or_control, backslash, usual)
    }
}

/// 32-byte AVX2 lanes, for x86-64 CPUs that have AVX2. The CPU is asked at run time (`pulp`), so
/// the build stays portable. Scanning 300 MB of the bench store's lines once each, from cache,
/// took 60 ms with 16-byte lanes, 46 ms with these and 42 ms with AVX-512's ([`Lanes64`]). The
/// masks are taken with the tricks of [`Lanes64`], ten instructions for 32 bytes instead of
/// thirteen: session 13, the picker's instructions -3.5% on 129 files of the bench store, its
/// time unchanged (1.001x, 21 runs).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Lanes32(pulp::x86::V3);

#[cfg(target_arch = "x86_64")]
impl BlockMasks for Lanes32 {
    #[inline(always)]
    fn masks(self, block: &[u8; 64]) -> (u64, u64, u64) {
        use core::arch::x86_64::__m256i;
        let Lanes32(simd) = self;
        let (avx, avx2) = (simd.avx, simd.avx2);
        let table: __m256i = pulp::cast([USUAL_BY_LOW_BITS; 2]);
        let (mut quote_or_control, mut backslash, mut usual) = (0u64, 0u64, 0u64);
        for k in 0..2 {
            let mut lanes = [0u8; 32];
            lanes.copy_from_slice(&block[k * 32..k * 32 + 32]);
            let v: __m256i = pulp::cast(lanes);
            // Straight-line calls: a closure would be built without AVX2 and not inlined.
            // A quote xor 2 is 0x20, and a byte below 0x20 stays below it: one compare for both.
            let flipped = avx2._mm256_xor_si256(v, avx._mm256_set1_epi8(2));
            let stops = avx2._mm256_cmpeq_epi8(avx2._mm256_min_epu8(flipped, avx._mm256_set1_epi8(0x20)), flipped);
            let backslashes = avx2._mm256_cmpeq_epi8(v, avx._mm256_set1_epi8(b'\\' as i8));
            // The usual escape letters by their low four bits: a byte equal to its entry is one.
            let letters = avx2._mm256_cmpeq_epi8(avx2._mm256_shuffle_epi8(table, v), v);
            let shift = k * 32;
            quote_or_control |= u64::from(avx2._mm256_movemask_epi8(stops) as u32) << shift;
            backslash |= u64::from(avx2._mm256_movemask_epi8(backslashes) as u32) << shift;
            usual |= u64::from(avx2._mm256_movemask_epi8(letters) as u32) << shift;
        }
        (quote_or_control, backslash, usual)
    }

    #[inline(always)]
    fn odd_escapes(self, b: &[u8], i: usize, block: &[u8; 64], letters: u64) -> u64 {
        use core::arch::x86_64::__m256i;
        let Lanes32(simd) = self;
        let (avx, avx2) = (simd.avx, simd.avx2);
        let low_table: __m256i = pulp::cast([CLASS_BY_LOW_NIBBLE; 2]);
        let high_table: __m256i = pulp::cast([CLASS_BY_HIGH_NIBBLE; 2]);
        let nibble = avx._mm256_set1_epi8(0x0F);
        let (mut letter, mut hex, mut u) = (0u64, 0u64, 0u64);
        for k in 0..2 {
            let mut lanes = [0u8; 32];
            lanes.copy_from_slice(&block[k * 32..k * 32 + 32]);
            let v: __m256i = pulp::cast(lanes);
            let low = avx2._mm256_shuffle_epi8(low_table, avx2._mm256_and_si256(v, nibble));
            let high_nibble = avx2._mm256_and_si256(avx2._mm256_srli_epi16::<4>(v), nibble);
            let classes = avx2._mm256_and_si256(low, avx2._mm256_shuffle_epi8(high_table, high_nibble));
            // Straight-line calls, as in `masks`. A byte is in a class when its bits there are not all zero.
            let zero = avx._mm256_setzero_si256();
            let none_letter =
                avx2._mm256_cmpeq_epi8(avx2._mm256_and_si256(classes, avx._mm256_set1_epi8(ESCAPE_LETTER as i8)), zero);
            let none_hex =
                avx2._mm256_cmpeq_epi8(avx2._mm256_and_si256(classes, avx._mm256_set1_epi8(HEX_DIGIT as i8)), zero);
            let none_u =
                avx2._mm256_cmpeq_epi8(avx2._mm256_and_si256(classes, avx._mm256_set1_epi8(LETTER_U as i8)), zero);
            let shift = k * 32;
            letter |= u64::from(!(avx2._mm256_movemask_epi8(none_letter) as u32)) << shift;
            hex |= u64::from(!(avx2._mm256_movemask_epi8(none_hex) as u32)) << shift;
            u |= u64::from(!(avx2._mm256_movemask_epi8(none_u) as u32)) << shift;
        }
        odd_escapes_by_class(b, i, block, letters, (letter, hex, u))
    }
}

/// 64-byte AVX-512 lanes (`AVX512BW`): the compares give the bit masks directly.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Lanes64(pulp::x86::V4);

#[cfg(target_arch = "x86_64")]
impl BlockMasks for Lanes64 {
    #[inline(always)]
    fn masks(self, block: &[u8; 64]) -> (u64, u64, u64) {
        use core::arch::x86_64::__m512i;
        let Lanes64(simd) = self;
        let (f, bw) = (simd.avx512f, simd.avx512bw);
        let v: __m512i = pulp::cast(*block);
        // A quote xor 2 is 0x20, and a byte below 0x20 stays below it: one compare for both.
        let quote_or_control =
            bw._mm512_cmple_epu8_mask(f._mm512_xor_si512(v, f._mm512_set1_epi8(2)), f._mm512_set1_epi8(0x20));
        let backslashes = bw._mm512_cmpeq_epi8_mask(v, f._mm512_set1_epi8(b'\\' as i8));
        // The usual escape letters by their low four bits: a byte equal to its table entry is one.
        let table: __m512i = pulp::cast([USUAL_BY_LOW_BITS; 4]);
        let usual = bw._mm512_cmpeq_epi8_mask(bw._mm512_shuffle_epi8(table, v), v);
        (quote_or_control, backslashes, usual)
    }

    #[inline(always)]
    fn odd_escapes(self, b: &[u8], i: usize, block: &[u8; 64], letters: u64) -> u64 {
        use core::arch::x86_64::__m512i;
        let Lanes64(simd) = self;
        let (f, bw) = (simd.avx512f, simd.avx512bw);
        let v: __m512i = pulp::cast(*block);
        let nibble = f._mm512_set1_epi8(0x0F);
        let low = bw._mm512_shuffle_epi8(pulp::cast([CLASS_BY_LOW_NIBBLE; 4]), f._mm512_and_si512(v, nibble));
        let high_nibble = f._mm512_and_si512(bw._mm512_srli_epi16::<4>(v), nibble);
        let high = bw._mm512_shuffle_epi8(pulp::cast([CLASS_BY_HIGH_NIBBLE; 4]), high_nibble);
        let classes = f._mm512_and_si512(low, high);
        let letter = bw._mm512_test_epi8_mask(classes, f._mm512_set1_epi8(ESCAPE_LETTER as i8));
        let hex = bw._mm512_test_epi8_mask(classes, f._mm512_set1_epi8(HEX_DIGIT as i8));
        let u = bw._mm512_test_epi8_mask(classes, f._mm512_set1_epi8(LETTER_U as i8));
        odd_escapes_by_class(b, i, block, letters, (letter, hex, u))
    }
}

/// Scans the inside of a string from `i` (a byte not escaped) 64 bytes at a time and returns
/// where the byte-by-byte loop must take over: the closing quote, a control byte, the backslash
/// of an escape that is not well-formed, or the last bytes of the input. The masks are taken with
/// the widest lanes the CPU has. Scanning 300 MB of the bench store's lines once each, from
/// cache: 42.5 ms when the string first went sixteen bytes at a time and then to a separate call
/// in 128-byte stretches (`u128` masks); 41.5 ms so; 43.0 ms so but in 128-byte stretches.
#[inline(always)]
fn string_blocks_with(lanes: impl BlockMasks, b: &[u8], mut i: usize, escaped: &mut bool) -> usize {
    // The first byte of a block is escaped by a backslash that ended the previous one.
    let mut carry = 0u64;
    // The backslashes of the blocks passed whole, or-ed: one test at the end.
    let mut backslashes = 0u64;
    while let Some(block) = b.get(i..i + 64) {
        if let Some(stop) = block64(lanes, b, i, first_64(block), &mut carry, &mut backslashes, escaped) {
            *escaped |= backslashes != 0;
            return stop;
        }
        i += 64;
    }
    *escaped |= backslashes != 0;
    i - carry as usize
}

/// One block of [`string_blocks_with`], `block` (at `i`): the stop in it, if any; else `carry`
/// (the block's last byte is an escaping backslash) is set for the next, and its backslashes
/// added to `backslashes`. Which bytes are escaped is worked out for the whole block at once from
/// the runs of backslashes; `\n`, `\"` and `\t` are known good from the masks, and the other
/// escaped bytes are checked by [`BlockMasks::odd_escapes`] (with AVX2 or AVX-512, the whole block
/// at once: session 21, picker CPU 0.988x, 41 runs twice; strings of tool results with `\u`
/// escapes took 12% less time from cache, 18.9 against 21.6 ms). A block with neither such a
/// byte nor a stop passes after one branch (two before session 15: instructions -0.2% to -0.5% on every hot
/// path, tool-result lines 3.7-5.6% faster from cache). Before the runs, a block whose backslashes
/// each escape a usual letter passes on a shorter test (session 16: the picker's instructions
/// -4.7% on 129 files of the bench store, tool-result lines 11-12% faster from cache).
#[inline(always)]
fn block64(
    lanes: impl BlockMasks,
    b: &[u8],
    i: usize,
    block: &[u8; 64],
    carry: &mut u64,
    backslashes: &mut u64,
    escaped: &mut bool,
) -> Option<usize> {
    const ODD: u64 = 0xAAAA_AAAA_AAAA_AAAA;
    let (quote_or_control, backslash, usual) = lanes.masks(block);
    // While no backslash is escaped, every backslash escapes the byte after it: when those
    // bytes are all usual letters (so none is a backslash) and no stop is left unescaped, the
    // block passes without the runs worked out.
    let after_backslash = (backslash << 1) | *carry;
    if (after_backslash & !usual) | (quote_or_control & !after_backslash) == 0 {
        *backslashes |= backslash;
        *carry = backslash >> 63;
        return None;
    }
    let potential = backslash & !*carry;
    let code = (((potential << 1) | ODD).wrapping_sub(potential)) ^ ODD;
    let escaped_bytes = code ^ (potential | *carry);
    let escapes = code & backslash;
    let letters = escaped_bytes & !backslash & !usual;
    let direct = quote_or_control & !escaped_bytes;
    // One branch for both: a block with neither (most of them) goes straight on.
    if letters | direct != 0 {
        let odd_escape = if letters != 0 { lanes.odd_escapes(b, i, block, letters) } else { 0 };
        if odd_escape | direct != 0 {
            // The first stop: a direct one at its byte, an odd escape at its backslash.
            let at_direct = if direct != 0 { i + direct.trailing_zeros() as usize } else { usize::MAX };
            let at_escape = if odd_escape != 0 { i + odd_escape.trailing_zeros() as usize - 1 } else { usize::MAX };
            let stop = at_direct.min(at_escape);
            if stop >= i && backslash & ((1u64 << (stop - i)) - 1) != 0 {
                *escaped = true;
            }
            return Some(stop);
        }
    }
    *backslashes |= backslash;
    *carry = escapes >> 63;
    None
}

/// The first 64 bytes of `bytes` (its length is checked by the caller).
#[inline(always)]
fn first_64(bytes: &[u8]) -> &[u8; 64] {
    const ZERO: [u8; 64] = [0; 64];
    bytes.first_chunk().unwrap_or(&ZERO)
}

#[cfg(test)]
pub(crate) mod tests {
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
        // Edge case 22 (spec §5): `"parentId":null,"parentId":"a1"` means "a1".
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
                        Some(b'u') if b.get(i + 2..i + 6).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) => {
                            i += 6
                        }
                        Some(b'u') => return Err(ScanError { offset: i, reason: "invalid unicode escape" }),
                        _ => return Err(ScanError { offset: i, reason: "invalid escape" }),
                    }
                }
                Some(0..=0x1f) => return Err(ScanError { offset: i, reason: "control character in string" }),
                Some(_) => i += 1,
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
        assert_eq!(string_long_with(Lanes16, b, 0), expected, "16-byte lanes: {}", String::from_utf8_lossy(b));
        #[cfg(target_arch = "x86_64")]
        if let Some(simd) = pulp::x86::V3::try_new() {
            let lanes = LongString { lanes: Lanes32(simd), b, open: 0 };
            assert_eq!(simd.vectorize(lanes), expected, "AVX2 lanes: {}", String::from_utf8_lossy(b));
        }
        expected.is_ok()
    }

    /// Strings of up to a few hundred blocks, most of them with escapes that the masks do not
    /// pass (`\u` above all, with its hex digits in the next block at times); one string in three
    /// has one escape that is not well-formed, anywhere in it.
    #[test]
    fn long_strings_with_many_rare_escapes_agree_with_the_grammar() {
        const GOOD: &[&[u8]] = &[
            b"\\u001b[31m",
            b"\\u00e9",
            b"\\b\\f\\r\\/",
            b"\\n",
            b"\\\\",
            b"\\\\\\u0041",
            b"plain text of some length, ",
            b"0123456789abcdef",
            b"\xc3\xa9\xe6\x95\xb0",
        ];
        const BAD: &[&[u8]] = &[b"\\u12g4", b"\\x", b"\\u00\"", b"\\uabc\\n", b"\x01", b"\\u"];
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let (mut ok, mut errors) = (0, 0);
        for round in 0..20_000 {
            let mut b = vec![b'"'];
            let pieces = (next() % 400) as usize;
            let bad_at = (round % 3 == 0).then(|| (next() % (pieces as u64 + 1)) as usize);
            for k in 0..=pieces {
                if bad_at == Some(k) {
                    b.extend_from_slice(BAD[(next() % BAD.len() as u64) as usize]);
                }
                if k < pieces {
                    b.extend_from_slice(GOOD[(next() % GOOD.len() as u64) as usize]);
                }
            }
            if !next().is_multiple_of(16) {
                b.push(b'"');
            }
            let well_formed = string_agrees_with_the_grammar(&mut b);
            if well_formed { ok += 1 } else { errors += 1 }
        }
        assert!(ok > 5_000 && errors > 5_000, "too narrow a draw: {ok} ok, {errors} errors");
    }

    /// Every kind of lanes the CPU has gives the masks as they are defined, byte by byte, on
    /// blocks of every byte value, dense in the bytes the masks pick out (the string scan above
    /// checks the whole loop on each kind as well).
    #[test]
    fn every_kind_of_lanes_gives_the_defined_masks() {
        const DENSE: &[u8] = b"\"\\ntu\x00\x1f\x20\x7f\x80\xff";
        let bytewise = |block: &[u8; 64]| {
            let bits =
                |f: &dyn Fn(u8) -> bool| block.iter().enumerate().fold(0u64, |m, (k, &c)| m | u64::from(f(c)) << k);
            (bits(&|c| c == b'"' || c < 0x20), bits(&|c| c == b'\\'), bits(&|c| matches!(c, b'n' | b'"' | b't')))
        };
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        #[cfg(target_arch = "x86_64")]
        let kinds =
            1 + usize::from(pulp::x86::V3::try_new().is_some()) + usize::from(pulp::x86::V4::try_new().is_some());
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
        let fields = |f: &[RawProperty]| {
            f.iter().map(|f| ((f.key.0 - shift, f.key.1 - shift), span(&f.value))).collect::<Vec<_>>()
        };
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
                            let (line, spaced) = (
                                &line.as_bytes()[..cut.min(line.len())],
                                &spaced.as_bytes()[..cut.min(line.len()) + 1],
                            );
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
                    for (rule, end) in
                        [(LineRule::Newline, "\n"), (LineRule::Readline, "\r\n"), (LineRule::Readline, "\r")]
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
                    at = at.filter(|&at| alone[at..].starts_with(piece.as_bytes())).and_then(
                        |at| match number_bytewise(alone, at + piece.len()) {
                            Ok((end, false)) => Some(end),
                            _ => None,
                        },
                    );
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
            let line =
                format!(r#"{{"type":"message","message":{{"role":"assistant","content":{content},"usage":1}}}}"#);
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
}
