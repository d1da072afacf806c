//! The Atomic dialect on hand-made sessions, with expected outputs written from the rules of
//! `docs/format.md` §8 and §8.1 (Atomic has no runnable reference here).

#![allow(clippy::unwrap_used)] // hand-made inputs; a panic is a failed test

use bumpalo::Bump;
use session_core::Session;
use session_core::context::atomic_transcript::{BOUNDARY_PREFIX, INTERRUPTED};
use session_core::context::{Dialect, LeafChoice, build_context};
use session_core::json::{Value, to_json};

const HEADER: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

fn user(id: &str, parent: &str, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
    )
}

fn assistant(id: &str, parent: &str, content: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":{content},"provider":"p","model":"m","stopReason":"stop","timestamp":2}}}}"#
    )
}

fn tool_result(id: &str, parent: &str, call: &str, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"{call}","toolName":"bash","content":[{{"type":"text","text":"{text}"}}],"isError":false,"timestamp":3}}}}"#
    )
}

fn compaction(id: &str, parent: &str, first_kept: &str, strategy: &str, summary: &str) -> String {
    format!(
        r#"{{"type":"compaction","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:10.000Z","summary":"{summary}","firstKeptEntryId":{first_kept},"tokensBefore":100,"details":{{"strategy":"{strategy}","promptVersion":3,"extra":1}}}}"#
    )
}

fn context(lines: &[String]) -> Vec<Value<'static>> {
    let file = format!("{HEADER}\n{}\n", lines.join("\n"));
    let s = Session::load(file.as_bytes()).unwrap();
    let arena = Bump::new();
    let ctx = build_context(&s, &LeafChoice::Session, Dialect::Atomic, &arena);
    ctx.messages.iter().map(|m| m.to_value(&arena).into_owned()).collect()
}

fn text(v: &Value<'_>) -> String {
    v.as_str().unwrap().to_str_lossy().into_owned()
}

#[test]
fn retired_pi_compactions_are_inert() {
    // format.md §8 step 2: without a verbatim-lines boundary the whole history re-enters the context.
    // format.md §8.1: the strategy check is case-sensitive.
    let ms = context(&[
        user("u1", "null", "one"),
        assistant("a1", "u1", r#"[{"type":"text","text":"two"}]"#),
        compaction("c1", "a1", r#""u1""#, "Verbatim-Lines", "old summary"),
        user("u2", "\"c1\"", "three"),
    ]);
    let roles: Vec<String> = ms.iter().map(|m| text(m.get("role").unwrap())).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
}

#[test]
fn verbatim_boundary_carries_summary_and_kept_tail_as_transcript() {
    // format.md §8 step 3 and format.md §8.1: one custom message; the kept tail is serialised, never re-emitted;
    // the stored details go out unchanged; post-boundary entries follow as messages.
    let ms = context(&[
        user("u1", "null", "dropped"),
        user("u2", "\"u1\"", "keep me"),
        assistant(
            "a1",
            "u2",
            r#"[{"type":"thinking","thinking":"hm"},{"type":"redacted_thinking"},{"type":"text","text":"ok"},{"type":"toolCall","id":"t1","name":"bash","arguments":{"cmd":"ls","n":2}},{"type":"toolCall","id":"t2","name":"noop","arguments":{}}]"#,
        ),
        tool_result("r1", "a1", "t1", "file.txt"),
        tool_result("r9", "r1", "zz", "orphan"),
        user("u3", "\"r9\"", "next"),
        compaction("c1", "u3", r#""u2""#, "verbatim-lines", "S"),
        user("u4", "\"c1\"", "after"),
    ]);
    assert_eq!(ms.len(), 2);
    let b = &ms[0];
    assert_eq!(text(b.get("role").unwrap()), "custom");
    assert_eq!(text(b.get("customType").unwrap()), "compaction");
    assert_eq!(b.get("display"), Some(&Value::Bool(true)));
    assert_eq!(to_json(b.get("details").unwrap()), r#"{"strategy":"verbatim-lines","promptVersion":3,"extra":1}"#);
    let blocks = b.get("content").unwrap().as_array().unwrap();
    assert_eq!(blocks.len(), 1);
    let expected = format!(
        "{BOUNDARY_PREFIX}S\n\n[User]: keep me\n\n[Assistant thinking]: hm\n\n\n[Assistant]: ok\n\n\
         [Assistant tool calls]: bash(cmd=\"ls\", n=2); noop()\n\n[Tool result]: file.txt\n\n\
         [Tool result]: {INTERRUPTED}\n\n[User]: next"
    );
    assert_eq!(text(blocks[0].get("text").unwrap()), expected);
    assert_eq!(text(ms[1].get("content").unwrap()), "after");
}

#[test]
fn null_first_kept_gives_the_boundary_alone_without_separator() {
    // format.md §8 step 3: `firstKeptEntryId: null` emits the boundary and the post-boundary messages;
    // format.md §8.1: no separator when the kept range holds no messages.
    let ms = context(&[
        user("u1", "null", "before"),
        compaction("c1", "u1", "null", "verbatim-lines", "S"),
        user("u2", "\"c1\"", "after"),
    ]);
    assert_eq!(ms.len(), 2);
    let blocks = ms[0].get("content").unwrap().as_array().unwrap();
    assert_eq!(text(blocks[0].get("text").unwrap()), format!("{BOUNDARY_PREFIX}S"));
}

#[test]
fn only_the_last_verbatim_boundary_counts_and_images_stay_blocks() {
    // format.md §8 step 1: a later retired compaction does not hide an earlier verbatim one.
    // format.md §8.1: an image stays a block at its place, the text before it ended by a line
    // break; the next section opens after it with its blank line.
    let ms = context(&[
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","data":"AAAA","mimeType":"image/png"}],"timestamp":1}}"#.to_string(),
        user("u2", "\"u1\"", "and then"),
        compaction("c1", "u2", r#""u1""#, "verbatim-lines", ""),
        compaction("c2", "c1", r#""u2""#, "llm-summary", "retired"),
        user("u3", "\"c2\"", "after"),
    ]);
    assert_eq!(ms.len(), 2);
    let blocks = ms[0].get("content").unwrap().as_array().unwrap();
    assert_eq!(blocks.len(), 3);
    assert_eq!(text(blocks[0].get("text").unwrap()), format!("{BOUNDARY_PREFIX}[User]: look\n"));
    assert_eq!(text(blocks[1].get("type").unwrap()), "image");
    assert_eq!(text(blocks[2].get("text").unwrap()), "\n\n[User]: and then");
}

/// The boundary message's blocks for a kept tail of these message contents (user messages, or
/// tool results answering a call of the assistant before them), then an assistant reply `R`:
/// `T:` and the text of a text block, `I:` and the image's data for an image.
fn kept_tail_blocks(contents: &[(&str, &str)]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut parent = "null".to_string();
    for (k, (role, content)) in contents.iter().enumerate() {
        let id = format!("m{k}");
        let line = if *role == "toolResult" {
            lines.push(assistant(
                &format!("a{k}"),
                parent.trim_matches('"'),
                &format!(r#"[{{"type":"toolCall","id":"t{k}","name":"read","arguments":{{"path":"x"}}}}]"#),
            ));
            parent = format!("\"a{k}\"");
            format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"t{k}","toolName":"read","content":{content},"isError":false,"timestamp":3}}}}"#
            )
        } else {
            format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":{content},"timestamp":1}}}}"#
            )
        };
        lines.push(line);
        parent = format!("\"{id}\"");
    }
    lines.push(assistant("r", parent.trim_matches('"'), r#"[{"type":"text","text":"R"}]"#));
    let first = if contents.first().is_some_and(|(role, _)| *role == "toolResult") { "a0" } else { "m0" };
    lines.push(compaction("c", "r", &format!("\"{first}\""), "verbatim-lines", "S"));
    let ms = context(&lines);
    let blocks = ms[0].get("content").unwrap().as_array().unwrap();
    blocks
        .iter()
        .map(|b| match text(b.get("type").unwrap()).as_str() {
            "text" => format!("T:{}", text(b.get("text").unwrap()).trim_start_matches(BOUNDARY_PREFIX)),
            _ => format!("I:{}", text(b.get("data").unwrap())),
        })
        .collect()
}

#[test]
fn kept_tail_images_stay_at_their_place_in_every_shape() {
    let img = |d: &str| format!(r#"{{"type":"image","data":"{d}","mimeType":"image/png"}}"#);
    let txt = |t: &str| format!(r#"{{"type":"text","text":"{t}"}}"#);
    let blocks = |items: &[String]| format!("[{}]", items.join(","));
    // (the tail's messages by role and content, the boundary's blocks)
    type Case<'a> = (Vec<(&'a str, String)>, Vec<&'a str>);
    let cases: Vec<Case<'_>> = vec![
        // Text, image, text: a line break ends the text before the image; the text after it
        // starts the next block, which the following sections continue.
        (
            vec![("user", blocks(&[txt("A"), img("1"), txt("B")]))],
            vec!["T:S\n\n[User]: A\n", "I:1", "T:B\n\n[Assistant]: R"],
        ),
        // An image first: nothing came before it in the message, so no line break.
        (vec![("user", blocks(&[img("1"), txt("A")]))], vec!["T:S\n\n[User]: ", "I:1", "T:A\n\n[Assistant]: R"]),
        // An image last: the line break before it stays (only a text's last break is dropped).
        (vec![("user", blocks(&[txt("A"), img("1")]))], vec!["T:S\n\n[User]: A\n", "I:1", "T:\n\n[Assistant]: R"]),
        // Images in a row: a line break of its own between them.
        (
            vec![("user", blocks(&[txt("A"), img("1"), img("2"), txt("B")]))],
            vec!["T:S\n\n[User]: A\n", "I:1", "T:\n", "I:2", "T:B\n\n[Assistant]: R"],
        ),
        // A message that is only an image.
        (vec![("user", blocks(&[img("1")]))], vec!["T:S\n\n[User]: ", "I:1", "T:\n\n[Assistant]: R"]),
        // A string message, and texts that run on into each other.
        (vec![("user", "\"hello\"".to_string())], vec!["T:S\n\n[User]: hello\n\n[Assistant]: R"]),
        (vec![("user", blocks(&[txt("A"), txt("B\\n")]))], vec!["T:S\n\n[User]: AB\n\n[Assistant]: R"]),
        // Empty texts beside images add nothing, not even the line break.
        (vec![("user", blocks(&[txt(""), img("1"), txt("")]))], vec!["T:S\n\n[User]: ", "I:1", "T:\n\n[Assistant]: R"]),
        // In a tool result, the same.
        (
            vec![("toolResult", blocks(&[txt("out"), img("1"), txt("more")]))],
            vec![
                "T:S\n\n[Assistant tool calls]: read(path=\"x\")\n\n[Tool result]: out\n",
                "I:1",
                "T:more\n\n[Assistant]: R",
            ],
        ),
        // Two messages with images: each image at its place.
        (
            vec![("user", blocks(&[txt("A"), img("1")])), ("user", blocks(&[img("2"), txt("B")]))],
            vec!["T:S\n\n[User]: A\n", "I:1", "T:\n\n[User]: ", "I:2", "T:B\n\n[Assistant]: R"],
        ),
    ];
    for (contents, want) in cases {
        let refs: Vec<(&str, &str)> = contents.iter().map(|(r, c)| (*r, c.as_str())).collect();
        assert_eq!(kept_tail_blocks(&refs), want, "{contents:?}");
    }
}
