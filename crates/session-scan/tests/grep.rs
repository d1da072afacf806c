//! `session-scan grep`: every text of every entry is searched (all branches), and each match is
//! found where a second reading of the same lines (with `serde_json`) finds it.

#![allow(clippy::unwrap_used)] // test inputs are made here; a panic is a failed test

mod common;

use std::path::PathBuf;
use std::process::Command;

use session_core::entry_texts::Kind;
use session_scan::grep::Grep;

fn corpora() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpora")
}

/// The texts of one entry, read from its `serde_json` value: (kind, tool, text).
fn texts_of(v: &serde_json::Value) -> Vec<(&'static str, Option<String>, String)> {
    let mut out = Vec::new();
    let s = |v: &serde_json::Value| v.as_str().map(str::to_string);
    let content = |kind: &'static str, tool: Option<String>, c: &serde_json::Value, out: &mut Vec<_>| {
        if let Some(t) = c.as_str() {
            out.push((kind, tool, t.to_string()));
        } else if let Some(blocks) = c.as_array() {
            for b in blocks.iter().filter(|b| b["type"] == "text") {
                if let Some(t) = b["text"].as_str() {
                    out.push((kind, tool.clone(), t.to_string()));
                }
            }
        }
    };
    fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(t) => out.push(t.clone()),
            serde_json::Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
            serde_json::Value::Object(o) => o.values().for_each(|i| strings(i, out)),
            _ => {}
        }
    }
    let m = &v["message"];
    match (v["type"].as_str(), m["role"].as_str()) {
        (Some("message"), Some("user")) => content("user", None, &m["content"], &mut out),
        (Some("message"), Some("assistant")) => match m["content"].as_array() {
            Some(blocks) => {
                for b in blocks {
                    match b["type"].as_str() {
                        Some("text") => out.extend(s(&b["text"]).map(|t| ("assistant", None, t))),
                        Some("thinking") => out.extend(s(&b["thinking"]).map(|t| ("thinking", None, t))),
                        Some("toolCall") => {
                            let mut found = Vec::new();
                            strings(&b["arguments"], &mut found);
                            out.extend(found.into_iter().map(|t| ("tool-call", s(&b["name"]), t)));
                        }
                        _ => {}
                    }
                }
            }
            None => content("assistant", None, &m["content"], &mut out),
        },
        (Some("message"), Some("toolResult")) => content("tool-result", s(&m["toolName"]), &m["content"], &mut out),
        (Some("message"), Some("bashExecution")) => {
            out.extend(["command", "output"].iter().filter_map(|k| s(&m[*k])).map(|t| ("bash", None, t)));
        }
        (Some("message"), Some("branchSummary" | "compactionSummary")) => {
            out.extend(s(&m["summary"]).map(|t| ("summary", None, t)));
        }
        (Some("message"), Some("custom" | "hookMessage")) => content("custom", None, &m["content"], &mut out),
        (Some("compaction" | "branch_summary" | "session_summary"), _) => {
            out.extend(s(&v["summary"]).map(|t| ("summary", None, t)))
        }
        (Some("custom_message"), _) => content("custom", None, &v["content"], &mut out),
        _ => {}
    }
    out
}

/// Every session of the corpora searched for each pattern: the library's matches (line, id,
/// kind, tool, what matched) are the second reading's, in file order, and the text around each
/// holds it.
#[test]
fn matches_are_where_a_second_reading_finds_them() {
    let dirs = ["sample-16/sessions", "real/sessions", "files/sessions"].map(|d| corpora().join(d));
    let files = session_scan::expand_paths(&dirs);
    assert!(files.len() >= 200);
    // (pattern, regex, ignore case, kinds)
    let searches: [(&str, bool, bool, &[Kind]); 7] = [
        ("cargo", false, false, &[]),
        ("the", false, false, &[Kind::User, Kind::Assistant]),
        ("ERROR", false, true, &[]),
        (r"fn \w+\(", true, false, &[]),
        ("src/", false, false, &[Kind::ToolCall]),
        ("é", false, false, &[]),
        (r"(?m)^\s*\d+\.", true, false, &[Kind::ToolResult, Kind::Thinking, Kind::Summary]),
    ];
    let mut total = 0;
    for (pattern, is_regex, ignore_case, kinds) in searches {
        let grep = Grep::new(pattern, is_regex, ignore_case, kinds).unwrap();
        let re = if is_regex || ignore_case {
            let source = if is_regex { pattern.to_string() } else { regex::escape(pattern) };
            Some(regex::RegexBuilder::new(&source).case_insensitive(ignore_case).build().unwrap())
        } else {
            None
        };
        let mut found_here = 0;
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let session = session_core::Session::load(&bytes).unwrap();
            let v3 = session.migrated_from.is_none();
            let got: Vec<_> = grep
                .session_hits(&session, None)
                .into_iter()
                .map(|h| {
                    assert!(h.text.contains(&h.matched.replace(['\n', '\r', '\t'], " ")), "{h:?}");
                    (h.line, if v3 { h.id } else { None }, h.kind.name(), h.tool, h.matched)
                })
                .collect();
            let mut want = Vec::new();
            for (k, line) in bytes.split(|&b| b == b'\n').enumerate().skip(1) {
                let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else { continue };
                for (kind, tool, text) in texts_of(&v) {
                    if !kinds.is_empty() && !kinds.iter().any(|k| k.name() == kind) {
                        continue;
                    }
                    let matched = match &re {
                        Some(re) => re.find(&text).map(|m| m.as_str().to_string()),
                        None => text.contains(pattern).then(|| pattern.to_string()),
                    };
                    if let Some(matched) = matched {
                        let id = if v3 { v["id"].as_str().map(str::to_string) } else { None };
                        want.push((k as u64 + 1, id, kind, tool, matched));
                    }
                }
            }
            // serde_json's objects keep keys sorted, not in file order: the texts of one line are
            // compared as a set, and lines in file order.
            let (mut got_sorted, mut want_sorted) = (got.clone(), want.clone());
            got_sorted.sort();
            want_sorted.sort();
            assert_eq!(got_sorted, want_sorted, "{pattern:?} in {}", f.display());
            assert!(got.windows(2).all(|w| w[0].0 <= w[1].0), "file order");
            found_here += got.len();
        }
        assert!(found_here > 0, "{pattern:?} found nothing: the comparison would be empty");
        total += found_here;
    }
    assert!(total > 1000, "{total}");
}

fn scan() -> Command {
    Command::new(env!("CARGO_BIN_EXE_session-scan"))
}

/// The command: JSON rows, `-l`, `--in`, `-m`, and its exit codes (0 found, 1 nothing found,
/// 2 a pattern or kind that cannot be used).
#[test]
fn the_command_prints_matches_and_says_when_there_are_none() {
    let dir = corpora().join("sample-16/sessions");
    let d = dir.to_str().unwrap();
    let out = scan().args(["grep", "--json", "-m", "1", "--in", "tool-call", "cargo build", d]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let rows: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(rows.len() >= 3, "{rows:?}");
    let mut sessions = std::collections::HashSet::new();
    for r in &rows {
        assert_eq!(r["kind"], "tool-call");
        assert_eq!(r["match"], "cargo build");
        assert!(r["tool"].is_string() && r["id"].is_string() && r["line"].as_u64().unwrap() > 1, "{r}");
        assert!(sessions.insert(r["sessionId"].as_str().unwrap().to_string()), "-m 1: one a session");
        // The offset is where the entry's line starts in its file.
        let bytes = std::fs::read(r["file"].as_str().unwrap()).unwrap();
        let at = r["offset"].as_u64().unwrap() as usize;
        assert!(at == 0 || bytes[at - 1] == b'\n');
        let line = &bytes[at..at + memchr::memchr(b'\n', &bytes[at..]).unwrap()];
        assert!(memchr::memmem::find(line, b"cargo build").is_some());
    }
    let listed = scan().args(["grep", "-l", "--json", "--in", "tool-call", "cargo build", d]).output().unwrap();
    let listed: Vec<serde_json::Value> =
        String::from_utf8(listed.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(listed.len(), sessions.len());
    assert!(listed.iter().all(|r| r["matches"].as_u64().unwrap() >= 1));
    let none = scan().args(["grep", "no such text anywhere 7f3e", d]).output().unwrap();
    assert_eq!((none.status.code(), none.stdout.is_empty()), (Some(1), true));
    // --project: only sessions whose cwd holds the text.
    let project = scan().args(["grep", "--json", "--project", "/bob/", "-m", "1", "the", d]).output().unwrap();
    let project: Vec<serde_json::Value> =
        String::from_utf8(project.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(!project.is_empty());
    for r in &project {
        let text = std::fs::read_to_string(r["file"].as_str().unwrap()).unwrap();
        let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert!(header["cwd"].as_str().unwrap().contains("/bob/"), "{r}");
    }
    // --since/--until: only entries of those days (in the zone given).
    let dated = scan()
        .args(["grep", "--json", "--since", "2025-01-15", "--until", "20250116", "--timezone", "UTC", "the", d])
        .output()
        .unwrap();
    let dated: Vec<serde_json::Value> =
        String::from_utf8(dated.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(dated.len() > 10);
    for r in &dated {
        let bytes = std::fs::read(r["file"].as_str().unwrap()).unwrap();
        let at = r["offset"].as_u64().unwrap() as usize;
        let line = &bytes[at..at + memchr::memchr(b'\n', &bytes[at..]).unwrap()];
        let entry: serde_json::Value = serde_json::from_slice(line).unwrap();
        let day = &entry["timestamp"].as_str().unwrap()[..10];
        assert!(("2025-01-15"..="2025-01-16").contains(&day), "{day}");
    }
    let bad_day = scan().args(["grep", "--since", "2025-02-30", "x", d]).output().unwrap();
    assert_eq!(bad_day.status.code(), Some(2));
    let bad = scan().args(["grep", "-E", "(unclosed", d]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a regular expression"));
    let bad_kind = scan().args(["grep", "--in", "users", "x", d]).output().unwrap();
    assert_eq!(bad_kind.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_kind.stderr).contains("tool-result"));
}
