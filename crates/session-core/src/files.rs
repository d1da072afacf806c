//! The files a session read and changed, as Pi 1.6's compaction lists them: its
//! `extractFileOpsFromMessage` over every message entry of the file (all branches), then its
//! `computeFileLists` (files only read; files edited or written; each sorted as JavaScript sorts
//! strings).

use ahash::AHashSet;
use bumpalo::Bump;
use memchr::memmem;

use crate::json::{JsStr, Value};
use crate::session::{Diagnostic, Session};

/// `computeFileLists`: paths as the tool calls give them, not resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileLists {
    /// Read and never edited or written.
    pub read_files: Vec<JsStr<'static>>,
    /// Edited or written.
    pub modified_files: Vec<JsStr<'static>>,
}

/// `createFileOps()`: the paths of each kind of call, as sets.
#[derive(Default)]
struct FileOps {
    read: AHashSet<Vec<u8>>,
    written: AHashSet<Vec<u8>>,
    edited: AHashSet<Vec<u8>>,
}

impl FileOps {
    /// `addFileOp(toolName, args)`: a `read`, `write` or `edit` call with a non-empty string `path`.
    fn add(&mut self, name: Option<&Value<'_>>, args: Option<&Value<'_>>) {
        let Some(Value::String(path)) = args.and_then(|a| a.get("path")) else { return };
        if path.is_empty() {
            return;
        }
        let set = match name.and_then(Value::as_str).map(JsStr::as_bytes) {
            Some(b"read") => &mut self.read,
            Some(b"write") => &mut self.written,
            Some(b"edit") => &mut self.edited,
            _ => return,
        };
        set.insert(path.as_bytes().to_vec());
    }
}

/// Why Pi's `extractFileOpsFromMessage` throws on a tool result's `nestedCalls.calls` at `index`
/// (`None`: it does not): it iterates the value with `for … of` and reads `.name` of each item.
fn nested_calls_throw(calls: &Value<'_>) -> Option<&'static str> {
    match calls {
        Value::Object(_) | Value::Number(_) | Value::Bool(_) => Some("nestedCalls.calls is not iterable"),
        Value::Array(items) if items.iter().any(|c| matches!(c, Value::Null)) => {
            Some("an item of nestedCalls.calls is null")
        }
        _ => None,
    }
}

/// `extractFileOpsFromMessage(message, fileOps)`; `Err` where Pi throws, after the calls it
/// took in before throwing.
fn extract(message: &Value<'_>, ops: &mut FileOps) -> Result<(), &'static str> {
    let role = message.get("role").and_then(Value::as_str).map(JsStr::as_bytes);
    if role == Some(b"toolResult") {
        // `message.nestedCalls?.calls ?? []`: calls made from codemode scripts.
        let Some(calls) = message.get("nestedCalls").and_then(|n| n.as_object()).and_then(|n| n.get("calls")) else {
            return Ok(());
        };
        if let Value::Array(items) = calls {
            for call in items {
                if matches!(call, Value::Null) {
                    break;
                }
                ops.add(call.get("name"), call.get("arguments"));
            }
        }
        return nested_calls_throw(calls).map_or(Ok(()), Err);
    }
    if role != Some(b"assistant") {
        return Ok(());
    }
    let Some(Value::Array(blocks)) = message.get("content") else { return Ok(()) };
    for block in blocks {
        let Value::Object(b) = block else { continue };
        if !matches!(b.get("type"), Some(Value::String(t)) if t.as_bytes() == b"toolCall") {
            continue;
        }
        if !b.contains_key("arguments") || !b.contains_key("name") {
            continue;
        }
        ops.add(b.get("name"), b.get("arguments"));
    }
    Ok(())
}

/// Whether a message line of `role` may hold what [`extract`] looks at: an assistant's tool
/// calls, a tool result's nested calls (other roles hold nothing), or an escaped ASCII letter
/// (`\u0041`-`\u007F`) that could spell the word.
fn may_hold_file_ops(line: &[u8], role: &[u8]) -> bool {
    let word: &[u8] = match role {
        b"assistant" => b"toolCall",
        b"toolResult" => b"nestedCalls",
        _ => return false,
    };
    memmem::find(line, word).is_some()
        || memmem::find_iter(line, b"\\u00").any(|at| matches!(line.get(at + 4), Some(b'4'..=b'7')))
}

/// JavaScript's default sort: by UTF-16 code units.
fn js_sorted(set: impl IntoIterator<Item = Vec<u8>>) -> Vec<JsStr<'static>> {
    let mut keyed: Vec<(Vec<u16>, Vec<u8>)> = set.into_iter().map(|p| (crate::search::utf16(&p), p)).collect();
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    keyed.into_iter().map(|(_, p)| JsStr(p.into())).collect()
}

/// The files `session` read and changed, and where Pi's own code would throw instead (such a
/// message gives the calls before the throw, then nothing more).
pub fn file_lists(session: &Session<'_>) -> (FileLists, Vec<Diagnostic>) {
    let mut ops = FileOps::default();
    let mut diagnostics = Vec::new();
    let mut arena = Bump::new();
    for entry in session.records.iter().skip(1) {
        let role = entry.role();
        let Some(role) = role.as_str().filter(|_| entry.is_type("message")) else { continue };
        if !may_hold_file_ops(entry.line, role.as_bytes()) {
            continue;
        }
        arena.reset();
        let Ok(value) = entry.value(&arena) else { continue };
        let Some(message @ Value::Object(_)) = value.get("message") else { continue };
        if let Err(why) = extract(message, &mut ops) {
            diagnostics.push(Diagnostic {
                line: entry.line_number,
                offset: entry.offset,
                message: format!("{why}: Pi's extractFileOpsFromMessage throws here (compaction fails); calls after it are not counted"),
            });
        }
    }
    let FileOps { read, written, edited } = ops;
    let modified: AHashSet<Vec<u8>> = edited.into_iter().chain(written).collect();
    let read_only: Vec<Vec<u8>> = read.into_iter().filter(|p| !modified.contains(p)).collect();
    (FileLists { read_files: js_sorted(read_only), modified_files: js_sorted(modified) }, diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(lines: &[&str]) -> (Vec<String>, Vec<String>, usize) {
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
        let text = std::iter::once(header).chain(lines.iter().copied()).collect::<Vec<_>>().join("\n") + "\n";
        let session = Session::load(text.as_bytes()).unwrap_or_else(|e| panic!("{e:?}"));
        let (l, d) = file_lists(&session);
        let s = |v: &[JsStr<'_>]| v.iter().map(|p| p.to_str_lossy().into_owned()).collect();
        (s(&l.read_files), s(&l.modified_files), d.len())
    }

    fn assistant(blocks: &str) -> String {
        format!(
            r#"{{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{{"role":"assistant","content":[{blocks}]}}}}"#
        )
    }

    #[test]
    fn reads_edits_and_writes_as_pi_lists_them() {
        let a = assistant(
            r#"{"type":"toolCall","name":"read","arguments":{"path":"b"}},{"type":"toolCall","name":"read","arguments":{"path":"a"}},{"type":"toolCall","name":"edit","arguments":{"path":"b"}},{"type":"toolCall","name":"write","arguments":{"path":"c"}},{"type":"toolCall","name":"bash","arguments":{"path":"d"}},{"type":"toolCall","name":"read","arguments":{"path":""}},{"type":"toolCall","name":"read"},{"type":"text","name":"read","arguments":{"path":"e"}}"#,
        );
        assert_eq!(lists(&[&a]), (vec!["a".into()], vec!["b".into(), "c".into()], 0));
    }

    #[test]
    fn nested_calls_count_until_pi_would_throw() {
        let result = |calls: &str| {
            format!(
                r#"{{"type":"message","id":"r","parentId":null,"timestamp":"t","message":{{"role":"toolResult","content":[],"nestedCalls":{{"calls":{calls}}}}}}}"#
            )
        };
        let first =
            result(r#"[{"name":"read","arguments":{"path":"x"}},null,{"name":"edit","arguments":{"path":"y"}}]"#);
        assert_eq!(lists(&[&first]), (vec!["x".into()], vec![], 1));
        assert_eq!(lists(&[&result(r#"{"0":{"name":"read"}}"#)]), (vec![], vec![], 1));
        assert_eq!(lists(&[&result(r#""read""#)]), (vec![], vec![], 0));
    }

    #[test]
    fn sorted_by_utf16_units_and_found_through_escapes() {
        // U+1F600 is a surrogate pair (0xD83D…), below U+FFFD in UTF-16 though above it in UTF-8.
        let a = assistant(
            r#"{"type":"tool\u0043all","name":"read","arguments":{"path":"\uFFFD"}},{"type":"toolCall","name":"read","arguments":{"path":"😀"}}"#,
        );
        assert_eq!(lists(&[&a]), (vec!["😀".into(), "\u{FFFD}".into()], vec![], 0));
    }
}
