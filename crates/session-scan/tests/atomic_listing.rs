//! Atomic's listing fields (`hasName`, `internal`, `workflow`, `summary`), one session per rule,
//! in `list` and `search` rows and in the table's summary column.

#![allow(clippy::unwrap_used)] // test inputs are made here; a panic is a failed test

mod common;

use common::binary::*;
use std::path::Path;

fn header(id: &str, extra: &str) -> String {
    format!(r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"{extra}}}"#)
}

fn message(id: &str, parent: &str, role: &str, text: &str) -> String {
    let parent = if parent.is_empty() { "null".to_string() } else { format!("\"{parent}\"") };
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"{role}","content":"{text}","timestamp":1767225601000}}}}"#
    )
}

fn entry(ty: &str, id: &str, parent: &str, fields: &str) -> String {
    format!(r#"{{"type":"{ty}","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:02.000Z"{fields}}}"#)
}

/// A flat folder of sessions, one per rule, named by what they test.
fn store(dir: &Path) {
    let marker = r#","internal":true,"workflow":{"runId":"r1","stageId":"s1","stageName":" plan "}"#;
    let bad_marker = r#","internal":true,"workflow":{"runId":"r1","stageId":"s1","stageName":"  "}"#;
    let summary = |through: &str| format!(r#","summary":"where we are","summarizedThroughId":"{through}""#);
    let sessions: Vec<(&str, Vec<String>)> = vec![
        (
            "cleared",
            vec![
                header("cleared", ""),
                message("a", "", "user", "hi"),
                entry("session_info", "b", "a", r#","name":"x""#),
                entry("session_info", "c", "b", r#","name":"  ""#),
            ],
        ),
        ("unnamed", vec![header("unnamed", ""), message("a", "", "user", "hi")]),
        ("marked", vec![header("marked", marker), message("a", "", "user", "hi")]),
        ("badmark", vec![header("badmark", bad_marker), message("a", "", "user", "hi")]),
        (
            "current",
            vec![
                header("current", ""),
                message("a", "", "user", "hi"),
                message("b", "a", "assistant", "yo"),
                entry("session_summary", "c", "b", &summary("b")),
            ],
        ),
        (
            "retired",
            vec![
                header("retired", ""),
                message("a", "", "user", "hi"),
                entry("session_summary", "c", "a", &summary("a")),
                entry("branch_summary", "d", "c", r#","fromId":"a","summary":"s""#),
            ],
        ),
        (
            "stale",
            vec![
                header("stale", ""),
                message("a", "", "user", "hi"),
                entry("session_summary", "c", "a", &summary("a")),
                message("d", "c", "user", "more"),
            ],
        ),
        (
            "renewed",
            vec![
                header("renewed", ""),
                message("a", "", "user", "hi"),
                entry("branch_summary", "d", "a", r#","fromId":"a","summary":"s""#),
                entry("session_summary", "c", "d", &summary("a")),
            ],
        ),
    ];
    for (name, lines) in sessions {
        std::fs::write(dir.join(format!("{name}.jsonl")), lines.join("\n") + "\n").unwrap();
    }
}

fn rows(out: &std::process::Output) -> Vec<serde_json::Value> {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap().as_array().unwrap().clone()
}

#[test]
fn atomic_rows_carry_atomics_own_fields_by_its_rules() {
    let dir = scratch("atomic-listing");
    store(&dir);
    let listed = rows(&run(scan().args(["list", "--atomic", "--include-internal", "--json"]).arg(&dir)));
    let row = |id: &str| listed.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("{id} listed")).clone();
    // hasName: a name cleared after it was set still counts.
    assert_eq!(row("cleared")["hasName"], true);
    assert!(row("cleared").get("name").is_none());
    assert_eq!(row("unnamed")["hasName"], false);
    // internal and workflow: only for a valid marker (values as stored).
    assert_eq!(row("marked")["internal"], true);
    assert_eq!(row("marked")["workflow"], serde_json::json!({"runId": "r1", "stageId": "s1", "stageName": " plan "}));
    for id in ["badmark", "unnamed"] {
        assert!(row(id).get("internal").is_none() && row(id).get("workflow").is_none(), "{id}");
    }
    // summary: the latest not retired by a later branch summary, while it describes the last
    // user or assistant message.
    assert_eq!(row("current")["summary"], "where we are");
    assert_eq!(row("renewed")["summary"], "where we are");
    for id in ["retired", "stale", "unnamed"] {
        assert!(row(id).get("summary").is_none(), "{id}: {}", row(id));
    }
    // Pi's listing has none of them.
    let pi = rows(&run(scan().args(["list", "--json"]).arg(&dir)));
    assert!(pi.iter().all(|r| r.get("hasName").is_none() && r.get("summary").is_none()));
    // Without --include-internal the marked session is hidden, as Atomic hides it.
    let visible = rows(&run(scan().args(["list", "--atomic", "--json"]).arg(&dir)));
    assert!(visible.iter().all(|r| r["id"] != "marked") && visible.len() == listed.len() - 1);
    // Search rows carry them too.
    let found = rows(&run(scan().args(["search", "more", "--atomic", "--json"]).arg(&dir)));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["hasName"], false);
    // The table: a summary column when some row has a summary, none otherwise.
    let table =
        String::from_utf8(run(scan().args(["list", "--atomic"]).arg(&dir).env("COLUMNS", "160")).stdout).unwrap();
    assert!(table.lines().next().unwrap().contains("summary") && table.contains("where we are"), "{table}");
    std::fs::remove_file(dir.join("current.jsonl")).unwrap();
    std::fs::remove_file(dir.join("renewed.jsonl")).unwrap();
    let table =
        String::from_utf8(run(scan().args(["list", "--atomic"]).arg(&dir).env("COLUMNS", "160")).stdout).unwrap();
    assert!(!table.lines().next().unwrap().contains("summary"), "{table}");
    std::fs::remove_dir_all(&dir).unwrap();
}
