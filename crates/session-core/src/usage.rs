//! Usage events of one file for analytics: every usage Pi 1.6 counts in its session totals
//! (format.md §10), each with its time, source, model key and a content identity that finds the same
//! usage copied into forks and clones. Read with the validating scan; only usage objects are
//! parsed.

use std::borrow::Cow;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

use bumpalo::Bump;
use smallvec::SmallVec;

use crate::json::{self, Scanned, Span, Value, scan::SpanKind};
use crate::lines::{LineRule, Lines, is_blank};
use crate::property::PropertyValue;
use crate::session::{Diagnostic, LoadError, top_is_falsy};
use crate::stats::UsageTotals;

/// UTC, for builders given no zone.
static UTC: jiff::tz::TimeZone = jiff::tz::TimeZone::UTC;

/// Where a usage was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// An assistant message's `usage`.
    Assistant,
    /// A `usage` entry (cache warming, titles, extensions…).
    UsageEntry,
    /// A tool result's `usage` (sub-agents, paid tools).
    ToolResult,
    /// A compaction's summariser usage.
    Compaction,
    /// A branch summary's summariser usage.
    BranchSummary,
    /// An Atomic `session_summary`'s summariser usage (format.md §10, Atomic; counted only when asked for).
    SessionSummary,
}

impl Source {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Source::Assistant => "assistant",
            Source::UsageEntry => "usage",
            Source::ToolResult => "toolResult",
            Source::Compaction => "compaction",
            Source::BranchSummary => "branch_summary",
            Source::SessionSummary => "session_summary",
        }
    }
}

/// One usage as Pi counts it.
#[derive(Debug, Clone)]
pub struct UsageEvent {
    /// The entry's time in ms (its `timestamp`, else the message's), `NaN` if neither parses.
    pub time_ms: f64,
    /// Where it was recorded.
    pub source: Source,
    /// The breakdown key: `provider/model` (assistants: `responseModel ?? model`), or
    /// `Tools/summaries` for tool results and summaries, as `getUsageCostBreakdown` keys it.
    pub model: Arc<str>,
    /// Token and cost amounts.
    pub amounts: UsageTotals,
    /// Identity of the usage's content (entry timestamp, source, usage object): equal for a
    /// copy of the same entry in a fork or clone.
    pub identity: u64,
    /// The 1-based line of the entry that recorded it.
    pub line: u64,
}

/// One message, for activity counts.
#[derive(Debug, Clone)]
pub struct MessageEvent {
    /// The entry's time in ms.
    pub time_ms: f64,
    /// `message.role` (empty when not a string).
    pub role: Cow<'static, str>,
    /// Names of the assistant's tool calls.
    pub tool_calls: SmallVec<[String; 2]>,
    /// A tool result with `isError: true`.
    pub tool_error: bool,
    /// Identity, as for usage.
    pub identity: u64,
}

/// The usage and activity of one session file.
#[derive(Debug, Clone, Default)]
pub struct FileUsage {
    /// The header's `id`.
    pub session_id: String,
    /// The header's `cwd` (`""` when not a string).
    pub cwd: String,
    /// The header's `parentSession`, when a string.
    pub parent_session: Option<String>,
    /// The header's time in ms.
    pub created_ms: f64,
    /// Every usage, in file order.
    pub events: Vec<UsageEvent>,
    /// Every message.
    pub messages: Vec<MessageEvent>,
    /// The tool results with `isError: true`: their index in `messages` and their `toolName`
    /// (`""` when not a string). Kept apart so that the common message stays small.
    pub failed_tools: Vec<(usize, String)>,
    /// Where Pi would throw (a missing usage), with what we did.
    pub diagnostics: Vec<Diagnostic>,
}

fn hasher() -> ahash::RandomState {
    ahash::RandomState::with_seeds(0x5e55_1011, 0x0f_a11, 0xc0_57, 0x70_7a1)
}

fn identity(parts: &[&[u8]]) -> u64 {
    let mut h = hasher().build_hasher();
    for p in parts {
        p.hash(&mut h);
    }
    h.finish()
}

/// Reads the usage events and messages of one file, with the loader's rules (the header must be
/// the first parsed record, malformed and falsy lines are skipped); times without an offset in UTC.
pub fn file_usage(bytes: &[u8]) -> Result<FileUsage, LoadError> {
    file_usage_counting(bytes, Counting::Pi, &jiff::tz::TimeZone::UTC)
}

/// [`file_usage`] with the sources `counting` takes, and times without an offset read in `local`.
pub fn file_usage_counting(
    bytes: &[u8],
    counting: Counting,
    local: &jiff::tz::TimeZone,
) -> Result<FileUsage, LoadError> {
    if bytes.is_empty() {
        return Err(LoadError::Empty);
    }
    let mut builder = UsageBuilder::new(counting).with_local_zone(local.clone());
    for line in Lines::new(bytes, LineRule::Newline) {
        if !builder.line(line) {
            break;
        }
    }
    builder.finish()
}

/// Which usages are counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Counting {
    /// What Pi 1.6 counts in its session totals (format.md §10).
    #[default]
    Pi,
    /// Pi's sources and the usage of Atomic's `session_summary` entries, which Atomic counts
    /// (format.md §10). Atomic writes no `usage` entries and no compaction usage, so on its files this is
    /// Atomic's own sum.
    WithAtomicSummaries,
}

/// [`file_usage`] a line at a time (lines split on `\n`), for streaming a file through a small
/// buffer.
#[derive(Default)]
pub struct UsageBuilder {
    counting: Counting,
    /// The zone a time without an offset is read in (`None`: UTC).
    local_zone: Option<jiff::tz::TimeZone>,
    out: FileUsage,
    header_seen: bool,
    error: Option<LoadError>,
    arena: Bump,
    models: ModelKeys,
}

/// The `provider/model` keys of a file, each made once for a run of events with the same raw
/// provider and model.
#[derive(Default)]
struct ModelKeys {
    /// The raw fields of the event at hand, then of the last key made.
    fields: Vec<u8>,
    last_fields: Vec<u8>,
    last: Option<Arc<str>>,
    tools: Option<Arc<str>>,
}

impl ModelKeys {
    /// `${provider}/${model}`, for the values at `provider` and `model` in `line`. The raw
    /// values are compared with the last key's: equal raw text is an equal value, so the key is
    /// made (and the values decoded) only when they change.
    fn key(&mut self, line: &[u8], provider: Option<Span>, model: Option<Span>) -> Arc<str> {
        self.fields.clear();
        for span in [provider, model] {
            let (tag, bytes): (u8, &[u8]) = match span {
                None => (0, b""),
                Some(s) => (
                    match s.kind {
                        SpanKind::Null => 1,
                        SpanKind::Str { escaped: false } => 2,
                        SpanKind::Str { escaped: true } => 3,
                        _ => 4,
                    },
                    &line[s.start as usize..s.end as usize],
                ),
            };
            self.fields.push(tag);
            self.fields.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            self.fields.extend_from_slice(bytes);
        }
        if let Some(last) = &self.last
            && self.fields == self.last_fields
        {
            return last.clone();
        }
        let (provider, model) = (PropertyValue::from_span(line, provider), PropertyValue::from_span(line, model));
        let key: Arc<str> = format!("{}/{}", template(&provider), template(&model)).into();
        std::mem::swap(&mut self.fields, &mut self.last_fields);
        self.last = Some(key.clone());
        key
    }

    /// `Tools/summaries`, the key of tool results and summaries.
    fn tools(&mut self) -> Arc<str> {
        self.tools.get_or_insert_with(|| Arc::from("Tools/summaries")).clone()
    }
}

/// A role as a string: the usual ones without allocating.
fn role_name(role: &PropertyValue<'_>) -> Cow<'static, str> {
    match role.as_str() {
        None => Cow::Borrowed(""),
        Some(r) => match r.as_bytes() {
            b"user" => Cow::Borrowed("user"),
            b"assistant" => Cow::Borrowed("assistant"),
            b"toolResult" => Cow::Borrowed("toolResult"),
            b"system" => Cow::Borrowed("system"),
            _ => Cow::Owned(r.to_str_lossy().into_owned()),
        },
    }
}

impl UsageBuilder {
    /// A builder that counts what `counting` says.
    pub fn new(counting: Counting) -> UsageBuilder {
        UsageBuilder { counting, ..UsageBuilder::default() }
    }

    /// The builder with times without an offset read in `zone` (UTC otherwise; Node reads them in
    /// the machine's zone).
    pub fn with_local_zone(mut self, zone: jiff::tz::TimeZone) -> UsageBuilder {
        self.local_zone = Some(zone);
        self
    }

    /// Takes the next line; returns false once the file is refused.
    pub fn line(&mut self, line: crate::lines::Line<'_>) -> bool {
        self.line_scanned(line, None)
    }

    /// [`UsageBuilder::line`] with the line's scan already made (lines scanned in parallel, with
    /// [`json::scan_line_with_blocks`]); `None` scans it here.
    pub fn line_scanned(&mut self, line: crate::lines::Line<'_>, scanned: json::LineScan<'_>) -> bool {
        if self.error.is_some() {
            return false;
        }
        if is_blank(line.bytes) {
            return true;
        }
        let outcome = match scanned {
            Some(made) => self.take(line, made),
            None => json::with_line_scan(line.bytes, json::ScanOptions { blocks: true }, |sc| self.take(line, sc)),
        };
        if let Err(e) = outcome {
            self.error = Some(e);
            return false;
        }
        true
    }

    /// The file's usage, or why it is not a session.
    pub fn finish(self) -> Result<FileUsage, LoadError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if !self.header_seen {
            return Err(LoadError::NotASession { line: None, offset: None, reason: "no line parses as JSON".into() });
        }
        Ok(self.out)
    }

    /// The first parsed record: the session header, or the reason the file is not a session.
    fn take_header<'b>(
        &mut self,
        line: crate::lines::Line<'b>,
        f: &impl Fn(&str) -> PropertyValue<'b>,
        ty: &PropertyValue<'b>,
    ) -> Result<(), LoadError> {
        let place = (Some(line.number), Some(line.offset));
        if !ty.is("session") {
            let reason = "the first parsed record is not a session header".into();
            return Err(LoadError::NotASession { line: place.0, offset: place.1, reason });
        }
        let PropertyValue::Str(id) = f("id") else {
            let reason = "the header's id is not a string".into();
            return Err(LoadError::NotASession { line: place.0, offset: place.1, reason });
        };
        self.header_seen = true;
        self.out.session_id = id.to_str_lossy().into_owned();
        self.out.cwd = f("cwd").as_str().map(|s| s.to_str_lossy().into_owned()).unwrap_or_default();
        self.out.parent_session = f("parentSession").as_str().map(|s| s.to_str_lossy().into_owned());
        self.out.created_ms = f("timestamp").time_value(self.local_zone.as_ref().unwrap_or(&UTC));
        Ok(())
    }

    fn take(
        &mut self,
        line: crate::lines::Line<'_>,
        scanned: Result<&json::Scanned, json::ScanError>,
    ) -> Result<(), LoadError> {
        let out = &mut self.out;
        let arena = &mut self.arena;
        let zone = self.local_zone.as_ref().unwrap_or(&UTC);
        let models = &mut self.models;
        // Lines Pi skips are skipped here too, and noted as the loader notes them.
        let sc = match scanned {
            Ok(sc) => sc,
            Err(e) => {
                let what = if line.terminated { "malformed JSON" } else { "incomplete last line" };
                let message = format!("{what} ({}): skipped", e.reason);
                self.out.diagnostics.push(Diagnostic {
                    line: line.number,
                    offset: line.offset + e.offset as u64,
                    message,
                });
                return Ok(());
            }
        };
        if top_is_falsy(line.bytes, sc) {
            let message = "line is a falsy JSON value (null, false, 0 or \"\"): skipped".into();
            self.out.diagnostics.push(Diagnostic { line: line.number, offset: line.offset, message });
            return Ok(());
        }
        let b = line.bytes;
        let f = |k: &str| PropertyValue::from_span(b, sc.field(b, k));
        let ty = if sc.is_object() { f("type") } else { PropertyValue::Absent };
        if !self.header_seen {
            return self.take_header(line, &f, &ty);
        }
        if sc.escaped_keys {
            // Rare: keys written with escapes; the slow path reads them from the full value.
            arena.reset();
            if let Ok(v) = json::parse_value(b, arena) {
                slow_line(&v, line.number, line.offset, self.counting, zone, out);
            }
            return Ok(());
        }
        let ts_span = sc.field(b, "timestamp");
        let ts_raw = ts_span.map_or(&b[..0], |s| &b[s.start as usize..s.end as usize]);
        let time = PropertyValue::time_of_span(b, ts_span, zone);
        let add = |source: Source, model: Arc<str>, span: Span, out: &mut FileUsage| {
            let raw = &b[span.start as usize..span.end as usize];
            let amounts = sc
                .usage_numbers(span)
                .and_then(|n| crate::stats::usage_from_numbers(b, n))
                .or_else(|| crate::stats::usage_amounts(raw, span.kind));
            let Some(amounts) = amounts else {
                out.diagnostics.push(Diagnostic {
                    line: line.number,
                    offset: line.offset,
                    message: format!("{} usage without a cost object (Pi 1.6 throws here): skipped", source.name()),
                });
                return;
            };
            let id = identity(&[ts_raw, source.name().as_bytes(), raw]);
            out.events.push(UsageEvent { time_ms: time, source, model, amounts, identity: id, line: line.number });
        };
        match ty.as_str().map(|t| t.as_bytes()) {
            Some(b"usage") => match sc.field(b, "usage") {
                Some(span) => {
                    let model = models.key(b, sc.field(b, "provider"), sc.field(b, "model"));
                    add(Source::UsageEntry, model, span, out);
                }
                None => out.diagnostics.push(Diagnostic {
                    line: line.number,
                    offset: line.offset,
                    message: "usage entry without usage (Pi 1.6 throws here): skipped".into(),
                }),
            },
            Some(t @ (b"compaction" | b"branch_summary")) => {
                if let Some(span) = sc.field(b, "usage").filter(|s| truthy(b, *s)) {
                    let source = if t == b"compaction" { Source::Compaction } else { Source::BranchSummary };
                    add(source, models.tools(), span, out);
                }
            }
            Some(b"session_summary") if self.counting == Counting::WithAtomicSummaries => {
                if let Some(span) = sc.field(b, "usage").filter(|s| truthy(b, *s)) {
                    add(Source::SessionSummary, models.tools(), span, out);
                }
            }
            Some(b"message") => {
                let message_kind = sc.field(b, "message").map(|s| s.kind);
                let mf = |k: &str| PropertyValue::from_span(b, sc.message_field(b, k));
                let role = if message_kind == Some(SpanKind::Object) { mf("role") } else { PropertyValue::Absent };
                let role_name = role_name(&role);
                let message_time = if time.is_nan() {
                    PropertyValue::time_of_span(b, sc.message_field(b, "timestamp"), zone)
                } else {
                    time
                };
                let mut event = MessageEvent {
                    time_ms: message_time,
                    role: role_name.clone(),
                    tool_calls: SmallVec::new(),
                    tool_error: false,
                    identity: identity(&[ts_raw, b"message", role_name.as_bytes(), mf_raw(b, sc, "timestamp")]),
                };
                let fields = match &*role_name {
                    "assistant" | "toolResult" => MessageUsageFields::of(b, sc),
                    _ => MessageUsageFields::default(),
                };
                match &*role_name {
                    "assistant" => {
                        if let Some(c) = sc.message_field(b, "content").filter(|s| s.kind == SpanKind::Array) {
                            event.tool_calls = tool_call_names(b, sc, c, arena);
                        }
                        let model = match fields.response_model {
                            None | Some(Span { kind: SpanKind::Null, .. }) => fields.model,
                            m => m,
                        };
                        let model = models.key(b, fields.provider, model);
                        match fields.usage {
                            Some(span) => add(Source::Assistant, model, span, out),
                            None => out.diagnostics.push(Diagnostic {
                                line: line.number,
                                offset: line.offset,
                                message: "assistant message without usage (Pi 1.6 throws here): skipped".into(),
                            }),
                        }
                    }
                    "toolResult" => {
                        event.tool_error = fields.is_error.is_some_and(|s| {
                            s.kind == SpanKind::Bool && &b[s.start as usize..s.end as usize] == b"true"
                        });
                        if event.tool_error {
                            // Looked up only for errors, off the common path.
                            let name = failed_tool_name(b, sc);
                            out.failed_tools.push((out.messages.len(), name));
                        }
                        if let Some(span) = fields.usage.filter(|s| truthy(b, *s)) {
                            add(Source::ToolResult, models.tools(), span, out);
                        }
                    }
                    _ => {}
                }
                out.messages.push(event);
            }
            _ => {}
        }
        Ok(())
    }
}

/// The names of an assistant message's tool calls, from the scan's record of its blocks, or
/// from the full value where the scan could not record them.
fn tool_call_names(b: &[u8], sc: &json::Scanned, c: Span, arena: &mut bumpalo::Bump) -> SmallVec<[String; 2]> {
    if sc.escaped_blocks || !sc.blocks_recorded {
        // A block with escaped keys or type, or a scan that did not
        // record blocks: read from the full value.
        arena.reset();
        let raw = &b[c.start as usize..c.end as usize];
        json::parse_value(raw, arena).map(|v| tool_call_names_of(&v)).unwrap_or_default()
    } else {
        // A name that is not a string keys as `""`.
        sc.tool_calls
            .iter()
            .map(|name| {
                let name = PropertyValue::from_span(b, *name);
                name.as_str().map(|n| n.to_str_lossy().into_owned()).unwrap_or_default()
            })
            .collect()
    }
}

/// The `toolName` of a failed tool result (the last such key wins; `""` when not a string).
fn failed_tool_name(b: &[u8], sc: &json::Scanned) -> String {
    let name = sc.message_fields.iter().rev().find(|f| &b[f.key.0 as usize..f.key.1 as usize] == b"toolName");
    let name = PropertyValue::from_span(b, name.map(|f| f.value));
    name.as_str().map(|n| n.to_str_lossy().into_owned()).unwrap_or_default()
}

/// The fields of a message that usage reads beyond the scan's slots, found in one pass over its
/// fields (the last of each key, as JavaScript keeps it; keys compared as written, which is
/// exact since lines with escaped keys take the slow path).
#[derive(Default)]
struct MessageUsageFields {
    provider: Option<Span>,
    model: Option<Span>,
    response_model: Option<Span>,
    usage: Option<Span>,
    is_error: Option<Span>,
}

impl MessageUsageFields {
    fn of(b: &[u8], sc: &Scanned) -> Self {
        let mut found = MessageUsageFields::default();
        for field in &sc.message_fields {
            let slot = match &b[field.key.0 as usize..field.key.1 as usize] {
                b"provider" => &mut found.provider,
                b"model" => &mut found.model,
                b"responseModel" => &mut found.response_model,
                b"usage" => &mut found.usage,
                b"isError" => &mut found.is_error,
                _ => continue,
            };
            *slot = Some(field.value);
        }
        found
    }
}

fn mf_raw<'b>(b: &'b [u8], sc: &Scanned, key: &str) -> &'b [u8] {
    sc.message_field(b, key).map_or(&b[..0], |s| &b[s.start as usize..s.end as usize])
}

/// JavaScript truthiness of a raw value span.
fn truthy(b: &[u8], s: Span) -> bool {
    PropertyValue::from_span(b, Some(s)).is_truthy()
}

/// A field as a template literal prints it (`${v}`).
fn template(f: &PropertyValue<'_>) -> String {
    crate::stats::template(f.to_value().as_ref())
}

/// Names of `toolCall` blocks in a content value (empty when it is not an array).
fn tool_call_names_of(content: &Value<'_>) -> SmallVec<[String; 2]> {
    let Value::Array(blocks) = content else { return SmallVec::new() };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str).is_some_and(|t| t.as_bytes() == b"toolCall"))
        .map(|b| b.get("name").and_then(Value::as_str).map(|n| n.to_str_lossy().into_owned()).unwrap_or_default())
        .collect()
}

/// Lines whose keys hold escapes: the same reading from the full value, with the same events,
/// messages and diagnostics as the scan's reading of an unescaped line.
fn slow_line(
    v: &Value<'_>,
    line: u64,
    offset: u64,
    counting: Counting,
    zone: &jiff::tz::TimeZone,
    out: &mut FileUsage,
) {
    let f = |k: &str| PropertyValue::from_value(v.get(k));
    let time = f("timestamp").time_value(zone);
    // A value's text as the scan's spans hold it: a string without its quotes.
    let raw = |v: Option<&Value<'_>>| match v {
        None => Vec::new(),
        Some(Value::String(s)) => s.as_bytes().to_vec(),
        Some(v) => json::to_json(v).into_bytes(),
    };
    let ts = raw(v.get("timestamp"));
    let diagnostic = |message: String, out: &mut FileUsage| out.diagnostics.push(Diagnostic { line, offset, message });
    let push = |source: Source, model: String, usage: &Value<'_>, out: &mut FileUsage| {
        let mut amounts = UsageTotals::default();
        if amounts.add(usage).is_none() {
            diagnostic(format!("{} usage without a cost object (Pi 1.6 throws here): skipped", source.name()), out);
            return;
        }
        let id = identity(&[&ts, source.name().as_bytes(), json::to_json(usage).as_bytes()]);
        out.events.push(UsageEvent { time_ms: time, source, model: model.into(), amounts, identity: id, line });
    };
    let ty = f("type");
    let tpl = |v: Option<&Value<'_>>| crate::stats::template(v);
    if ty.is("usage") {
        match v.get("usage") {
            Some(u) => push(Source::UsageEntry, format!("{}/{}", tpl(v.get("provider")), tpl(v.get("model"))), u, out),
            None => diagnostic("usage entry without usage (Pi 1.6 throws here): skipped".into(), out),
        }
    } else if ty.is("compaction") || ty.is("branch_summary") {
        if let Some(u) = v.get("usage").filter(|u| u.is_truthy()) {
            let source = if ty.is("compaction") { Source::Compaction } else { Source::BranchSummary };
            push(source, "Tools/summaries".into(), u, out);
        }
    } else if ty.is("session_summary") && counting == Counting::WithAtomicSummaries {
        if let Some(u) = v.get("usage").filter(|u| u.is_truthy()) {
            push(Source::SessionSummary, "Tools/summaries".into(), u, out);
        }
    } else if ty.is("message") {
        let m = v.get("message").filter(|m| m.as_object().is_some());
        let get = |k: &str| m.and_then(|m| m.get(k));
        let role = get("role").and_then(Value::as_str).map(|r| r.to_str_lossy().into_owned()).unwrap_or_default();
        let message_time =
            if time.is_nan() { PropertyValue::from_value(get("timestamp")).time_value(zone) } else { time };
        let mut event = MessageEvent {
            time_ms: message_time,
            role: role.clone().into(),
            tool_calls: SmallVec::new(),
            tool_error: false,
            identity: identity(&[&ts, b"message", role.as_bytes(), &raw(get("timestamp"))]),
        };
        match role.as_str() {
            "assistant" => {
                if let Some(content) = get("content") {
                    event.tool_calls = tool_call_names_of(content);
                }
                let model = match get("responseModel") {
                    None | Some(Value::Null) => get("model"),
                    some => some,
                };
                match get("usage") {
                    Some(u) => push(Source::Assistant, format!("{}/{}", tpl(get("provider")), tpl(model)), u, out),
                    None => diagnostic("assistant message without usage (Pi 1.6 throws here): skipped".into(), out),
                }
            }
            "toolResult" => {
                event.tool_error = get("isError") == Some(&Value::Bool(true));
                if event.tool_error {
                    let name = get("toolName").and_then(Value::as_str);
                    out.failed_tools
                        .push((out.messages.len(), name.map(|n| n.to_str_lossy().into_owned()).unwrap_or_default()));
                }
                if let Some(u) = get("usage").filter(|u| u.is_truthy()) {
                    push(Source::ToolResult, "Tools/summaries".into(), u, out);
                }
            }
            _ => {}
        }
        out.messages.push(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSION: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"toolCall","id":"c1","name":"bash","arguments":{}},{"type":"toolCall","id":"c2","name":"read","arguments":{}}],"provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":0.5}},"timestamp":2}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","timestamp":3}}
{"type":"message","id":"t1","parentId":"a2","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"toolResult","content":[],"isError":true,"usage":{"input":5,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.25}},"timestamp":4}}
{"type":"usage","id":"g1","parentId":"t1","timestamp":"2026-01-01T00:00:05.000Z","provider":"q","model":"n","usage":{"input":7,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.125}}}
{"type":"usage","id":"g2","parentId":"g1","timestamp":"2026-01-01T00:00:06.000Z"}
{"type":"compaction","id":"k1","parentId":"g2","timestamp":"2026-01-01T00:00:07.000Z","summary":"s","usage":{"input":9,"output":9,"cacheRead":0,"cacheWrite":0,"cost":null}}
{"type":"message","id":"u2","parentId":"k1","message":{"role":"user","content":"no entry time","timestamp":1767225608000}}
"#;

    /// What a file's usage says, identities aside (they hash raw text, which escapes change).
    fn summary(u: &FileUsage) -> String {
        let events: Vec<_> = u.events.iter().map(|e| (e.time_ms, e.source, e.model.clone(), e.amounts)).collect();
        let messages: Vec<_> =
            u.messages.iter().map(|m| (m.time_ms, m.role.clone(), m.tool_calls.to_vec(), m.tool_error)).collect();
        let diagnostics: Vec<_> = u.diagnostics.iter().map(|d| (d.line, d.message.clone())).collect();
        format!("{} {} {events:?} {messages:?} {:?} {diagnostics:?}", u.session_id, u.cwd, u.failed_tools)
    }

    /// Lines written as Pi writes a message are read where the scan saw the prefix; the same
    /// lines with a space after the brace (no prefix) are read by lookups, and both readings
    /// agree, with later `timestamp` and `type` keys (JavaScript keeps the last) included.
    #[test]
    fn pi_written_messages_read_as_the_lookups_do() {
        let head = |id: &str, time: &str| {
            format!(r#"{{"type":"message","id":"{id}","parentId":"0000000p","timestamp":"{time}","message":{{"role":"#)
        };
        let usage = r#""usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":0.5}}"#;
        let assistant = format!(r#""assistant","content":[],"provider":"p","model":"m",{usage},"timestamp":2}}"#);
        let file = [
            r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#.to_string(),
            format!("{}{assistant}}}", head("0000000a", "2026-01-01T00:00:02.000Z")),
            format!(
                r#"{}{assistant},"timestamp":"2026-02-01T00:00:00.000Z"}}"#,
                head("0000000b", "2026-01-01T00:00:03.000Z")
            ),
            format!(r#"{}{assistant},"type":"custom"}}"#, head("0000000c", "2026-01-01T00:00:04.000Z")),
            format!(
                r#"{}"user","content":"hi","timestamp":1767225605000}}}}"#,
                head("0000000d", "not a time, but 24 bytes")
            ),
        ]
        .join("\n");
        let unprefixed = file.replace("\n{\"type\":\"message\"", "\n{ \"type\":\"message\"");
        assert_eq!(unprefixed.matches("{ \"type\"").count(), 4);
        let direct = file_usage(file.as_bytes()).unwrap();
        assert_eq!(summary(&direct), summary(&file_usage(unprefixed.as_bytes()).unwrap()));
        // The later keys took effect: the second event is in February, the third line no message.
        assert_eq!(direct.events.len(), 2);
        assert_eq!(direct.events[1].time_ms, 1_769_904_000_000.0);
        assert_eq!(direct.messages.len(), 3);
        assert_eq!(direct.messages[2].time_ms, 1_767_225_605_000.0);
    }

    /// The fields read from the scan (the usage numbers the scan kept, the message's provider,
    /// model, responseModel, usage and isError found in one pass) give what the full value gives,
    /// on values of every kind and on repeated keys: each line again with an escaped key takes
    /// the slow path, and both readings agree.
    #[test]
    fn message_fields_read_from_the_scan_as_from_the_value() {
        let pi_usage = |n: u32| {
            format!(
                r#"{{"input":{n},"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{{"input":0.1,"output":0.2,"cacheRead":0.30000000000000004,"cacheWrite":0.4,"total":{n}.013515000000000001}}}}"#
            )
        };
        let other_usage = r#"{"input":100,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":9}}"#;
        let head = |id: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","parentId":"0000000p","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"#
            )
        };
        let messages = [
            format!(r#""assistant","content":[],"provider":"p","model":"m","usage":{},"timestamp":2}}}}"#, pi_usage(1)),
            format!(r#""assistant","content":[],"provider":"p","model":"m","responseModel":null,"usage":{},"timestamp":2}}}}"#, pi_usage(2)),
            format!(r#""assistant","content":[],"provider":"p\u0031","model":5,"responseModel":"r","usage":{},"timestamp":2}}}}"#, pi_usage(3)),
            format!(r#""assistant","content":[],"model":"m","usage":{},"usage":{other_usage},"timestamp":2}}}}"#, pi_usage(4)),
            format!(r#""assistant","content":[],"provider":"p","usage":{},"extra":{},"timestamp":2}}}}"#, pi_usage(5), pi_usage(6)),
            r#""assistant","content":[],"provider":"p","model":"m","model":"n","usage":{ "input":7,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":7}}}}"#.to_string(),
            r#""toolResult","content":[],"isError":"true","usage":{"input":8,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":8}}}}"#.to_string(),
            r#""toolResult","content":[],"isError":true}}"#.to_string(),
            r#""toolResult","content":[],"isError":true,"isError":false,"toolName":"bash"}}"#.to_string(),
            r#""toolResult","toolCallId":"c","toolName":"bash","toolName":"edit","content":[],"isError":true}}"#.to_string(),
            r#""toolResult","toolName":7,"content":[],"isError":true}}"#.to_string(),
            r#""toolResult","toolName":"r\u0065ad","content":[{"type":"text","text":"\"toolName\":\"x\""}],"isError":true}}"#.to_string(),
            format!(r#""toolResult","content":[],"isError":1,"usage":{}}}}}"#, pi_usage(9)),
            // After the usage, an object that starts as one and is not: its numbers are not taken.
            format!(
                r#""assistant","content":[],"provider":"p","model":"m","usage":{},"after":{{"input":55,"output":66,"x":1}},"timestamp":2}}}}"#,
                pi_usage(10)
            ),
        ];
        let header = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
        let lines: Vec<String> =
            messages.iter().enumerate().map(|(k, m)| format!("{}{m}", head(&format!("0000000{k}")))).collect();
        let file = format!("{header}\n{}\n", lines.join("\n"));
        let escaped = format!(
            "{header}\n{}\n",
            lines.iter().map(|l| l.replacen("\"type\"", "\"typ\\u0065\"", 1)).collect::<Vec<_>>().join("\n")
        );
        let (fast, slow) = (file_usage(file.as_bytes()).unwrap(), file_usage(escaped.as_bytes()).unwrap());
        assert_eq!(summary(&fast), summary(&slow));
        // What was read, so that the comparison is not between two empty readings.
        let models: Vec<&str> = fast.events.iter().map(|e| &*e.model).collect();
        assert_eq!(
            models,
            ["p/m", "p/m", "p1/r", "undefined/m", "p/undefined", "p/n", "Tools/summaries", "Tools/summaries", "p/m"]
        );
        // The last usage's own amounts, not the numbers of the object after it.
        assert_eq!(fast.events[8].amounts.output, 2.0);
        let inputs: Vec<f64> = fast.events.iter().map(|e| e.amounts.input).collect();
        assert_eq!(inputs, [1.0, 2.0, 3.0, 100.0, 5.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!(fast.events[0].amounts.cost, "1.013515000000000001".parse::<f64>().unwrap());
        let errors: Vec<bool> = fast.messages.iter().map(|m| m.tool_error).collect();
        assert_eq!(
            errors,
            [false, false, false, false, false, false, false, true, false, true, true, true, false, false]
        );
        // The failed tool is the last `toolName` key's string (`""` when absent or not a string).
        let failed: Vec<(usize, &str)> = fast.failed_tools.iter().map(|(k, t)| (*k, t.as_str())).collect();
        assert_eq!(failed, [(7, ""), (9, "edit"), (10, ""), (11, "read")]);
    }

    /// A line whose keys are written with escapes is read from its full value (the slow path):
    /// the same usage events, messages (roles, tool calls, errors, times) and diagnostics as the
    /// scan's reading of the same lines written plainly.
    #[test]
    fn escaped_keys_read_as_plain_ones() {
        let plain = file_usage(SESSION.as_bytes()).unwrap();
        let escaped: String =
            SESSION
                .lines()
                .enumerate()
                .map(|(k, l)| {
                    if k == 0 { format!("{l}\n") } else { format!("{}\n", l.replacen("\"type\"", "\"typ\\u0065\"", 1)) }
                })
                .collect();
        assert_eq!(escaped.matches("typ\\u0065").count(), 8);
        let slow = file_usage(escaped.as_bytes()).unwrap();
        assert_eq!(summary(&slow), summary(&plain));
        // What the fast path itself reads, so that the comparison is not between two empty reads.
        assert_eq!(plain.events.len(), 3);
        assert_eq!(plain.messages.len(), 5);
        assert_eq!(plain.messages[1].tool_calls.to_vec(), ["bash", "read"]);
        assert!(plain.messages[3].tool_error);
        assert_eq!(plain.messages[4].time_ms, 1_767_225_608_000.0);
        assert_eq!(plain.diagnostics.len(), 3, "{:?}", plain.diagnostics);
        // Two messages with one entry time but other roles are not taken for copies.
        let ids: std::collections::HashSet<u64> = slow.messages.iter().map(|m| m.identity).collect();
        assert_eq!(ids.len(), slow.messages.len());
    }
}
