//! What Pi 1.6's `SessionManager` holds in memory, and the bytes each of its operations writes
//! (format.md §1–§4, §6). No I/O: each append is prepared ([`Pending`]: the new id, the line, and
//! what reaches the file), the caller writes it, then commits it, or abandons it when the write
//! failed, which leaves the state as it was (Pi rolls back the same way).
//!
//! The records are kept as the lines Pi would write them; readers load a [`Session`] from them.
//! The state keeps only what appending needs: every entry's id, parent, type and role, the leaf,
//! and whether the session holds a conversation yet (a new session is written only then).

use ahash::AHashMap;
use bumpalo::Bump;

use crate::Session;
use crate::context::{LeafChoice, Message};
use crate::json::{JsStr, Object, Value, write_json};
use crate::property::PropertyValue;
use crate::record::{EntryBody, Header, Parent, Workflow, entry_line_under, header_line, normalise_name};
use crate::session::{EntryKind, Role};

/// Where time and randomness come from: the clock and random UUIDs, or fixed ones for tests.
pub trait Sources {
    /// `Date.now()`: milliseconds since the epoch.
    fn now_ms(&mut self) -> i64;
    /// `crypto.randomUUID()`: entry ids are its first eight characters.
    fn random_uuid(&mut self) -> String;
    /// A new session id (Pi's `uuidv7()`).
    fn session_id(&mut self) -> String;
}

/// Why an operation was refused; the texts are Pi's where Pi throws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateError {
    /// No entry has this id.
    NotFound(String),
    /// `appendContextEdit` on an entry off the active branch.
    NotOnBranch(String),
    /// `appendContextEdit` on an entry that gives the model no content.
    NotEditable(String),
    /// `appendContextEdit` with a replacement that is neither `null` nor `{content}`.
    BadReplacement,
    /// `newSession({id})` with an id Pi refuses.
    BadSessionId(String),
    /// Atomic's marker with an empty field.
    BadWorkflow,
    /// What Pi would throw a `TypeError` on (a system message whose `content` is neither a
    /// string nor an array, a tool list that is not a list, …).
    Malformed(String),
    /// A record that cannot be read again as JSON, by line.
    Unreadable(u64),
    /// The records read from the file are not held in memory: [`SessionState::hold`] them first.
    NotHeld,
}

impl std::fmt::Display for StateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StateError::NotFound(id) => write!(f, "Entry {id} not found"),
            StateError::NotOnBranch(id) => write!(f, "Entry {id} is not on the active branch"),
            StateError::NotEditable(id) => write!(f, "Entry {id} does not contribute editable model content"),
            StateError::BadReplacement => f.write_str("Context edit replacement must be null or contain string/array content"),
            StateError::BadSessionId(_) => f.write_str(
                "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character",
            ),
            StateError::BadWorkflow => f.write_str("a workflow marker needs a run id, a stage id and a stage name"),
            StateError::Malformed(why) => f.write_str(why),
            StateError::Unreadable(line) => write!(f, "line {line} cannot be read again as JSON"),
            StateError::NotHeld => f.write_str("the session's records are not held in memory"),
        }
    }
}

impl std::error::Error for StateError {}

/// What an operation writes to the session's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// Nothing: the session is held in memory, or has no conversation yet.
    Nothing,
    /// These bytes after the file's end.
    Append(Vec<u8>),
    /// A new file (created exclusively) holding these bytes.
    Create(Vec<u8>),
    /// These bytes in place of the whole file.
    Replace(Vec<u8>),
}

/// What a new session is made with (`newSession(options)`).
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    /// Its id; a new UUIDv7 when `None`. Checked as Pi checks it.
    pub id: Option<String>,
    /// The file it was forked or branched from.
    pub parent_session: Option<String>,
    /// Atomic's internal-session marker.
    pub workflow: Option<Workflow>,
}

/// `appendCompaction`'s arguments.
#[derive(Debug, Clone, Copy)]
pub struct Compaction<'v> {
    /// The summary.
    pub summary: &'v str,
    /// The first entry kept; `None` keeps nothing (Pi writes the compaction's own id).
    pub first_kept_entry_id: Option<&'v str>,
    /// Tokens before the compaction.
    pub tokens_before: f64,
    /// Extension details.
    pub details: Option<&'v Value<'v>>,
    /// Made by a hook.
    pub from_hook: Option<bool>,
    /// The summariser's usage.
    pub usage: Option<&'v Value<'v>>,
}

/// `branchWithSummary`'s arguments after the entry to branch from.
#[derive(Debug, Clone, Copy)]
pub struct BranchSummary<'v> {
    /// The summary of the branch left.
    pub summary: &'v str,
    /// Extension details.
    pub details: Option<&'v Value<'v>>,
    /// Made by a hook.
    pub from_hook: Option<bool>,
    /// The summariser's usage.
    pub usage: Option<&'v Value<'v>>,
}

/// One entry as the index keeps it.
#[derive(Debug, Clone)]
struct Indexed {
    id: PropertyValue<'static>,
    parent: PropertyValue<'static>,
    kind: EntryKind,
    role: Option<Role>,
}

/// An append made but not yet committed.
#[derive(Debug)]
#[must_use = "a prepared append is committed once written, or abandoned"]
pub struct Pending {
    /// The new entry's id.
    pub id: String,
    /// What to write.
    pub write: Write,
    line: Vec<u8>,
    entry: Indexed,
    /// The leaf when the write fails (`branchWithSummary` moves it first).
    leaf_on_failure: Option<PropertyValue<'static>>,
}

/// The in-memory half of Pi's `SessionManager`.
#[derive(Debug, Clone)]
pub struct SessionState {
    /// The records as lines, but for the first `unheld` bytes, which are the file's (a large
    /// file is indexed, not kept: appending needs only the index).
    bytes: Vec<u8>,
    unheld: usize,
    header_span: std::ops::Range<usize>,
    header: Value<'static>,
    entries: Vec<Indexed>,
    by_id: AHashMap<PropertyValue<'static>, usize>,
    leaf: Option<PropertyValue<'static>>,
    session_id: String,
    cwd: String,
    persist: bool,
    flushed: bool,
    conversation: bool,
    /// The file lacks its last line break: the next append starts with one.
    missing_newline: bool,
}

/// `Date.prototype.toISOString` of `ms`.
pub fn iso_time(ms: i64) -> String {
    crate::text::js_iso_string(ms as f64)
}

/// The file name Pi gives a new session: `<time with - for : and .>_<id>.jsonl`.
pub fn file_name(timestamp: &str, session_id: &str) -> String {
    format!("{}_{session_id}.jsonl", timestamp.replace([':', '.'], "-"))
}

/// Pi's `assertValidSessionId`: `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`.
pub fn is_valid_session_id(id: &str) -> bool {
    let b = id.as_bytes();
    let alnum = |c: &u8| c.is_ascii_alphanumeric();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => alnum(f) && alnum(l) && b.iter().all(|c| alnum(c) || matches!(c, b'.' | b'_' | b'-')),
        _ => false,
    }
}

fn str_value(s: &str) -> Value<'static> {
    Value::String(JsStr::owned(s.to_owned()))
}

fn role_of(message: &Value<'_>) -> Option<Role> {
    Some(Role::of(message.get("role")?.as_str()?.as_bytes()))
}

impl SessionState {
    /// `newSession(options)`: a header only, not yet written. `persist: false` is `inMemory`.
    pub fn new(cwd: &str, persist: bool, options: &NewSession, sources: &mut dyn Sources) -> Result<Self, StateError> {
        let mut state = SessionState {
            bytes: Vec::new(),
            unheld: 0,
            header_span: 0..0,
            header: Value::Null,
            entries: Vec::new(),
            by_id: AHashMap::new(),
            leaf: None,
            session_id: String::new(),
            cwd: cwd.to_owned(),
            persist,
            flushed: false,
            conversation: false,
            missing_newline: false,
        };
        state.new_session(options, sources)?;
        Ok(state)
    }

    /// `newSession(options)` on this state: everything is dropped for a new header. Returns the
    /// new session's file name (the caller places it in the session folder).
    pub fn new_session(&mut self, options: &NewSession, sources: &mut dyn Sources) -> Result<String, StateError> {
        if let Some(id) = &options.id
            && !is_valid_session_id(id)
        {
            return Err(StateError::BadSessionId(id.clone()));
        }
        let session_id = options.id.clone().unwrap_or_else(|| sources.session_id());
        let timestamp = iso_time(sources.now_ms());
        let mut bytes = Vec::new();
        header_line(
            &Header {
                id: &session_id,
                timestamp: &timestamp,
                cwd: &self.cwd,
                parent_session: options.parent_session.as_deref(),
                workflow: options.workflow.as_ref(),
            },
            &mut bytes,
        );
        let arena = Bump::new();
        self.header = crate::json::parse_value(&bytes, &arena).map(Value::into_owned).unwrap_or(Value::Null);
        self.header_span = 0..bytes.len() - 1;
        self.bytes = bytes;
        self.unheld = 0;
        self.entries.clear();
        self.by_id.clear();
        self.leaf = None;
        self.flushed = false;
        self.conversation = false;
        self.missing_newline = false;
        self.session_id = session_id;
        Ok(file_name(&timestamp, &self.session_id))
    }

    /// The state of a session read from a file, without its bytes (give them with
    /// [`SessionState::with_bytes`]): `session` was not migrated (see [`migrated_bytes`]).
    pub fn loaded(session: &Session<'_>, cwd: &str) -> SessionState {
        let mut entries = Vec::with_capacity(session.records.len());
        let mut by_id = AHashMap::with_capacity(session.records.len());
        let mut conversation = false;
        for (_, e) in session.entries() {
            let role = if e.is_type("message") { e.message_role() } else { None };
            conversation |= matches!(role, Some(Role::User | Role::Assistant));
            let id = e.id.clone().into_owned();
            by_id.insert(id.clone(), entries.len());
            entries.push(Indexed { id, parent: e.parent_id.clone().into_owned(), kind: e.kind(), role });
        }
        let first = &session.records[0];
        let start = first.offset as usize;
        SessionState {
            header_span: start..start + first.line.len(),
            header: session.header.clone().into_owned(),
            entries,
            by_id,
            leaf: session.leaf_id().map(|l| l.clone().into_owned()).filter(|l| *l != PropertyValue::Null),
            session_id: session.id().to_str_lossy().into_owned(),
            cwd: cwd.to_owned(),
            persist: true,
            flushed: true,
            conversation,
            missing_newline: false,
            bytes: Vec::new(),
            unheld: 0,
        }
    }

    /// The bytes the session was loaded from: the file's, which appends go after.
    pub fn with_bytes(mut self, bytes: Vec<u8>) -> SessionState {
        self.bytes = bytes;
        self.unheld = 0;
        self.missing_newline = false;
        if self.bytes.last().is_some_and(|&b| b != b'\n') {
            self.bytes.push(b'\n');
            self.missing_newline = true;
        }
        self
    }

    /// The state of a file of `len` bytes, indexed but not held: appends need only the index;
    /// readers need the bytes ([`SessionState::hold`]).
    pub fn without_bytes(mut self, len: usize, ends_with_newline: bool) -> SessionState {
        self.unheld = len;
        self.bytes = Vec::new();
        self.missing_newline = len > 0 && !ends_with_newline;
        if self.missing_newline {
            self.bytes.push(b'\n');
        }
        self
    }

    /// How many of the file's first bytes are not held (0: all are).
    pub fn unheld(&self) -> usize {
        self.unheld
    }

    /// Takes the file's first [`SessionState::unheld`] bytes in, as read at open.
    pub fn hold(&mut self, prefix: Vec<u8>) -> Result<(), StateError> {
        if prefix.len() != self.unheld {
            return Err(StateError::NotHeld);
        }
        let mut bytes = prefix;
        bytes.append(&mut self.bytes);
        self.bytes = bytes;
        self.unheld = 0;
        Ok(())
    }

    /// Holds the session in memory only (`false`), or writes it.
    pub fn set_persisted(&mut self, persist: bool) {
        self.persist = persist;
    }

    /// The file name Pi gives this session when it makes it: `<header time>_<id>.jsonl`.
    pub fn file_name(&self) -> String {
        let timestamp = self.header.get("timestamp").and_then(Value::as_str).map(|t| t.to_str_lossy().into_owned());
        file_name(timestamp.as_deref().unwrap_or(""), &self.session_id)
    }

    /// Whether appends reach a file (`false` for `inMemory`).
    pub fn is_persisted(&self) -> bool {
        self.persist
    }

    /// Whether the file exists: a new session is written once it holds a conversation.
    pub fn is_flushed(&self) -> bool {
        self.flushed
    }

    /// Marks the file as written (an empty file given a header, a migrated file rewritten).
    pub fn set_flushed(&mut self) {
        self.flushed = true;
        self.missing_newline = false;
    }

    /// `getSessionId()`.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// `getCwd()`.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// `getHeader()`.
    pub fn header(&self) -> &Value<'static> {
        &self.header
    }

    /// `getLeafId()`: `None` is `null`; `Some(PropertyValue::Absent)` is a last entry without id.
    pub fn leaf_id(&self) -> Option<&PropertyValue<'static>> {
        self.leaf.as_ref()
    }

    /// `getEntryCount()`: distinct ids.
    pub fn entry_count(&self) -> usize {
        self.by_id.len()
    }

    /// Whether an entry has this id.
    pub fn has(&self, id: &str) -> bool {
        self.by_id.contains_key(&PropertyValue::Str(JsStr::owned(id.to_owned())))
    }

    /// The records as Pi would write them, header first: what the file holds once flushed.
    pub fn bytes(&self) -> Result<&[u8], StateError> {
        if self.unheld > 0 {
            return Err(StateError::NotHeld);
        }
        Ok(&self.bytes)
    }

    /// The records read as a session (a full load of [`SessionState::bytes`]).
    pub fn session(&self) -> Result<Session<'_>, StateError> {
        // The bytes always start with a header this state wrote or read.
        Ok(Session::load(self.bytes()?).unwrap_or_else(|_| unreachable_session()))
    }

    /// The leaf as the context rebuild takes it.
    pub fn leaf_choice(&self) -> LeafChoice<'static> {
        LeafChoice::At(self.leaf.clone())
    }

    /// `getBranch()` from the leaf: the ids from the root down, stopping where `parentId` loops.
    fn branch_ids(&self) -> Vec<&PropertyValue<'static>> {
        let mut path = Vec::new();
        let mut current = self.leaf.as_ref().filter(|l| l.is_truthy()).and_then(|l| self.by_id.get(l).copied());
        while let Some(i) = current {
            if path.len() > self.entries.len() {
                break;
            }
            let e = &self.entries[i];
            path.push(&e.id);
            current = if e.parent.is_truthy() { self.by_id.get(&e.parent).copied() } else { None };
        }
        path.reverse();
        path
    }

    fn new_id(&self, sources: &mut dyn Sources) -> String {
        let mut short = || sources.random_uuid().chars().take(8).collect::<String>();
        let taken = |id: &str| self.by_id.contains_key(&PropertyValue::Str(JsStr::owned(id.to_owned())));
        // `generateId`: a hundred short candidates, then a whole UUID.
        for _ in 0..100 {
            let id = short();
            if !taken(&id) {
                return id;
            }
        }
        sources.random_uuid()
    }

    /// Builds the entry and what writing it takes; `parent` is the entry's `parentId`.
    fn prepare(
        &self,
        body: &EntryBody<'_>,
        id: String,
        timestamp: &str,
        parent: Option<PropertyValue<'static>>,
        leaf_on_failure: Option<PropertyValue<'static>>,
    ) -> Pending {
        let parent_value = parent.as_ref().and_then(PropertyValue::to_value);
        let parent_field = match (&parent, &parent_value) {
            (None | Some(PropertyValue::Null), _) => Parent::Null,
            (Some(PropertyValue::Absent), _) => Parent::Absent,
            (Some(_), Some(v)) => Parent::Json(v),
            (Some(_), None) => Parent::Null,
        };
        let mut line = Vec::new();
        entry_line_under(body, &id, parent_field, timestamp, &mut line);
        let (kind, role) = match body {
            EntryBody::Message(m) => (EntryKind::Message, role_of(m)),
            EntryBody::ThinkingLevelChange(_) => (EntryKind::ThinkingLevelChange, None),
            EntryBody::ModelChange { .. } => (EntryKind::ModelChange, None),
            EntryBody::Usage { .. } => (EntryKind::Usage, None),
            EntryBody::Compaction { .. } => (EntryKind::Compaction, None),
            EntryBody::BranchSummary { .. } => (EntryKind::BranchSummary, None),
            EntryBody::Custom { .. } => (EntryKind::Custom, None),
            EntryBody::CustomMessage { .. } => (EntryKind::CustomMessage, None),
            EntryBody::ContextEdit { .. } => (EntryKind::ContextEdit, None),
            EntryBody::Label { .. } => (EntryKind::Label, None),
            EntryBody::SessionInfo(_) => (EntryKind::SessionInfo, None),
        };
        let conversation = self.conversation || matches!(role, Some(Role::User | Role::Assistant));
        let write = if !self.persist {
            Write::Nothing
        } else if self.flushed {
            let mut out = Vec::with_capacity(line.len() + 1);
            if self.missing_newline {
                out.push(b'\n');
            }
            out.extend_from_slice(&line);
            Write::Append(out)
        } else if conversation {
            let mut out = Vec::with_capacity(self.bytes.len() + line.len());
            out.extend_from_slice(&self.bytes);
            out.extend_from_slice(&line);
            Write::Create(out)
        } else {
            Write::Nothing
        };
        let entry = Indexed {
            id: PropertyValue::Str(JsStr::owned(id.clone())),
            parent: parent.unwrap_or(PropertyValue::Null),
            kind,
            role,
        };
        Pending { id, write, line, entry, leaf_on_failure }
    }

    /// Takes a prepared append in once its bytes are written.
    pub fn commit(&mut self, pending: Pending) {
        if matches!(pending.write, Write::Create(_)) {
            self.flushed = true;
        }
        if matches!(pending.write, Write::Append(_)) {
            self.missing_newline = false;
        }
        self.bytes.extend_from_slice(&pending.line);
        self.conversation |= matches!(pending.entry.role, Some(Role::User | Role::Assistant));
        self.leaf = Some(pending.entry.id.clone());
        self.by_id.insert(pending.entry.id.clone(), self.entries.len());
        self.entries.push(pending.entry);
    }

    /// Drops a prepared append whose write failed: the state is as before it (but for
    /// `branchWithSummary`'s leaf, which Pi leaves on the entry it branched from).
    pub fn abandon(&mut self, pending: Pending) {
        if let Some(leaf) = pending.leaf_on_failure {
            self.leaf = (leaf != PropertyValue::Null).then_some(leaf);
        }
    }

    /// `appendMessage(message)`.
    pub fn message(&self, message: &Value<'_>, sources: &mut dyn Sources) -> Pending {
        let id = self.new_id(sources);
        let timestamp = iso_time(sources.now_ms());
        self.prepare(&EntryBody::Message(message), id, &timestamp, self.leaf.clone(), None)
    }

    /// `appendThinkingLevelChange(level)`.
    pub fn thinking_level_change(&self, level: &str, sources: &mut dyn Sources) -> Pending {
        let id = self.new_id(sources);
        let timestamp = iso_time(sources.now_ms());
        self.prepare(&EntryBody::ThinkingLevelChange(level), id, &timestamp, self.leaf.clone(), None)
    }

    /// `appendModelChange(provider, modelId)`.
    pub fn model_change(&self, provider: &str, model_id: &str, sources: &mut dyn Sources) -> Pending {
        let id = self.new_id(sources);
        let timestamp = iso_time(sources.now_ms());
        self.prepare(&EntryBody::ModelChange { provider, model_id }, id, &timestamp, self.leaf.clone(), None)
    }

    /// `appendUsage(kind, provider, model, usage, note)`; an empty note is left out.
    pub fn usage(
        &self,
        kind: &str,
        provider: &str,
        model: &str,
        usage: &Value<'_>,
        note: Option<&str>,
        sources: &mut dyn Sources,
    ) -> Pending {
        let id = self.new_id(sources);
        let timestamp = iso_time(sources.now_ms());
        let body = EntryBody::Usage { kind, provider, model, usage, note };
        self.prepare(&body, id, &timestamp, self.leaf.clone(), None)
    }

    /// `appendCompaction(...)`, with the replayed system prompt of the current context as its
    /// `systemMessage` when there is one.
    pub fn compaction(&self, c: &Compaction<'_>, sources: &mut dyn Sources) -> Result<Pending, StateError> {
        let ms = sources.now_ms();
        let timestamp = iso_time(ms);
        let system = {
            let session = self.session()?;
            let arena = Bump::new();
            let ctx = crate::context::build_context(&session, &self.leaf_choice(), crate::context::Dialect::Pi, &arena);
            current_system_message(&ctx.messages, &arena)?.map(|mut m| {
                m.insert("timestamp", Value::Number(ms as f64));
                Value::Object(m).into_owned()
            })
        };
        let id = self.new_id(sources);
        let body = EntryBody::Compaction {
            summary: c.summary,
            first_kept_entry_id: Some(c.first_kept_entry_id.unwrap_or(&id)),
            tokens_before: c.tokens_before,
            details: c.details,
            usage: c.usage,
            from_hook: c.from_hook,
            system_message: system.as_ref(),
        };
        Ok(self.prepare(&body, id.clone(), &timestamp, self.leaf.clone(), None))
    }

    /// `appendCustomEntry(customType, data)`.
    pub fn custom(&self, custom_type: &str, data: Option<&Value<'_>>, sources: &mut dyn Sources) -> Pending {
        let id = self.new_id(sources);
        let timestamp = iso_time(sources.now_ms());
        self.prepare(&EntryBody::Custom { custom_type, data }, id, &timestamp, self.leaf.clone(), None)
    }

    /// `appendSessionInfo(name)`: line breaks folded, trimmed.
    pub fn session_info(&self, name: &str, sources: &mut dyn Sources) -> Pending {
        let name = normalise_name(name);
        let id = self.new_id(sources);
        let timestamp = iso_time(sources.now_ms());
        self.prepare(&EntryBody::SessionInfo(&name), id, &timestamp, self.leaf.clone(), None)
    }

    /// `appendCustomMessageEntry(customType, content, display, details)`.
    pub fn custom_message(
        &self,
        custom_type: &str,
        content: &Value<'_>,
        display: bool,
        details: Option<&Value<'_>>,
        sources: &mut dyn Sources,
    ) -> Pending {
        let id = self.new_id(sources);
        let timestamp = iso_time(sources.now_ms());
        let body = EntryBody::CustomMessage { custom_type, content, display, details };
        self.prepare(&body, id, &timestamp, self.leaf.clone(), None)
    }

    /// `appendContextEdit(targetId, replacement)` with 1.6's checks: the replacement is `null` or
    /// `{content}` with string or array content; the target is on the active branch and is a
    /// user, assistant or tool result message or a custom message; a string replacing an
    /// assistant's or tool result's content becomes one text block.
    pub fn context_edit(
        &self,
        target: &str,
        replacement: &Value<'_>,
        sources: &mut dyn Sources,
    ) -> Result<Pending, StateError> {
        let content = match replacement {
            Value::Null => None,
            Value::Object(o) => match o.get("content") {
                Some(c @ (Value::String(_) | Value::Array(_))) => Some(c),
                _ => return Err(StateError::BadReplacement),
            },
            _ => return Err(StateError::BadReplacement),
        };
        let key = PropertyValue::Str(JsStr::owned(target.to_owned()));
        let Some(&at) = self.by_id.get(&key) else { return Err(StateError::NotFound(target.to_owned())) };
        if !self.branch_ids().iter().any(|id| **id == key) {
            return Err(StateError::NotOnBranch(target.to_owned()));
        }
        let e = &self.entries[at];
        let editable = e.kind == EntryKind::CustomMessage
            || (e.kind == EntryKind::Message
                && matches!(e.role, Some(Role::User | Role::Assistant | Role::ToolResult)));
        if !editable {
            return Err(StateError::NotEditable(target.to_owned()));
        }
        let normalised;
        let replacement = match content {
            Some(Value::String(text)) if matches!(e.role, Some(Role::Assistant | Role::ToolResult)) => {
                let mut block = Object::new();
                block.insert("type", Value::str("text"));
                block.insert("text", Value::String(text.clone()));
                let mut o = Object::new();
                o.insert("content", Value::Array(vec![Value::Object(block)]));
                normalised = Value::Object(o);
                &normalised
            }
            _ => replacement,
        };
        let id = self.new_id(sources);
        let timestamp = iso_time(sources.now_ms());
        let body = EntryBody::ContextEdit { target_id: target, replacement };
        Ok(self.prepare(&body, id, &timestamp, self.leaf.clone(), None))
    }

    /// `appendLabelChange(targetId, label)`: `None` clears the label (no `label` key).
    pub fn label(&self, target: &str, label: Option<&str>, sources: &mut dyn Sources) -> Result<Pending, StateError> {
        if !self.has(target) {
            return Err(StateError::NotFound(target.to_owned()));
        }
        let id = self.new_id(sources);
        let timestamp = iso_time(sources.now_ms());
        Ok(self.prepare(&EntryBody::Label { target_id: target, label }, id, &timestamp, self.leaf.clone(), None))
    }

    /// `branch(id)`: the next entry is a child of `id`.
    pub fn branch(&mut self, id: &str) -> Result<(), StateError> {
        if !self.has(id) {
            return Err(StateError::NotFound(id.to_owned()));
        }
        self.leaf = Some(PropertyValue::Str(JsStr::owned(id.to_owned())));
        Ok(())
    }

    /// `resetLeaf()`: the next entry is a new root.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
    }

    /// `branchWithSummary(fromId, ...)`: the leaf moves to `from` (`None`: before the first
    /// entry) and a `branch_summary` naming the old leaf (`"root"` for none) is its child.
    pub fn branch_with_summary(
        &mut self,
        from: Option<&str>,
        s: &BranchSummary<'_>,
        sources: &mut dyn Sources,
    ) -> Result<Pending, StateError> {
        if let Some(f) = from
            && !self.has(f)
        {
            return Err(StateError::NotFound(f.to_owned()));
        }
        let from_id = match self.leaf.as_ref().and_then(PropertyValue::to_value) {
            Some(v) if !matches!(v, Value::Null) => v.into_owned(),
            _ => str_value("root"),
        };
        let from = from.map(|f| PropertyValue::Str(JsStr::owned(f.to_owned())));
        self.leaf = from.clone();
        let id = self.new_id(sources);
        let timestamp = iso_time(sources.now_ms());
        let body = EntryBody::BranchSummary {
            from_id: &from_id,
            summary: s.summary,
            details: s.details,
            usage: s.usage,
            from_hook: s.from_hook,
        };
        Ok(self.prepare(&body, id, &timestamp, from.clone(), Some(from.unwrap_or(PropertyValue::Null))))
    }

    /// `createBranchedSession(leafId)`: the branch ending at `leaf` (default: the leaf) as a new
    /// session, its labels written again (see [`crate::branched`]). The state becomes the new
    /// session only through [`SessionState::take_branched`], once its file is written.
    pub fn branched(
        &self,
        leaf: Option<&str>,
        parent_session: Option<&str>,
        sources: &mut dyn Sources,
    ) -> Result<crate::branched::Branched, StateError> {
        let start = match leaf {
            Some(l) => PropertyValue::Str(JsStr::owned(l.to_owned())),
            None => self.leaf.clone().unwrap_or(PropertyValue::Null),
        };
        let session = self.session()?;
        if session.branch(Some(&start)).path.is_empty() {
            return Err(StateError::NotFound(leaf.unwrap_or("undefined").to_owned()));
        }
        let session_id = sources.session_id();
        let timestamp = iso_time(sources.now_ms());
        let workflow = Workflow::of_header(&self.header);
        let from = crate::branched::BranchedFrom {
            leaf: Some(&start),
            session_id: &session_id,
            timestamp: &timestamp,
            cwd: &self.cwd,
            parent_session: if self.persist { parent_session } else { None },
            workflow: workflow.as_ref(),
        };
        let cell = std::cell::RefCell::new(sources);
        let mut short = || cell.borrow_mut().random_uuid().chars().take(8).collect::<String>();
        let mut long = || cell.borrow_mut().random_uuid();
        let made = crate::branched::branched_session(&session, from, &mut short, &mut long).map_err(|e| match e {
            crate::branched::BranchError::Unreadable(line) => StateError::Unreadable(line),
            e => StateError::Malformed(e.to_string()),
        })?;
        Ok(made)
    }

    /// Becomes the session [`SessionState::branched`] made (after its file, if any, is written).
    pub fn take_branched(&mut self, made: crate::branched::Branched) {
        let persist = self.persist;
        let flushed = self.flushed;
        let cwd = std::mem::take(&mut self.cwd);
        let session = Session::load(&made.bytes).unwrap_or_else(|_| unreachable_session());
        let has_conversation = made.has_conversation;
        let state = SessionState::loaded(&session, &cwd);
        drop(session);
        *self = state.with_bytes(made.bytes);
        self.persist = persist;
        // In memory Pi leaves `flushed` as it was; on disk the file exists once it has a conversation.
        self.flushed = if persist { has_conversation } else { flushed };
    }

    /// Atomic's `markSessionInternal(workflow)`: stamps the header with the marker unless it has a
    /// valid one already (`Ok(None)`). Returns the new bytes of the file when it is written
    /// (`Write::Replace`); the other lines are kept byte for byte.
    pub fn mark_internal(&mut self, workflow: &Workflow) -> Result<Option<Write>, StateError> {
        if !workflow.is_valid() {
            return Err(StateError::BadWorkflow);
        }
        if self.unheld > 0 {
            return Err(StateError::NotHeld);
        }
        if Workflow::of_header(&self.header).is_some() {
            return Ok(None);
        }
        if let Value::Object(h) = &mut self.header {
            h.insert("internal", Value::Bool(true));
            h.insert("workflow", workflow.to_value());
        }
        let mut line = Vec::new();
        write_json(&self.header, &mut line);
        let span = self.header_span.clone();
        self.bytes.splice(span.clone(), line.iter().copied());
        self.header_span = span.start..span.start + line.len();
        Ok(Some(if self.persist && self.flushed { Write::Replace(self.bytes.clone()) } else { Write::Nothing }))
    }
}

/// The state's bytes always hold a header it wrote or read; a session that cannot be read from
/// them would be a bug in this module.
fn unreachable_session() -> ! {
    panic!("a session state holds bytes that do not load as a session")
}

/// The file Pi 1.6 writes when it opens a version 1 or 2 session (`migrateToCurrentVersion`, then
/// every record as `JSON.stringify` prints it): headers say version 3; a version 1 file's entries
/// get fresh ids (one `randomUUID()` each, unchecked, as Pi draws them) chained in file order, and
/// a compaction's `firstKeptEntryIndex` becomes `firstKeptEntryId`; `hookMessage` roles become
/// `custom`. Lines that do not parse are left out, as Pi leaves them out.
pub fn migrated_bytes(session: &Session<'_>, sources: &mut dyn Sources) -> Result<Vec<u8>, StateError> {
    let Some(from) = session.migrated_from else {
        return Err(StateError::Malformed("not a version 1 or 2 session".into()));
    };
    let arena = Bump::new();
    let mut values = Vec::with_capacity(session.records.len());
    for e in &session.records {
        if !(e.is_object || e.is_array) {
            // `entry.id = …` on a number, string or boolean throws in Pi.
            return Err(StateError::Malformed(format!(
                "line {}: a {} where an entry should be; Pi cannot migrate this file",
                e.line_number,
                if from == 1 { "value" } else { "non-object" }
            )));
        }
        values.push(e.value(&arena).map_err(|_| StateError::Unreadable(e.line_number))?);
    }
    let is_session = |v: &Value<'_>| v.get("type").and_then(Value::as_str).is_some_and(|t| t.as_bytes() == b"session");
    let mut new_ids: Vec<Option<String>> = vec![None; values.len()];
    if from == 1 {
        let mut prev = Value::Null;
        for i in 0..values.len() {
            if is_session(&values[i]) {
                continue;
            }
            let id = sources.random_uuid().chars().take(8).collect::<String>();
            new_ids[i] = Some(id.clone());
            let kept_index = values[i]
                .get("type")
                .and_then(Value::as_str)
                .filter(|t| t.as_bytes() == b"compaction")
                .and(values[i].get("firstKeptEntryIndex"))
                .and_then(Value::as_f64);
            // The target's id as it is at this point: new when it came before, else as read.
            let kept = kept_index.map(|k| {
                let target = (k.fract() == 0.0 && k >= 0.0 && (k as usize) < values.len()).then_some(k as usize);
                target.filter(|&t| !is_session(&values[t])).map(|t| match &new_ids[t] {
                    Some(id) => Some(str_value(id)),
                    None => values[t].get("id").cloned().map(Value::into_owned),
                })
            });
            if let Value::Object(o) = &mut values[i] {
                o.insert("id", str_value(&id));
                o.insert("parentId", prev.clone());
                if let Some(target) = kept {
                    match target {
                        Some(Some(v)) => o.insert("firstKeptEntryId", v),
                        // `undefined`: JSON.stringify leaves the key out.
                        Some(None) => {
                            o.remove("firstKeptEntryId");
                        }
                        None => {}
                    }
                    o.remove("firstKeptEntryIndex");
                }
            }
            prev = str_value(&id);
        }
    }
    let mut out = Vec::new();
    for v in &mut values {
        if is_session(v) {
            if let Value::Object(o) = v {
                o.insert("version", Value::Number(3.0));
            }
        } else if v.get("type").and_then(Value::as_str).is_some_and(|t| t.as_bytes() == b"message")
            && let Value::Object(o) = v
            && let Some(Value::Object(m)) = o.get("message").cloned().as_ref()
            && m.get("role").and_then(Value::as_str).is_some_and(|r| r.as_bytes() == b"hookMessage")
        {
            let mut m = m.clone();
            m.insert("role", Value::str("custom"));
            o.insert("message", Value::Object(m));
        }
        write_json(v, &mut out);
        out.push(b'\n');
    }
    Ok(out)
}

/// `getCurrentSystemMessage(messages)` (pi-ai): the system messages replayed into one, without
/// its `timestamp` (the compaction sets its own). `None` when there is no system message with a
/// timestamp and no tool.
fn current_system_message<'b>(
    messages: &[Message<'b>],
    arena: &'b Bump,
) -> Result<Option<Object<'static>>, StateError> {
    let mut content: Vec<String> = Vec::new();
    let mut sections: Vec<(JsStr<'static>, Value<'static>)> = Vec::new();
    let mut tools: Vec<(PropertyValue<'static>, Value<'static>)> = Vec::new();
    let mut timestamp_set = false;
    for m in messages {
        let v = m.to_value(arena);
        if v.get("role").and_then(Value::as_str).is_none_or(|r| r.as_bytes() != b"system") {
            continue;
        }
        // `timestamp ??= message.timestamp`.
        timestamp_set |= v.get("timestamp").is_some_and(|t| !matches!(t, Value::Null));
        let text = content_text(v.get("content"))?;
        if !text.is_empty() {
            content.push(text);
        }
        for (name, value) in object_entries(v.get("sections")) {
            let at = sections.iter().position(|(k, _)| *k == name);
            match (value, at) {
                (Value::Null, Some(k)) => {
                    sections.remove(k);
                }
                (Value::Null, None) => {}
                (value, Some(k)) => sections[k].1 = value,
                (value, None) => sections.push((name, value)),
            }
        }
        for tool in iterate(v.get("toolsRemoved"), "toolsRemoved")? {
            let name = tool_name(&tool)?;
            tools.retain(|(k, _)| *k != name);
        }
        for tool in iterate(v.get("toolsAdded"), "toolsAdded")? {
            let name = tool_name(&tool)?;
            match tools.iter_mut().find(|(k, _)| *k == name) {
                Some(slot) => slot.1 = tool,
                None => tools.push((name, tool)),
            }
        }
    }
    if !timestamp_set && tools.is_empty() {
        return Ok(None);
    }
    let mut out = Object::new();
    out.insert("role", Value::str("system"));
    out.insert("content", Value::String(JsStr::owned(content.join("\n\n"))));
    if !sections.is_empty() {
        let mut o = Object::new();
        for (k, v) in sections {
            o.insert(k, v);
        }
        out.insert("sections", Value::Object(o));
    }
    if !tools.is_empty() {
        out.insert("toolsAdded", Value::Array(tools.into_iter().map(|(_, t)| t).collect()));
    }
    out.insert("timestamp", Value::Number(0.0));
    Ok(Some(out))
}

/// `contentText(content)`: a string as it is, else the text blocks' texts joined by `\n`.
fn content_text(content: Option<&Value<'_>>) -> Result<String, StateError> {
    match content {
        Some(Value::String(s)) => Ok(s.to_str_lossy().into_owned()),
        Some(Value::Array(blocks)) => {
            let mut texts = Vec::new();
            for b in blocks {
                match b {
                    Value::Null => return Err(StateError::Malformed("a system message holds a null block".into())),
                    b if b.get("type").and_then(Value::as_str).is_some_and(|t| t.as_bytes() == b"text") => {
                        texts.push(js_string(b.get("text")));
                    }
                    _ => {}
                }
            }
            Ok(texts.join("\n"))
        }
        _ => Err(StateError::Malformed("a system message's content is neither a string nor an array".into())),
    }
}

/// `String(value)` as `Array.prototype.join` prints an element (`null` and `undefined` empty).
fn js_string(v: Option<&Value<'_>>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.to_str_lossy().into_owned(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => {
            let mut out = Vec::new();
            crate::json::write_number(*n, &mut out);
            String::from_utf8_lossy(&out).into_owned()
        }
        Some(Value::Array(items)) => items.iter().map(|i| js_string(Some(i))).collect::<Vec<_>>().join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
    }
}

/// `Object.entries(value ?? {})`.
fn object_entries(v: Option<&Value<'_>>) -> Vec<(JsStr<'static>, Value<'static>)> {
    match v {
        Some(Value::Object(o)) => o.iter().map(|(k, v)| (k.clone().into_owned(), v.clone().into_owned())).collect(),
        Some(Value::Array(items)) => {
            items.iter().enumerate().map(|(i, v)| (JsStr::owned(i.to_string()), v.clone().into_owned())).collect()
        }
        Some(Value::String(s)) => s
            .to_str_lossy()
            .chars()
            .enumerate()
            .map(|(i, c)| (JsStr::owned(i.to_string()), Value::String(JsStr::owned(c.to_string()))))
            .collect(),
        _ => Vec::new(),
    }
}

/// `for (const x of value ?? [])`: arrays, and strings by character; anything else throws.
fn iterate(v: Option<&Value<'_>>, what: &str) -> Result<Vec<Value<'static>>, StateError> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items.iter().map(|i| i.clone().into_owned()).collect()),
        Some(Value::String(s)) => {
            Ok(s.to_str_lossy().chars().map(|c| Value::String(JsStr::owned(c.to_string()))).collect())
        }
        Some(_) => Err(StateError::Malformed(format!("a system message's {what} is not a list"))),
    }
}

/// A tool's `name` as a `Map` key; a `null` tool throws in Pi.
fn tool_name(tool: &Value<'_>) -> Result<PropertyValue<'static>, StateError> {
    match tool {
        Value::Null => Err(StateError::Malformed("a system message lists a null tool".into())),
        Value::Object(o) => Ok(PropertyValue::from_value(o.get("name"))),
        _ => Ok(PropertyValue::Absent),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fixed time and counted ids.
    struct Counted(u32);

    impl Sources for Counted {
        fn now_ms(&mut self) -> i64 {
            1_770_000_000_000
        }
        fn random_uuid(&mut self) -> String {
            self.0 += 1;
            format!("{:08x}-0000-4000-8000-000000000000", self.0)
        }
        fn session_id(&mut self) -> String {
            "019c0000-0000-7000-8000-000000000001".into()
        }
    }

    fn user(text: &str) -> Value<'static> {
        let mut o = Object::new();
        o.insert("role", Value::str("user"));
        o.insert("content", Value::String(JsStr::owned(text.to_owned())));
        Value::Object(o)
    }

    #[test]
    fn a_new_session_is_written_with_its_first_message() {
        let mut src = Counted(0);
        let mut s = SessionState::new("/w", true, &NewSession::default(), &mut src).unwrap();
        let p = s.model_change("p", "m", &mut src);
        assert_eq!(p.write, Write::Nothing);
        s.commit(p);
        let p = s.message(&user("hi"), &mut src);
        let Write::Create(bytes) = &p.write else { panic!("{:?}", p.write) };
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert_eq!(text.lines().count(), 3);
        assert!(text.lines().nth(2).unwrap().contains("\"parentId\":\"00000001\""));
        s.commit(p);
        let p = s.label("00000002", Some("x"), &mut src).unwrap();
        assert!(matches!(p.write, Write::Append(_)));
        s.abandon(p);
        assert_eq!(s.leaf_id(), Some(&PropertyValue::Str(JsStr::owned("00000002"))));
        assert_eq!(s.entry_count(), 2);
    }

    #[test]
    fn context_edits_are_checked_as_pi_checks_them() {
        let mut src = Counted(0);
        let mut s = SessionState::new("/w", false, &NewSession::default(), &mut src).unwrap();
        let p = s.message(&user("a"), &mut src);
        s.commit(p);
        let p = s.custom("x", None, &mut src);
        s.commit(p);
        let bad = Value::str("no");
        assert_eq!(s.context_edit("00000001", &bad, &mut src).unwrap_err(), StateError::BadReplacement);
        assert_eq!(
            s.context_edit("00000002", &Value::Null, &mut src).unwrap_err(),
            StateError::NotEditable("00000002".into())
        );
        assert_eq!(s.context_edit("zz", &Value::Null, &mut src).unwrap_err(), StateError::NotFound("zz".into()));
        s.reset_leaf();
        assert_eq!(
            s.context_edit("00000001", &Value::Null, &mut src).unwrap_err(),
            StateError::NotOnBranch("00000001".into())
        );
        s.branch("00000002").unwrap();
        assert!(s.context_edit("00000001", &Value::Null, &mut src).is_ok());
    }

    #[test]
    fn session_ids_are_checked_as_pi_checks_them() {
        for ok in ["a", "a.b-c_d", "A1"] {
            assert!(is_valid_session_id(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "a b", "é"] {
            assert!(!is_valid_session_id(bad), "{bad}");
        }
    }
}
