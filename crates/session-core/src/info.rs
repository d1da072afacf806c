//! `SessionInfo` for one file (format.md §9), as a pure function of its bytes and its modification time:
//! what Pi's session picker shows. Lines are split as `readline` splits them.
//!
//! Everything but the texts comes from the validating scan of each line; a message is fully
//! parsed only for its text, and in picker mode (no `allMessagesText`) only until the first
//! user text is found.

use bumpalo::Bump;

use crate::json::{self, JsStr, Value, scan::SpanKind};
use crate::lines::{LineRule, Lines, is_blank};
use crate::property::PropertyValue;
use crate::session::{Detail, Entry, top_is_falsy};

/// The picker's view of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo<'a> {
    /// `header.id`, unvalidated (a number is listed as it is).
    pub id: PropertyValue<'a>,
    /// `header.cwd` when it is a string, else `""`.
    pub cwd: JsStr<'a>,
    /// The latest `session_info` name, trimmed; `None` when cleared or never set.
    pub name: Option<JsStr<'a>>,
    /// `header.parentSession`, as it is.
    pub parent_session: PropertyValue<'a>,
    /// `new Date(header.timestamp)` in ms; `NaN` for an invalid date.
    pub created: f64,
    /// Last user or assistant activity, else the header time, else the file's mtime (ms).
    pub modified: f64,
    /// Every `message` entry, any role, every branch.
    pub message_count: u64,
    /// Text of the first user message with text, or `(no messages)`.
    pub first_message: JsStr<'a>,
    /// Texts of all user and assistant messages, joined with one space (WTF-8); empty unless
    /// built with [`Texts::Decoded`].
    pub all_messages_text: Vec<u8>,
    /// The same text as `JSON.stringify` writes it, without the quotes; empty unless built with
    /// [`Texts::Json`].
    pub all_messages_json: Vec<u8>,
    /// Where each message's text lies in `all_messages_text`, in file order; empty unless built
    /// with [`Texts::DecodedWithPieces`].
    pub text_pieces: Vec<TextPiece>,
}

/// One message's text in `allMessagesText`, and where the message is in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct TextPiece {
    /// Its bytes in `all_messages_text`.
    pub range: std::ops::Range<usize>,
    /// The message's 1-based line.
    pub line: u64,
    /// The line's byte offset.
    pub offset: u64,
    /// The entry's `id`.
    pub id: PropertyValue<'static>,
    /// A user message (else an assistant's).
    pub user: bool,
}

/// Whether and how `allMessagesText` is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Texts {
    /// Not read past the first user text (picker mode).
    Skip,
    /// Decoded, in `all_messages_text`.
    Decoded,
    /// Decoded, with each message's place in `text_pieces` (for a search's hits).
    DecodedWithPieces,
    /// Ready to be written between quotes, in `all_messages_json`: a listing's texts are mostly
    /// copied as they are in the file instead of being decoded and escaped again.
    Json,
}

/// Why the reference leaves a file out of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Omitted {
    /// 1-based line, when one line is the cause.
    pub line: Option<u64>,
    /// Byte offset of that line.
    pub offset: Option<u64>,
    /// The reason.
    pub reason: String,
}

impl std::fmt::Display for Omitted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, self.offset) {
            (Some(l), Some(o)) => write!(f, "line {l}, byte {o}: {}", self.reason),
            _ => f.write_str(&self.reason),
        }
    }
}

/// What [`InfoBuilder`] reads of a `message` entry.
struct MessageView<'l> {
    line: crate::lines::Line<'l>,
    /// The kind of the entry's `message` value.
    message: Option<SpanKind>,
    /// `message.role` when `message` is an object.
    role: Role,
    /// The kind of `message.content`, when the key is there.
    content: Option<SpanKind>,
}

/// What a message's role means to the listing.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    User,
    Assistant,
    /// Any other string.
    Other,
    /// Absent, or not a string.
    NotText,
}

impl Role {
    fn of_field(role: &PropertyValue<'_>) -> Role {
        match role {
            PropertyValue::Str(s) if *s == "user" => Role::User,
            PropertyValue::Str(s) if *s == "assistant" => Role::Assistant,
            PropertyValue::Str(_) => Role::Other,
            _ => Role::NotText,
        }
    }

    /// The role at `span`: one written plainly is known from its bytes, without decoding.
    #[inline(always)]
    fn of_span(line: &[u8], span: Option<json::Span>) -> Role {
        if let Some(json::Span { start, end, kind: SpanKind::Str { escaped: false } }) = span {
            match &line[start as usize..end as usize] {
                b"user" => return Role::User,
                b"assistant" => return Role::Assistant,
                b"toolResult" => return Role::Other,
                _ => {}
            }
        }
        Role::of_field(&PropertyValue::from_span(line, span))
    }
}

fn omitted(at: Option<&crate::lines::Line<'_>>, reason: impl Into<String>) -> Omitted {
    Omitted { line: at.map(|l| l.number), offset: at.map(|l| l.offset), reason: reason.into() }
}

/// Computes `SessionInfo` from a file's bytes; `mtime_ms` (`stats.mtimeMs`) is only used when no date
/// is found. Times without an offset are read in UTC ([`session_info_with`] takes a zone).
/// With `texts` false (picker mode), `all_messages_text` stays empty and message texts are read
/// only until the first user text.
pub fn session_info(bytes: &[u8], mtime_ms: f64, texts: bool) -> Result<SessionInfo<'static>, Omitted> {
    session_info_with(bytes, mtime_ms, if texts { Texts::Decoded } else { Texts::Skip }, &jiff::tz::TimeZone::UTC)
}

/// [`session_info`] with the texts kept as `texts` says, and times without an offset read in
/// `local` (the zone Node would run in).
pub fn session_info_with(
    bytes: &[u8],
    mtime_ms: f64,
    texts: Texts,
    local: &jiff::tz::TimeZone,
) -> Result<SessionInfo<'static>, Omitted> {
    let mut builder = InfoBuilder::with_texts(texts).with_local_zone(local.clone());
    for line in Lines::new(bytes, LineRule::Readline) {
        if !builder.line(line) {
            break;
        }
    }
    builder.finish(mtime_ms)
}

/// What a `SessionInfo` takes from the session header.
struct Header {
    /// `header.timestamp`, as it is.
    timestamp: PropertyValue<'static>,
    /// `header.id`, as it is.
    id: PropertyValue<'static>,
    /// `header.cwd` when it is a string, else `""`.
    cwd: JsStr<'static>,
    /// `header.parentSession`, as it is.
    parent_session: PropertyValue<'static>,
}

/// `SessionInfo` built a line at a time (lines split by `readline`'s rule), so that a caller can
/// stream a file of any size through a small buffer.
pub struct InfoBuilder {
    texts: Texts,
    header: Option<Header>,
    name: Option<JsStr<'static>>,
    message_count: u64,
    last_activity: Option<f64>,
    /// The latest of the activity times written as thirteen digits (milliseconds, as Pi writes
    /// them), kept as their digits read big-endian: compared without parsing each one.
    latest_ms_digits: Option<(u64, u64)>,
    first_message: Option<JsStr<'static>>,
    all_text: Vec<u8>,
    text_pieces: Vec<TextPiece>,
    /// The first user message's text when `all_text` is not kept.
    scratch: Vec<u8>,
    pushed_any: bool,
    omitted: Option<Omitted>,
    arena: Bump,
    /// The zone a time without an offset is read in.
    local_zone: jiff::tz::TimeZone,
}

impl InfoBuilder {
    /// A builder; `texts` as for [`session_info`].
    pub fn new(texts: bool) -> Self {
        Self::with_texts(if texts { Texts::Decoded } else { Texts::Skip })
    }

    /// A builder that keeps the texts as `texts` says.
    pub fn with_texts(texts: Texts) -> Self {
        InfoBuilder {
            texts,
            header: None,
            name: None,
            message_count: 0,
            last_activity: None,
            latest_ms_digits: None,
            first_message: None,
            all_text: Vec::new(),
            text_pieces: Vec::new(),
            scratch: Vec::new(),
            pushed_any: false,
            omitted: None,
            arena: Bump::new(),
            local_zone: jiff::tz::TimeZone::UTC,
        }
    }

    /// The builder with times without an offset read in `zone` (UTC otherwise; Node reads them in
    /// the machine's zone).
    pub fn with_local_zone(mut self, zone: jiff::tz::TimeZone) -> Self {
        self.local_zone = zone;
        self
    }

    /// Takes the next line; returns false once the outcome is decided (the file is left out).
    pub fn line(&mut self, line: crate::lines::Line<'_>) -> bool {
        self.line_scanned(line, None)
    }

    /// [`InfoBuilder::line`] with the line's scan already made (lines scanned in parallel);
    /// `None` scans it here.
    pub fn line_scanned(&mut self, line: crate::lines::Line<'_>, scanned: json::LineScan<'_>) -> bool {
        if self.omitted.is_some() || is_blank(line.bytes) {
            return true;
        }
        let outcome = match scanned {
            Some(made) => self.take(line, made),
            None => {
                let options = json::ScanOptions { blocks: self.texts != Texts::Skip };
                json::with_line_scan(line.bytes, options, |scanned| self.take(line, scanned))
            }
        };
        match outcome {
            Ok(()) => true,
            Err(o) => {
                self.omitted = Some(o);
                false
            }
        }
    }

    fn take(
        &mut self,
        line: crate::lines::Line<'_>,
        scanned: Result<&json::Scanned, json::ScanError>,
    ) -> Result<(), Omitted> {
        let Ok(scanned) = scanned else {
            return Ok(());
        };
        if top_is_falsy(line.bytes, scanned) {
            return Ok(());
        }
        if self.header.is_some() && !scanned.escaped_keys {
            // Most lines are messages, and only a few of their fields matter here: they are read
            // from the scan without building the entry.
            let b = line.bytes;
            match scanned.field(b, "type") {
                Some(span @ json::Span { kind: SpanKind::Str { escaped: false }, .. }) => {
                    match &b[span.start as usize..span.end as usize] {
                        b"message" => {
                            let message = scanned.field(b, "message").map(|s| s.kind);
                            let (role, content) = match message {
                                Some(SpanKind::Object) => (
                                    Role::of_span(b, scanned.message_field(b, "role")),
                                    scanned.message_field(b, "content").map(|s| s.kind),
                                ),
                                _ => (Role::NotText, None),
                            };
                            let view = MessageView { line, message, role, content };
                            return self.message(view, scanned, |zone| {
                                PropertyValue::time_of_span(b, scanned.field(b, "timestamp"), zone)
                            });
                        }
                        b"session_info" => {}
                        _ => return Ok(()),
                    }
                }
                Some(json::Span { kind: SpanKind::Str { escaped: true }, .. }) => {}
                // Not a string: neither a message nor a name.
                _ => return Ok(()),
            }
        }
        let entry = Entry::from_scan(line, scanned);
        if self.header.is_none() {
            if !entry.is_type("session") {
                return Err(omitted(Some(&line), "the first parsed record is not a session header"));
            }
            // Only the fields the info shows are kept: no owned copy of the whole header.
            let b = line.bytes;
            let (id, cwd, parent) =
                (scanned.field(b, "id"), scanned.field(b, "cwd"), scanned.field(b, "parentSession"));
            let as_written =
                |s: Option<json::Span>| s.is_none_or(|s| matches!(s.kind, SpanKind::Null | SpanKind::Str { .. }));
            let (id, cwd, parent_session) = if !scanned.escaped_keys
                && as_written(id)
                && as_written(cwd)
                && as_written(parent)
            {
                // Strings, nulls and absent fields read from the scan (a full parse of the header
                // was a tenth of a small session's listing).
                let cwd = match PropertyValue::from_span(b, cwd) {
                    PropertyValue::Str(s) => s.into_owned(),
                    _ => JsStr::default(),
                };
                (PropertyValue::from_span(b, id).into_owned(), cwd, PropertyValue::from_span(b, parent).into_owned())
            } else {
                // Other values as `JSON.stringify` prints them, from the parsed header.
                self.arena.reset();
                let value = entry.value(&self.arena).unwrap_or(Value::Null);
                let cwd = match value.get("cwd") {
                    Some(Value::String(s)) => s.clone().into_owned(),
                    _ => JsStr::default(),
                };
                (PropertyValue::from_value(value.get("id")), cwd, PropertyValue::from_value(value.get("parentSession")))
            };
            let header = Header { timestamp: entry.timestamp.clone().into_owned(), id, cwd, parent_session };
            self.header = Some(header);
            return Ok(());
        }
        if let Detail::SessionInfo(n) = &entry.detail {
            self.name = match n {
                PropertyValue::Absent | PropertyValue::Null => None,
                PropertyValue::Str(s) => {
                    let t = crate::text::js_trim(s.as_bytes());
                    (!t.is_empty()).then(|| JsStr(std::borrow::Cow::Owned(t.to_vec())))
                }
                PropertyValue::Raw(_) => return Err(omitted(Some(&line), "session_info name is not a string")),
            };
        }
        let Detail::Message { message, role, content, .. } = &entry.detail else { return Ok(()) };
        let view = MessageView { line, message: *message, role: Role::of_field(role), content: *content };
        self.message(view, scanned, |zone| entry.timestamp.time_value(zone))
    }

    /// A `message` entry: its count, activity time and texts. `entry_time` is the entry's own
    /// `timestamp` as a time value, read only when the message has no numeric one.
    fn message(
        &mut self,
        view: MessageView<'_>,
        scanned: &json::Scanned,
        entry_time: impl FnOnce(&jiff::tz::TimeZone) -> f64,
    ) -> Result<(), Omitted> {
        let MessageView { line, message, role, content } = view;
        let at = |reason: &str| omitted(Some(&line), reason);
        self.message_count += 1;
        match message {
            None | Some(SpanKind::Null) => {
                return Err(at("message entry without a message object"));
            }
            Some(SpanKind::Object) => {}
            Some(_) => return Ok(()),
        }
        let is_user = match role {
            Role::User => true,
            Role::Assistant => false,
            Role::Other | Role::NotText => return Ok(()),
        };
        // `"content" in message`: without the key the message is no activity and has no text.
        let Some(content) = content else { return Ok(()) };
        let (view_number, view_offset) = (line.number, line.offset);
        let line = line.bytes;
        let time = match scanned.message_field(line, "timestamp") {
            Some(span) if span.kind == SpanKind::Number => {
                let raw = &line[span.start as usize..span.end as usize];
                if let Some(digits) = crate::property::thirteen_digits(raw) {
                    self.latest_ms_digits = self.latest_ms_digits.max(Some(digits));
                    None
                } else {
                    crate::property::short_decimal(raw)
                        .or_else(|| std::str::from_utf8(raw).ok().and_then(|t| t.parse().ok()))
                }
            }
            _ => Some(entry_time(&self.local_zone)).filter(|t: &f64| !t.is_nan()),
        };
        if let Some(t) = time {
            self.last_activity = Some(self.last_activity.unwrap_or(0.0).max(t));
        }
        match content {
            SpanKind::Str { .. } => {}
            SpanKind::Array if !scanned.null_in_content => {}
            SpanKind::Array => return Err(at("message content holds a null block (Pi's text extraction throws)")),
            _ => return Err(at("message content is neither text nor blocks")),
        }
        let into_all = self.texts != Texts::Skip;
        if !(into_all || is_user && self.first_message.is_none()) {
            return Ok(());
        }
        // The text is appended where it goes: after a space in `allMessagesText`, or in a scratch
        // buffer when only the first user message is wanted.
        let as_json = self.texts == Texts::Json;
        let append = if as_json { crate::property::append_restringified } else { crate::property::append_decoded };
        let target = if into_all { &mut self.all_text } else { &mut self.scratch };
        if !into_all {
            target.clear();
        }
        let mark = target.len();
        if into_all && self.pushed_any {
            target.push(b' ');
        }
        let start = target.len();
        let recorded = (scanned.blocks_recorded && !scanned.escaped_blocks).then_some(&scanned.text_blocks[..]);
        let fast =
            scanned.message_field(line, "content").and_then(|span| content_text(line, span, recorded, append, target));
        let extracted = match fast {
            Some(ok) => ok,
            None => {
                target.truncate(start);
                self.arena.reset();
                let value = json::parse_value(line, &self.arena).map_err(|e| at(e.reason))?;
                match value.get("message").and_then(|m| m.get("content")).and_then(extract_text) {
                    Some(text) if as_json => {
                        json::write_string_body(&text, target);
                        true
                    }
                    Some(text) => {
                        target.extend_from_slice(&text);
                        true
                    }
                    None => false,
                }
            }
        };
        if !extracted {
            return Err(at("message content is neither text nor blocks"));
        }
        if target.len() == start {
            // An empty text adds nothing, not even the space.
            target.truncate(mark);
            return Ok(());
        }
        if into_all {
            self.pushed_any = true;
        }
        if self.texts == Texts::DecodedWithPieces {
            let id = PropertyValue::from_span(line, scanned.field(line, "id")).into_owned();
            let (number, offset) = (view_number, view_offset);
            self.text_pieces.push(TextPiece { range: start..target.len(), line: number, offset, id, user: is_user });
        }
        if is_user && self.first_message.is_none() {
            // From the scratch buffer the text is moved, not copied (a first message can be huge).
            let text = match (into_all, as_json) {
                (true, true) => {
                    let mut decoded = Vec::new();
                    json::unescape_into(&target[start..], &mut decoded);
                    decoded
                }
                (true, false) => target[start..].to_vec(),
                (false, _) => std::mem::take(target),
            };
            self.first_message = Some(JsStr(std::borrow::Cow::Owned(text)));
        }
        Ok(())
    }

    /// The info, or why Pi leaves the file out; `mtime_ms` is the fallback for `modified`.
    pub fn finish(self, mtime_ms: f64) -> Result<SessionInfo<'static>, Omitted> {
        if let Some(o) = self.omitted {
            return Err(o);
        }
        let Some(Header { timestamp, id, cwd, parent_session }) = self.header else {
            return Err(omitted(None, "no line parses as JSON"));
        };
        let header_time = match &timestamp {
            PropertyValue::Str(s) => crate::jsdate::parse_js_date(s.as_bytes(), &self.local_zone).unwrap_or(f64::NAN),
            _ => f64::NAN,
        };
        let mut last_activity = self.last_activity;
        if let Some(digits) = self.latest_ms_digits {
            let t = crate::property::thirteen_digits_value(digits);
            last_activity = Some(last_activity.unwrap_or(0.0).max(t));
        }
        let modified = match last_activity {
            Some(t) if t > 0.0 => time_clip(t),
            _ if !header_time.is_nan() => header_time,
            // `stats.mtime`: Node rounds `mtimeMs` to the millisecond.
            _ => crate::jsdate::js_round(mtime_ms),
        };
        let (all_messages_text, all_messages_json) = match self.texts {
            Texts::Json => (Vec::new(), self.all_text),
            Texts::Skip | Texts::Decoded | Texts::DecodedWithPieces => (self.all_text, Vec::new()),
        };
        Ok(SessionInfo {
            id,
            cwd,
            name: self.name,
            parent_session,
            created: timestamp.time_value(&self.local_zone),
            modified,
            message_count: self.message_count,
            first_message: self.first_message.unwrap_or_else(|| JsStr::owned("(no messages)")),
            all_messages_text,
            all_messages_json,
            text_pieces: self.text_pieces,
        })
    }
}

/// How a string's raw text is added to the texts: decoded, or escaped again for JSON output.
type Append = fn(&[u8], bool, &mut Vec<u8>);

/// `extractTextContent` straight from the raw text of a validated `content` value, appended to
/// `out`, without building it: `Some(true)`, `Some(false)` where the reference throws, and `None`
/// when an unusual shape (escaped keys, non-string texts) needs the full parse (`out` may then
/// hold a part, for the caller to cut).
fn content_text(
    line: &[u8],
    span: json::Span,
    recorded: Option<&[Option<json::Span>]>,
    append: Append,
    out: &mut Vec<u8>,
) -> Option<bool> {
    let raw = &line[span.start as usize..span.end as usize];
    match (span.kind, recorded) {
        (SpanKind::Str { escaped }, _) => {
            append(raw, escaped, out);
            Some(true)
        }
        (SpanKind::Array, Some(texts)) => recorded_text(line, texts, append, out),
        (SpanKind::Array, None) => blocks_text(raw, append, out),
        _ => Some(false),
    }
}

/// [`blocks_text`] from the `text` of each text block as the scan recorded them.
fn recorded_text(line: &[u8], texts: &[Option<json::Span>], append: Append, out: &mut Vec<u8>) -> Option<bool> {
    for (k, text) in texts.iter().enumerate() {
        if k > 0 {
            out.push(b' ');
        }
        match text {
            None | Some(json::Span { kind: SpanKind::Null, .. }) => {}
            Some(json::Span { start, end, kind: SpanKind::Str { escaped } }) => {
                append(&line[*start as usize..*end as usize], *escaped, out);
            }
            Some(_) => return None, // a number or object as text: let the full parse convert it
        }
    }
    Some(true)
}

/// The text blocks of a content array (raw, already validated JSON), joined with one space.
fn blocks_text(a: &[u8], append: Append, out: &mut Vec<u8>) -> Option<bool> {
    let mut first = true;
    let mut i = json::walk::ws(a, 1);
    while let Some(&c) = a.get(i) {
        match c {
            b']' => break,
            b',' => i = json::walk::ws(a, i + 1),
            b'n' => return Some(false), // a `null` block: `block.type` throws
            b'{' => {
                let (end, ty, text) = json::walk::block_fields(a, i, b"text")?;
                i = json::walk::ws(a, end);
                let is_text = ty.is_some_and(|(s, e)| &a[s..e] == b"text");
                if !is_text {
                    continue;
                }
                if !first {
                    out.push(b' ');
                }
                first = false;
                match text {
                    None => {}
                    Some((s, e, b'"')) => {
                        let raw = &a[s + 1..e - 1];
                        append(raw, memchr::memchr(b'\\', raw).is_some(), out);
                    }
                    Some((_, _, b'n')) => {}
                    Some(_) => return None, // a number or object as text: let the full parse convert it
                }
            }
            _ => i = json::walk::ws(a, json::walk::skip_value(a, i)),
        }
    }
    Some(true)
}

/// `new Date(t)` for a number: `NaN` outside ±8.64e15, else truncated.
fn time_clip(t: f64) -> f64 {
    if t.abs() <= 8.64e15 { t.trunc() + 0.0 } else { f64::NAN }
}

/// `extractTextContent`: a string as it is, or the `text` of `type:"text"` blocks joined with
/// one space. `None` where the reference throws (content not a string or array, a `null` block).
fn extract_text(content: &Value<'_>) -> Option<Vec<u8>> {
    match content {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Array(blocks) => {
            let mut out = Vec::new();
            let mut first = true;
            for block in blocks {
                if matches!(block, Value::Null) {
                    return None;
                }
                if block.get("type").and_then(Value::as_str).is_none_or(|t| *t != "text") {
                    continue;
                }
                if !first {
                    out.push(b' ');
                }
                first = false;
                join_text(block.get("text"), &mut out);
            }
            Some(out)
        }
        _ => None,
    }
}

/// `Array.prototype.join`'s conversion of one element: `undefined` and `null` are empty.
pub(crate) fn join_text(v: Option<&Value<'_>>, out: &mut Vec<u8>) {
    match v {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => out.extend_from_slice(s.as_bytes()),
        Some(Value::Bool(b)) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Some(Value::Number(n)) if n.is_nan() => out.extend_from_slice(b"NaN"),
        Some(Value::Number(n)) if n.is_infinite() => {
            out.extend_from_slice(if *n > 0.0 { b"Infinity" } else { b"-Infinity" })
        }
        Some(Value::Number(n)) => json::write_number(*n, out),
        Some(Value::Object(_)) => out.extend_from_slice(b"[object Object]"),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                join_text(Some(item), out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `modified` is the latest activity time however the times are written (format.md §9): thirteen digits
    /// (compared as digits), other lengths, fractions, exponents and negative times (each parsed),
    /// in any order; the expected value is the plain fold of the parsed times.
    #[test]
    fn latest_activity_is_the_fold_of_the_times() {
        let mut next = crate::json::scan::tests::xorshift(0x7e57_0f71_e5ca_1e5d);
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
        for _ in 0..2_000 {
            let mut text = format!("{header}\n");
            let mut fold: Option<f64> = None;
            for _ in 0..(1 + next() % 6) {
                let ms = 1_000_000_000_000 + next() % 8_999_999_999_999;
                let time = match next() % 6 {
                    0..=2 => ms.to_string(),
                    3 => (ms / 10).to_string(),
                    4 => format!("{ms}.5"),
                    _ => format!("-{ms}"),
                };
                let role = if next().is_multiple_of(2) { "user" } else { "assistant" };
                text.push_str(&format!(
                    r#"{{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"{role}","content":"x","timestamp":{time}}}}}"#
                ));
                text.push('\n');
                let t: f64 = time.parse().unwrap();
                fold = Some(fold.unwrap_or(0.0).max(t));
            }
            let expected = match fold {
                Some(t) if t > 0.0 => time_clip(t),
                _ => crate::jsdate::parse_js_date(b"2026-01-01T00:00:00.000Z", &jiff::tz::TimeZone::UTC).unwrap(),
            };
            let info = session_info(text.as_bytes(), 0.0, false).unwrap();
            assert_eq!(info.modified.to_bits(), expected.to_bits(), "{text}");
        }
    }

    /// Message lines are read from the scan unless their `type` or keys hold escapes; both ways
    /// give format.md §9's answer: escaped `type`, `role` and keys still make messages, a `type` that is
    /// not a string does not, and a `message` that is not an object counts without activity; a
    /// line that starts as Pi writes a message is one only if no later key changes its type.
    #[test]
    fn messages_read_from_the_scan_or_the_entry_agree() {
        let lines = [
            r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
            r#"{"type":"mess\u0061ge","id":"a","message":{"role":"user","content":"escaped type"},"timestamp":"2026-01-01T00:00:01.000Z"}"#,
            r#"{"type":"message","id":"b","message":{"role":"us\u0065r","content":"second"},"timestamp":"2026-01-01T00:00:05.000Z"}"#,
            r#"{"type":1,"id":"c","message":{"role":"user","content":"not a message"},"timestamp":"2026-01-01T00:00:30.000Z"}"#,
            r#"{"type":"message","id":"d","message":"text","timestamp":"2026-01-01T00:00:40.000Z"}"#,
            r#"{"t\u0079pe":"message","id":"e","message":{"role":"assistant","content":[{"type":"text","text":"a"}],"timestamp":1767225610000}}"#,
            r#"{"type":"session_info","id":"f","name":"  named  "}"#,
            // Written as Pi writes a message: read where the scan saw its prefix.
            r#"{"type":"message","id":"0000000g","parentId":"0000000f","timestamp":"2026-01-01T00:00:50.000Z","message":{"role":"user","content":"pi","timestamp":1767225605000}}"#,
            // The same prefix, but a later `type` makes it a name (JavaScript keeps the last key).
            r#"{"type":"message","id":"0000000h","parentId":"0000000g","timestamp":"2026-01-01T00:00:55.000Z","message":{"role":"user","content":"no"},"type":"session_info","name":"renamed"}"#,
        ];
        let file = lines.join("\n");
        for texts in [false, true] {
            let info = session_info(file.as_bytes(), 0.0, texts).unwrap();
            assert_eq!(info.message_count, 5);
            assert_eq!(info.first_message.as_bytes(), b"escaped type");
            assert_eq!(info.modified, 1_767_225_610_000.0);
            assert_eq!(info.name.as_ref().map(|n| n.as_bytes()), Some(&b"renamed"[..]));
            let all: &[u8] = if texts { b"escaped type second a pi" } else { b"" };
            assert_eq!(info.all_messages_text, all);
        }
    }

    /// The text of a content array from the text blocks the scan records is the text the raw
    /// walk finds (`extractTextContent`, format.md §9), on every shape a block can take; the shapes the walk
    /// leaves to the full parse are left to it by both, and escapes are flagged.
    #[test]
    fn recorded_text_blocks_give_the_walked_text() {
        let contents = [
            r#"[{"type":"text","text":"a"},{"type":"thinking","thinking":"t"},{"type":"text","text":"b\n\"c\""}]"#,
            r#"[{"type":"text"},{"type":"text","text":null},{"type":"text","text":""},{"type":"text","text":"x"}]"#,
            r#"[{"text":"before","type":"text"},{"type":"text","text":"one","text":"two"},{"type":"text","type":"image","text":"no"}]"#,
            r#"[{"type":"image","data":"zz"},{"type":"toolCall","name":"bash","arguments":{"type":"text","text":"inner"}},[{"type":"text","text":"nested"}],1,"s"]"#,
            r#"[{"type":"text","text":7}]"#,
            r#"[{"type":"text","text":{"a":1}}]"#,
            r#"[ { "type" : "text" , "text" : "spaced" } , { "type":"text","text":"\u00e9\ud83d\ude00" } ]"#,
            r#"[{"type":["text"],"text":"not a type"},{"type":"Text","text":"case"}]"#,
            "[]",
        ];
        let mut checked = 0;
        for content in contents {
            let line = format!(r#"{{"type":"message","message":{{"role":"user","content":{content}}}}}"#);
            let b = line.as_bytes();
            let sc = json::scan_line_with_blocks(b).unwrap();
            assert!(sc.blocks_recorded && !sc.escaped_blocks, "{line}");
            let span = sc.message_field(b, "content").unwrap();
            let (mut recorded, mut walked) = (Vec::new(), Vec::new());
            let decoded = crate::property::append_decoded;
            let from_scan = content_text(b, span, Some(&sc.text_blocks), decoded, &mut recorded);
            let from_walk = content_text(b, span, None, decoded, &mut walked);
            assert_eq!(from_scan, from_walk, "{line}");
            if from_walk.is_some() {
                assert_eq!(String::from_utf8_lossy(&recorded), String::from_utf8_lossy(&walked), "{line}");
                checked += usize::from(!walked.is_empty());
            }
        }
        assert!(checked >= 4, "too few texts compared: {checked}");
        // A later `content` replaces the earlier one's blocks; an escaped key is flagged.
        let line = r#"{"message":{"content":[{"type":"text","text":"a"}],"content":"s"}}"#;
        assert!(json::scan_line_with_blocks(line.as_bytes()).unwrap().text_blocks.is_empty());
        let line = r#"{"message":{"content":[{"type":"text","t\u0065xt":"a"}]}}"#;
        assert!(json::scan_line_with_blocks(line.as_bytes()).unwrap().escaped_blocks);
        // A plain scan records nothing and says so.
        let line = r#"{"message":{"content":[{"type":"text","text":"a"}]}}"#;
        let plain = json::scan_line(line.as_bytes()).unwrap();
        assert!(!plain.blocks_recorded && plain.text_blocks.is_empty());
    }
}
