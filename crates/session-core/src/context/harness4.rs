//! Harness generation C (format.md §7.6): pi-agent-core 0.85–0.99's `JsonlSessionRepo` files ("format 4":
//! a `{"v":4,"kind":"header"}` line, then one write transaction per line), their branch tips, and
//! the bounded context from a tip (`readBoundedContext`).

use ahash::AHashMap;
use bumpalo::Bump;

use crate::context::{Message, branch_summary, compaction_summary};
use crate::json::{self, JsStr, Value};

/// Why a format-4 file cannot be opened (the reference fails the whole open).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format4Error {
    /// 1-based line, when one line is the cause.
    pub line: Option<u64>,
    /// Byte offset of that line.
    pub offset: Option<u64>,
    /// The reason.
    pub reason: String,
}

impl std::fmt::Display for Format4Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// One stored entry: the write object itself.
#[derive(Debug, Clone)]
pub struct Entry4<'b> {
    /// The entry's id.
    pub id: JsStr<'b>,
    /// Index of the parent entry.
    pub parent: Option<usize>,
    /// The whole write (`kind`, `id`, `parentId`, `type`, the type's fields, `seq`, `timestamp`).
    pub write: Value<'b>,
    /// 1-based line of the transaction that wrote it.
    pub line: u64,
    /// Byte offset of that line.
    pub offset: u64,
}

/// A loaded format-4 file.
#[derive(Debug, Clone)]
pub struct Format4<'b> {
    /// The header object.
    pub header: Value<'b>,
    /// Entries in file order.
    pub entries: Vec<Entry4<'b>>,
    by_id: AHashMap<Vec<u8>, usize>,
    /// `(namespace, key)` to the last value set there (`None` once deleted).
    values: AHashMap<(Vec<u8>, Vec<u8>), Option<Value<'b>>>,
}

/// Whether the first line of a file is a format-4 header (`v` 4 and `kind` "header").
pub fn is_format4(bytes: &[u8]) -> bool {
    let first = bytes.split(|&c| c == b'\n').next().unwrap_or_default();
    let Ok(scanned) = json::scan_line(first) else { return false };
    let raw = |k: &str| scanned.field(first, k).map(|s| &first[s.start as usize..s.end as usize]);
    raw("v") == Some(b"4") && raw("kind") == Some(b"header")
}

fn safe_integer(v: Option<&Value<'_>>, min: f64) -> bool {
    v.and_then(Value::as_f64).is_some_and(|n| n.fract() == 0.0 && n >= min && n <= 9_007_199_254_740_991.0)
}

/// Opens a format-4 file as 0.87.1 does: every complete line must be valid, or nothing opens.
/// A last line without `\n` is not read (the reference drops it and truncates the file; we only
/// read).
pub fn load_format4<'b>(bytes: &[u8], arena: &'b Bump) -> Result<Format4<'b>, Format4Error> {
    let complete = match bytes.iter().rposition(|&c| c == b'\n') {
        Some(p) => &bytes[..=p],
        None => &bytes[..0],
    };
    let mut lines = crate::lines::Lines::new(complete, crate::lines::LineRule::Newline);
    let missing = || Format4Error { line: Some(1), offset: Some(0), reason: "missing header".into() };
    let first = lines.next().ok_or_else(missing)?;
    if first.bytes.is_empty() {
        return Err(missing());
    }
    let header = json::parse_value(first.bytes, arena).map_err(|_| missing())?;
    let valid_header = header.get("v").and_then(Value::as_f64) == Some(4.0)
        && header.get("kind").and_then(Value::as_str).is_some_and(|k| *k == "header")
        && header.get("id").and_then(Value::as_str).is_some()
        && header.get("cwd").and_then(Value::as_str).is_some()
        && header.get("storageVersion").and_then(Value::as_f64) == Some(1.0)
        && safe_integer(header.get("createdAt"), 0.0);
    if !valid_header {
        return Err(Format4Error { line: Some(1), offset: Some(0), reason: "invalid header".into() });
    }
    let mut file = Format4 { header, entries: Vec::new(), by_id: AHashMap::new(), values: AHashMap::new() };
    let mut usage_ids: std::collections::HashSet<Vec<u8>> = std::collections::HashSet::new();
    let mut last_seq = 0.0;
    for line in lines {
        let invalid = |why: &str| Format4Error {
            line: Some(line.number),
            offset: Some(line.offset),
            reason: format!("Invalid JSONL storage: line {} ({why})", line.number),
        };
        let value = json::parse_value(line.bytes, arena).map_err(|_| invalid("not JSON"))?;
        let writes: Vec<Value<'b>> = match value {
            Value::Array(a) => a,
            o @ Value::Object(_) => vec![o],
            _ => return Err(invalid("not a write or an array of writes")),
        };
        for write in writes {
            let Value::Object(w) = &write else { return Err(invalid("a write is not an object")) };
            let seq = w.get("seq").and_then(Value::as_f64).unwrap_or(f64::NAN);
            if !safe_integer(w.get("seq"), 1.0) || seq <= last_seq {
                return Err(invalid("seq missing or not increasing"));
            }
            last_seq = seq;
            let text = |k: &str| w.get(k).and_then(Value::as_str).map(JsStr::as_bytes);
            match text("kind") {
                Some(b"entry") => {
                    let Some(id) = w.get("id").and_then(Value::as_str).cloned() else {
                        return Err(invalid("entry without an id"));
                    };
                    if file.by_id.contains_key(id.as_bytes()) || usage_ids.contains(id.as_bytes()) {
                        return Err(invalid("duplicate id"));
                    }
                    let parent = match w.get("parentId") {
                        Some(Value::Null) => None,
                        Some(Value::String(p)) => match file.by_id.get(p.as_bytes()) {
                            Some(&i) => Some(i),
                            None => return Err(invalid("parent is not an earlier entry")),
                        },
                        _ => return Err(invalid("parentId is neither null nor a string")),
                    };
                    if !matches!(text("type"), Some(b"message" | b"compaction" | b"branch_summary" | b"custom")) {
                        return Err(invalid("unknown entry type"));
                    }
                    if !safe_integer(w.get("timestamp"), 0.0) {
                        return Err(invalid("entry timestamp is not an integer"));
                    }
                    file.by_id.insert(id.as_bytes().to_vec(), file.entries.len());
                    file.entries.push(Entry4 { id, parent, write, line: line.number, offset: line.offset });
                }
                Some(b"value") => {
                    let (Some(namespace), Some(key)) = (text("namespace"), text("key")) else {
                        return Err(invalid("value write without namespace and key"));
                    };
                    let address = (namespace.to_vec(), key.to_vec());
                    match text("op") {
                        Some(b"set") => {
                            file.values.insert(address, Some(w.get("value").cloned().unwrap_or(Value::Null)));
                        }
                        Some(b"delete") => {
                            file.values.insert(address, None);
                        }
                        _ => return Err(invalid("unknown value op")),
                    }
                }
                Some(b"list") => {
                    if !matches!(text("op"), Some(b"append" | b"delete")) {
                        return Err(invalid("unknown list op"));
                    }
                }
                Some(b"usage") => {
                    let Some(id) = text("id") else { return Err(invalid("usage row without an id")) };
                    if file.by_id.contains_key(id) || !usage_ids.insert(id.to_vec()) {
                        return Err(invalid("duplicate id"));
                    }
                }
                _ => return Err(invalid("unknown write kind")),
            }
        }
    }
    Ok(file)
}

/// The bounded context of one branch.
#[derive(Debug, Clone)]
pub struct Context4<'b> {
    /// `absent` (no tip value) or `branch`.
    pub lane: &'static str,
    /// The tip used: `None` when absent or null.
    pub tip: Option<JsStr<'b>>,
    /// The messages (`buildSessionContext` without projectors).
    pub messages: Vec<Message<'b>>,
    /// Entry indices read, oldest first.
    pub path: Vec<usize>,
}

const DROPPED_STOP_REASONS: [&str; 3] = ["error", "aborted", "deferred"];

/// Whether a stored message goes into the context: assistants that errored, were aborted or
/// deferred do not.
fn kept(message: &Value<'_>) -> bool {
    let role = message.get("role").and_then(Value::as_str);
    let stop = message.get("stopReason").and_then(Value::as_str);
    !(role.is_some_and(|r| *r == "assistant") && stop.is_some_and(|s| DROPPED_STOP_REASONS.iter().any(|d| *s == *d)))
}

/// `readBoundedContext` for `branch`: walk from the tip to the newest compaction (inclusive) or
/// the root, then map each entry to its messages.
pub fn build_context4<'b>(file: &Format4<'b>, branch: &str) -> Result<Context4<'b>, Format4Error> {
    let tip_value = file.values.get(&(b"pi.branch.tip".to_vec(), branch.as_bytes().to_vec()));
    let (lane, tip) = match tip_value {
        None | Some(None) => ("absent", None),
        Some(Some(Value::String(s))) => ("branch", Some(s.clone())),
        Some(Some(_)) => ("branch", None),
    };
    let mut path = Vec::new();
    if let Some(tip) = &tip {
        let Some(&start) = file.by_id.get(tip.as_bytes()) else {
            return Err(Format4Error {
                line: None,
                offset: None,
                reason: format!("Corrupt branch: {}", tip.to_str_lossy()),
            });
        };
        let mut at = Some(start);
        while let Some(i) = at {
            path.push(i);
            let e = &file.entries[i];
            if e.write.get("type").and_then(Value::as_str).is_some_and(|t| *t == "compaction") {
                break;
            }
            at = e.parent;
        }
        path.reverse();
    }
    let mut messages = Vec::new();
    for &i in &path {
        let w = &file.entries[i].write;
        match w.get("type").and_then(Value::as_str).map(|t| t.as_bytes()) {
            Some(b"message") => {
                if let Some(m) = w.get("message").filter(|m| kept(m)) {
                    messages.push(Message::Built(m.clone()));
                }
            }
            Some(b"compaction") => {
                let tail = match w.get("retainedTail") {
                    Some(Value::Array(a)) => a,
                    _ => {
                        let e = &file.entries[i];
                        return Err(Format4Error {
                            line: Some(e.line),
                            offset: Some(e.offset),
                            reason: format!(
                                "compaction {} has no retainedTail array (the reference throws a TypeError)",
                                e.id.to_str_lossy()
                            ),
                        });
                    }
                };
                messages.push(Message::Built(compaction_summary(w, time(w))));
                messages.extend(tail.iter().filter(|m| kept(m)).map(|m| Message::Built(m.clone())));
            }
            Some(b"branch_summary") if w.get("summary").is_some_and(Value::is_truthy) => {
                messages.push(Message::Built(branch_summary(w, time(w))));
            }
            _ => {}
        }
    }
    Ok(Context4 { lane, tip, messages, path })
}

/// An entry's `timestamp` (epoch ms, checked when the file was opened).
fn time<'b>(w: &Value<'b>) -> Value<'b> {
    w.get("timestamp").cloned().unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const HEADER: &str = r#"{"v":4,"kind":"header","id":"h","storageVersion":1,"createdAt":1,"cwd":"/w"}"#;

    #[test]
    fn opens_only_valid_files() {
        let arena = Bump::new();
        assert!(is_format4(HEADER.as_bytes()));
        assert!(!is_format4(br#"{"type":"session","version":3}"#));
        let ok = format!(
            "{HEADER}\n{}\n",
            r#"{"kind":"entry","id":"a","parentId":null,"type":"message","message":{"role":"user","content":"x"},"seq":1,"timestamp":5}"#
        );
        assert_eq!(load_format4(ok.as_bytes(), &arena).unwrap().entries.len(), 1);
        // seq must increase; parents must come first; a torn last line is not read.
        let bad_seq = format!("{ok}{}\n", r#"{"kind":"list","op":"append","seq":1}"#);
        assert_eq!(load_format4(bad_seq.as_bytes(), &arena).unwrap_err().line, Some(3));
        let bad_parent = format!(
            "{HEADER}\n{}\n",
            r#"{"kind":"entry","id":"a","parentId":"z","type":"message","message":{},"seq":1,"timestamp":5}"#
        );
        assert!(load_format4(bad_parent.as_bytes(), &arena).is_err());
        let torn = format!("{ok}{{\"kind\":");
        assert_eq!(load_format4(torn.as_bytes(), &arena).unwrap().entries.len(), 1);
        assert_eq!(load_format4(b"", &arena).unwrap_err().reason, "missing header");
    }
}
