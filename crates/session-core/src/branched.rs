//! The session Pi 1.6's `createBranchedSession` makes from one branch of a session (Pi's `/fork`):
//! a new header naming the old file as its parent, the branch's entries from the root to the leaf
//! written again without its label entries (the entries after a label re-chained, a compaction's
//! `firstKeptEntryId` that named a label pointed at the entry that took its place), then one label
//! entry for each label still set on an entry of the branch. No I/O: the caller writes the bytes.

use crate::Session;
use crate::json::scan::SpanKind;
use crate::json::{JsStr, Object, Value, write_json};
use crate::property::PropertyValue;
use crate::record::{Header, header_line};
use crate::session::Entry;
use ahash::AHashSet;

/// What the new session is made with.
#[derive(Debug, Clone, Copy)]
pub struct BranchedFrom<'i> {
    /// The leaf of the branch (`None`: the session's leaf).
    pub leaf: Option<&'i PropertyValue<'i>>,
    /// The new session's id (a UUIDv7, as Pi's `createSessionId` makes).
    pub session_id: &'i str,
    /// The time of the new header, as `toISOString` writes it.
    pub timestamp: &'i str,
    /// The working folder of the new header (the old session's `cwd`).
    pub cwd: &'i str,
    /// The old session's file, resolved: the new header's `parentSession` (none for a session
    /// held in memory only).
    pub parent_session: Option<&'i str>,
    /// Atomic: the old session's internal marker, which the new one inherits.
    pub workflow: Option<&'i crate::record::Workflow>,
}

/// The new session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branched {
    /// Its lines: the header, the branch, the labels.
    pub bytes: Vec<u8>,
    /// Its file name: `<time with - for : and .>_<id>.jsonl`, in the old session's folder.
    pub file_name: String,
    /// The branch holds a user or assistant message: Pi writes the file at once (otherwise only
    /// when the first message is added).
    pub has_conversation: bool,
}

/// Why no session can be branched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchError {
    /// No entry has the leaf's id (or the session has no entries).
    NoSuchEntry(String),
    /// An entry of the branch could not be read again as JSON.
    Unreadable(u64),
}

impl std::fmt::Display for BranchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BranchError::NoSuchEntry(id) => write!(f, "no entry has the id {id}: there is no branch to copy"),
            BranchError::Unreadable(line) => write!(f, "line {line} cannot be read again"),
        }
    }
}

impl std::error::Error for BranchError {}

/// A part of a new session's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Bytes made here.
    Bytes(Vec<u8>),
    /// A record of the old session copied as it is (its line, then a line break): its line is
    /// what printing it again would give.
    Record(usize),
}

/// The new session in pieces, for a writer that copies the old file's lines without reading
/// them through memory.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BranchedPieces {
    /// The header, the branch, the labels.
    pub pieces: Vec<Piece>,
    /// Its file name, in the old session's folder.
    pub file_name: String,
    /// The branch holds a user or assistant message.
    pub has_conversation: bool,
}

/// `createBranchedSession(leaf)` of `session`, with `short_id` and `long_id` as the new label
/// entries' ids (`generateId`'s candidates and fallback).
pub fn branched_session(
    session: &Session<'_>,
    from: BranchedFrom<'_>,
    short_id: &mut dyn FnMut() -> String,
    long_id: &mut dyn FnMut() -> String,
) -> Result<Branched, BranchError> {
    let stringified = |i: usize| crate::json::canonical::is_stringified(session.records[i].line);
    let made = branched_pieces(session, from, &stringified, short_id, long_id)?;
    let mut bytes = Vec::new();
    for piece in made.pieces {
        match piece {
            Piece::Bytes(b) => bytes.extend_from_slice(&b),
            Piece::Record(i) => {
                bytes.extend_from_slice(session.records[i].line);
                bytes.push(b'\n');
            }
        }
    }
    Ok(Branched { bytes, file_name: made.file_name, has_conversation: made.has_conversation })
}

/// [`branched_session`] in pieces: a record of the branch that Pi writes unchanged (its
/// `parentId` stays, no label of its compaction is replaced) and whose line `stringified` says
/// is what printing gives (see [`crate::json::canonical`]) is copied, not printed again.
pub fn branched_pieces(
    session: &Session<'_>,
    from: BranchedFrom<'_>,
    stringified: &(dyn Fn(usize) -> bool + Sync),
    short_id: &mut dyn FnMut() -> String,
    long_id: &mut dyn FnMut() -> String,
) -> Result<BranchedPieces, BranchError> {
    let branch = session.branch(from.leaf);
    if branch.path.is_empty() {
        let id = match from.leaf.or(session.leaf_id()) {
            Some(PropertyValue::Str(s)) => s.to_str_lossy().into_owned(),
            Some(PropertyValue::Raw(raw)) => String::from_utf8_lossy(raw).into_owned(),
            _ => "null".into(),
        };
        return Err(BranchError::NoSuchEntry(id));
    }
    let arena = bumpalo::Bump::new();
    let mut pieces = Vec::new();
    let mut out = Vec::new();
    header_line(
        &Header {
            id: from.session_id,
            timestamp: from.timestamp,
            cwd: from.cwd,
            parent_session: from.parent_session,
            workflow: from.workflow,
        },
        &mut out,
    );
    // The branch without its labels; a label's id is replaced by the entry after it.
    let mut replacement: Vec<(PropertyValue<'_>, PropertyValue<'_>)> = Vec::new();
    let mut pending: Vec<PropertyValue<'_>> = Vec::new();
    let mut kept_ids: AHashSet<PropertyValue<'_>> = AHashSet::new();
    let mut parent: Option<PropertyValue<'_>> = None;
    let mut has_conversation = false;
    for &i in &branch.path {
        let e = &session.records[i];
        if e.is_type("label") {
            pending.push(e.id.clone());
            continue;
        }
        for label in pending.drain(..) {
            match replacement.iter_mut().find(|(k, _)| *k == label) {
                Some(slot) => slot.1 = e.id.clone(),
                None => replacement.push((label, e.id.clone())),
            }
        }
        let role = e.role();
        has_conversation |= e.is_type("message") && (role.is("user") || role.is("assistant"));
        let same_parent = e.is_object && e.parent_id == parent.clone().unwrap_or(PropertyValue::Null);
        // A compaction keeps its line unless its `firstKeptEntryId` names a replaced label.
        let kept_as_is =
            replacement.is_empty() || !e.is_type("compaction") || names_replaced_label(e, &replacement) == Some(false);
        if same_parent && kept_as_is && stringified(i) {
            if !out.is_empty() {
                pieces.push(Piece::Bytes(std::mem::take(&mut out)));
            }
            pieces.push(Piece::Record(i));
            kept_ids.insert(e.id.clone());
            parent = Some(e.id.clone());
            continue;
        }
        let value = e.value(&arena).map_err(|_| BranchError::Unreadable(e.line_number))?;
        let Value::Object(source) = value else { return Err(BranchError::Unreadable(e.line_number)) };
        let mut entry: Object<'_> = source;
        entry.insert("parentId", parent.as_ref().and_then(|p| p.to_value()).unwrap_or(Value::Null));
        if e.is_type("compaction") && entry.contains_key("firstKeptEntryId") {
            let kept = PropertyValue::from_value(entry.get("firstKeptEntryId"));
            if kept != e.id
                && let Some((_, to)) = replacement.iter().find(|(k, _)| *k == kept)
                && let Some(v) = to.to_value()
            {
                entry.insert("firstKeptEntryId", v);
            }
        }
        write_json(&Value::Object(entry), &mut out);
        out.push(b'\n');
        kept_ids.insert(e.id.clone());
        parent = Some(e.id.clone());
    }
    // The labels set on the branch's entries, in the order Pi's label map holds them.
    let mut labels: Vec<(PropertyValue<'_>, PropertyValue<'_>, PropertyValue<'_>)> = Vec::new();
    for (_, e) in session.entries() {
        if let crate::session::Detail::Label { target, label } = &e.detail {
            let at = labels.iter().position(|(t, _, _)| t == &**target);
            match (label.is_truthy(), at) {
                (true, Some(k)) => labels[k] = ((**target).clone(), (**label).clone(), e.timestamp.clone()),
                (true, None) => labels.push(((**target).clone(), (**label).clone(), e.timestamp.clone())),
                (false, Some(k)) => {
                    labels.remove(k);
                }
                (false, None) => {}
            }
        }
    }
    // `lastEntryId || null`: a falsy id starts the chain at null.
    let mut label_parent = parent.filter(PropertyValue::is_truthy);
    let wanted: Vec<_> = labels.iter().filter(|(t, _, _)| kept_ids.contains(t)).collect();
    let mut taken = kept_ids;
    for (target, label, timestamp) in wanted {
        let id = crate::append::generate_id(&|id| taken.contains(&PropertyValue::Str(id.into())), short_id, long_id);
        let mut entry = Object::new();
        entry.insert("type", Value::str("label"));
        entry.insert("id", Value::String(JsStr::owned(id.clone())));
        entry.insert("parentId", label_parent.as_ref().and_then(|p| p.to_value()).unwrap_or(Value::Null));
        if let Some(t) = timestamp.to_value() {
            entry.insert("timestamp", t);
        }
        if let Some(t) = target.to_value() {
            entry.insert("targetId", t);
        }
        if let Some(l) = label.to_value() {
            entry.insert("label", l);
        }
        write_json(&Value::Object(entry), &mut out);
        out.push(b'\n');
        let id = PropertyValue::Str(JsStr::owned(id));
        taken.insert(id.clone());
        label_parent = Some(id);
    }
    if !out.is_empty() {
        pieces.push(Piece::Bytes(out));
    }
    let file_name = crate::state::file_name(from.timestamp, from.session_id);
    Ok(BranchedPieces { pieces, file_name, has_conversation })
}

/// Whether the compaction `e`'s `firstKeptEntryId` names one of the `replaced` labels, read from
/// the line's scan (no parse); `None` when the scan cannot tell as the parse would (escaped keys,
/// a value that is not a string, an id set by migration).
fn names_replaced_label(e: &Entry<'_>, replaced: &[(PropertyValue<'_>, PropertyValue<'_>)]) -> Option<bool> {
    if e.migrated_first_kept.is_some() {
        return None;
    }
    let scanned = crate::json::scan_line(e.line).ok()?;
    if scanned.escaped_keys {
        return None;
    }
    match scanned.field(e.line, "firstKeptEntryId") {
        None => Some(false),
        Some(span) if matches!(span.kind, SpanKind::Str { .. } | SpanKind::Null) => {
            let kept = PropertyValue::from_span(e.line, Some(span));
            Some(kept != e.id && replaced.iter().any(|(label, _)| *label == kept))
        }
        Some(_) => None,
    }
}

/// The session Pi 1.6's `forkFrom` (`pi --fork`) makes: a new header (for another cwd, naming the
/// old file as its parent), then every record of the old file but its headers, as read (not
/// migrated), each as `JSON.stringify` writes it.
pub fn copied_session(session: &Session<'_>, header: &Header<'_>) -> Result<Vec<u8>, BranchError> {
    let arena = bumpalo::Bump::new();
    let mut out = Vec::new();
    header_line(header, &mut out);
    for e in session.records.iter().skip(1) {
        if e.is_type("session") {
            continue;
        }
        let value = e.value(&arena).map_err(|_| BranchError::Unreadable(e.line_number))?;
        write_json(&value, &mut out);
        out.push(b'\n');
    }
    Ok(out)
}
