//! The records Pi 1.6 writes, as bytes: each record's keys in Pi's order and its values as
//! `JSON.stringify` prints them, one line each (format.md §2, §3). Building the lines only: which
//! id and time a record gets, and where it is written, belong to the caller.

use crate::json::{Value, write_json, write_string};

/// A session's first line.
#[derive(Debug, Clone, Copy)]
pub struct Header<'a> {
    /// The session id (a UUIDv7 unless the caller gives one).
    pub id: &'a str,
    /// The ISO time it was made, with milliseconds.
    pub timestamp: &'a str,
    /// The working folder.
    pub cwd: &'a str,
    /// The file this session was forked or branched from.
    pub parent_session: Option<&'a str>,
    /// Atomic: the workflow stage this internal session belongs to (written as `internal: true`
    /// and `workflow`, only when [`Workflow::is_valid`]).
    pub workflow: Option<&'a Workflow>,
}

/// Atomic's marker of an internal workflow session (format.md §8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workflow {
    /// The workflow run.
    pub run_id: String,
    /// The stage's id.
    pub stage_id: String,
    /// The stage's name.
    pub stage_name: String,
}

impl Workflow {
    /// Atomic writes the marker only when every field is non-empty after trimming (the values are
    /// stored untrimmed).
    pub fn is_valid(&self) -> bool {
        [&self.run_id, &self.stage_id, &self.stage_name].iter().all(|v| !crate::text::js_trim(v.as_bytes()).is_empty())
    }

    /// The `workflow` object, keys in Atomic's order.
    pub fn to_value(&self) -> Value<'static> {
        let mut o = crate::json::Object::new();
        o.insert("runId", Value::str(crate::json::JsStr::owned(self.run_id.clone())));
        o.insert("stageId", Value::str(crate::json::JsStr::owned(self.stage_id.clone())));
        o.insert("stageName", Value::str(crate::json::JsStr::owned(self.stage_name.clone())));
        Value::Object(o)
    }

    /// The marker of a header, when it is a valid one (`internal === true` and a valid `workflow`).
    pub fn of_header(header: &Value<'_>) -> Option<Workflow> {
        if !matches!(header.get("internal"), Some(Value::Bool(true))) {
            return None;
        }
        let w = header.get("workflow")?;
        let field = |k: &str| w.get(k).and_then(Value::as_str).map(|s| s.to_str_lossy().into_owned());
        let marker = Workflow { run_id: field("runId")?, stage_id: field("stageId")?, stage_name: field("stageName")? };
        marker.is_valid().then_some(marker)
    }
}

/// An entry's own fields, by type, each holding what Pi's append functions take.
#[derive(Debug, Clone)]
pub enum EntryBody<'v> {
    /// `appendMessage`: any role, the message object as it is.
    Message(&'v Value<'v>),
    /// `appendThinkingLevelChange`.
    ThinkingLevelChange(&'v str),
    /// `appendModelChange`.
    ModelChange {
        /// The provider.
        provider: &'v str,
        /// The model's id.
        model_id: &'v str,
    },
    /// `appendUsage`: a note is written only when it is not empty.
    Usage {
        /// What the usage was for (`cache_warm`, …).
        kind: &'v str,
        /// The provider.
        provider: &'v str,
        /// The model.
        model: &'v str,
        /// The usage object.
        usage: &'v Value<'v>,
        /// A note, when there is one.
        note: Option<&'v str>,
    },
    /// `appendCompaction`.
    Compaction {
        /// The summary.
        summary: &'v str,
        /// The first entry kept (Pi 1.6 writes the compaction's own id for "keep nothing").
        first_kept_entry_id: Option<&'v str>,
        /// Tokens before the compaction.
        tokens_before: f64,
        /// Extension details.
        details: Option<&'v Value<'v>>,
        /// The summariser's usage.
        usage: Option<&'v Value<'v>>,
        /// Made by a hook.
        from_hook: Option<bool>,
        /// The system prompt and tools replayed at the boundary.
        system_message: Option<&'v Value<'v>>,
    },
    /// `branchWithSummary`.
    BranchSummary {
        /// The leaf the branch came from (`"root"` when there was none).
        from_id: &'v Value<'v>,
        /// The summary.
        summary: &'v str,
        /// Extension details.
        details: Option<&'v Value<'v>>,
        /// The summariser's usage.
        usage: Option<&'v Value<'v>>,
        /// Made by a hook.
        from_hook: Option<bool>,
    },
    /// `appendCustomEntry`: its own fields come before the base fields.
    Custom {
        /// The extension's type.
        custom_type: &'v str,
        /// Its data.
        data: Option<&'v Value<'v>>,
    },
    /// `appendCustomMessageEntry`: its own fields come before the base fields.
    CustomMessage {
        /// The extension's type.
        custom_type: &'v str,
        /// A string or text and image blocks.
        content: &'v Value<'v>,
        /// Shown in the interface.
        display: bool,
        /// Extension details.
        details: Option<&'v Value<'v>>,
    },
    /// `appendContextEdit`: `replacement` is `{content}` or `null`.
    ContextEdit {
        /// The entry edited.
        target_id: &'v str,
        /// What replaces its content.
        replacement: &'v Value<'v>,
    },
    /// `appendLabelChange`: a cleared label has no `label` key.
    Label {
        /// The labelled entry.
        target_id: &'v str,
        /// The label, or `None` to clear it.
        label: Option<&'v str>,
    },
    /// `appendSessionInfo`, its name already normalised ([`normalise_name`]).
    SessionInfo(&'v str),
}

/// A key and its value, in writing order; `None` values are left out, as `JSON.stringify` leaves
/// out `undefined`.
enum Field<'v> {
    Str(&'v str),
    Num(f64),
    Bool(bool),
    Json(&'v Value<'v>),
    Null,
}

fn write_fields(fields: &[(&str, Option<Field<'_>>)], out: &mut Vec<u8>) {
    out.push(b'{');
    let mut first = true;
    for (key, value) in fields {
        let Some(value) = value else { continue };
        if !first {
            out.push(b',');
        }
        first = false;
        write_string(key.as_bytes(), out);
        out.push(b':');
        match value {
            Field::Str(s) => write_string(s.as_bytes(), out),
            Field::Num(n) => crate::json::write_number(*n, out),
            Field::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Field::Json(v) => write_json(v, out),
            Field::Null => out.extend_from_slice(b"null"),
        }
    }
    out.push(b'}');
}

/// The header line (with its `\n`), keys in Pi's order: type, version, id, timestamp, cwd,
/// parentSession (then Atomic's internal, workflow).
pub fn header_line(h: &Header<'_>, out: &mut Vec<u8>) {
    let workflow = h.workflow.filter(|w| w.is_valid()).map(Workflow::to_value);
    write_fields(
        &[
            ("type", Some(Field::Str("session"))),
            ("version", Some(Field::Num(3.0))),
            ("id", Some(Field::Str(h.id))),
            ("timestamp", Some(Field::Str(h.timestamp))),
            ("cwd", Some(Field::Str(h.cwd))),
            ("parentSession", h.parent_session.map(Field::Str)),
            ("internal", workflow.as_ref().map(|_| Field::Bool(true))),
            ("workflow", workflow.as_ref().map(Field::Json)),
        ],
        out,
    );
    out.push(b'\n');
}

/// An entry's `parentId` as Pi writes it: the leaf's id when the entry was appended.
#[derive(Debug, Clone, Copy)]
pub enum Parent<'v> {
    /// `null`: the session had no entries.
    Null,
    /// A string id.
    Id(&'v str),
    /// An id of another JSON type (a hand-edited file), written as `JSON.stringify` writes it.
    Json(&'v Value<'v>),
    /// No key: the leaf entry had no id (`undefined`).
    Absent,
}

/// An entry's line (with its `\n`): the base fields (`type`, `id`, `parentId`, `timestamp`) and
/// its own, in the order Pi writes them.
pub fn entry_line(body: &EntryBody<'_>, id: &str, parent_id: Option<&str>, timestamp: &str, out: &mut Vec<u8>) {
    entry_line_under(body, id, parent_id.map_or(Parent::Null, Parent::Id), timestamp, out);
}

/// [`entry_line`] under a parent of any kind.
pub fn entry_line_under(body: &EntryBody<'_>, id: &str, parent: Parent<'_>, timestamp: &str, out: &mut Vec<u8>) {
    use Field::{Bool, Json, Num, Str};
    let parent_field = match parent {
        Parent::Null => Some(Field::Null),
        Parent::Id(s) => Some(Str(s)),
        Parent::Json(v) => Some(Json(v)),
        Parent::Absent => None,
    };
    let base = |ty: &'static str| -> [(&'static str, Option<Field<'_>>); 4] {
        let parent_field = match parent_field {
            Some(Field::Null) => Some(Field::Null),
            Some(Str(s)) => Some(Str(s)),
            Some(Json(v)) => Some(Json(v)),
            _ => None,
        };
        [
            ("type", Some(Str(ty))),
            ("id", Some(Str(id))),
            ("parentId", parent_field),
            ("timestamp", Some(Str(timestamp))),
        ]
    };
    let mut fields: Vec<(&str, Option<Field<'_>>)> = Vec::new();
    match body {
        EntryBody::Message(m) => {
            fields.extend(base("message"));
            fields.push(("message", Some(Json(m))));
        }
        EntryBody::ThinkingLevelChange(level) => {
            fields.extend(base("thinking_level_change"));
            fields.push(("thinkingLevel", Some(Str(level))));
        }
        EntryBody::ModelChange { provider, model_id } => {
            fields.extend(base("model_change"));
            fields.push(("provider", Some(Str(provider))));
            fields.push(("modelId", Some(Str(model_id))));
        }
        EntryBody::Usage { kind, provider, model, usage, note } => {
            fields.extend(base("usage"));
            fields.push(("kind", Some(Str(kind))));
            fields.push(("provider", Some(Str(provider))));
            fields.push(("model", Some(Str(model))));
            fields.push(("usage", Some(Json(usage))));
            fields.push(("note", note.filter(|n| !n.is_empty()).map(Str)));
        }
        EntryBody::Compaction {
            summary,
            first_kept_entry_id,
            tokens_before,
            details,
            usage,
            from_hook,
            system_message,
        } => {
            fields.extend(base("compaction"));
            fields.push(("summary", Some(Str(summary))));
            fields.push(("firstKeptEntryId", first_kept_entry_id.map(Str)));
            fields.push(("tokensBefore", Some(Num(*tokens_before))));
            fields.push(("details", details.map(Json)));
            fields.push(("usage", usage.map(Json)));
            fields.push(("fromHook", from_hook.map(Bool)));
            fields.push(("systemMessage", system_message.map(Json)));
        }
        EntryBody::BranchSummary { from_id, summary, details, usage, from_hook } => {
            fields.extend(base("branch_summary"));
            fields.push(("fromId", Some(Json(from_id))));
            fields.push(("summary", Some(Str(summary))));
            fields.push(("details", details.map(Json)));
            fields.push(("usage", usage.map(Json)));
            fields.push(("fromHook", from_hook.map(Bool)));
        }
        EntryBody::Custom { custom_type, data } => {
            fields.push(("type", Some(Str("custom"))));
            fields.push(("customType", Some(Str(custom_type))));
            fields.push(("data", data.map(Json)));
            fields.extend(base("custom").into_iter().skip(1));
        }
        EntryBody::CustomMessage { custom_type, content, display, details } => {
            fields.push(("type", Some(Str("custom_message"))));
            fields.push(("customType", Some(Str(custom_type))));
            fields.push(("content", Some(Json(content))));
            fields.push(("display", Some(Bool(*display))));
            fields.push(("details", details.map(Json)));
            fields.extend(base("custom_message").into_iter().skip(1));
        }
        EntryBody::ContextEdit { target_id, replacement } => {
            fields.extend(base("context_edit"));
            fields.push(("targetId", Some(Str(target_id))));
            fields.push(("replacement", Some(Json(replacement))));
        }
        EntryBody::Label { target_id, label } => {
            fields.extend(base("label"));
            fields.push(("targetId", Some(Str(target_id))));
            fields.push(("label", label.map(Str)));
        }
        EntryBody::SessionInfo(name) => {
            fields.extend(base("session_info"));
            fields.push(("name", Some(Str(name))));
        }
    }
    write_fields(&fields, out);
    out.push(b'\n');
}

/// A session name as Pi 1.6's `appendSessionInfo` stores it: each run of CR and LF one space, then
/// trimmed as JavaScript trims.
pub fn normalise_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_break = false;
    for c in name.chars() {
        if c == '\r' || c == '\n' {
            if !in_break {
                out.push(' ');
            }
            in_break = true;
        } else {
            out.push(c);
            in_break = false;
        }
    }
    let trimmed = crate::text::js_trim(out.as_bytes());
    String::from_utf8_lossy(trimmed).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_folded_and_trimmed_as_pi_stores_them() {
        assert_eq!(normalise_name("  a\r\n\nb\rc  "), "a b c");
        assert_eq!(normalise_name("\n"), "");
    }

    #[test]
    fn a_cleared_label_has_no_label_key_and_custom_fields_come_first() {
        let mut out = Vec::new();
        entry_line(&EntryBody::Label { target_id: "t", label: None }, "i", Some("p"), "T", &mut out);
        assert_eq!(
            out,
            b"{\"type\":\"label\",\"id\":\"i\",\"parentId\":\"p\",\"timestamp\":\"T\",\"targetId\":\"t\"}\n"
        );
        out.clear();
        entry_line(&EntryBody::Custom { custom_type: "x", data: None }, "i", None, "T", &mut out);
        assert_eq!(
            out,
            b"{\"type\":\"custom\",\"customType\":\"x\",\"id\":\"i\",\"parentId\":null,\"timestamp\":\"T\"}\n"
        );
    }
}
