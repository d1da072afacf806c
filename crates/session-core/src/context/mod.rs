//! Context rebuild: what the model sees from a leaf, as Pi 1.6's `buildContextEntries`,
//! `buildSessionProjection` and `buildSessionContext` compute it (format.md §7), plus the Atomic (format.md §8) and
//! harness (format.md §7.6, generation A) dialects.
//!
//! Only `type`, `id` and `parentId` of each line are needed to walk the path; entries are fully
//! parsed only when they contribute. A stored message that goes out unchanged is emitted as its
//! raw JSON text, which `JSON.parse` reads to the very value Pi would print.

pub mod atomic_transcript;
pub mod harness4;

use bumpalo::Bump;

use crate::json::{self, JsStr, Object, Value, scan::SpanKind};
use crate::property::PropertyValue;
use crate::session::{Detail, Diagnostic, Entry, Session};

/// Which program's rules to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// Pi 1.6 (`@earendil-works/pi-coding-agent`).
    #[default]
    Pi,
    /// The Atomic fork: only verbatim-lines compactions are boundaries (format.md §8).
    Atomic,
    /// pi-agent-core's harness, generation A: `retainedTail` checkpoints (format.md §7.6).
    Harness,
}

/// Where to start the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeafChoice<'a> {
    /// The session's own leaf (the last record).
    Session,
    /// An explicit entry id; an unknown id falls back to the last entry, as in Pi.
    Id(JsStr<'a>),
    /// A `SessionManager`'s leaf: `None` is `null` (an empty path); an id of any JSON type,
    /// unknown or falsy, falls back to the last entry.
    At(Option<PropertyValue<'a>>),
}

/// One message of the context.
#[derive(Debug, Clone, PartialEq)]
pub enum Message<'a> {
    /// A stored `message` object going out as it is: its raw JSON text.
    Stored(&'a [u8]),
    /// A message built or changed by the rebuild.
    Built(Value<'a>),
}

impl<'a> Message<'a> {
    /// The message as a value (parsing a stored one).
    pub fn to_value(&self, arena: &'a Bump) -> Value<'a> {
        match self {
            Message::Stored(raw) => json::parse_value(raw, arena).unwrap_or(Value::Null),
            Message::Built(v) => v.clone(),
        }
    }

    /// Appends the message's JSON text.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Message::Stored(raw) => match simdutf8::basic::from_utf8(raw) {
                Ok(_) => out.extend_from_slice(raw),
                // Node decodes invalid UTF-8 as U+FFFD; the scan put every such byte in a string.
                Err(_) => out.extend_from_slice(String::from_utf8_lossy(raw).as_bytes()),
            },
            Message::Built(v) => json::write_json(v, out),
        }
    }
}

/// The rebuilt context.
#[derive(Debug, Clone, Default)]
pub struct Context<'a> {
    /// The messages, in order.
    pub messages: Vec<Message<'a>>,
    /// `thinkingLevel`; `None` is `undefined` (a `thinking_level_change` without a value).
    pub thinking_level: Option<Value<'a>>,
    /// `model`: `null` or `{provider, modelId}`.
    pub model: Value<'a>,
    /// Record indices of the path, root first.
    pub path: Vec<usize>,
    /// For each selected entry (record index), how many messages it contributed.
    pub projection: Vec<(usize, usize)>,
    /// Where the reference would hang or throw, and what we did instead.
    pub diagnostics: Vec<Diagnostic>,
    /// Harness only: `activeToolNames` from the walked path (`null` when never set).
    pub active_tools: Option<Value<'a>>,
}

pub(crate) const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
pub(crate) const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";
const COMPACTION_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";

/// Rebuilds the context of `session` from `leaf` under `dialect`; values live in `arena`.
pub fn build_context<'a, 'b>(
    session: &Session<'a>,
    leaf: &LeafChoice<'_>,
    dialect: Dialect,
    arena: &'b Bump,
) -> Context<'b>
where
    'a: 'b,
{
    let mut b = Builder { session, arena, ctx: Context { model: Value::Null, ..Context::default() } };
    let path = b.path(leaf, dialect);
    b.ctx.path = path.clone();
    b.settings(&path);
    match dialect {
        Dialect::Pi => b.pi(&path),
        Dialect::Atomic => b.atomic(&path),
        Dialect::Harness => b.harness(&path),
    }
    b.ctx
}

struct Builder<'s, 'a, 'b> {
    session: &'s Session<'a>,
    arena: &'b Bump,
    ctx: Context<'b>,
}

impl<'s, 'a: 'b, 'b> Builder<'s, 'a, 'b> {
    fn entry(&self, i: usize) -> &'s Entry<'a> {
        &self.session.records[i]
    }

    fn note(&mut self, i: usize, message: impl Into<String>) {
        let e = self.entry(i);
        self.ctx.diagnostics.push(Diagnostic { line: e.line_number, offset: e.offset, message: message.into() });
    }

    /// One top-level field of a record, read with the scan instead of a full parse.
    fn field(&self, i: usize, key: &str) -> PropertyValue<'a> {
        let line = self.entry(i).line;
        json::with_line_scan(line, json::ScanOptions::default(), |sc| {
            sc.map(|sc| PropertyValue::from_span(line, sc.field(line, key))).unwrap_or_default()
        })
    }

    /// One field of a record's `message` object, read with the scan.
    fn message_field(&self, i: usize, key: &str) -> PropertyValue<'a> {
        let line = self.entry(i).line;
        json::with_line_scan(line, json::ScanOptions::default(), |sc| {
            sc.map(|sc| PropertyValue::from_span(line, sc.message_field(line, key))).unwrap_or_default()
        })
    }

    /// The full value of a record, in the arena.
    fn value(&self, i: usize) -> Value<'b> {
        self.entry(i).value(self.arena).unwrap_or(Value::Null)
    }

    /// `buildSessionPath`: `null` leaf → empty; a truthy id that is found; else the last entry.
    fn path(&mut self, leaf: &LeafChoice<'_>, dialect: Dialect) -> Vec<usize> {
        let last = self.session.entries().last().map(|(i, _)| i);
        if dialect == Dialect::Harness
            && *leaf == LeafChoice::Session
            && let Some(l) = last.filter(|&l| self.entry(l).is_type("leaf"))
        {
            // The harness's leaf follows the last line; a `leaf` record names it (or `null`).
            let target = PropertyValue::from_value(self.value(l).get("targetId"));
            return match target {
                PropertyValue::Str(_) => self.session.walk_up(self.session.get(&target)).path,
                _ => Vec::new(),
            };
        }
        let start = match leaf {
            // `leafId === null` (no entries, or the last one's `id` is `null`) is an empty path;
            // another falsy or unknown id falls back to the last entry (`buildSessionPath`).
            LeafChoice::Session => match self.session.leaf_id() {
                None | Some(PropertyValue::Null) => return Vec::new(),
                Some(id) => self.session.get(id).filter(|_| id.is_truthy()),
            },
            LeafChoice::Id(id) => {
                self.session.get(&PropertyValue::Str(id.clone().into_owned())).filter(|_| !id.is_empty())
            }
            LeafChoice::At(None) => return Vec::new(),
            LeafChoice::At(Some(id)) => {
                let id = id.clone().into_owned();
                self.session.get(&id).filter(|_| id.is_truthy())
            }
        };
        let start = start.or(last);
        let branch = self.session.walk_up(start);
        if let Some(at) = branch.cycle_at {
            self.note(at, "parent links form a loop (Pi never returns here): the path stops at the repeated entry");
        }
        branch.path
    }

    /// `getSessionContextSettings`: the last thinking level and the last model on the path.
    fn settings(&mut self, path: &[usize]) {
        self.ctx.thinking_level = Some(Value::str("off"));
        let level = path.iter().rev().find(|&&i| self.entry(i).is_type("thinking_level_change"));
        if let Some(&i) = level {
            self.ctx.thinking_level = self.field(i, "thinkingLevel").to_value();
        }
        let model = path.iter().rev().find(|&&i| {
            let e = self.entry(i);
            e.is_type("model_change") || (e.is_type("message") && e.role().is("assistant"))
        });
        if let Some(&i) = model {
            let (provider, model_id) = if self.entry(i).is_type("model_change") {
                (self.field(i, "provider"), self.field(i, "modelId"))
            } else {
                (self.message_field(i, "provider"), self.message_field(i, "model"))
            };
            let mut o = Object::new();
            if let Some(p) = provider.to_value() {
                o.insert("provider", p);
            }
            if let Some(m) = model_id.to_value() {
                o.insert("modelId", m);
            }
            self.ctx.model = Value::Object(o);
        }
        for &i in path {
            let e = self.entry(i);
            if let Detail::Message { message: None | Some(SpanKind::Null), .. } = e.detail {
                self.note(i, "message entry without a message object (Pi throws here): it contributes nothing");
            }
        }
    }

    /// Pi 1.6: `buildContextEntries` then the projection with context edits.
    fn pi(&mut self, path: &[usize]) {
        let selected = self.context_entries(path);
        let mut edits: Vec<(PropertyValue<'a>, usize)> = Vec::new();
        for &i in &selected {
            let e = self.entry(i);
            if e.is_type("context_edit") {
                let target = self.field(i, "targetId");
                match edits.iter_mut().find(|(t, _)| *t == target) {
                    Some(slot) => slot.1 = i,
                    None => edits.push((target, i)),
                }
            }
        }
        for (index, &i) in selected.iter().enumerate() {
            let before = self.ctx.messages.len();
            if !(self.entry(i).is_type("compaction") && index > 0) {
                let edit = edits.iter().find(|(t, _)| *t == self.entry(i).id).map(|&(_, e)| e);
                let mut messages = self.base_messages(i, Dialect::Pi);
                if let Some(edit) = edit {
                    messages = self.apply_edit(messages, edit);
                }
                self.ctx.messages.extend(messages);
            }
            self.ctx.projection.push((i, self.ctx.messages.len() - before));
        }
    }

    /// `buildContextEntries`: the newest compaction, its kept range (system messages dropped),
    /// then everything after it.
    fn context_entries(&self, path: &[usize]) -> Vec<usize> {
        let Some(c) = path.iter().rposition(|&i| self.entry(i).is_type("compaction")) else {
            return path.to_vec();
        };
        let first_kept = self.first_kept(path[c]);
        let mut out = vec![path[c]];
        let mut found = false;
        for &i in &path[..c] {
            let e = self.entry(i);
            found |= e.id == first_kept;
            if found && !(e.is_type("message") && e.role().is("system")) {
                out.push(i);
            }
        }
        out.extend_from_slice(&path[c + 1..]);
        out
    }

    fn first_kept(&self, i: usize) -> PropertyValue<'a> {
        match &self.entry(i).migrated_first_kept {
            Some(f) => (**f).clone(),
            None => self.field(i, "firstKeptEntryId"),
        }
    }

    /// `sessionEntryToContextMessages`.
    fn base_messages(&mut self, i: usize, dialect: Dialect) -> Vec<Message<'b>> {
        let e = self.entry(i);
        let ty = e.entry_type.as_str().map(|t| t.as_bytes()).unwrap_or_default();
        match ty {
            b"message" => {
                let Detail::Message { message, content, span, .. } = &e.detail else { return Vec::new() };
                match message {
                    None | Some(SpanKind::Null) => return Vec::new(),
                    Some(SpanKind::Object) => {}
                    // `message.role` of a primitive is undefined: passed through as it is.
                    Some(_) => {
                        return vec![Message::Built(self.value(i).get("message").cloned().unwrap_or(Value::Null))];
                    }
                }
                let role = e.role();
                let null_content = dialect != Dialect::Harness && matches!(content, None | Some(SpanKind::Null));
                let empty: Option<Value<'b>> = if null_content {
                    match role.as_str().map(|r| r.as_bytes()) {
                        Some(b"system") => Some(Value::str("")),
                        Some(b"user" | b"assistant" | b"toolResult") => Some(Value::Array(Vec::new())),
                        Some(b"custom") if dialect == Dialect::Atomic => Some(Value::Array(Vec::new())),
                        _ => None,
                    }
                } else {
                    None
                };
                match (span, &empty, e.hook_message_renamed) {
                    (Some((s, t)), None, false) => vec![Message::Stored(&e.line[*s as usize..*t as usize])],
                    _ => {
                        let mut m = self.value(i).get("message").cloned().unwrap_or(Value::Null);
                        if let Value::Object(o) = &mut m {
                            if e.hook_message_renamed {
                                o.insert("role", Value::str("custom"));
                            }
                            if let Some(v) = empty {
                                o.insert("content", v);
                            }
                        }
                        vec![Message::Built(m)]
                    }
                }
            }
            b"custom_message" => {
                let v = self.value(i);
                let content = match v.get("content") {
                    None | Some(Value::Null) if dialect != Dialect::Harness => Some(Value::Array(Vec::new())),
                    c => c.cloned(),
                };
                let mut o = Object::new();
                o.insert("role", Value::str("custom"));
                put(&mut o, "customType", v.get("customType"));
                put(&mut o, "content", content.as_ref());
                put(&mut o, "display", v.get("display"));
                put(&mut o, "details", v.get("details"));
                o.insert("timestamp", Value::Number(e.timestamp.time_value(&self.session.local_zone)));
                vec![Message::Built(Value::Object(o))]
            }
            b"branch_summary" => {
                let v = self.value(i);
                if !v.get("summary").is_some_and(Value::is_truthy) {
                    return Vec::new();
                }
                vec![Message::Built(branch_summary(
                    &v,
                    Value::Number(e.timestamp.time_value(&self.session.local_zone)),
                ))]
            }
            b"compaction" => {
                let v = self.value(i);
                let mut out = Vec::new();
                if dialect == Dialect::Pi
                    && let Some(sys) = v.get("systemMessage").filter(|s| s.is_truthy())
                {
                    out.push(Message::Built(sys.clone()));
                }
                out.push(Message::Built(compaction_summary(
                    &v,
                    Value::Number(e.timestamp.time_value(&self.session.local_zone)),
                )));
                out
            }
            _ => Vec::new(),
        }
    }

    /// `projectContextEntry` with an edit: `null` omits, otherwise `content` is replaced on
    /// user, assistant, toolResult and custom messages (a string becomes one text block for
    /// assistant and toolResult).
    fn apply_edit(&mut self, messages: Vec<Message<'b>>, edit: usize) -> Vec<Message<'b>> {
        let v = self.value(edit);
        let replacement = v.get("replacement");
        if matches!(replacement, Some(Value::Null)) {
            return Vec::new();
        }
        let new_content = replacement.and_then(|r| r.get("content")).cloned();
        messages
            .into_iter()
            .map(|m| {
                let mut value = m.to_value(self.arena);
                let Value::Object(o) = &mut value else { return m };
                let role = o.get("role").and_then(Value::as_str).map(|r| r.as_bytes().to_vec()).unwrap_or_default();
                if !matches!(role.as_slice(), b"user" | b"assistant" | b"toolResult" | b"custom") {
                    return m;
                }
                let content = match (&new_content, role.as_slice()) {
                    (Some(Value::String(s)), b"assistant" | b"toolResult") => {
                        let mut block = Object::new();
                        block.insert("type", Value::str("text"));
                        block.insert("text", Value::String(s.clone()));
                        Some(Value::Array(vec![Value::Object(block)]))
                    }
                    (c, _) => c.clone(),
                };
                match content {
                    Some(c) => o.insert("content", c),
                    None => {
                        o.remove("content");
                    }
                }
                Message::Built(value)
            })
            .collect()
    }

    /// Atomic: only the last verbatim-lines compaction is a boundary; it becomes one custom
    /// message carrying the summary and the kept tail as a transcript (format.md §8, format.md §8.1).
    fn atomic(&mut self, path: &[usize]) {
        let boundary = path.iter().rposition(|&i| {
            let e = self.entry(i);
            e.is_type("compaction")
                && self
                    .value(i)
                    .get("details")
                    .and_then(|d| d.get("strategy"))
                    .and_then(Value::as_str)
                    .is_some_and(|s| *s == "verbatim-lines")
        });
        let Some(b) = boundary else {
            for &i in path {
                let before = self.ctx.messages.len();
                if !self.entry(i).is_type("compaction") {
                    let m = self.base_messages(i, Dialect::Atomic);
                    self.ctx.messages.extend(m);
                }
                self.ctx.projection.push((i, self.ctx.messages.len() - before));
            }
            return;
        };
        let first_kept = self.first_kept(path[b]);
        let kept_start = match first_kept {
            PropertyValue::Str(_) => path[..b].iter().position(|&i| self.entry(i).id == first_kept),
            _ => None,
        };
        let mut tail: Vec<Value<'b>> = Vec::new();
        if let Some(k) = kept_start {
            for &i in &path[k..b] {
                if !self.entry(i).is_type("compaction") {
                    let msgs = self.base_messages(i, Dialect::Atomic);
                    tail.extend(msgs.iter().map(|m| m.to_value(self.arena)));
                }
            }
        }
        let v = self.value(path[b]);
        let summary = v.get("summary").and_then(Value::as_str).map(|s| s.as_bytes().to_vec()).unwrap_or_default();
        let blocks = crate::context::atomic_transcript::boundary_content(&summary, &tail);
        let mut o = Object::new();
        o.insert("role", Value::str("custom"));
        o.insert("customType", Value::str("compaction"));
        o.insert("content", Value::Array(blocks));
        o.insert("display", Value::Bool(true));
        let details = match v.get("details") {
            None | Some(Value::Null) => {
                let mut d = Object::new();
                put(&mut d, "tokensBefore", v.get("tokensBefore"));
                Value::Object(d)
            }
            Some(d) => d.clone(),
        };
        o.insert("details", details);
        o.insert("timestamp", Value::Number(self.entry(path[b]).timestamp.time_value(&self.session.local_zone)));
        self.ctx.messages.push(Message::Built(Value::Object(o)));
        self.ctx.projection.push((path[b], 1));
        for &i in &path[b + 1..] {
            let before = self.ctx.messages.len();
            if !self.entry(i).is_type("compaction") {
                let m = self.base_messages(i, Dialect::Atomic);
                self.ctx.messages.extend(m);
            }
            self.ctx.projection.push((i, self.ctx.messages.len() - before));
        }
    }

    /// Harness generation A (pi-agent-core 0.82-0.83, format.md §7.6): the walk from the leaf stops at a
    /// compaction with a `retainedTail` (an empty array counts) or, for one without, at its
    /// `firstKeptEntryId`; the context is the last compaction on that walk (its summary, then its
    /// tail exactly as stored), its kept range when it has no tail, then what follows. No
    /// content normalisation, no stop-reason filter; settings come from the walked path.
    fn harness(&mut self, path: &[usize]) {
        let mut start = 0;
        let mut stop_at: Option<PropertyValue<'a>> = None;
        for (k, &i) in path.iter().enumerate().rev() {
            let e = self.entry(i);
            if stop_at.as_ref().is_some_and(|s| e.id == *s) {
                start = k;
                break;
            }
            if e.is_type("compaction") {
                let v = self.value(i);
                if v.get("retainedTail").is_some_and(Value::is_truthy) {
                    start = k;
                    break;
                }
                stop_at = match v.get("firstKeptEntryId") {
                    None | Some(Value::Null) => None,
                    Some(f) => Some(PropertyValue::from_value(Some(f))),
                };
            }
        }
        let walked = path[start..].to_vec();
        self.ctx.path = walked.clone();
        self.ctx.thinking_level = Some(Value::str("off"));
        self.ctx.model = Value::Null;
        self.settings(&walked);
        let tools = walked.iter().rev().find(|&&i| self.entry(i).is_type("active_tools_change"));
        self.ctx.active_tools = Some(match tools {
            Some(&i) => self.value(i).get("activeToolNames").cloned().unwrap_or(Value::Null),
            None => Value::Null,
        });
        let Some(c) = walked.iter().rposition(|&i| self.entry(i).is_type("compaction")) else {
            for &i in &walked {
                self.harness_entry(i);
            }
            return;
        };
        let v = self.value(walked[c]);
        self.harness_entry(walked[c]);
        if !v.get("retainedTail").is_some_and(Value::is_truthy)
            && let Some(fk) = v.get("firstKeptEntryId").filter(|f| f.is_truthy())
        {
            let fk = PropertyValue::from_value(Some(fk));
            if let Some(k) = walked[..c].iter().position(|&i| self.entry(i).id == fk) {
                for &i in &walked[k..c] {
                    self.harness_entry(i);
                }
            }
        }
        for &i in &walked[c + 1..] {
            self.harness_entry(i);
        }
    }

    fn harness_entry(&mut self, i: usize) {
        let before = self.ctx.messages.len();
        if self.entry(i).is_type("compaction") {
            let v = self.value(i);
            self.ctx.messages.push(Message::Built(compaction_summary(
                &v,
                Value::Number(self.entry(i).timestamp.time_value(&self.session.local_zone)),
            )));
            if let Some(Value::Array(tail)) = v.get("retainedTail") {
                self.ctx.messages.extend(tail.iter().map(|m| Message::Built(m.clone())));
            }
        } else {
            let m = self.base_messages(i, Dialect::Harness);
            self.ctx.messages.extend(m);
        }
        self.ctx.projection.push((i, self.ctx.messages.len() - before));
    }
}

pub(crate) fn put<'b>(o: &mut Object<'b>, key: &'static str, v: Option<&Value<'b>>) {
    if let Some(v) = v {
        o.insert(key, v.clone());
    }
}

/// `createCompactionSummaryMessage` from a compaction record's value and its time.
pub(crate) fn compaction_summary<'b>(v: &Value<'b>, timestamp: Value<'b>) -> Value<'b> {
    let mut o = Object::new();
    o.insert("role", Value::str("compactionSummary"));
    put(&mut o, "summary", v.get("summary"));
    put(&mut o, "tokensBefore", v.get("tokensBefore"));
    o.insert("timestamp", timestamp);
    Value::Object(o)
}

/// `createBranchSummaryMessage` from a branch-summary record's value and its time.
pub(crate) fn branch_summary<'b>(v: &Value<'b>, timestamp: Value<'b>) -> Value<'b> {
    let mut o = Object::new();
    o.insert("role", Value::str("branchSummary"));
    put(&mut o, "summary", v.get("summary"));
    put(&mut o, "fromId", v.get("fromId"));
    o.insert("timestamp", timestamp);
    Value::Object(o)
}

/// `convertToLlm`: the provider-facing messages, with Pi's exact literals (format.md §7.4).
pub fn convert_to_llm<'b>(messages: &[Message<'b>], arena: &'b Bump) -> Vec<Message<'b>> {
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        let v = match m {
            Message::Stored(_) => {
                // Stored messages are user, assistant, toolResult or system unless their role says
                // otherwise; look only when needed.
                let v = m.to_value(arena);
                let role = v.get("role").and_then(Value::as_str).map(|r| r.as_bytes().to_vec());
                if matches!(role.as_deref(), Some(b"system" | b"user" | b"assistant" | b"toolResult")) {
                    out.push(m.clone());
                    continue;
                }
                v
            }
            Message::Built(v) => v.clone(),
        };
        let role = v.get("role").and_then(Value::as_str).map(|r| r.as_bytes().to_vec()).unwrap_or_default();
        let text_block = |text: Vec<u8>| {
            let mut b = Object::new();
            b.insert("type", Value::str("text"));
            b.insert("text", Value::String(JsStr(std::borrow::Cow::Owned(text))));
            Value::Array(vec![Value::Object(b)])
        };
        let user = |content: Value<'b>| {
            let mut o = Object::new();
            o.insert("role", Value::str("user"));
            o.insert("content", content);
            put(&mut o, "timestamp", v.get("timestamp"));
            Message::Built(Value::Object(o))
        };
        let text_of = |k: &str| v.get(k).map(template).unwrap_or_else(|| b"undefined".to_vec());
        match role.as_slice() {
            b"bashExecution" => {
                if v.get("excludeFromContext").is_some_and(Value::is_truthy) {
                    continue;
                }
                out.push(user(text_block(bash_text(&v))));
            }
            b"custom" => {
                let content = match v.get("content") {
                    Some(Value::String(s)) => text_block(s.as_bytes().to_vec()),
                    Some(c) => c.clone(),
                    None => Value::Null,
                };
                let mut o = Object::new();
                o.insert("role", Value::str("user"));
                if v.get("content").is_some() {
                    o.insert("content", content);
                }
                put(&mut o, "timestamp", v.get("timestamp"));
                out.push(Message::Built(Value::Object(o)));
            }
            b"branchSummary" => {
                let mut t = BRANCH_SUMMARY_PREFIX.as_bytes().to_vec();
                t.extend(text_of("summary"));
                t.extend_from_slice(BRANCH_SUMMARY_SUFFIX.as_bytes());
                out.push(user(text_block(t)));
            }
            b"compactionSummary" => {
                let mut t = COMPACTION_SUMMARY_PREFIX.as_bytes().to_vec();
                t.extend(text_of("summary"));
                t.extend_from_slice(COMPACTION_SUMMARY_SUFFIX.as_bytes());
                out.push(user(text_block(t)));
            }
            b"system" | b"user" | b"assistant" | b"toolResult" => out.push(Message::Built(v)),
            _ => {}
        }
    }
    out
}

/// A value as a template literal prints it.
fn template(v: &Value<'_>) -> Vec<u8> {
    match v {
        Value::String(s) => s.as_bytes().to_vec(),
        Value::Null => b"null".to_vec(),
        Value::Bool(b) => b.to_string().into_bytes(),
        Value::Number(n) => {
            let mut out = Vec::new();
            json::write_number(*n, &mut out);
            out
        }
        Value::Array(_) | Value::Object(_) => b"[object Object]".to_vec(),
    }
}

/// `bashExecutionToText`.
pub(crate) fn bash_text(v: &Value<'_>) -> Vec<u8> {
    let s = |k: &str| v.get(k).map(template).unwrap_or_else(|| b"undefined".to_vec());
    let mut t = b"Ran `".to_vec();
    t.extend(s("command"));
    t.extend_from_slice(b"`\n");
    if v.get("output").is_some_and(Value::is_truthy) {
        t.extend_from_slice(b"```\n");
        t.extend(s("output"));
        t.extend_from_slice(b"\n```");
    } else {
        t.extend_from_slice(b"(no output)");
    }
    let code = v.get("exitCode");
    if v.get("cancelled").is_some_and(Value::is_truthy) {
        t.extend_from_slice(b"\n\n(command cancelled)");
    } else if let Some(c) = code.filter(|c| !matches!(c, Value::Null) && c.as_f64() != Some(0.0)) {
        t.extend_from_slice(b"\n\nCommand exited with code ");
        t.extend(template(c));
    }
    if v.get("truncated").is_some_and(Value::is_truthy) && v.get("fullOutputPath").is_some_and(Value::is_truthy) {
        t.extend_from_slice(b"\n\n[Output truncated. Full output: ");
        t.extend(s("fullOutputPath"));
        t.push(b']');
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built(json_text: &str, arena: &Bump) -> Message<'static> {
        Message::Built(json::parse_value(json_text.as_bytes(), arena).unwrap().into_owned())
    }

    #[test]
    fn convert_to_llm_uses_pis_exact_literals() {
        // format.md §7.4: no newline before the branch summary's closing tag.
        let arena = Bump::new();
        let input = vec![
            built(r#"{"role":"branchSummary","summary":"B","fromId":"x","timestamp":1}"#, &arena),
            built(r#"{"role":"compactionSummary","summary":"C","tokensBefore":5,"timestamp":2}"#, &arena),
            built(r#"{"role":"custom","customType":"t","content":"hi","display":true,"timestamp":3}"#, &arena),
            built(r#"{"role":"bashExecution","command":"ls","output":"a","exitCode":2,"timestamp":4}"#, &arena),
            built(r#"{"role":"bashExecution","command":"x","excludeFromContext":true,"timestamp":5}"#, &arena),
            Message::Stored(br#"{"role":"user","content":"u","timestamp":6}"#),
        ];
        let out = convert_to_llm(&input, &arena);
        let texts: Vec<String> = out
            .iter()
            .map(|m| {
                let v = m.to_value(&arena);
                let c = v.get("content").unwrap();
                match c {
                    Value::String(s) => s.to_str_lossy().into_owned(),
                    _ => c.as_array().unwrap()[0].get("text").unwrap().as_str().unwrap().to_str_lossy().into_owned(),
                }
            })
            .collect();
        assert_eq!(
            texts,
            [
                "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nB</summary>",
                "The conversation history before this point was compacted into the following summary:\n\n<summary>\nC\n</summary>",
                "hi",
                "Ran `ls`\n```\na\n```\n\nCommand exited with code 2",
                "u",
            ]
        );
        assert!(matches!(out[4], Message::Stored(_)), "user messages pass through untouched");
    }
}
