//! Shared inputs for the benchmarks: the committed corpora loaded into memory, and the naive
//! baseline (`serde_json::Value` per line) every hot path is compared with.

use std::path::{Path, PathBuf};

/// The files of a committed corpus (`corpora/<name>/sessions`), read into memory and checked
/// against `corpora/manifest.json` (file count, bytes and lines), so that a benchmark never
/// measures a corpus other than the one its figures describe.
pub fn corpus(name: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora");
    let dir = root.join(name).join("sessions");
    let files: Vec<(PathBuf, Vec<u8>)> =
        session_scan::expand_paths(&[dir]).into_iter().filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b))).collect();
    let manifest = std::fs::read(root.join("manifest.json")).unwrap_or_default();
    let arena = bumpalo::Bump::new();
    if let Ok(m) = session_core::json::parse_value(&manifest, &arena)
        && let Some(entry) = m.get(name)
    {
        let want = |k: &str| entry.get(k).and_then(session_core::json::Value::as_f64).unwrap_or(-1.0);
        let lines: usize = files.iter().map(|(_, b)| session_core::lines::count_lines(b)).sum();
        assert_eq!(files.len() as f64, want("files"), "corpus {name}: file count differs from the manifest");
        assert_eq!(total_bytes(&files) as f64, want("bytes"), "corpus {name}: bytes differ from the manifest");
        assert_eq!(lines as f64, want("lines"), "corpus {name}: lines differ from the manifest");
    }
    files
}

/// Splitting every file into lines (the `Lines` iterator), the first step of every pass.
pub fn split_lines(files: &[(PathBuf, Vec<u8>)]) -> usize {
    files
        .iter()
        .map(|(_, b)| {
            session_core::lines::Lines::new(b, session_core::lines::LineRule::Newline)
                .map(|l| l.bytes.len())
                .sum::<usize>()
        })
        .sum()
}

/// Total bytes of a corpus.
pub fn total_bytes(files: &[(PathBuf, Vec<u8>)]) -> u64 {
    files.iter().map(|(_, b)| b.len() as u64).sum()
}

/// The ceiling: count line starts with `memchr`.
pub fn memchr_lines(files: &[(PathBuf, Vec<u8>)]) -> usize {
    files.iter().map(|(_, b)| session_core::lines::count_lines(b)).sum()
}

/// The naive baseline: `serde_json::Value` for every line; returns how many parsed.
pub fn serde_json_per_line(files: &[(PathBuf, Vec<u8>)]) -> usize {
    files
        .iter()
        .flat_map(|(_, b)| b.split(|&c| c == b'\n'))
        .filter(|l| serde_json::from_slice::<serde_json::Value>(l).is_ok())
        .count()
}

/// Loading (indexing) every session: the validating scan, the id index and the leaf.
pub fn load_all(files: &[(PathBuf, Vec<u8>)]) -> usize {
    files.iter().filter_map(|(_, b)| session_core::Session::load(b).ok()).map(|s| s.records.len()).sum()
}

/// Full parse of every line into a JS-semantics value with simd-json.
pub fn full_parse_all(files: &[(PathBuf, Vec<u8>)]) -> usize {
    let mut arena = bumpalo::Bump::new();
    let mut n = 0;
    for (_, b) in files {
        for line in session_core::lines::Lines::new(b, session_core::lines::LineRule::Newline) {
            arena.reset();
            n += usize::from(session_core::json::parse_value(line.bytes, &arena).is_ok());
        }
    }
    n
}

/// Session totals of every file.
pub fn totals_all(files: &[(PathBuf, Vec<u8>)]) -> f64 {
    files
        .iter()
        .filter_map(|(_, b)| session_core::Session::load(b).ok())
        .map(|s| session_core::stats::session_totals(&s).stats.usage.cost)
        .sum()
}

/// Rebuilds one session's Pi-dialect context and writes its messages as JSON; returns the bytes.
pub fn context_json_len(s: &session_core::Session<'_>) -> usize {
    let arena = bumpalo::Bump::new();
    let ctx = session_core::context::build_context(
        s,
        &session_core::context::LeafChoice::Session,
        session_core::context::Dialect::Pi,
        &arena,
    );
    let mut out = Vec::new();
    for m in &ctx.messages {
        m.write_json(&mut out);
    }
    out.len()
}

/// The Pi-dialect context of every file, written out as JSON text.
pub fn contexts_all(files: &[(PathBuf, Vec<u8>)]) -> usize {
    files.iter().filter_map(|(_, b)| session_core::Session::load(b).ok()).map(|s| context_json_len(&s)).sum()
}

/// `SessionInfo` of every file in picker mode (no `allMessagesText`).
pub fn picker_infos_all(files: &[(PathBuf, Vec<u8>)]) -> u64 {
    files
        .iter()
        .filter_map(|(_, b)| session_core::info::session_info(b, 0.0, false).ok())
        .map(|i| i.message_count)
        .sum()
}

/// The usage events of every file (the analytics hot path).
pub fn usage_events_all(files: &[(PathBuf, Vec<u8>)]) -> usize {
    files
        .iter()
        .filter_map(|(_, b)| session_core::usage::file_usage(b).ok())
        .map(|u| u.events.len() + u.messages.len())
        .sum()
}

/// The picker search of every file (`session-scan search`): its `SessionInfo` with each message's
/// place, then three queries (two words, a phrase, a pattern) scored, with up to three hits each.
pub fn search_all(files: &[(PathBuf, Vec<u8>)]) -> usize {
    use session_core::search::{Query, Searched};
    let queries: Vec<Query> = ["parser tree", "\"auth refactor\"", "re:session\\w+timeout"]
        .iter()
        .filter_map(|q| Query::parse(q).ok().flatten())
        .collect();
    let mut found = 0;
    for (_, bytes) in files {
        let texts = session_core::info::Texts::DecodedWithPieces;
        let Ok(info) = session_core::info::session_info_with(bytes, 0.0, texts, &jiff::tz::TimeZone::UTC) else {
            continue;
        };
        let id = info.id.to_js_string();
        let text = &info.all_messages_text;
        let searched =
            Searched { name: info.name.as_ref().map(|n| n.as_bytes()), id: &id, cwd: info.cwd.as_bytes(), text };
        for q in &queries {
            if q.score(&searched).is_some() {
                found += 1 + q.hits(text, &info.text_pieces, 3).len();
            }
        }
    }
    found
}

/// `SessionInfo` of every file.
pub fn infos_all(files: &[(PathBuf, Vec<u8>)]) -> u64 {
    files.iter().filter_map(|(_, b)| session_core::info::session_info(b, 0.0, true).ok()).map(|i| i.message_count).sum()
}

/// A single large session of at least `target` bytes, made from the sample corpus's entries in
/// file order: re-chained into one branch with fresh ids (`b0000001`, …), and a compaction after
/// every `compact_every` bytes that keeps the last 20 entries, as Pi's auto-compaction does.
pub fn synthetic_session(target: usize, compact_every: usize) -> Vec<u8> {
    use session_core::json::{JsStr, Value, parse_value, write_json};
    let sources = corpus("sample-16");
    let mut out =
        br#"{"type":"session","version":3,"id":"bench-big","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/bench"}"#
            .to_vec();
    out.push(b'\n');
    let mut n = 0u32;
    let mut ids: Vec<String> = Vec::new();
    let mut since_compaction = 0usize;
    let arena = bumpalo::Bump::new();
    'outer: loop {
        for (_, bytes) in &sources {
            for line in session_core::lines::Lines::new(bytes, session_core::lines::LineRule::Newline) {
                let Ok(Value::Object(mut o)) = parse_value(line.bytes, &arena) else { continue };
                let ty =
                    o.get("type").and_then(Value::as_str).map(|t| t.to_str_lossy().into_owned()).unwrap_or_default();
                if matches!(ty.as_str(), "session" | "label" | "context_edit" | "compaction" | "branch_summary") {
                    continue;
                }
                n += 1;
                let id = format!("b{n:07x}");
                o.insert("id", Value::String(JsStr::owned(id.clone())));
                let parent = ids.last().map_or(Value::Null, |p| Value::String(JsStr::owned(p.clone())));
                o.insert("parentId", parent);
                let start = out.len();
                write_json(&Value::Object(o), &mut out);
                out.push(b'\n');
                since_compaction += out.len() - start;
                ids.push(id);
                if since_compaction >= compact_every && ids.len() > 20 {
                    n += 1;
                    let cid = format!("b{n:07x}");
                    let kept = &ids[ids.len() - 20];
                    let parent = &ids[ids.len() - 1];
                    out.extend_from_slice(format!(
                        r#"{{"type":"compaction","id":"{cid}","parentId":"{parent}","timestamp":"2026-01-02T00:00:00.000Z","summary":"Summary of the work so far.","firstKeptEntryId":"{kept}","tokensBefore":150000}}"#
                    ).as_bytes());
                    out.push(b'\n');
                    ids.push(cid);
                    since_compaction = 0;
                }
                if out.len() >= target {
                    break 'outer;
                }
            }
        }
    }
    out
}
