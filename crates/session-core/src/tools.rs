//! The tool calls of a session (every branch) with their results: which tool, whether it
//! failed, and how long from the assistant's message to the result's entry.

use crate::Session;
use crate::json::{self, Value};

/// One tool call and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call's `id` (`""` when not a string): copied as it is into forks and clones.
    pub call_id: String,
    /// The tool's `name` (`""` when not a string).
    pub name: String,
    /// The assistant message entry's time (ms; `NaN` when its `timestamp` does not parse).
    pub called_ms: f64,
    /// The 1-based line of the assistant message.
    pub line: u64,
    /// The length of the call's `arguments` as JSON text, in bytes (0 when it has none).
    pub arguments_bytes: u64,
    /// The first tool result with this call's id, later in the file: its entry time (ms) and
    /// whether it has `isError: true`.
    pub result: Option<ToolOutcome>,
}

/// A tool result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolOutcome {
    /// The result entry's time (ms; `NaN` when it does not parse).
    pub at_ms: f64,
    /// `isError: true`.
    pub is_error: bool,
    /// The 1-based line of the result's entry.
    pub line: u64,
}

impl ToolCall {
    /// From the assistant's message to its result's entry (ms), when both times are known and
    /// in order: the tool's run and the writing of its result (Pi writes the assistant's entry
    /// when its message ends, and the result's when the tool has run).
    pub fn duration_ms(&self) -> Option<f64> {
        let d = self.result?.at_ms - self.called_ms;
        (d >= 0.0).then_some(d)
    }
}

fn text(v: Option<&Value<'_>>) -> String {
    v.and_then(Value::as_str).map(|s| s.to_str_lossy().into_owned()).unwrap_or_default()
}

/// Every `toolCall` block of the session's assistant messages, in file order, each with the first
/// later tool result that names its id (`toolCallId`).
pub fn tool_calls(session: &Session<'_>) -> Vec<ToolCall> {
    let mut calls: Vec<ToolCall> = Vec::new();
    // Calls still waiting for their result, by id: the latest call of an id takes a result.
    let mut waiting: ahash::AHashMap<String, usize> = ahash::AHashMap::new();
    let mut arena = bumpalo::Bump::new();
    for (_, entry) in session.entries() {
        let role = entry.role();
        let assistant = role.is("assistant");
        if !assistant && !role.is("toolResult") {
            continue;
        }
        arena.reset();
        let Ok(value) = entry.value(&arena) else { continue };
        let Some(m) = value.get("message") else { continue };
        let at = entry.timestamp.time_value(&session.local_zone);
        if assistant {
            let Some(Value::Array(blocks)) = m.get("content") else { continue };
            for b in blocks {
                if b.get("type").and_then(Value::as_str).is_some_and(|t| t.as_bytes() == b"toolCall") {
                    let call_id = text(b.get("id"));
                    waiting.insert(call_id.clone(), calls.len());
                    calls.push(ToolCall {
                        call_id,
                        name: text(b.get("name")),
                        called_ms: at,
                        line: entry.line_number,
                        arguments_bytes: b.get("arguments").map_or(0, |a| json::to_json(a).len() as u64),
                        result: None,
                    });
                }
            }
        } else if let Some(k) = waiting.remove(&text(m.get("toolCallId"))) {
            let is_error = m.get("isError") == Some(&Value::Bool(true));
            calls[k].result = Some(ToolOutcome { at_ms: at, is_error, line: entry.line_number });
        }
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_meet_their_results_by_id() {
        let file = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{}},{"type":"toolCall","id":"c2","name":"read","arguments":{}}]}}
{"type":"message","id":"r2","parentId":"a1","timestamp":"2026-01-01T00:00:01.250Z","message":{"role":"toolResult","toolCallId":"c2","toolName":"read","content":[],"isError":true}}
{"type":"message","id":"r1","parentId":"r2","timestamp":"2026-01-01T00:00:03.500Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[],"isError":false}}
{"type":"message","id":"r9","parentId":"r1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"toolResult","toolCallId":"c1","content":[]}}
{"type":"message","id":"a2","parentId":"r9","timestamp":"bad","message":{"role":"assistant","content":[{"type":"toolCall","id":7,"name":"edit"}]}}
"#;
        let s = Session::load(file.as_bytes()).unwrap();
        let calls = tool_calls(&s);
        let summary: Vec<_> = calls
            .iter()
            .map(|c| (c.name.as_str(), c.call_id.as_str(), c.line, c.duration_ms(), c.result.map(|r| r.is_error)))
            .collect();
        assert_eq!(
            summary,
            [
                ("bash", "c1", 2, Some(2500.0), Some(false)),
                ("read", "c2", 2, Some(250.0), Some(true)),
                ("edit", "", 6, None, None),
            ]
        );
    }
}
