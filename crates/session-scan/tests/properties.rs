//! Property tests: every way of reading the same bytes gives the same answer, and the scanner
//! agrees with a naive parser.

#![allow(clippy::unwrap_used)] // test inputs are made here; a panic is a failed test

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use session_core::info::Texts;
use session_core::lines::{LineRule, Lines};

fn corpora() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora")
}

fn temp_file(tag: &str, bytes: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("session-scan-prop-{}-{tag}", std::process::id()));
    std::fs::write(&p, bytes).unwrap();
    p
}

fn streamed(path: &Path, rule: LineRule, chunk: u64) -> Vec<(Vec<u8>, u64, u64, bool)> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    session_scan::read::for_each_line_chunked(path, rule, &mut buf, chunk, |l| {
        out.push((l.bytes.to_vec(), l.offset, l.number, l.terminated));
        true
    })
    .unwrap();
    out
}

fn whole(bytes: &[u8], rule: LineRule) -> Vec<(Vec<u8>, u64, u64, bool)> {
    Lines::new(bytes, rule).map(|l| (l.bytes.to_vec(), l.offset, l.number, l.terminated)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Streaming through buffers of any size splits lines exactly as the whole-file split does,
    /// CR, LF and CRLF falling on every chunk boundary.
    #[test]
    fn streamed_lines_equal_whole_lines(
        bytes in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'a'), Just(b'{'), any::<u8>()], 0..300),
        chunk in 1u64..40,
    ) {
        let p = temp_file(&format!("lines-{chunk}"), &bytes);
        for rule in [LineRule::Newline, LineRule::Readline] {
            prop_assert_eq!(streamed(&p, rule, chunk), whole(&bytes, rule));
        }
        std::fs::remove_file(&p).unwrap();
    }

    /// The scanner accepts what serde_json produces, records the same top-level strings, and
    /// rejects every strict prefix of an object line.
    #[test]
    fn scanner_agrees_with_serde_json(v in json_object()) {
        let text = serde_json::to_string(&v).unwrap();
        let scanned = session_core::json::scan_line(text.as_bytes()).unwrap();
        for (k, val) in v.as_object().unwrap() {
            if let serde_json::Value::String(s) = val {
                let f = session_core::PropertyValue::from_span(text.as_bytes(), scanned.field(text.as_bytes(), k));
                prop_assert_eq!(f.as_str().map(|x| x.to_str_lossy().into_owned()), Some(s.clone()));
            }
        }
        let arena = bumpalo::Bump::new();
        let ours = session_core::json::to_json(&session_core::json::parse_value(text.as_bytes(), &arena).unwrap());
        prop_assert_eq!(serde_json::from_str::<serde_json::Value>(&ours).unwrap(), v);
        let step = (text.len() / 64).max(1);
        for cut in (0..text.len()).step_by(step) {
            prop_assert!(session_core::json::scan_line(&text.as_bytes()[..cut]).is_err(), "prefix {} accepted", cut);
        }
    }
}

/// `readSessionHeaderForDiscovery` as plainly as it can be said, with the full parser: the lines of
/// the file's first MiB that end there (and the rest, when the file ends within it), the first that
/// parses to a truthy value decides.
fn naive_discovery(bytes: &[u8]) -> Option<(String, Option<String>)> {
    const MIB: usize = 1 << 20;
    let scanned = &bytes[..bytes.len().min(MIB)];
    let mut lines: Vec<&[u8]> = scanned.split(|&b| b == b'\n').collect();
    if bytes.len() > MIB || scanned.last() == Some(&b'\n') {
        lines.pop();
    }
    for line in lines {
        let arena = bumpalo::Bump::new();
        let Ok(value) = session_core::json::parse_value(line, &arena) else { continue };
        if !value.is_truthy() {
            continue;
        }
        let text = |key| match value.get(key) {
            Some(session_core::json::Value::String(s)) => Some(s.to_str_lossy().into_owned()),
            _ => None,
        };
        return match (value.as_object().is_some(), text("type").as_deref(), text("id")) {
            (true, Some("session"), Some(id)) => Some((id, text("cwd"))),
            _ => None,
        };
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// `resolve`'s header discovery (the scan, fields found without a full parse) agrees with the
    /// naive one on files made of blank, broken, falsy and truthy lines, headers with escaped,
    /// repeated and missing keys, `\r\n` ends and a missing last newline.
    #[test]
    fn discovery_header_agrees_with_the_full_parser(
        pieces in proptest::collection::vec(prop_oneof![
            Just("".to_string()),
            Just("   \t".to_string()),
            Just("not json".to_string()),
            Just("null".to_string()),
            Just("false".to_string()),
            Just("0".to_string()),
            Just("\"\"".to_string()),
            Just("[1]".to_string()),
            Just("7".to_string()),
            Just(r#"{"type":"message","id":"m"}"#.to_string()),
            Just(r#"{"type":"session","id":5,"cwd":"/a"}"#.to_string()),
            Just(r#"{"type":"session","cwd":"/a"}"#.to_string()),
            Just(r#"{"type":"session","id":"s1","cwd":"/a"}"#.to_string()),
            Just(r#"{"type":"session","id":"s2","cwd":7}"#.to_string()),
            Just(r#"{"\u0074ype":"session","\u0069d":"s3","cwd":"/b"}"#.to_string()),
            Just(r#"{"type":"session","id":"s4","id":"s5","cwd":"/c","cwd":null}"#.to_string()),
            Just(r#"{"type":"sessio\u006e","id":"s\u00e9","cwd":"/d\ud800"}"#.to_string()),
            Just(r#"{"type":"session","id":"s6"}  "#.to_string()),
            Just(r#"{"type":"session","id":"s7",}"#.to_string()),
        ], 0..6),
        crlf in any::<bool>(),
        last_newline in any::<bool>(),
    ) {
        let mut bytes = pieces.join(if crlf { "\r\n" } else { "\n" }).into_bytes();
        if last_newline {
            bytes.push(b'\n');
        }
        let path = temp_file("discovery", &bytes);
        let ours = session_scan::resolve::discovery_header(&path).ok().map(|h| (h.id, h.cwd));
        std::fs::remove_file(&path).unwrap();
        prop_assert_eq!(ours, naive_discovery(&bytes), "{:?}", String::from_utf8_lossy(&bytes));
    }
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i32>().prop_map(serde_json::Value::from),
        (-1e9f64..1e9).prop_map(serde_json::Value::from),
        "[ -~\\t\\n\"\\\\é🚀]{0,12}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
            proptest::collection::btree_map("[a-z]{1,6}", inner, 0..5)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = serde_json::Value> {
    proptest::collection::btree_map("[a-zA-Z]{1,8}", json_value(), 0..6)
        .prop_map(|m| serde_json::Value::Object(m.into_iter().collect()))
}

/// Every corpus file gives the same session whether read, mapped, streamed or scanned in
/// parallel chunks split at every line start.
#[test]
fn every_reading_gives_the_same_session() {
    use session_scan::ReadStrategy;
    for f in session_scan::expand_paths(&[corpora().join("edge/sessions"), corpora().join("real/sessions")]) {
        let bytes = std::fs::read(&f).unwrap();
        let key = |s: &session_core::Session<'_>| {
            let leaf = s.leaf_id().cloned().map(|l| l.into_owned());
            let ids: Vec<_> = s.records.iter().map(|e| (e.line_number, e.offset, e.id.clone().into_owned())).collect();
            (leaf, ids, s.diagnostics.clone())
        };
        let Ok(reference) = session_core::Session::load(&bytes) else { continue };
        let reference = key(&reference);
        for strategy in [ReadStrategy::Buffered, ReadStrategy::Mmap, ReadStrategy::Auto] {
            let mut buf = Vec::new();
            let (map, _) = session_scan::read_file_into(&f, strategy, &mut buf).unwrap();
            let b: &[u8] = map.as_deref().unwrap_or(&buf);
            assert_eq!(key(&session_core::Session::load(b).unwrap()), reference, "{} {strategy:?}", f.display());
        }
        // Two chunks split at every line start.
        let starts: Vec<usize> = Lines::new(&bytes, LineRule::Newline).map(|l| l.offset as usize).collect();
        let step = (starts.len() / 24).max(1);
        for &cut in starts.iter().skip(1).step_by(step) {
            let chunks = vec![
                session_core::session::scan_chunk(&bytes, 0..cut),
                session_core::session::scan_chunk(&bytes, cut..bytes.len()),
            ];
            let s = session_core::Session::from_chunks(&bytes, chunks).unwrap();
            assert_eq!(key(&s), reference, "{} split at {cut}", f.display());
        }
        assert_eq!(key(&session_scan::load_session(&bytes, &session_scan::UTC).unwrap()), reference);
    }
}

/// Streaming `SessionInfo` through tiny buffers equals computing it from the whole file.
#[test]
fn streamed_session_info_equals_whole() {
    for f in session_scan::expand_paths(&[corpora().join("edge/sessions")]) {
        let bytes = std::fs::read(&f).unwrap();
        let whole = session_core::info::session_info(&bytes, 1.0, true);
        for chunk in [1, 7, 64, 4096] {
            let mut b = session_core::info::InfoBuilder::new(true);
            let mut buf = Vec::new();
            session_scan::read::for_each_line_chunked(&f, LineRule::Readline, &mut buf, chunk, |l| b.line(l)).unwrap();
            assert_eq!(format!("{:?}", b.finish(1.0)), format!("{whole:?}"), "{} chunk {chunk}", f.display());
        }
    }
}

/// A large session of tiny lines, whose pieces fill up before their end (a round then ends
/// early and the rest is read in the next one), is listed as the whole file is: every line
/// counted once, in order, under the line rules of listing.
#[test]
fn large_sessions_of_tiny_lines_listed_in_parallel_equal_whole() {
    let header = r#"{"type":"session","version":3,"id":"tiny","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let mut bytes = format!("{header}\n").into_bytes();
    let mut k = 0u64;
    while bytes.len() < (session_scan::read::PARALLEL_LINES_MIN as usize) + (1 << 20) {
        let line = match k % 7 {
            0 => format!(r#"{{"type":"message","message":{{"role":"user","content":"m{}"}}}}"#, k % 10),
            1 => "{}".to_string(),
            2 => "{".to_string(),
            3 => String::new(),
            4 => format!(r#"{{"type":"session_info","name":"n{k}"}}"#),
            _ => r#"{"type":"message","message":{"role":"assistant","content":[],"timestamp":7}}"#.to_string(),
        };
        bytes.extend_from_slice(line.as_bytes());
        bytes.extend_from_slice(if k.is_multiple_of(3) { b"\r\n" } else { b"\n" });
        k += 1;
    }
    let path = temp_file("parallel-tiny", &bytes);
    let candidate = session_scan::list::Candidate { path: path.clone(), mtime: Some(1.0) };
    for texts in [Texts::Json, Texts::Decoded, Texts::DecodedWithPieces, Texts::Skip] {
        let listed = session_scan::list::read_infos(
            std::slice::from_ref(&candidate),
            session_scan::list::Reading::new(texts, false),
        );
        let whole = session_core::info::session_info_with(&bytes, 1.0, texts, &session_scan::UTC);
        assert!(whole.as_ref().is_ok_and(|w| w.message_count > 100_000), "{whole:?}");
        assert_eq!(format!("{:?}", listed[0].info), format!("{whole:?}"), "texts {texts:?}");
    }
    std::fs::remove_file(&path).unwrap();
}

/// A session large enough to be listed with its lines scanned in parallel gives the same
/// `SessionInfo` as the whole file read at once: blank, broken, CRLF and CR-split lines, a name
/// set and cleared, and a first user message late in the file included.
#[test]
fn large_sessions_listed_in_parallel_equal_whole() {
    let header = r#"{"type":"session","version":3,"id":"big","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let mut bytes = format!("\n{header}\r\n").into_bytes();
    let mut k = 0u64;
    while bytes.len() < (session_scan::read::PARALLEL_LINES_MIN as usize) * 5 / 2 {
        let line = match k % 11 {
            0 => format!(
                r#"{{"type":"session_info","id":"n{k}","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","name":"{}"}}"#,
                if k.is_multiple_of(3) { "" } else { "name" }
            ),
            1 => "   ".to_string(),
            2 => format!(r#"{{"type":"message","id":"b{k}","parentId":null,"message":{{"role":"user","#),
            3 => format!(
                r#"{{"type":"message","id":"u{k}","parentId":null,"timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"{}","content":"text {k} \u00e9\n{}","timestamp":{k}}}}}"#,
                if k < 40_000 { "assistant" } else { "user" },
                "z".repeat((k % 700) as usize)
            ),
            4 => format!(
                r#"{{"type":"message","id":"t{k}","parentId":null,"message":{{"role":"toolResult","content":[{{"type":"text","text":"{}"}}]}}}}"#,
                "r".repeat(3000)
            ),
            _ => format!(r#"{{"type":"custom","id":"c{k}","parentId":null,"data":{{"k":{k}}}}}"#),
        };
        bytes.extend_from_slice(line.as_bytes());
        bytes.extend_from_slice(match k % 5 {
            0 => b"\r\n",
            1 => b"\r",
            _ => b"\n",
        });
        k += 1;
    }
    let path = temp_file("parallel-list", &bytes);
    let whole = session_core::info::session_info(&bytes, 1.0, true);
    assert!(whole.is_ok(), "{whole:?}");
    let candidate = session_scan::list::Candidate { path: path.clone(), mtime: Some(1.0) };
    for texts in [Texts::Json, Texts::Decoded, Texts::DecodedWithPieces, Texts::Skip] {
        let listed = session_scan::list::read_infos(
            std::slice::from_ref(&candidate),
            session_scan::list::Reading::new(texts, false),
        );
        let whole = session_core::info::session_info_with(&bytes, 1.0, texts, &session_scan::UTC);
        assert_eq!(format!("{:?}", listed[0].info), format!("{whole:?}"), "texts {texts:?}");
    }
    std::fs::remove_file(&path).unwrap();
}
