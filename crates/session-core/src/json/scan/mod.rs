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
    /// Pi writes it (`pi_usage`): the amounts are then read without walking it again.
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

mod pi_shapes;
mod strings;
use pi_shapes::*;
use strings::*;
pub(crate) use strings::{eq_byte, printed_string, specials, string};

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

#[cfg(test)]
pub(crate) mod tests;
