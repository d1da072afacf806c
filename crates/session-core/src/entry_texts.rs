//! The texts of an entry, each with what it is (a user's words, a tool's output, a shell
//! command…): what `session-scan grep` searches.

use crate::json::Value;

/// What a piece of text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A user message's text.
    User,
    /// An assistant's text.
    Assistant,
    /// An assistant's thinking.
    Thinking,
    /// A string in a tool call's arguments (a command, a path, a file's new text…).
    ToolCall,
    /// A tool result's text.
    ToolResult,
    /// A shell command run by the user (`!cmd`) or its output.
    Bash,
    /// A compaction's, branch summary's or (Atomic's) session summary's text.
    Summary,
    /// A custom message's text (extensions).
    Custom,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 8] = [
        Kind::User,
        Kind::Assistant,
        Kind::Thinking,
        Kind::ToolCall,
        Kind::ToolResult,
        Kind::Bash,
        Kind::Summary,
        Kind::Custom,
    ];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::Assistant => "assistant",
            Kind::Thinking => "thinking",
            Kind::ToolCall => "tool-call",
            Kind::ToolResult => "tool-result",
            Kind::Bash => "bash",
            Kind::Summary => "summary",
            Kind::Custom => "custom",
        }
    }

    /// The kind a name names.
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// One text of an entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece<'v> {
    /// What it is.
    pub kind: Kind,
    /// The tool's name, for a tool call or result.
    pub tool: Option<&'v Value<'v>>,
    /// The text (a string value of the entry).
    pub text: &'v Value<'v>,
}

/// The texts of an entry (its full value), in the order they appear: the strings of its content
/// and of tool calls' arguments, as written (a string content or `text` blocks; thinking blocks'
/// `thinking`; every string within `arguments`).
pub fn entry_texts<'v>(entry: &'v Value<'v>) -> Vec<Piece<'v>> {
    let mut out = Vec::new();
    let get = |v: &'v Value<'v>, k: &str| v.get(k);
    let ty = get(entry, "type").and_then(Value::as_str).map(|t| t.as_bytes());
    let texts = |kind: Kind, tool: Option<&'v Value<'v>>, content: Option<&'v Value<'v>>, out: &mut Vec<Piece<'v>>| {
        match content {
            Some(text @ Value::String(_)) => out.push(Piece { kind, tool, text }),
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    if b.get("type").and_then(Value::as_str).is_some_and(|t| t.as_bytes() == b"text")
                        && let Some(text @ Value::String(_)) = b.get("text")
                    {
                        out.push(Piece { kind, tool, text });
                    }
                }
            }
            _ => {}
        }
    };
    match ty {
        Some(b"message") => {
            let Some(m) = get(entry, "message").filter(|m| matches!(m, Value::Object(_))) else { return out };
            let role = get(m, "role").and_then(Value::as_str).map(|r| r.as_bytes());
            match role {
                Some(b"user") => texts(Kind::User, None, get(m, "content"), &mut out),
                Some(b"assistant") => match get(m, "content") {
                    Some(Value::Array(blocks)) => {
                        for b in blocks {
                            match b.get("type").and_then(Value::as_str).map(|t| t.as_bytes()) {
                                Some(b"text") => {
                                    if let Some(text @ Value::String(_)) = b.get("text") {
                                        out.push(Piece { kind: Kind::Assistant, tool: None, text });
                                    }
                                }
                                Some(b"thinking") => {
                                    if let Some(text @ Value::String(_)) = b.get("thinking") {
                                        out.push(Piece { kind: Kind::Thinking, tool: None, text });
                                    }
                                }
                                Some(b"toolCall") => {
                                    if let Some(args) = b.get("arguments") {
                                        strings_in(args, &mut |text| {
                                            out.push(Piece { kind: Kind::ToolCall, tool: b.get("name"), text })
                                        });
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    content => texts(Kind::Assistant, None, content, &mut out),
                },
                Some(b"toolResult") => texts(Kind::ToolResult, get(m, "toolName"), get(m, "content"), &mut out),
                Some(b"bashExecution") => {
                    for key in ["command", "output"] {
                        if let Some(text @ Value::String(_)) = get(m, key) {
                            out.push(Piece { kind: Kind::Bash, tool: None, text });
                        }
                    }
                }
                Some(b"branchSummary" | b"compactionSummary") => {
                    if let Some(text @ Value::String(_)) = get(m, "summary") {
                        out.push(Piece { kind: Kind::Summary, tool: None, text });
                    }
                }
                Some(b"custom" | b"hookMessage") => texts(Kind::Custom, None, get(m, "content"), &mut out),
                _ => {}
            }
        }
        Some(b"compaction" | b"branch_summary" | b"session_summary") => {
            if let Some(text @ Value::String(_)) = get(entry, "summary") {
                out.push(Piece { kind: Kind::Summary, tool: None, text });
            }
        }
        Some(b"custom_message") => texts(Kind::Custom, None, get(entry, "content"), &mut out),
        _ => {}
    }
    out
}

/// Every string within `v` (object values and array items, in order; keys are not texts).
fn strings_in<'v>(v: &'v Value<'v>, f: &mut dyn FnMut(&'v Value<'v>)) {
    match v {
        Value::String(_) => f(v),
        Value::Array(items) => items.iter().for_each(|item| strings_in(item, f)),
        Value::Object(o) => o.iter().for_each(|(_, item)| strings_in(item, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds_and_texts(line: &str) -> Vec<(Kind, Option<String>, String)> {
        let arena = bumpalo::Bump::new();
        let v = crate::json::parse_value(line.as_bytes(), &arena).unwrap();
        let s = |v: &Value<'_>| v.as_str().map(|t| t.to_str_lossy().into_owned());
        entry_texts(&v).iter().map(|p| (p.kind, p.tool.and_then(s), s(p.text).unwrap())).collect()
    }

    #[test]
    fn every_kind_of_text_is_found_with_its_tool() {
        let k = |kind, tool: Option<&str>, text: &str| (kind, tool.map(str::to_string), text.to_string());
        assert_eq!(
            kinds_and_texts(
                r#"{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ok"},{"type":"toolCall","name":"edit","arguments":{"path":"a.rs","edits":[{"oldText":"x","newText":"y"}],"n":3}},{"type":"image","data":"zz"}]}}"#
            ),
            [
                k(Kind::Thinking, None, "hm"),
                k(Kind::Assistant, None, "ok"),
                k(Kind::ToolCall, Some("edit"), "a.rs"),
                k(Kind::ToolCall, Some("edit"), "x"),
                k(Kind::ToolCall, Some("edit"), "y"),
            ]
        );
        assert_eq!(
            kinds_and_texts(r#"{"type":"message","message":{"role":"user","content":"hi"}}"#),
            [k(Kind::User, None, "hi")]
        );
        assert_eq!(
            kinds_and_texts(
                r#"{"type":"message","message":{"role":"toolResult","toolName":"bash","content":[{"type":"text","text":"out"},{"type":"image"}]}}"#
            ),
            [k(Kind::ToolResult, Some("bash"), "out")]
        );
        assert_eq!(
            kinds_and_texts(r#"{"type":"message","message":{"role":"bashExecution","command":"ls","output":"a\nb"}}"#),
            [k(Kind::Bash, None, "ls"), k(Kind::Bash, None, "a\nb")]
        );
        // v2's `hookMessage` reads as `custom` (format.md §4).
        assert_eq!(
            kinds_and_texts(r#"{"type":"message","message":{"role":"hookMessage","content":"note"}}"#),
            [k(Kind::Custom, None, "note")]
        );
        for ty in ["compaction", "branch_summary", "session_summary"] {
            let line = format!(r#"{{"type":"{ty}","summary":"s"}}"#);
            assert_eq!(kinds_and_texts(&line), [k(Kind::Summary, None, "s")], "{ty}");
        }
        assert_eq!(
            kinds_and_texts(r#"{"type":"custom_message","content":[{"type":"text","text":"c"}]}"#),
            [k(Kind::Custom, None, "c")]
        );
        // Not texts: labels, names, a message that is not an object, a summary that is not a string.
        for line in [
            r#"{"type":"label","label":"x"}"#,
            r#"{"type":"session_info","name":"x"}"#,
            r#"{"type":"message","message":"x"}"#,
            r#"{"type":"compaction","summary":5}"#,
        ] {
            assert_eq!(kinds_and_texts(line), [], "{line}");
        }
        assert!(Kind::ALL.iter().all(|k| Kind::from_name(k.name()) == Some(*k)));
    }
}
