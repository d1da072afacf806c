//! The records we build are byte for byte the records Pi 1.6 writes: every line of
//! `corpora/sample-16` (written by Pi's own `SessionManager`) is read, built again from its
//! fields, and compared with the line as it is in the file.

#![allow(clippy::unwrap_used)] // test inputs are committed; a panic is a failed test

mod common;

use session_core::json::{Value, parse_value};
use session_core::record::{EntryBody, Header, entry_line, header_line};

fn s<'v>(v: &'v Value<'v>, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str).map(|s| std::str::from_utf8(s.as_bytes()).unwrap())
}

/// The line built again from the record's fields, or `None` for a type Pi does not write.
fn rebuilt(v: &Value<'_>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let ty = s(v, "type")?;
    if ty == "session" {
        let workflow = session_core::record::Workflow::of_header(v);
        let h = Header {
            id: s(v, "id")?,
            timestamp: s(v, "timestamp")?,
            cwd: s(v, "cwd")?,
            parent_session: s(v, "parentSession"),
            workflow: workflow.as_ref(),
        };
        header_line(&h, &mut out);
        return Some(out);
    }
    let get = |k: &str| v.get(k);
    let body = match ty {
        "message" => EntryBody::Message(get("message")?),
        "thinking_level_change" => EntryBody::ThinkingLevelChange(s(v, "thinkingLevel")?),
        "model_change" => EntryBody::ModelChange { provider: s(v, "provider")?, model_id: s(v, "modelId")? },
        "usage" => EntryBody::Usage {
            kind: s(v, "kind")?,
            provider: s(v, "provider")?,
            model: s(v, "model")?,
            usage: get("usage")?,
            note: s(v, "note"),
        },
        "compaction" => EntryBody::Compaction {
            summary: s(v, "summary")?,
            first_kept_entry_id: s(v, "firstKeptEntryId"),
            tokens_before: get("tokensBefore").and_then(|n| if let Value::Number(n) = n { Some(*n) } else { None })?,
            details: get("details"),
            usage: get("usage"),
            from_hook: get("fromHook").map(|b| matches!(b, Value::Bool(true))),
            system_message: get("systemMessage"),
        },
        "branch_summary" => EntryBody::BranchSummary {
            from_id: get("fromId")?,
            summary: s(v, "summary")?,
            details: get("details"),
            usage: get("usage"),
            from_hook: get("fromHook").map(|b| matches!(b, Value::Bool(true))),
        },
        "custom" => EntryBody::Custom { custom_type: s(v, "customType")?, data: get("data") },
        "custom_message" => EntryBody::CustomMessage {
            custom_type: s(v, "customType")?,
            content: get("content")?,
            display: matches!(get("display"), Some(Value::Bool(true))),
            details: get("details"),
        },
        "context_edit" => EntryBody::ContextEdit { target_id: s(v, "targetId")?, replacement: get("replacement")? },
        "label" => EntryBody::Label { target_id: s(v, "targetId")?, label: s(v, "label") },
        "session_info" => EntryBody::SessionInfo(s(v, "name")?),
        _ => return None,
    };
    entry_line(&body, s(v, "id")?, s(v, "parentId"), s(v, "timestamp")?, &mut out);
    Some(out)
}

#[test]
fn every_record_pi_wrote_is_built_again_byte_for_byte() {
    let paths = common::jsonl_files(&common::corpora().join("sample-16/sessions"));
    let (mut compared, mut types) = (0, std::collections::BTreeSet::new());
    for path in paths {
        let bytes = std::fs::read(&path).unwrap();
        for line in bytes.split_inclusive(|&b| b == b'\n').filter(|l| l.ends_with(b"\n")) {
            let arena = bumpalo::Bump::new();
            // A line cut off by a crash (the corpus keeps one) is no record Pi wrote whole.
            let Ok(v) = parse_value(&line[..line.len() - 1], &arena) else { continue };
            let Some(built) = rebuilt(&v) else { continue };
            assert_eq!(
                String::from_utf8_lossy(&built),
                String::from_utf8_lossy(line),
                "{}: a record we build differs from Pi's",
                path.display()
            );
            compared += 1;
            types.insert(s(&v, "type").unwrap().to_owned());
        }
    }
    assert!(compared > 3_000, "{compared}");
    // Every type Pi 1.6 writes was compared.
    for ty in [
        "session",
        "message",
        "thinking_level_change",
        "model_change",
        "usage",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "context_edit",
        "label",
        "session_info",
    ] {
        assert!(types.contains(ty), "no {ty} record was compared");
    }
}
