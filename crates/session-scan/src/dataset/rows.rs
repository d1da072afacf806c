//! The rows one session file gives each table: read from its bytes with the same readers as
//! `list`, `tree`, `usage` and `tools`, so that the tables add up to those commands' figures.

use session_core::json::Value;
use session_core::property::PropertyValue;
use session_core::usage::Counting;

use super::table::{Cell, Column, Kind, col, required};

/// `sessions`: one row per session file.
pub const SESSIONS: &[Column] = &[
    required("session_id", Kind::Text),
    required("path", Kind::Text),
    col("cwd", Kind::Text),
    col("parent_session", Kind::Text),
    col("created", Kind::Time),
    col("modified", Kind::Time),
    col("name", Kind::Text),
    col("first_message", Kind::Text),
    required("message_count", Kind::Int),
    required("entry_count", Kind::Int),
    required("bytes", Kind::Int),
    col("version", Kind::Int),
    required("internal", Kind::Bool),
    col("leaf_id", Kind::Text),
    required("skipped_lines", Kind::Int),
];

/// `entries`: one row per entry of every branch.
pub const ENTRIES: &[Column] = &[
    required("session_id", Kind::Text),
    col("entry_id", Kind::Text),
    col("parent_id", Kind::Text),
    col("type", Kind::Text),
    col("timestamp", Kind::Time),
    required("line", Kind::Int),
    required("byte_offset", Kind::Int),
    required("byte_length", Kind::Int),
    required("on_active_branch", Kind::Bool),
    col("label", Kind::Text),
];

/// `messages`: one row per message entry.
pub const MESSAGES: &[Column] = &[
    required("session_id", Kind::Text),
    col("entry_id", Kind::Text),
    col("role", Kind::Text),
    col("timestamp", Kind::Time),
    col("provider", Kind::Text),
    col("model", Kind::Text),
    col("stop_reason", Kind::Text),
    required("text_chars", Kind::Int),
    required("tool_calls", Kind::Int),
    required("is_error", Kind::Bool),
    col("text", Kind::Text),
    required("line", Kind::Int),
];

/// `usage`: one row per usage event `usage` counts, copies marked.
pub const USAGE: &[Column] = &[
    required("session_id", Kind::Text),
    col("entry_id", Kind::Text),
    col("timestamp", Kind::Time),
    required("source", Kind::Text),
    col("provider", Kind::Text),
    col("model", Kind::Text),
    required("input_tokens", Kind::Int),
    required("output_tokens", Kind::Int),
    required("cache_read_tokens", Kind::Int),
    required("cache_write_tokens", Kind::Int),
    required("total_tokens", Kind::Int),
    required("cost", Kind::Float),
    required("cost_micros", Kind::Int),
    required("is_copy", Kind::Bool),
    required("model_key", Kind::Text),
    required("line", Kind::Int),
];

/// `tool_calls`: one row per tool call, copies marked.
pub const TOOL_CALLS: &[Column] = &[
    required("session_id", Kind::Text),
    col("entry_id", Kind::Text),
    required("call_id", Kind::Text),
    required("tool", Kind::Text),
    required("arguments_bytes", Kind::Int),
    col("result_entry_id", Kind::Text),
    col("is_error", Kind::Bool),
    col("duration_ms", Kind::Float),
    required("is_copy", Kind::Bool),
    col("timestamp", Kind::Time),
    required("line", Kind::Int),
];

/// A usage row still to be marked as a copy or not (by the store-wide pass).
pub struct UsageRow {
    /// The usage's identity (equal for a fork's copy), as `usage` finds copies by.
    pub identity: u64,
    /// Its cells, `is_copy` left `false`.
    pub cells: Vec<Cell>,
}

/// A tool call row with its call id, for the store-wide copy rule.
pub struct CallRow {
    /// The call's id (`""` is never a copy).
    pub call_id: String,
    /// Its cells, `is_copy` left `false`.
    pub cells: Vec<Cell>,
}

/// Where `is_copy` sits in the usage and tool call rows.
pub const USAGE_IS_COPY: usize = 13;
/// See [`USAGE_IS_COPY`].
pub const CALL_IS_COPY: usize = 8;

/// Everything one file gives.
pub struct FileRows {
    /// Its `sessions` row.
    pub session: Vec<Cell>,
    /// The month of its creation (UTC, `YYYY-MM`), for `--partition month`.
    pub month: Option<String>,
    /// `entries` rows.
    pub entries: Vec<Vec<Cell>>,
    /// `messages` rows.
    pub messages: Vec<Vec<Cell>>,
    /// `usage` rows, in the file's order of events.
    pub usage: Vec<UsageRow>,
    /// `tool_calls` rows.
    pub tool_calls: Vec<CallRow>,
    /// Lines Pi skips, said as every command says them.
    pub notes: Vec<String>,
    /// The header's time (ms), which orders a family's sessions for the copy rule.
    pub created_ms: f64,
}

/// What is asked of the rows.
#[derive(Clone, Copy)]
pub struct RowOptions<'r> {
    /// Put message texts in `messages.text`.
    pub text: bool,
    /// Redact the texts as `export --redact` does.
    pub redactor: Option<&'r crate::redact::Redactor>,
    /// Which usage counts.
    pub counting: Counting,
    /// The zone a time without an offset is read in.
    pub local_zone: &'r jiff::tz::TimeZone,
}

/// A property as a text cell: strings as they are, other JSON values as their JSON text.
fn text_of(p: &PropertyValue<'_>) -> Cell {
    match p {
        PropertyValue::Str(s) => Cell::Text(s.to_str_lossy().into_owned()),
        PropertyValue::Raw(raw) => Cell::Text(String::from_utf8_lossy(raw).into_owned()),
        PropertyValue::Null | PropertyValue::Absent => Cell::Null,
    }
}

fn value_text(v: Option<&Value<'_>>) -> Cell {
    match v {
        Some(Value::String(s)) => Cell::Text(s.to_str_lossy().into_owned()),
        _ => Cell::Null,
    }
}

/// Tokens as whole numbers (they are, in every file Pi writes; a fraction is rounded).
fn tokens(n: f64) -> Cell {
    Cell::Int(if n.is_finite() { n.round() as i64 } else { 0 })
}

/// The rows of one session file, or why it cannot be read (said with its place).
pub fn file_rows(path: &str, bytes: &[u8], mtime_ms: f64, opts: RowOptions<'_>) -> Result<FileRows, String> {
    let place = |e: session_core::LoadError| {
        let (line, offset) = e.place();
        crate::render::error_text(path, line, offset, &e.reason())
    };
    let local = opts.local_zone;
    let session = crate::load_session(bytes, local).map_err(place)?;
    let info = session_core::info::session_info_with(bytes, mtime_ms, session_core::info::Texts::Skip, local).ok();
    let usage = session_core::usage::file_usage_counting(bytes, opts.counting, local).map_err(place)?;
    let calls = session_core::tools::tool_calls(&session);
    let session_id = session.id().to_str_lossy().into_owned();
    let sid = || Cell::Text(session_id.clone());
    let notes: Vec<String> =
        session.diagnostics.iter().map(|d| format!("{path}:{}: byte {}: {}", d.line, d.offset, d.message)).collect();

    // Entries by line, for the rows that name an entry by the line it is on.
    let by_line: ahash::AHashMap<u64, usize> =
        session.records.iter().enumerate().map(|(i, e)| (e.line_number, i)).collect();
    let id_at = |line: u64| by_line.get(&line).map_or(Cell::Null, |&i| text_of(&session.records[i].id));
    let branch = session.branch(None);
    let leaf_id = branch.path.last().map_or(Cell::Null, |&i| text_of(&session.records[i].id));
    let mut active = vec![false; session.records.len()];
    for &i in &branch.path {
        active[i] = true;
    }

    let header = &session.header;
    let created_ms = info.as_ref().map_or(f64::NAN, |i| i.created);
    let month = created_ms
        .is_finite()
        .then(|| jiff::Timestamp::from_millisecond(created_ms as i64).ok())
        .flatten()
        .map(|t| t.strftime("%Y-%m").to_string());
    let header_line = bytes.split(|&b| b == b'\n').find(|l| !session_core::lines::is_blank(l)).unwrap_or(&[]);
    let session_row = vec![
        sid(),
        Cell::Text(path.to_owned()),
        value_text(header.get("cwd")),
        value_text(header.get("parentSession")),
        Cell::Time(created_ms),
        Cell::Time(info.as_ref().map_or(mtime_ms, |i| i.modified)),
        Cell::text_or_null(info.as_ref().and_then(|i| i.name.as_ref()).map(|n| n.to_str_lossy().into_owned())),
        Cell::text_or_null(info.as_ref().map(|i| i.first_message.to_str_lossy().into_owned())),
        Cell::Int(info.as_ref().map_or(0, |i| i.message_count as i64)),
        Cell::Int(session.entries().count() as i64),
        Cell::Int(bytes.len() as i64),
        header
            .get("version")
            .and_then(Value::as_f64)
            .filter(|v| v.fract() == 0.0)
            .map_or(Cell::Null, |v| Cell::Int(v as i64)),
        Cell::Bool(crate::list::internal_workflow_header(header_line) == Some(true)),
        leaf_id,
        Cell::Int(session.diagnostics.len() as i64),
    ];

    let mut entries = Vec::new();
    let mut messages = Vec::new();
    let mut arena = bumpalo::Bump::new();
    for (i, e) in session.entries() {
        let label = session.label(&e.id).map_or(Cell::Null, |(l, _)| text_of(l));
        entries.push(vec![
            sid(),
            text_of(&e.id),
            text_of(&e.parent_id),
            text_of(&e.entry_type),
            Cell::Time(e.timestamp.time_value(local)),
            Cell::Int(e.line_number as i64),
            Cell::Int(e.offset as i64),
            Cell::Int(e.line.len() as i64),
            Cell::Bool(active[i]),
            label,
        ]);
        if !e.is_type("message") {
            continue;
        }
        arena.reset();
        let Ok(v) = e.value(&arena) else { continue };
        let Some(m) = v.get("message") else { continue };
        let content = m.get("content");
        let mut chars = 0usize;
        let mut text = String::new();
        let mut calls = 0i64;
        match content {
            Some(Value::String(s)) => {
                let s = s.to_str_lossy();
                chars += s.chars().count();
                text.push_str(&s);
            }
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    match b.get("type").and_then(Value::as_str).map(|t| t.to_str_lossy()) {
                        Some(t) if t == "text" => {
                            if let Some(s) = b.get("text").and_then(Value::as_str) {
                                let s = s.to_str_lossy();
                                chars += s.chars().count();
                                if !text.is_empty() {
                                    text.push('\n');
                                }
                                text.push_str(&s);
                            }
                        }
                        Some(t) if t == "toolCall" => calls += 1,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        let text = match (opts.text, opts.redactor) {
            (false, _) => Cell::Null,
            (true, Some(r)) => Cell::Text(r.redact(&text).0),
            (true, None) => Cell::Text(text),
        };
        messages.push(vec![
            sid(),
            text_of(&e.id),
            text_of(&e.role()),
            Cell::Time(e.timestamp.time_value(local)),
            value_text(m.get("provider")),
            value_text(m.get("responseModel").or(m.get("model"))),
            value_text(m.get("stopReason")),
            Cell::Int(chars as i64),
            Cell::Int(calls),
            Cell::Bool(m.get("isError") == Some(&Value::Bool(true))),
            text,
            Cell::Int(e.line_number as i64),
        ]);
    }

    let usage_rows = usage
        .events
        .iter()
        .map(|ev| {
            let a = &ev.amounts;
            let (provider, model) = match ev.model.split_once('/') {
                Some((p, m))
                    if ev.source == session_core::usage::Source::Assistant
                        || ev.source == session_core::usage::Source::UsageEntry =>
                {
                    (Cell::Text(p.to_owned()), Cell::Text(m.to_owned()))
                }
                _ => (Cell::Null, Cell::Null),
            };
            UsageRow {
                identity: ev.identity,
                cells: vec![
                    sid(),
                    id_at(ev.line),
                    Cell::Time(ev.time_ms),
                    Cell::Text(ev.source.name().to_owned()),
                    provider,
                    model,
                    tokens(a.input),
                    tokens(a.output),
                    tokens(a.cache_read),
                    tokens(a.cache_write),
                    tokens(a.tokens()),
                    Cell::Float(a.cost),
                    Cell::Int(crate::usage::micros(a.cost)),
                    Cell::Bool(false),
                    Cell::Text(ev.model.to_string()),
                    Cell::Int(ev.line as i64),
                ],
            }
        })
        .collect();

    let tool_calls = calls
        .iter()
        .map(|c| CallRow {
            call_id: c.call_id.clone(),
            cells: vec![
                sid(),
                id_at(c.line),
                Cell::Text(c.call_id.clone()),
                Cell::Text(c.name.clone()),
                Cell::Int(c.arguments_bytes as i64),
                c.result.map_or(Cell::Null, |r| id_at(r.line)),
                c.result.map_or(Cell::Null, |r| Cell::Bool(r.is_error)),
                c.duration_ms().map_or(Cell::Null, Cell::Float),
                Cell::Bool(false),
                Cell::Time(c.called_ms),
                Cell::Int(c.line as i64),
            ],
        })
        .collect();

    Ok(FileRows {
        session: session_row,
        month,
        entries,
        messages,
        usage: usage_rows,
        tool_calls,
        notes,
        created_ms: usage.created_ms,
    })
}
