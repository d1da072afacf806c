//! `session-scan export`: the Markdown holds every entry of the branch Pi's `getBranch()` gives
//! (§6), in order, with fences that hold whatever the output contains; `--redact` hides secrets.

#![allow(clippy::unwrap_used)] // test inputs are made here; a panic is a failed test

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use session_core::Field;
use session_core::json::JsStr;

fn scan() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_session-scan"));
    command.env("TZ", "UTC");
    command
}

fn export(args: &[&str]) -> Output {
    scan().arg("export").args(args).output().unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("session-scan-export-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The entries' headings (a `### ` line after an `<a id="entry-…">` anchor), outside fenced blocks
/// as CommonMark finds them (a fence closes only at a run of the same character at least as long as
/// the one that opened it).
fn headings(markdown: &str) -> Vec<String> {
    let mut open: Option<(u8, usize)> = None;
    let mut found = Vec::new();
    let mut anchored = false;
    for line in markdown.lines() {
        let fence = session_scan::export::fence_of(line);
        match (open, fence) {
            (Some((c, n)), Some((d, m, after))) if c == d && m >= n && after.trim().is_empty() => open = None,
            (Some(_), _) => {}
            (None, Some((c, n, after))) if c == b'~' || !after.contains('`') => open = Some((c, n)),
            (None, _) => {
                if anchored {
                    let h = line.strip_prefix("### ").expect("a heading after each anchor");
                    found.push(h.split(" · ").next().unwrap().to_string());
                }
                anchored = line.starts_with("<a id=\"entry-") || line.starts_with("<a id=\"line-");
                continue;
            }
        }
        anchored = false;
    }
    assert_eq!(open, None, "a fence was left open");
    found
}

/// The heading each record of the branch should have, from the records themselves.
fn expected_headings(bytes: &[u8], leaf: Option<&str>) -> Vec<String> {
    let session = session_core::Session::load(bytes).unwrap();
    let leaf = leaf.map(|l| Field::Str(JsStr::owned(l.to_string())));
    let arena = bumpalo::Bump::new();
    let mut want = Vec::new();
    for i in session.branch(leaf.as_ref()).path {
        let entry = &session.records[i];
        let value = entry.value(&arena).unwrap();
        let kind = entry.entry_type.as_str().map(|t| t.to_str_lossy().into_owned()).unwrap_or_default();
        let heading = match kind.as_str() {
            "message" if value.get("message").is_some() => {
                let role = entry.role().as_str().map(|r| r.to_str_lossy().into_owned()).unwrap_or_default();
                match role.as_str() {
                    "user" => "User",
                    "assistant" => "Assistant",
                    "toolResult" => "Tool result",
                    "bashExecution" => "Shell command",
                    "branchSummary" => "Branch summary",
                    "compactionSummary" => "Compaction summary",
                    "system" => "System prompt",
                    "custom" if value.get("message").unwrap().get("customType").is_some() => "Custom message",
                    _ => "Message",
                }
            }
            "compaction" => "Compaction",
            "branch_summary" => "Branch summary",
            "custom_message" => "Custom message",
            _ => continue,
        };
        want.push(heading.to_string());
    }
    want
}

/// The texts of the branch's user messages, in order.
fn user_texts(bytes: &[u8]) -> Vec<String> {
    let session = session_core::Session::load(bytes).unwrap();
    let arena = bumpalo::Bump::new();
    let mut texts = Vec::new();
    for i in session.branch(None).path {
        let entry = &session.records[i];
        if !entry.role().is("user") {
            continue;
        }
        let value = entry.value(&arena).unwrap();
        match value.get("message").and_then(|m| m.get("content")) {
            Some(session_core::json::Value::String(s)) => texts.push(s.to_str_lossy().into_owned()),
            Some(session_core::json::Value::Array(blocks)) => {
                for b in blocks {
                    if let Some(t) = b.get("text").and_then(|t| t.as_str()) {
                        texts.push(t.to_str_lossy().into_owned());
                    }
                }
            }
            _ => {}
        }
    }
    texts
}

#[test]
fn every_record_of_the_branch_is_there_in_order() {
    let mut files = session_scan::expand_paths(&[common::corpora().join("sample-16/sessions")]);
    files.extend(session_scan::expand_paths(&[common::corpora().join("real/sessions")]));
    let mut compactions = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let out = export(&[f.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}: {}", f.display(), String::from_utf8_lossy(&out.stderr));
        let markdown = String::from_utf8(out.stdout).unwrap();
        let got = headings(&markdown);
        assert_eq!(got, expected_headings(&bytes, None), "{}", f.display());
        compactions += got.iter().filter(|h| *h == "Compaction").count();
        // Every user text, whole and in order.
        let mut from = 0;
        for text in user_texts(&bytes) {
            let at = markdown[from..].find(text.as_str());
            assert!(at.is_some(), "{}: user text missing or out of order: {text:.60}", f.display());
            from += at.unwrap() + text.len();
        }
    }
    assert!(compactions >= 2, "the corpora's compactions are on their branches");
}

#[test]
fn leaf_ends_the_branch_at_the_entry_asked_for() {
    let dir = common::corpora().join("sample-16/sessions/--home-dev-src-pi-mono--");
    let f = dir.join("2025-01-23T18-36-38-672Z_01949473-b590-7099-acde-de82e88808c1.jsonl");
    let bytes = std::fs::read(&f).unwrap();
    // An assistant turn on the branch the session left (before its compaction).
    let out = export(&[f.to_str().unwrap(), "--leaf", "45c480e0"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let markdown = String::from_utf8(out.stdout).unwrap();
    let got = headings(&markdown);
    assert_eq!(got, expected_headings(&bytes, Some("45c480e0")));
    assert_ne!(got, expected_headings(&bytes, None));
    assert_eq!(got.last().map(String::as_str), Some("Assistant"));
    assert!(markdown.contains("from the root to `45c480e0`"), "{markdown:.600}");
    let out = export(&[f.to_str().unwrap(), "--leaf", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no entry has the id \"nope\""));
}

const HEADER: &str = r#"{"type":"session","version":3,"id":"7f3e9a10-aaaa-bbbb-cccc-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/alice/proj"}"#;

fn secret_session(dir: &Path) -> PathBuf {
    let user = r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"deploy with sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx from /home/alice/proj","timestamp":1}}"#;
    let call = r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"cat ~/.ssh/id_rsa\necho done"}}],"provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0.5}},"stopReason":"toolUse","timestamp":2}}"#;
    let result = r#"{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n```\n### not a heading\n````"}],"isError":false,"timestamp":3}}"#;
    let path = dir.join("s.jsonl");
    std::fs::write(&path, format!("{HEADER}\n{user}\n{call}\n{result}\n")).unwrap();
    path
}

#[test]
fn redact_hides_keys_and_home_folders_and_counts_them() {
    let dir = scratch("redact");
    let f = secret_session(&dir);
    let plain = export(&[f.to_str().unwrap()]);
    let plain_text = String::from_utf8(plain.stdout).unwrap();
    // Without --redact the export is faithful.
    for kept in ["sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx", "/home/alice/proj", "BEGIN RSA PRIVATE KEY"] {
        assert!(plain_text.contains(kept), "{kept}");
    }
    // The tool output's backticks and heading stay inside its fence.
    assert_eq!(headings(&plain_text), ["User", "Assistant", "Tool result"]);
    assert!(plain_text.contains("command: |\n  cat ~/.ssh/id_rsa\n  echo done\n"), "{plain_text}");
    let out = export(&[f.to_str().unwrap(), "--redact"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    for gone in ["sk-ant-api03", "/home/alice", "MIIEow"] {
        assert!(!text.contains(gone), "{gone} is still there");
    }
    assert!(text.contains("deploy with [REDACTED anthropic key] from ~/proj"), "{text}");
    assert!(text.contains("- **Project:** `~/proj`"));
    // The title is the first user line, redacted as well.
    assert!(text.starts_with("# deploy with [REDACTED anthropic key] from ~/proj\n"), "{text}");
    assert!(text.contains("<a id=\"entry-u1\"></a>\n### User · 2026-01-01T00:00:01.000Z\n"), "{text}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "session-scan: redacted: 2 anthropic key, 3 home folder, 1 private key"
    );
    assert_eq!(headings(&text), ["User", "Assistant", "Tool result"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_id_prefix_is_found_in_the_store_as_pi_finds_it() {
    let home = scratch("store");
    let agent = home.join("agent");
    let folder = agent.join("sessions/--home-alice-proj--");
    std::fs::create_dir_all(&folder).unwrap();
    secret_session(&folder);
    let run = |arg: &str| {
        scan()
            .env("HOME", &home)
            .env("PI_CODING_AGENT_DIR", &agent)
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .current_dir(&home)
            .args(["export", arg, "--cwd", "/home/alice/proj"])
            .output()
            .unwrap()
    };
    let out = run("7f3e9a");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("- **Session:** `7f3e9a10-aaaa-bbbb-cccc-000000000001`"), "{text}");
    assert!(text.contains(&format!("- **File:** `{}`", folder.join("s.jsonl").display())), "{text}");
    let out = run("0000");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session file or session id matches \"0000\""));
    std::fs::remove_dir_all(&home).unwrap();
}
