//! `session-scan export`: the Markdown holds every entry of the branch Pi's `getBranch()` gives
//! (format.md §6), in order, with fences that hold whatever the output contains; `--redact` hides secrets.

#![allow(clippy::unwrap_used)] // test inputs are made here; a panic is a failed test

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use session_core::PropertyValue;
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

/// The entries' headings (a top-level `###` heading right after a paragraph that is only an
/// `<a id="entry-…">` anchor), as a CommonMark parser (`pulldown-cmark`) reads the document: a
/// fence or HTML block a message left open would take in the headings after it.
fn headings(markdown: &str) -> Vec<String> {
    use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
    let mut found = Vec::new();
    let mut depth = 0usize;
    // Set by a top-level paragraph holding an anchor; the next top-level block must be its heading.
    let (mut anchor_paragraph, mut anchored, mut heading) = (false, false, None::<String>);
    for event in Parser::new(markdown) {
        match event {
            Event::Start(tag) => {
                depth += 1;
                if depth == 1 {
                    if anchored {
                        assert!(
                            matches!(tag, Tag::Heading { level: HeadingLevel::H3, .. }),
                            "a heading after each anchor"
                        );
                        heading = Some(String::new());
                    }
                    anchored = false;
                }
            }
            Event::End(end) => {
                depth -= 1;
                if depth == 0 {
                    if let (TagEnd::Heading(_), Some(h)) = (end, heading.take()) {
                        found.push(h.split(" · ").next().unwrap().to_string());
                    }
                    anchored = std::mem::take(&mut anchor_paragraph);
                }
            }
            Event::InlineHtml(html) if depth == 1 => {
                anchor_paragraph |= html.starts_with("<a id=\"entry-") || html.starts_with("<a id=\"line-");
            }
            Event::Text(t) | Event::Code(t) if heading.is_some() => heading.as_mut().unwrap().push_str(&t),
            _ => {}
        }
    }
    assert!(!anchored, "the last anchor has no heading");
    found
}

/// The heading each record of the branch should have, from the records themselves.
fn expected_headings(bytes: &[u8], leaf: Option<&str>) -> Vec<String> {
    let session = session_core::Session::load(bytes).unwrap();
    let leaf = leaf.map(|l| PropertyValue::Str(JsStr::owned(l.to_string())));
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
            "session_summary" => "Session summary",
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
    assert!(text.contains("<a id=\"entry-u1\"></a>\n### User · 2026-01-01 00:00:01\n"), "{text}");
    // Times are in the zone of the command line, which the header names.
    let kolkata = String::from_utf8(export(&[f.to_str().unwrap(), "--timezone", "Asia/Kolkata"]).stdout).unwrap();
    assert!(kolkata.contains("### User · 2026-01-01 05:30:01\n"), "{kolkata}");
    assert!(kolkata.contains("- **Started:** 2026-01-01 05:30:00 (times in Asia/Kolkata)\n"), "{kolkata}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "session-scan: redacted: 2 anthropic key, 3 home folder, 1 private key"
    );
    assert_eq!(headings(&text), ["User", "Assistant", "Tool result"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Messages that open an HTML comment, a `<script>` or a fence and never close them: each is
/// closed after its message, and the entries after it keep their headings.
#[test]
fn html_and_fences_a_message_leaves_open_are_closed() {
    let dir = scratch("open-blocks");
    let line = |id: &str, parent: &str, role: &str, text: &str| {
        let entry = serde_json::json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}});
        entry.to_string()
    };
    let lines = [
        HEADER.to_string(),
        line("u1", "x", "user", "<!-- draft, left open\n\nstill in it"),
        line("u2", "u1", "user", "<script>\nalert(1)\n\n"),
        line("u3", "u2", "user", "1. Build:\n   ```sh\n   cargo build"),
        line("u4", "u3", "user", "last"),
    ];
    let path = dir.join("s.jsonl");
    std::fs::write(&path, lines.join("\n").replace(r#""parentId":"x""#, r#""parentId":null"#) + "\n").unwrap();
    let out = export(&[path.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(headings(&text), ["User", "User", "User", "User"], "{text}");
    assert!(text.contains("still in it\n-->\n"), "{text}");
    assert!(text.contains("alert(1)\n\n\n</script>\n"), "{text}");
    assert!(text.contains("   cargo build\n   ```\n"), "{text}");
    // Atomic's session summary (format.md §8) has a heading of its own, with its text quoted.
    let summary = r#"{"type":"session_summary","id":"s1","parentId":"u4","timestamp":"2026-01-01T00:00:02.000Z","summary":"Built it.\nAll green.","summarizedThroughId":"u4"}"#;
    std::fs::write(&path, std::fs::read_to_string(&path).unwrap() + summary + "\n").unwrap();
    let text = String::from_utf8(export(&[path.to_str().unwrap()]).stdout).unwrap();
    assert_eq!(headings(&text), expected_headings(&std::fs::read(&path).unwrap(), None));
    assert!(text.contains("### Session summary · 2026-01-01 00:00:02\n\n> Built it.\n> All green.\n"), "{text}");
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
    assert!(String::from_utf8_lossy(&out.stderr).contains("0000: no session file, folder or session id matches"));
    std::fs::remove_dir_all(&home).unwrap();
}

/// Whether a CommonMark parser (`pulldown-cmark`) finds a top-level `### AFTER` heading after
/// `markdown`: whatever a message leaves open must not take in the entries after it.
fn heading_after(markdown: &str) -> bool {
    use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
    let document = format!("{markdown}\n\n### AFTER\n");
    // Depth 1 is a top-level block.
    let mut depth = 0usize;
    let mut in_top_heading = false;
    for event in Parser::new(&document) {
        match event {
            Event::Start(tag) => {
                depth += 1;
                in_top_heading = depth == 1 && matches!(tag, Tag::Heading { level: HeadingLevel::H3, .. });
            }
            Event::End(end) => {
                depth -= 1;
                in_top_heading &= !matches!(end, TagEnd::Heading(_));
            }
            Event::Text(t) if in_top_heading && &*t == "AFTER" => return true,
            _ => {}
        }
    }
    false
}

/// Lines that open and close fences and HTML blocks of every kind.
const BLOCK_LINES: &[&str] = &[
    "text",
    "",
    "```",
    "````",
    "~~~",
    "``` rust",
    "```a`b",
    "    ```",
    "   ```",
    "<!--",
    "-->",
    "<!-- x -->",
    "<!-->",
    "<pre>",
    "</pre>",
    "<PRE class=x>",
    "<script>",
    "x </script>",
    "x </SCRIPT>",
    "<style",
    "</style>",
    "<textarea>",
    "</textarea>",
    "<?php",
    "?>",
    "<!DOCTYPE",
    "x >",
    "<![CDATA[",
    "]]>",
    "<div>",
    "</div>",
    "<DIV class=\"a\">",
    "<a href='x'>",
    "<a href=x b>",
    "<a =x>",
    "<b/>",
    "</b >",
    "<prefix>",
    "    <!--",
    "  <!--",
    "### inner",
    "#no",
    "---",
    "***",
    "x <!-- y",
    "    code",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

    /// `unclosed_block` says a message leaves a block open exactly when a CommonMark parser finds
    /// the next heading taken in, and the line it gives closes that block.
    #[test]
    fn blocks_left_open_are_found_and_closed_as_commonmark_reads_them(
        lines in proptest::collection::vec(proptest::sample::select(BLOCK_LINES), 0..12)
    ) {
        let text = lines.join("\n");
        let close = session_scan::export::unclosed_block(&text);
        proptest::prop_assert_eq!(close.is_some(), !heading_after(&text), "{:?} {:?}", text, close);
        if let Some(close) = close {
            let closed = format!("{text}\n{close}");
            proptest::prop_assert!(heading_after(&closed), "{:?} closed by {:?}", text, close);
        }
    }
}

/// Containers are not followed (a known limit: a fence closed inside a list item by a line
/// outside it is taken as closed), but the usual shapes hold: a fence left open in a list item
/// is closed there, indented as it was opened, and blocks a quote holds end with the quote.
#[test]
fn blocks_left_open_in_list_items_and_quotes() {
    for text in [
        "1. Build it:\n   ```sh\n   cargo build",
        "- item\n   ```",
        "- item\n  <!--\n  note",
        "> ```\n> code",
        "> <!--",
        "- <pre>\n  x",
    ] {
        let close = session_scan::export::unclosed_block(text);
        let closed = close.as_ref().map_or(text.to_string(), |c| format!("{text}\n{c}"));
        assert!(heading_after(&closed), "{text:?} closed by {close:?}");
    }
    assert_eq!(
        session_scan::export::unclosed_block("1. Build it:\n   ```sh\n   cargo build").as_deref(),
        Some("   ```")
    );
}

/// Images stay at their place among a message's texts, in user and tool-result messages: `export`
/// shows text, image, text in that order, and `grep` finds each text on its own, in order.
#[test]
fn images_stay_between_the_texts_they_were_between() {
    let dir = scratch("images");
    let blocks = r#"[{"type":"text","text":"before the picture"},{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":"after the picture"}]"#;
    let lines = [
        HEADER.to_string(),
        format!(
            r#"{{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":{blocks},"timestamp":1}}}}"#
        ),
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"p.png"}}],"timestamp":2}}"#.to_string(),
        format!(
            r#"{{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"c1","toolName":"read","content":{blocks},"isError":false,"timestamp":3}}}}"#
        ),
    ];
    let path = dir.join("s.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let all = String::from_utf8(export(&[path.to_str().unwrap()]).stdout).unwrap();
    let text = &all[all.find("<a id=\"entry-u1\"").unwrap()..];
    let places: Vec<usize> = ["before the picture", "[image/png]", "after the picture"]
        .iter()
        .map(|t| text.match_indices(t).map(|(k, _)| k).collect::<Vec<_>>())
        .flat_map(|ks| {
            assert_eq!(ks.len(), 2, "{text}");
            ks
        })
        .collect();
    // In each message, the text before, the image, the text after.
    let (user, result) = ([places[0], places[2], places[4]], [places[1], places[3], places[5]]);
    assert!(user.is_sorted() && result.is_sorted() && user[2] < result[0], "{text}");
    let grep = scan().args(["-q", "grep", "--json", "picture"]).arg(&path).output().unwrap();
    let found: Vec<(String, String)> = String::from_utf8(grep.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["kind"].as_str().unwrap_or_default().to_owned(), v["text"].as_str().unwrap_or_default().to_owned())
        })
        .collect();
    let texts: Vec<&str> = found.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(texts.len(), 4, "{found:?}");
    assert!(texts[0].contains("before") && texts[1].contains("after"), "{found:?}");
    assert!(texts[2].contains("before") && texts[3].contains("after"), "{found:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
