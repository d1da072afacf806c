//! Atomic's verbatim-lines boundary message (format.md §8 step 3, format.md §8.1): the summary followed by the kept
//! tail, converted the way Atomic's `convertToLlm` converts it and written in its transcript
//! grammar (`[User]: `, `[Assistant thinking]: `, `[Assistant]: `, `[Assistant tool calls]: `,
//! `[Tool result]: `, sections separated by a blank line; images stay separate blocks).

use std::collections::HashSet;

use crate::json::{self, JsStr, Object, Value};

/// The fixed opening of the boundary message (format.md §8 step 3).
pub const BOUNDARY_PREFIX: &str = "The earlier conversation was compacted. Below is the verbatim transcript of the retained lines; elided spans are marked \"(filtered N lines)\".\n\n";

/// The synthetic result of a tool call that was interrupted by a later turn (format.md §8.1).
pub const INTERRUPTED: &str = "Tool execution was interrupted after it started; its result is unavailable. Inspect side effects before deciding whether to retry it.";

enum Piece<'b> {
    Text(Vec<u8>),
    Image(Value<'b>),
}

/// The content blocks of the boundary message: text blocks and image blocks.
pub fn boundary_content<'b>(summary: &[u8], tail: &[Value<'b>]) -> Vec<Value<'b>> {
    let sections = sections(tail);
    let mut blocks: Vec<Value<'b>> = Vec::new();
    let mut text = BOUNDARY_PREFIX.as_bytes().to_vec();
    text.extend_from_slice(summary);
    // A separator only when both the summary and the transcript have something (format.md §8.1).
    let mut need_sep = !summary.is_empty();
    let mut text_open = true;
    for section in sections {
        for (k, piece) in section.into_iter().enumerate() {
            match piece {
                Piece::Text(t) => {
                    if !text_open {
                        blocks.push(text_block(std::mem::take(&mut text)));
                        text_open = true;
                    }
                    if k == 0 && need_sep {
                        text.extend_from_slice(b"\n\n");
                    }
                    text.extend(t);
                    need_sep = true;
                }
                Piece::Image(img) => {
                    blocks.push(text_block(std::mem::take(&mut text)));
                    blocks.push(img);
                    text_open = false;
                    need_sep = false;
                }
            }
        }
    }
    if text_open || !text.is_empty() {
        blocks.push(text_block(text));
    }
    blocks.retain(|b| !(b.get("type").and_then(Value::as_str).is_some_and(|t| *t == "text") && text_of(b).is_empty()));
    blocks
}

fn text_of<'x>(b: &'x Value<'_>) -> &'x [u8] {
    b.get("text").and_then(Value::as_str).map(|s| s.as_bytes()).unwrap_or_default()
}

fn text_block<'b>(text: Vec<u8>) -> Value<'b> {
    let mut o = Object::new();
    o.insert("type", Value::str("text"));
    o.insert("text", Value::String(JsStr(std::borrow::Cow::Owned(text))));
    Value::Object(o)
}

fn role<'x>(m: &'x Value<'_>) -> &'x [u8] {
    m.get("role").and_then(Value::as_str).map(|s| s.as_bytes()).unwrap_or_default()
}

/// Text blocks joined with `\n` and image blocks, from a string or block content.
fn content_pieces<'b>(content: Option<&Value<'b>>) -> (Vec<u8>, Vec<Value<'b>>) {
    match content {
        Some(Value::String(s)) => (s.as_bytes().to_vec(), Vec::new()),
        Some(Value::Array(blocks)) => {
            let mut texts: Vec<&[u8]> = Vec::new();
            let mut images = Vec::new();
            for b in blocks {
                match b.get("type").and_then(Value::as_str).map(|t| t.as_bytes()) {
                    Some(b"text") => texts.push(text_of(b)),
                    Some(b"image") => images.push(b.clone()),
                    _ => {}
                }
            }
            (texts.join(&b"\n"[..]), images)
        }
        _ => (Vec::new(), Vec::new()),
    }
}

fn labelled<'b>(label: &str, text: Vec<u8>, images: Vec<Value<'b>>) -> Vec<Piece<'b>> {
    let mut t = label.as_bytes().to_vec();
    t.extend(text);
    let mut out = vec![Piece::Text(t)];
    out.extend(images.into_iter().map(Piece::Image));
    out
}

/// One section per transcript line, in order.
fn sections<'b>(tail: &[Value<'b>]) -> Vec<Vec<Piece<'b>>> {
    let mut out: Vec<Vec<Piece<'b>>> = Vec::new();
    // Tool calls waiting for a result: (id, index in `out` after which a synthetic result goes).
    let mut open_calls: Vec<Vec<u8>> = Vec::new();
    let mut answered: HashSet<Vec<u8>> = HashSet::new();
    let mut known_calls: HashSet<Vec<u8>> = HashSet::new();
    let interrupt = |out: &mut Vec<Vec<Piece<'b>>>, open: &mut Vec<Vec<u8>>| {
        for _ in open.drain(..) {
            out.push(vec![Piece::Text(format!("[Tool result]: {INTERRUPTED}").into_bytes())]);
        }
    };
    for m in tail {
        match role(m) {
            b"toolResult" => {
                let id = m.get("toolCallId").and_then(Value::as_str).map(|s| s.as_bytes().to_vec()).unwrap_or_default();
                if !known_calls.contains(&id) || !answered.insert(id.clone()) {
                    continue; // orphan or duplicate (format.md §8.1)
                }
                open_calls.retain(|c| *c != id);
                let (text, images) = content_pieces(m.get("content"));
                out.push(labelled("[Tool result]: ", text, images));
            }
            b"assistant" => {
                interrupt(&mut out, &mut open_calls);
                let Some(Value::Array(blocks)) = m.get("content") else { continue };
                let mut thinking: Vec<Vec<u8>> = Vec::new();
                let mut texts: Vec<&[u8]> = Vec::new();
                let mut calls: Vec<Vec<u8>> = Vec::new();
                let aborted = m.get("stopReason").and_then(Value::as_str).is_some_and(|s| *s == "aborted");
                for b in blocks {
                    match b.get("type").and_then(Value::as_str).map(|t| t.as_bytes()) {
                        Some(b"thinking") => thinking.push(
                            b.get("thinking")
                                .and_then(Value::as_str)
                                .map(|s| s.as_bytes().to_vec())
                                .unwrap_or_default(),
                        ),
                        Some(b"redacted_thinking") => thinking.push(Vec::new()),
                        Some(b"text") => texts.push(text_of(b)),
                        Some(b"toolCall") => {
                            calls.push(render_call(b));
                            let id =
                                b.get("id").and_then(Value::as_str).map(|s| s.as_bytes().to_vec()).unwrap_or_default();
                            known_calls.insert(id.clone());
                            if !aborted {
                                open_calls.push(id);
                            }
                        }
                        _ => {}
                    }
                }
                let mut section = Vec::new();
                if !thinking.is_empty() {
                    let mut t = b"[Assistant thinking]: ".to_vec();
                    t.extend(thinking.join(&b"\n"[..]));
                    section.push(t);
                }
                if !texts.is_empty() {
                    let mut t = b"[Assistant]: ".to_vec();
                    t.extend(texts.join(&b"\n"[..]));
                    section.push(t);
                }
                if !calls.is_empty() {
                    let mut t = b"[Assistant tool calls]: ".to_vec();
                    t.extend(calls.join(&b"; "[..]));
                    section.push(t);
                }
                for t in section {
                    out.push(vec![Piece::Text(t)]);
                }
            }
            r => {
                let (text, images) = match r {
                    b"user" => content_pieces(m.get("content")),
                    b"custom" if !m.get("excludeFromContext").is_some_and(Value::is_truthy) => {
                        content_pieces(m.get("content"))
                    }
                    b"bashExecution" if !m.get("excludeFromContext").is_some_and(Value::is_truthy) => {
                        (crate::context::bash_text(m), Vec::new())
                    }
                    b"branchSummary" => {
                        let mut t = crate::context::BRANCH_SUMMARY_PREFIX.as_bytes().to_vec();
                        t.extend(
                            m.get("summary").and_then(Value::as_str).map(|s| s.as_bytes().to_vec()).unwrap_or_default(),
                        );
                        t.extend_from_slice(crate::context::BRANCH_SUMMARY_SUFFIX.as_bytes());
                        (t, Vec::new())
                    }
                    _ => continue,
                };
                if crate::text::js_trim(&text).is_empty() && images.is_empty() {
                    continue; // whitespace-only or null user turns are dropped (format.md §8.1)
                }
                interrupt(&mut out, &mut open_calls);
                out.push(labelled("[User]: ", text, images));
            }
        }
    }
    out
}

/// `name(k=<json>, …)`; a call without arguments renders as `name()` (Atomic throws there).
fn render_call(b: &Value<'_>) -> Vec<u8> {
    let mut t = b.get("name").and_then(Value::as_str).map(|s| s.as_bytes().to_vec()).unwrap_or_default();
    t.push(b'(');
    if let Some(Value::Object(args)) = b.get("arguments") {
        for (k, (key, v)) in args.iter().enumerate() {
            if k > 0 {
                t.extend_from_slice(b", ");
            }
            t.extend_from_slice(key.as_bytes());
            t.push(b'=');
            json::write_json(v, &mut t);
        }
    }
    t.push(b')');
    t
}
