//! The corpus manifest: provenance, bytes, lines, sha256 and entry counts by type for every
//! committed session file, which tests and benchmarks both check.

use std::collections::BTreeMap;
use std::path::Path;

use session_core::json::{self, JsStr, Object, Value};
use session_core::lines::{LineRule, Lines, count_lines, is_blank};
use sha2::{Digest, Sha256};

/// Facts about one session file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileFacts {
    /// Path relative to the corpus folder, with `/`.
    pub path: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Line count (a last line without `\n` counts).
    pub lines: u64,
    /// Hex SHA-256 of the bytes.
    pub sha256: String,
    /// Parsed records by `type` (`(not an object)`, `(malformed)` and `(blank)` for the rest).
    pub types: BTreeMap<String, u64>,
}

/// Measures one file's bytes.
pub fn file_facts(path: String, bytes: &[u8]) -> FileFacts {
    let mut types = BTreeMap::new();
    for line in Lines::new(bytes, LineRule::Newline) {
        let key = if is_blank(line.bytes) {
            "(blank)".to_string()
        } else {
            match json::scan_line(line.bytes) {
                Err(_) => "(malformed)".to_string(),
                Ok(s) if !s.is_object() => "(not an object)".to_string(),
                Ok(s) => match s.field(line.bytes, "type") {
                    Some(span) => session_core::PropertyValue::from_span(line.bytes, Some(span))
                        .as_str()
                        .map_or_else(|| "(non-string type)".to_string(), |t| t.to_str_lossy().into_owned()),
                    None => "(no type)".to_string(),
                },
            }
        };
        *types.entry(key).or_insert(0) += 1;
    }
    FileFacts {
        path,
        bytes: bytes.len() as u64,
        lines: count_lines(bytes) as u64,
        sha256: format!("{:x}", Sha256::digest(bytes)),
        types,
    }
}

/// Facts for every `*.jsonl` under `dir`, sorted by path.
pub fn corpus_facts(dir: &Path) -> std::io::Result<Vec<FileFacts>> {
    let files = crate::read::expand_paths(&[dir.to_path_buf()]);
    let mut out = Vec::new();
    for f in files {
        let bytes = std::fs::read(&f)?;
        let rel = f.strip_prefix(dir).unwrap_or(&f).to_string_lossy().replace('\\', "/");
        out.push(file_facts(rel, &bytes));
    }
    Ok(out)
}

/// The manifest record of a corpus, as JSON.
pub fn manifest_value(provenance: &str, facts: &[FileFacts]) -> Value<'static> {
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    let files = facts
        .iter()
        .map(|f| {
            let mut types = Object::new();
            for (k, v) in &f.types {
                types.insert(JsStr::owned(k.clone()), Value::Number(*v as f64));
                *totals.entry(k.clone()).or_insert(0) += v;
            }
            let mut o = Object::new();
            o.insert("path", Value::String(JsStr::owned(f.path.clone())));
            o.insert("bytes", Value::Number(f.bytes as f64));
            o.insert("lines", Value::Number(f.lines as f64));
            o.insert("sha256", Value::String(JsStr::owned(f.sha256.clone())));
            o.insert("types", Value::Object(types));
            Value::Object(o)
        })
        .collect();
    let mut t = Object::new();
    for (k, v) in totals {
        t.insert(JsStr::owned(k), Value::Number(v as f64));
    }
    let mut o = Object::new();
    o.insert("provenance", Value::String(JsStr::owned(provenance)));
    o.insert("files", Value::Number(facts.len() as f64));
    o.insert("bytes", Value::Number(facts.iter().map(|f| f.bytes).sum::<u64>() as f64));
    o.insert("lines", Value::Number(facts.iter().map(|f| f.lines).sum::<u64>() as f64));
    o.insert("types", Value::Object(t));
    o.insert("entries", Value::Array(files));
    Value::Object(o)
}

/// The committed corpora: folder under `corpora/` (sessions in `<name>/sessions`) and provenance.
pub const CORPORA: &[(&str, &str)] = &[
    (
        "sample-16",
        "Pi 1.6.0's own writer: generator gen.mjs --pi 16 --sessions=200 --seed 1 --cwds 10 --avg-entries 15 --scenarios; expected/ recorded from Pi 1.6.0's own listing, tree, totals and context code",
    ),
    (
        "edge",
        "48 hand-made edge cases (generator make-edge-cases.mjs; 40 is the missing-file case); expected/ recorded from Pi 1.6.0, one process per file, its ids and clock fixed",
    ),
    (
        "harness",
        "7 v3-shaped harness sessions and 18 format-4 files, from the generator make-harness-cases.mjs; expected/ from pi-agent-core 0.83.0's and 0.87.1's own session code (harness.mjs --core 083 and --core 087)",
    ),
    (
        "real",
        "two real v1 sessions from Pi's own test suite (pi-mono packages/coding-agent/test/fixtures, MIT, see LICENSE-pi-mono); expected/ from Pi 1.6.0 with --deterministic",
    ),
    (
        "adversarial",
        "8 hostile sessions and a hostile store written by cargo xtask adversarial; expected/ recorded from Pi 1.6.0's own tree, totals, context and listing code, one process per file stopped after 20 s, its ids and clock fixed",
    ),
    (
        "hostile",
        "240 random hostile sessions written by corpora/hostile/gen.py (seed 19); expected/ from reference/record.mjs (listAll, list(/home/u/proj) and listAll of the flat folder --tmp-x y--, trees, totals and contexts) under Pi 1.6.0 (Node 20.20.2, TZ=UTC) by corpora/hostile/record.sh, each file's mtime set to 1767225600 s + 1000 s * (k % 6) + 0.4 ms * (k % 3), k its place in name order",
    ),
    (
        "escapes",
        "40 sessions of sample-16 (every fifth in name order) with escapes put into the text of three lines in ten by corpora/escapes/gen.py (seed 21), some of them refused by JSON.parse; expected/ from reference/record.mjs (listAll and contexts) under Pi 1.6.0 (Node 20.20.2, TZ=UTC) by corpora/escapes/record.sh",
    ),
    (
        "files",
        "session files written by corpora/files/gen.py with tool calls and nested calls in every shape Pi's extractFileOpsFromMessage meets; expected.jsonl is Pi 1.6.0 (Node 20.20.2) listing the files read and changed of every session of sample-16, real, files, edge, escapes, hostile and adversarial by corpora/files/record.mjs: loadEntriesFromFile, migrateSessionEntries, extractFileOpsFromMessage and computeFileLists",
    ),
    (
        "resolve",
        "session files written by corpora/resolve/gen.py (with flat/, a flat session folder, and mtimes.json) to test Pi's session discovery; expected/resolve.json is Pi 1.6.0 (Node 20.20.2) answering each case of cases.json by corpora/resolve/record.mjs: SessionManager.continueRecent for pi -c, and main.js's resolveSessionPath (findById, list, listAll) for pi --session",
    ),
    (
        "sort",
        "90 small sessions written by corpora/sort/gen.py, 28 with an Invalid Date modified; expected/listall-ids.json is the id order of Pi 1.6.0's listAll() (Node 20.20.2), each file's mtime set to 1767225600 + 60 * k, k its place in name order",
    ),
    (
        "ledger",
        "240 sessions written by Pi 1.6.0's own SessionManager, forks and branched sessions included: generator gen.mjs --pi 16 --sessions=240 --seed 18 --cwds 8 --avg-entries 8 --scenarios --ledger ledger.jsonl; ledger.jsonl lists every spend made through Pi's API (assistant and tool-result usage, usage entries, compaction and branch-summary usage), never the entries forks and branched sessions copy",
    ),
    (
        "threads",
        "64 small sessions written by corpora/threads/gen.py (seed 11) whose headers name parent sessions by paths relative to the store's root; expected/threaded.json is Pi 1.6.0's picker in its threaded mode (its own session list, Node 20.20.2) over listAll() run at the root, by corpora/threads/record.mjs, each file's mtime set to 1767225600 + 60 * k, k its place in name order",
    ),
];

/// Renders the whole manifest (every corpus) as pretty JSON text.
pub fn render_manifest(corpora_dir: &Path) -> std::io::Result<String> {
    let mut o = Object::new();
    for (name, provenance) in CORPORA {
        let facts = corpus_facts(&corpora_dir.join(name).join("sessions"))?;
        o.insert(JsStr::owned(name.to_string()), manifest_value(provenance, &facts));
    }
    Ok(pretty(&Value::Object(o), 0))
}

/// Two-space indented JSON, one file record per line, for readable diffs.
fn pretty(v: &Value<'_>, depth: usize) -> String {
    let pad = "  ".repeat(depth + 1);
    match v {
        Value::Object(o) if depth < 2 => {
            let items: Vec<String> = o
                .iter()
                .map(|(k, v)| {
                    let mut key = Vec::new();
                    json::write_string(k.as_bytes(), &mut key);
                    format!("{pad}{}: {}", String::from_utf8_lossy(&key), pretty(v, depth + 1))
                })
                .collect();
            format!("{{\n{}\n{}}}", items.join(",\n"), "  ".repeat(depth))
        }
        Value::Array(a) if depth < 3 => {
            let items: Vec<String> = a.iter().map(|v| format!("{pad}{}", json::to_json(v))).collect();
            format!("[\n{}\n{}]", items.join(",\n"), "  ".repeat(depth))
        }
        other => json::to_json(other),
    }
}
