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

/// One piece of the transcript: text, or an image kept at its place.
enum Chunk<'b> {
    Text(Vec<u8>),
    Image(Value<'b>),
}

/// Adds text to the last text chunk, or as a new one after an image; empty text adds nothing.
fn append_text(chunks: &mut Vec<Chunk<'_>>, text: &[u8]) {
    if text.is_empty() {
        return;
    }
    match chunks.last_mut() {
        Some(Chunk::Text(last)) => last.extend_from_slice(text),
        _ => chunks.push(Chunk::Text(text.to_vec())),
    }
}

/// Whether a section has something to show: an image, or text that is not empty.
fn has_content(chunks: &[Chunk<'_>]) -> bool {
    chunks.iter().any(|c| match c {
        Chunk::Text(t) => !t.is_empty(),
        Chunk::Image(_) => true,
    })
}

/// Appends a section: a blank line after what came before, its header, then its chunks (text
/// merging into the running text, images kept apart). A section with nothing to show is left out.
fn push_section<'b>(out: &mut Vec<Chunk<'b>>, header: &str, section: Vec<Chunk<'b>>) {
    if !has_content(&section) {
        return;
    }
    let mut head = if out.is_empty() { Vec::new() } else { b"\n\n".to_vec() };
    head.extend_from_slice(header.as_bytes());
    append_text(out, &head);
    for chunk in section {
        match chunk {
            Chunk::Text(t) => append_text(out, &t),
            Chunk::Image(img) => out.push(Chunk::Image(img)),
        }
    }
}

/// The content blocks of the boundary message: Atomic's fixed sentence and the summary, then the
/// kept tail's transcript (after a blank line when both have something), images at their place.
pub fn boundary_content<'b>(summary: &[u8], tail: &[Value<'b>]) -> Vec<Value<'b>> {
    let transcript = transcript(tail);
    let mut text = BOUNDARY_PREFIX.as_bytes().to_vec();
    text.extend_from_slice(summary);
    let mut chunks = vec![Chunk::Text(text)];
    if !transcript.is_empty() && !summary.is_empty() {
        append_text(&mut chunks, b"\n\n");
    }
    for chunk in transcript {
        match chunk {
            Chunk::Text(t) => append_text(&mut chunks, &t),
            Chunk::Image(img) => chunks.push(Chunk::Image(img)),
        }
    }
    chunks
        .into_iter()
        .map(|c| match c {
            Chunk::Text(t) => text_block(t),
            Chunk::Image(img) => img,
        })
        .collect()
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

/// A user or tool-result message's content as retained chunks: a string is one text; blocks are
/// taken in order, texts running on into each other, an image kept as its own chunk after a line
/// break ended the text before it (when the message has produced something), so that the text
/// after it starts a new chunk; one line break ending the last text is dropped.
fn content_chunks<'b>(content: Option<&Value<'b>>) -> Vec<Chunk<'b>> {
    let mut chunks = Vec::new();
    match content {
        Some(Value::String(s)) => append_text(&mut chunks, s.as_bytes()),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                match b.get("type").and_then(Value::as_str).map(|t| t.as_bytes()) {
                    Some(b"text") => append_text(&mut chunks, text_of(b)),
                    Some(b"image") => {
                        if !chunks.is_empty() {
                            append_text(&mut chunks, b"\n");
                        }
                        chunks.push(Chunk::Image(b.clone()));
                    }
                    _ => {}
                }
            }
            if let Some(Chunk::Text(last)) = chunks.last_mut()
                && last.last() == Some(&b'\n')
            {
                last.pop();
            }
        }
        _ => {}
    }
    chunks
}

/// The text of a message's chunks, for the test of an empty turn.
fn chunk_text(chunks: &[Chunk<'_>]) -> Vec<u8> {
    chunks.iter().filter_map(|c| if let Chunk::Text(t) = c { Some(&t[..]) } else { None }).collect::<Vec<_>>().concat()
}

/// The kept tail as transcript chunks, after Atomic's `convertToLlm`.
fn transcript<'b>(tail: &[Value<'b>]) -> Vec<Chunk<'b>> {
    let mut out: Vec<Chunk<'b>> = Vec::new();
    // Tool calls waiting for a result: (id, index in `out` after which a synthetic result goes).
    let mut open_calls: Vec<Vec<u8>> = Vec::new();
    let mut answered: HashSet<Vec<u8>> = HashSet::new();
    let mut known_calls: HashSet<Vec<u8>> = HashSet::new();
    let interrupt = |out: &mut Vec<Chunk<'b>>, open: &mut Vec<Vec<u8>>| {
        for _ in open.drain(..) {
            push_section(out, "[Tool result]: ", vec![Chunk::Text(INTERRUPTED.as_bytes().to_vec())]);
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
                push_section(&mut out, "[Tool result]: ", content_chunks(m.get("content")));
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
                if !thinking.is_empty() {
                    push_section(&mut out, "[Assistant thinking]: ", vec![Chunk::Text(thinking.join(&b"\n"[..]))]);
                }
                if !texts.is_empty() {
                    push_section(&mut out, "[Assistant]: ", vec![Chunk::Text(texts.join(&b"\n"[..]))]);
                }
                if !calls.is_empty() {
                    push_section(&mut out, "[Assistant tool calls]: ", vec![Chunk::Text(calls.join(&b"; "[..]))]);
                }
            }
            r => {
                let chunks = match r {
                    b"user" => content_chunks(m.get("content")),
                    b"custom" if !m.get("excludeFromContext").is_some_and(Value::is_truthy) => {
                        content_chunks(m.get("content"))
                    }
                    b"bashExecution" if !m.get("excludeFromContext").is_some_and(Value::is_truthy) => {
                        vec![Chunk::Text(crate::context::bash_text(m))]
                    }
                    b"branchSummary" => {
                        let mut t = crate::context::BRANCH_SUMMARY_PREFIX.as_bytes().to_vec();
                        t.extend(
                            m.get("summary").and_then(Value::as_str).map(|s| s.as_bytes().to_vec()).unwrap_or_default(),
                        );
                        t.extend_from_slice(crate::context::BRANCH_SUMMARY_SUFFIX.as_bytes());
                        vec![Chunk::Text(t)]
                    }
                    _ => continue,
                };
                let images = chunks.iter().any(|c| matches!(c, Chunk::Image(_)));
                if crate::text::js_trim(&chunk_text(&chunks)).is_empty() && !images {
                    continue; // whitespace-only or null user turns are dropped (format.md §8.1)
                }
                interrupt(&mut out, &mut open_calls);
                push_section(&mut out, "[User]: ", chunks);
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
