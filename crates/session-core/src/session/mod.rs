//! A loaded session: the loader's rules (format.md §2, format.md §5), version migration (format.md §4), the id index, leaf,
//! branch, labels, name and tree (format.md §6), exactly as Pi 1.6 computes them, with guards where the
//! reference hangs.

use ahash::{AHashMap, AHashSet};
use bumpalo::Bump;

use crate::json::{self, Scanned, Value, scan::SpanKind};
use crate::jssort::js_sort;
use crate::lines::LineRule;
use crate::property::PropertyValue;

/// One parsed record of the file (the header included), read lazily: the common fields come from
/// a validating scan, the full value only from [`Entry::value`].
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// The line's bytes.
    pub line: &'a [u8],
    /// Absolute byte offset of the line.
    pub offset: u64,
    /// 1-based line number.
    pub line_number: u64,
    /// False for JSON values that are not objects (numbers, strings, arrays), which the
    /// reference keeps as entries with every field `undefined`.
    pub is_object: bool,
    /// The line is a JSON array: not an entry, but an object to JavaScript, so v1 migration
    /// gives it an id and a place in the chain as it does an entry (format.md §4).
    pub is_array: bool,
    /// `type`.
    pub entry_type: PropertyValue<'a>,
    /// `id` (regenerated for v1 files).
    pub id: PropertyValue<'a>,
    /// `parentId` (rewritten for v1 files).
    pub parent_id: PropertyValue<'a>,
    /// `timestamp`.
    pub timestamp: PropertyValue<'a>,
    /// Fields some entry types need at load time.
    pub detail: Detail<'a>,
    /// Set by v1 migration: the `firstKeptEntryId` derived from `firstKeptEntryIndex`.
    pub migrated_first_kept: Option<Box<PropertyValue<'a>>>,
    /// Set by v2 migration: `message.role` was `hookMessage` and reads as `custom`.
    pub hook_message_renamed: bool,
}

/// Type-specific fields read during loading.
#[derive(Debug, Clone, Default)]
pub enum Detail<'a> {
    /// Nothing needed.
    #[default]
    None,
    /// A `label` entry.
    Label {
        /// `targetId`.
        target: Box<PropertyValue<'a>>,
        /// `label`.
        label: Box<PropertyValue<'a>>,
    },
    /// A `session_info` entry's `name`.
    SessionInfo(PropertyValue<'a>),
    /// A `message` entry: the kind of its `message` value and its `role`.
    Message {
        /// What `message` is (`None` when absent).
        message: Option<SpanKind>,
        /// `message.role`.
        role: PropertyValue<'a>,
        /// What `message.content` is (`None` when absent or `message` is not an object).
        content: Option<SpanKind>,
        /// Where the `message` value lies in the line, when it was read by the scan.
        span: Option<(u32, u32)>,
        /// A tool result whose `message.usage` is truthy (read only for tool results, the one
        /// role whose usage `stats` can otherwise skip without a parse).
        tool_result_usage: bool,
        /// `message.content` holds a `null` item, where Pi's `getSessionStats()` and text
        /// extraction throw (from the scan; false when the line was read by the full parse).
        null_block: bool,
    },
}

impl<'a> Entry<'a> {
    /// The full value of the line, parsed with `simd-json` into `arena`.
    pub fn value<'b>(&self, arena: &'b Bump) -> Result<Value<'b>, json::ParseError> {
        json::parse_value(self.line, arena)
    }

    /// Whether `type` is `t`.
    pub fn is_type(&self, t: &str) -> bool {
        self.entry_type.is(t)
    }

    /// `message.role`, after migration.
    pub fn role(&self) -> PropertyValue<'a> {
        match &self.detail {
            Detail::Message { .. } if self.hook_message_renamed => PropertyValue::Str("custom".into()),
            Detail::Message { role, .. } => role.clone(),
            _ => PropertyValue::Absent,
        }
    }

    /// Builds the lazy view of a line from its scan.
    pub fn from_scan(line: crate::lines::Line<'a>, scanned: &Scanned) -> Entry<'a> {
        let b = line.bytes;
        let mut entry = Entry {
            line: b,
            offset: line.offset,
            line_number: line.number,
            is_object: scanned.is_object(),
            is_array: scanned.top == Some(SpanKind::Array),
            entry_type: PropertyValue::Absent,
            id: PropertyValue::Absent,
            parent_id: PropertyValue::Absent,
            timestamp: PropertyValue::Absent,
            detail: Detail::None,
            migrated_first_kept: None,
            hook_message_renamed: false,
        };
        if !entry.is_object {
            return entry;
        }
        if scanned.escaped_keys {
            entry.fill_from_full_parse();
            return entry;
        }
        let span = scanned.field(b, "message");
        let message = span.map(|s| s.kind);
        let (role, content) = if message == Some(SpanKind::Object) {
            (
                PropertyValue::from_span(b, scanned.message_field(b, "role")),
                scanned.message_field(b, "content").map(|s| s.kind),
            )
        } else {
            (PropertyValue::Absent, None)
        };
        let tool_result_usage =
            role.is("toolResult") && PropertyValue::from_span(b, scanned.message_field(b, "usage")).is_truthy();
        // A stored message goes out as its raw text only when that text is what Pi would print.
        let span = span.filter(|_| !scanned.overflow).map(|s| (s.start, s.end));
        let null_block = scanned.null_in_content;
        let detail = Detail::Message { message, role, content, span, tool_result_usage, null_block };
        entry.fill(&ScannedFields { line: b, scanned }, detail);
        entry
    }

    /// The slow path for lines whose keys hold escapes: read the fields from the full value.
    fn fill_from_full_parse(&mut self) {
        let arena = Bump::new();
        let Ok(v) = json::parse_value(self.line, &arena) else { return };
        let m = v.get("message");
        let message = m.map(kind_of);
        let role = PropertyValue::from_value(m.and_then(|m| m.get("role")));
        let content = m.and_then(|m| m.get("content")).map(kind_of);
        let tool_result_usage = role.is("toolResult") && m.and_then(|m| m.get("usage")).is_some_and(Value::is_truthy);
        let detail = Detail::Message { message, role, content, span: None, tool_result_usage, null_block: false };
        self.fill(&ValueFields(&v), detail);
    }

    /// Sets the common fields and the type-specific detail from a field reader; `message` is the
    /// detail a `message` entry gets.
    #[inline(always)]
    fn fill(&mut self, fields: &impl FieldReader<'a>, message: Detail<'a>) {
        self.entry_type = fields.get("type");
        self.id = fields.get("id");
        self.parent_id = fields.get("parentId");
        self.timestamp = fields.get("timestamp");
        self.detail = match &self.entry_type {
            t if t.is("label") => {
                Detail::Label { target: Box::new(fields.get("targetId")), label: Box::new(fields.get("label")) }
            }
            t if t.is("session_info") => Detail::SessionInfo(fields.get("name")),
            t if t.is("message") => message,
            _ => Detail::None,
        };
    }
}

/// Where [`Entry::fill`] reads a line's top-level fields. A trait rather than a closure: its
/// inlined method sees each literal key, so the scan's lookup ([`Scanned::field`]) resolves it
/// at compile time.
trait FieldReader<'a> {
    fn get(&self, key: &str) -> PropertyValue<'a>;
}

/// The fields a scan recorded.
struct ScannedFields<'a, 's> {
    line: &'a [u8],
    scanned: &'s Scanned,
}

impl<'a> FieldReader<'a> for ScannedFields<'a, '_> {
    #[inline(always)]
    fn get(&self, key: &str) -> PropertyValue<'a> {
        PropertyValue::from_span(self.line, self.scanned.field(self.line, key))
    }
}

/// The fields of a fully parsed value.
struct ValueFields<'v, 'x>(&'v Value<'x>);

impl<'a> FieldReader<'a> for ValueFields<'_, '_> {
    #[inline(always)]
    fn get(&self, key: &str) -> PropertyValue<'a> {
        PropertyValue::from_value(self.0.get(key))
    }
}

/// The scan's name for the kind of a parsed value.
fn kind_of(v: &Value<'_>) -> SpanKind {
    match v {
        Value::Null => SpanKind::Null,
        Value::Bool(_) => SpanKind::Bool,
        Value::Number(_) => SpanKind::Number,
        Value::String(_) => SpanKind::Str { escaped: false },
        Value::Array(_) => SpanKind::Array,
        Value::Object(_) => SpanKind::Object,
    }
}

/// The records of one stretch of a file, scanned on their own.
#[derive(Debug, Default)]
pub struct Chunk<'a> {
    records: Vec<Entry<'a>>,
    diagnostics: Vec<Diagnostic>,
    /// Lines in the stretch (line numbers in `records` count from 1 within it).
    lines: u64,
    incomplete_tail: bool,
}

/// Scans the lines of `bytes[range]` (which must start at a line start): the validating scan of
/// every line, skipped lines as diagnostics. Offsets are absolute; line numbers are fixed up by
/// [`Session::from_chunks`].
pub fn scan_chunk<'a>(bytes: &'a [u8], range: std::ops::Range<usize>) -> Chunk<'a> {
    let base = range.start as u64;
    let mut chunk = Chunk::default();
    // Each line is split by its own scan.
    let mut lines = crate::lines::ScannedLines::new(&bytes[range], LineRule::Newline, json::ScanOptions::default());
    while let Some((mut line, scanned)) = lines.next() {
        line.offset += base;
        chunk.lines = line.number;
        chunk.incomplete_tail = !line.terminated;
        let Some(scanned) = scanned else { continue }; // a blank line
        match scanned {
            Ok(scanned) if top_is_falsy(line.bytes, scanned) => chunk.diagnostics.push(Diagnostic {
                line: line.number,
                offset: line.offset,
                message: "line is a falsy JSON value (null, false, 0 or \"\"): skipped".into(),
            }),
            Ok(scanned) => chunk.records.push(Entry::from_scan(line, scanned)),
            Err(e) => {
                let what = if line.terminated { "malformed JSON" } else { "incomplete last line" };
                chunk.diagnostics.push(Diagnostic {
                    line: line.number,
                    offset: line.offset + e.offset as u64,
                    message: format!("{what} ({}): skipped", e.reason),
                });
            }
        }
    }
    chunk
}

/// Up to `parts` ranges covering `bytes`, each starting at a line start (after a `\n`).
pub fn split_points(bytes: &[u8], parts: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::with_capacity(parts);
    let mut start = 0;
    for k in 1..parts.max(1) {
        let target = (bytes.len() * k / parts).max(start);
        let Some(nl) = memchr::memchr(b'\n', &bytes[target..]) else { break };
        let end = target + nl + 1;
        if end > start && end < bytes.len() {
            out.push(start..end);
            start = end;
        }
    }
    out.push(start..bytes.len());
    out
}

/// A problem found while loading: never fatal for the rest of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// 1-based line number.
    pub line: u64,
    /// Absolute byte offset of the problem.
    pub offset: u64,
    /// What happened and what we did.
    pub message: String,
}

/// Why a file is not a session the reference would open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// The file has no bytes (the reference writes a fresh header into it; we do not write).
    Empty,
    /// The first parsed record is not a `session` header with a string `id` (the reference throws
    /// "Session file is not a valid pi session").
    NotASession {
        /// Line of the first parsed record, if any.
        line: Option<u64>,
        /// Its byte offset.
        offset: Option<u64>,
        /// Why it was refused.
        reason: String,
    },
}

impl LoadError {
    /// The line and byte offset of the record that made the file no session, where known.
    pub fn place(&self) -> (Option<u64>, Option<u64>) {
        match self {
            LoadError::NotASession { line, offset, .. } => (*line, *offset),
            LoadError::Empty => (None, None),
        }
    }

    /// Why the file was refused, without where (for a caller that names the line and offset
    /// itself); [`Display`](std::fmt::Display) puts the place first.
    pub fn reason(&self) -> String {
        match self {
            LoadError::Empty => "empty file: not a session (Pi would write a new header into it)".into(),
            LoadError::NotASession { reason, .. } => format!("not a valid pi session: {reason}"),
        }
    }
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let (Some(l), Some(o)) = self.place() {
            write!(f, "line {l}, byte {o}: ")?;
        }
        f.write_str(&self.reason())
    }
}

impl std::error::Error for LoadError {}

/// A node of [`Session::tree`].
#[derive(Debug, Clone)]
pub struct TreeNode {
    /// Index into [`Session::records`] of the record this node shows (the last with its id).
    pub record: usize,
    /// Child node indices, sorted by timestamp as the reference sorts them.
    pub children: Vec<usize>,
}

/// The tree as `getTree()` builds it: nodes, and roots in file order.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    /// Root node indices.
    pub roots: Vec<usize>,
    /// Every node.
    pub nodes: Vec<TreeNode>,
}

/// A session loaded from the bytes of one file.
#[derive(Debug)]
pub struct Session<'a> {
    /// Every parsed record in file order; index 0 is the header.
    pub records: Vec<Entry<'a>>,
    /// The header's full value.
    pub header: Value<'a>,
    /// The version the file declared, when migration ran (1 or 2).
    pub migrated_from: Option<u8>,
    /// The last line had no `\n` (the reference appends one on load; we never write).
    pub incomplete_tail: bool,
    /// Lines skipped or entries treated specially, with where they are.
    pub diagnostics: Vec<Diagnostic>,
    /// The zone a time without an offset is read in (`Date.parse`'s local zone): UTC unless the
    /// program gives the machine's with [`Session::with_local_zone`].
    pub local_zone: jiff::tz::TimeZone,
    session_id: crate::json::JsStr<'a>,
    by_id: AHashMap<PropertyValue<'a>, usize>,
    /// No two indexed records share an id: a record whose id matches is then the one `by_id` names.
    unique_ids: bool,
    /// `None`: no entries (`null`); `Some(PropertyValue::Absent)`: the last entry has no id.
    leaf: Option<PropertyValue<'a>>,
    labels: AHashMap<PropertyValue<'a>, (PropertyValue<'a>, PropertyValue<'a>)>,
}

impl<'a> Session<'a> {
    /// The session with times without an offset read in `zone` (Node reads them in the machine's
    /// zone, `TZ` first).
    pub fn with_local_zone(mut self, zone: jiff::tz::TimeZone) -> Session<'a> {
        self.local_zone = zone;
        self
    }

    /// Loads a session from a whole file's bytes, as `SessionManager.open` does, minus its writes.
    pub fn load(bytes: &'a [u8]) -> Result<Session<'a>, LoadError> {
        Session::from_chunks(bytes, vec![scan_chunk(bytes, 0..bytes.len())])
    }

    /// Assembles a session from the chunks of one file, in file order (see [`scan_chunk`] and
    /// [`split_points`]: callers may scan the chunks of a large file in parallel).
    pub fn from_chunks(bytes: &'a [u8], chunks: Vec<Chunk<'a>>) -> Result<Session<'a>, LoadError> {
        if bytes.is_empty() {
            return Err(LoadError::Empty);
        }
        let mut records: Vec<Entry<'a>> = Vec::with_capacity(chunks.iter().map(|c| c.records.len()).sum());
        let mut diagnostics = Vec::new();
        let mut incomplete_tail = false;
        let mut lines_before = 0;
        for chunk in chunks {
            records.extend(chunk.records.into_iter().map(|mut e| {
                e.line_number += lines_before;
                e
            }));
            diagnostics.extend(chunk.diagnostics.into_iter().map(|mut d| {
                d.line += lines_before;
                d
            }));
            lines_before += chunk.lines;
            incomplete_tail = chunk.incomplete_tail;
        }
        let Some(first) = records.first() else {
            let bad = diagnostics.first();
            return Err(LoadError::NotASession {
                line: bad.map(|b| b.line),
                offset: bad.map(|b| b.offset),
                reason: "no line parses as JSON".into(),
            });
        };
        let session_id = match (&first.id, first.is_type("session")) {
            (PropertyValue::Str(id), true) => id.clone(),
            _ => {
                let reason = if first.is_type("session") {
                    "the header's id is not a string".to_string()
                } else {
                    "the first parsed record is not a session header".to_string()
                };
                return Err(LoadError::NotASession {
                    line: Some(first.line_number),
                    offset: Some(first.offset),
                    reason,
                });
            }
        };
        let arena = Bump::new();
        let header = first.value(&arena).map(Value::into_owned).map_err(|e| LoadError::NotASession {
            line: Some(first.line_number),
            offset: Some(first.offset),
            reason: e.reason.into(),
        })?;
        let mut session = Session {
            records,
            header,
            migrated_from: None,
            incomplete_tail,
            diagnostics,
            local_zone: jiff::tz::TimeZone::UTC,
            session_id,
            by_id: AHashMap::new(),
            unique_ids: false,
            leaf: None,
            labels: AHashMap::new(),
        };
        session.migrate();
        session.build_index();
        Ok(session)
    }

    /// The session id (the header's `id`).
    pub fn id(&self) -> &crate::json::JsStr<'a> {
        &self.session_id
    }

    /// Every non-header record in file order (`getEntries()`).
    pub fn entries(&self) -> impl Iterator<Item = (usize, &Entry<'a>)> {
        self.records.iter().enumerate().skip(1).filter(|(_, e)| !e.is_type("session"))
    }

    /// `getLeafId()`: `None` for `null` (no entries), `Some(PropertyValue::Absent)` for `undefined`.
    pub fn leaf_id(&self) -> Option<&PropertyValue<'a>> {
        self.leaf.as_ref()
    }

    /// The record an id resolves to (the last record with that id).
    pub fn get(&self, id: &PropertyValue<'a>) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// The label on an entry and its timestamp.
    pub fn label(&self, id: &PropertyValue<'a>) -> Option<&(PropertyValue<'a>, PropertyValue<'a>)> {
        self.labels.get(id)
    }

    /// `getSessionName()`: the latest `session_info` in file order decides, `""` clears.
    /// A non-string name (the reference throws) reads as no name.
    pub fn name(&self) -> Option<crate::json::JsStr<'a>> {
        match &self.latest_session_info()?.detail {
            Detail::SessionInfo(PropertyValue::Str(s)) => {
                let t = crate::text::js_trim(s.as_bytes());
                (!t.is_empty()).then(|| crate::property::decode_string(t, false).into_owned())
            }
            _ => None,
        }
    }

    /// Where `getSessionName()` throws: the latest `session_info` when its `name` is neither a
    /// string, `null` nor absent (`name?.trim` is not a function); its line and byte offset.
    pub fn name_that_throws(&self) -> Option<(u64, u64)> {
        let info = self.latest_session_info()?;
        match &info.detail {
            Detail::SessionInfo(PropertyValue::Str(_) | PropertyValue::Null | PropertyValue::Absent) => None,
            _ => Some((info.line_number, info.offset)),
        }
    }

    /// The last `session_info` in file order, which decides the name.
    fn latest_session_info(&self) -> Option<&Entry<'a>> {
        self.records.iter().skip(1).rev().find(|e| e.is_type("session_info"))
    }

    /// `getBranch(fromId)`: record indices from the root to `from` (or the leaf). Stops at a
    /// parent already on the path, where the reference would loop forever.
    pub fn branch(&self, from: Option<&PropertyValue<'a>>) -> Branch {
        let start = from.or(self.leaf.as_ref());
        self.walk_up(start.filter(|s| s.is_truthy()).and_then(|s| self.get(s)))
    }

    /// The path from record `start` up to its root, root first, following `parentId` while it is
    /// truthy and found; stops at a record met twice.
    pub fn walk_up(&self, start: Option<usize>) -> Branch {
        // Without a cycle the walk meets each record at most once: only a longer walk needs the
        // set that finds where the cycle closes.
        let mut path = Vec::new();
        let mut current = start;
        while let Some(i) = current {
            if path.len() == self.records.len() {
                return self.walk_up_guarded(start);
            }
            path.push(i);
            current = self.parent_of(i);
        }
        path.reverse();
        Branch { path, cycle_at: None }
    }

    /// [`Session::walk_up`] that stops at the first record met twice.
    fn walk_up_guarded(&self, start: Option<usize>) -> Branch {
        let mut path = Vec::new();
        let mut cycle_at = None;
        let mut current = start;
        let mut seen = AHashSet::new();
        while let Some(i) = current {
            if !seen.insert(i) {
                cycle_at = Some(i);
                break;
            }
            path.push(i);
            current = self.parent_of(i);
        }
        path.reverse();
        Branch { path, cycle_at }
    }

    /// The record `parentId` names when it is truthy and found. Most records follow their parent
    /// in the file; when ids are unique, that record is checked before the index is searched.
    fn parent_of(&self, i: usize) -> Option<usize> {
        let parent = &self.records[i].parent_id;
        if !parent.is_truthy() {
            return None;
        }
        if self.unique_ids && i >= 2 {
            let previous = &self.records[i - 1];
            if previous.id == *parent && !previous.is_type("session") {
                return Some(i - 1);
            }
        }
        self.get(parent)
    }

    /// `getTree()`: roots in file order, children sorted by timestamp; duplicate ids attach the
    /// last record's node once per record, as the reference does.
    pub fn tree(&self) -> Tree {
        let mut node_of: AHashMap<&PropertyValue<'a>, usize> = AHashMap::new();
        let mut nodes: Vec<TreeNode> = Vec::new();
        for (i, e) in self.entries() {
            match node_of.get(&e.id) {
                Some(&n) => nodes[n] = TreeNode { record: i, children: Vec::new() },
                None => {
                    node_of.insert(&e.id, nodes.len());
                    nodes.push(TreeNode { record: i, children: Vec::new() });
                }
            }
        }
        let mut roots = Vec::new();
        for (_, e) in self.entries() {
            let node = node_of[&e.id];
            if e.parent_id == PropertyValue::Null || e.parent_id == e.id {
                roots.push(node);
            } else if let Some(&parent) = node_of.get(&e.parent_id) {
                nodes[parent].children.push(node);
            } else {
                roots.push(node);
            }
        }
        let times: Vec<f64> =
            nodes.iter().map(|n| self.records[n.record].timestamp.time_value(&self.local_zone)).collect();
        for n in &mut nodes {
            js_sort(&mut n.children, |a, b| times[*a] - times[*b]);
        }
        Tree { roots, nodes }
    }

    fn migrate(&mut self) {
        let version = json::to_number(self.header.get("version"));
        // `header.version ?? 1`; comparisons with NaN are all false.
        let version = match self.header.get("version") {
            None | Some(Value::Null) => 1.0,
            _ => version,
        };
        if version.is_nan() || version >= 3.0 {
            return;
        }
        self.migrated_from = Some(if version < 2.0 { 1 } else { 2 });
        // Each step sets the header's version (in place when the key is there, else last), as
        // Pi's `getHeader()` then gives it.
        if let Value::Object(header) = &mut self.header {
            header.insert("version", Value::Number(3.0));
        }
        if version < 2.0 {
            self.migrate_v1();
        }
        for e in &mut self.records {
            if e.is_type("message") && e.role().is("hookMessage") {
                e.hook_message_renamed = true;
            }
        }
    }

    /// v1 → v2: fresh ids in file order (`00000001`, `00000002`, …: deterministic, and unique
    /// because every id is replaced), a linear parent chain, and `firstKeptEntryIndex` resolved.
    fn migrate_v1(&mut self) {
        let mut prev = PropertyValue::Null;
        let mut n = 0u32;
        for i in 0..self.records.len() {
            let e = &self.records[i];
            // A number, string or boolean makes the reference throw (`Cannot create property 'id'`);
            // we leave it out of the chain.
            if e.is_type("session") || !(e.is_object || e.is_array) {
                continue;
            }
            n += 1;
            let id = PropertyValue::Str(crate::json::JsStr::owned(format!("{n:08x}")));
            let kept_index = if e.is_type("compaction") { first_kept_index(e.line) } else { None };
            let e = &mut self.records[i];
            e.id = id.clone();
            e.parent_id = std::mem::replace(&mut prev, id);
            if let Some(k) = kept_index {
                let target = (k.fract() == 0.0 && k >= 0.0).then(|| self.records.get(k as usize)).flatten();
                let first_kept = match target {
                    Some(t) if !t.is_type("session") => t.id.clone(),
                    _ => PropertyValue::Absent,
                };
                self.records[i].migrated_first_kept = Some(Box::new(first_kept));
            }
        }
    }

    fn build_index(&mut self) {
        let mut by_id = AHashMap::with_capacity(self.records.len());
        let mut labels = AHashMap::new();
        let mut leaf = None;
        let mut unique_ids = true;
        for (i, e) in self.records.iter().enumerate().skip(1) {
            if e.is_type("session") {
                continue;
            }
            unique_ids &= by_id.insert(e.id.clone(), i).is_none();
            leaf = Some(e.id.clone());
            if let Detail::Label { target, label } = &e.detail {
                if label.is_truthy() {
                    labels.insert((**target).clone(), ((**label).clone(), e.timestamp.clone()));
                } else {
                    labels.remove(&**target);
                }
            }
        }
        self.by_id = by_id;
        self.unique_ids = unique_ids;
        self.labels = labels;
        self.leaf = leaf;
    }
}

/// A root-to-leaf path of record indices.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Branch {
    /// Record indices, root first.
    pub path: Vec<usize>,
    /// Where the walk met a record already on the path (the reference never returns).
    pub cycle_at: Option<usize>,
}

/// Whether a line's value is one the reference drops with `if (entry)`: `null`, `false`, `0`, `""`.
pub fn top_is_falsy(line: &[u8], scanned: &Scanned) -> bool {
    // Most lines are objects: the line is trimmed only when it is not.
    let trimmed = || crate::text::js_trim(line);
    match scanned.top {
        Some(SpanKind::Null) => true,
        Some(SpanKind::Bool) => trimmed().first() == Some(&b'f'),
        Some(SpanKind::Str { .. }) => trimmed() == b"\"\"",
        Some(SpanKind::Number) => std::str::from_utf8(trimmed()).ok().and_then(|t| t.parse::<f64>().ok()) == Some(0.0),
        _ => false,
    }
}

/// `firstKeptEntryIndex` when it is a number.
fn first_kept_index(line: &[u8]) -> Option<f64> {
    let arena = Bump::new();
    let v = json::parse_value(line, &arena).ok()?;
    v.get("firstKeptEntryIndex")?.as_f64()
}

/// Every entry type the spec names (format.md §3, format.md §7.6, format.md §8); anything else is `Unknown` and kept as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// The header (`session`).
    Session,
    /// `message`.
    Message,
    /// `thinking_level_change`.
    ThinkingLevelChange,
    /// `model_change`.
    ModelChange,
    /// `compaction`.
    Compaction,
    /// `branch_summary`.
    BranchSummary,
    /// `custom` (extension data, no context message).
    Custom,
    /// `custom_message` (extension message in context).
    CustomMessage,
    /// `label`.
    Label,
    /// `session_info` (the session name).
    SessionInfo,
    /// `usage` (1.6).
    Usage,
    /// `context_edit` (1.6).
    ContextEdit,
    /// Atomic's `session_summary` (inert here).
    SessionSummary,
    /// Atomic's retired `context_compaction` (inert).
    ContextCompaction,
    /// Atomic's removed `context_window_change` (inert).
    ContextWindowChange,
    /// The harness format's `leaf` record.
    Leaf,
    /// The harness format's `active_tools_change`.
    ActiveToolsChange,
    /// Any other `type`, or none.
    Unknown,
    /// A JSON value that is not an object.
    NotAnObject,
}

/// Message roles (format.md §3), historical ones included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
    /// `toolResult`.
    ToolResult,
    /// `bashExecution`.
    BashExecution,
    /// `custom` (also the migrated v2 `hookMessage`).
    Custom,
    /// `system` (1.6).
    System,
    /// Historical `branchSummary`.
    BranchSummary,
    /// Historical `compactionSummary`.
    CompactionSummary,
    /// Any other role.
    Other,
}

impl Entry<'_> {
    /// The entry's type.
    pub fn kind(&self) -> EntryKind {
        if !self.is_object {
            return EntryKind::NotAnObject;
        }
        let PropertyValue::Str(t) = &self.entry_type else { return EntryKind::Unknown };
        match t.as_bytes() {
            b"session" => EntryKind::Session,
            b"message" => EntryKind::Message,
            b"thinking_level_change" => EntryKind::ThinkingLevelChange,
            b"model_change" => EntryKind::ModelChange,
            b"compaction" => EntryKind::Compaction,
            b"branch_summary" => EntryKind::BranchSummary,
            b"custom" => EntryKind::Custom,
            b"custom_message" => EntryKind::CustomMessage,
            b"label" => EntryKind::Label,
            b"session_info" => EntryKind::SessionInfo,
            b"usage" => EntryKind::Usage,
            b"context_edit" => EntryKind::ContextEdit,
            b"session_summary" => EntryKind::SessionSummary,
            b"context_compaction" => EntryKind::ContextCompaction,
            b"context_window_change" => EntryKind::ContextWindowChange,
            b"leaf" => EntryKind::Leaf,
            b"active_tools_change" => EntryKind::ActiveToolsChange,
            _ => EntryKind::Unknown,
        }
    }

    /// The message role of a `message` entry, after migration; `None` when it has no string role.
    pub fn message_role(&self) -> Option<Role> {
        let PropertyValue::Str(r) = self.role() else { return None };
        Some(Role::of(r.as_bytes()))
    }
}

impl Role {
    /// The role a `role` string names.
    pub fn of(role: &[u8]) -> Role {
        match role {
            b"user" => Role::User,
            b"assistant" => Role::Assistant,
            b"toolResult" => Role::ToolResult,
            b"bashExecution" => Role::BashExecution,
            b"custom" => Role::Custom,
            b"system" => Role::System,
            b"branchSummary" => Role::BranchSummary,
            b"compactionSummary" => Role::CompactionSummary,
            _ => Role::Other,
        }
    }
}

impl<'a> Session<'a> {
    /// `getChildren(parentId)`: records whose `parentId` is `id`, one per distinct id (the last
    /// record with it), in order of each id's first appearance, unsorted as in the reference.
    pub fn children(&self, id: &PropertyValue<'a>) -> Vec<usize> {
        let mut seen = AHashSet::new();
        let mut out = Vec::new();
        for (_, e) in self.entries() {
            if !seen.insert(&e.id) {
                continue;
            }
            let Some(last) = self.get(&e.id) else { continue };
            if self.records[last].parent_id == *id {
                out.push(last);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
