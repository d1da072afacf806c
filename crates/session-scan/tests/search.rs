//! Conformance of `session-scan search` with Pi 1.6's picker search (`filterAndSortSessions`,
//! `matchSession`), recorded by `corpora/search/record.mjs` over Pi's own listings of the
//! sample and hostile corpora: which sessions match each query, their scores, and the order.

#![allow(clippy::unwrap_used)] // test helpers panic on broken fixtures by design

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{corpora, parse};
use session_core::json::Value;
use session_core::search::{Query, Searched, has_session_name, sort_by_relevance};

fn number(v: &Value<'_>) -> f64 {
    match v {
        Value::Number(n) => *n,
        other => panic!("not a number: {other:?}"),
    }
}

/// One session of Pi's listing, as the search reads it.
struct Session {
    name: Option<Vec<u8>>,
    id: Vec<u8>,
    cwd: Vec<u8>,
    text: Vec<u8>,
    modified: f64,
    path: String,
}

/// The listing and the recorded searches of a corpus: `corpora/NAME/expected/list.json` and
/// `corpora/search/expected/NAME.json`; but `SESSION_SCAN_HOSTILE` may name another store laid out
/// as `corpora/hostile` is, with its searches in `expected/search.json` (`cargo xtask differential
/// --trees` records them so for stores of other seeds).
fn corpus_files(corpus: &str) -> (PathBuf, PathBuf) {
    match std::env::var_os("SESSION_SCAN_HOSTILE") {
        Some(dir) if corpus == "hostile" => {
            let expected = PathBuf::from(dir).join("expected");
            (expected.join("list.json"), expected.join("search.json"))
        }
        _ => (
            corpora().join(corpus).join("expected/list.json"),
            corpora().join("search/expected").join(format!("{corpus}.json")),
        ),
    }
}

fn sessions(corpus: &str) -> Vec<Session> {
    let text = std::fs::read_to_string(corpus_files(corpus).0).unwrap();
    let Value::Array(listed) = parse(&text) else { panic!("not an array") };
    let bytes = |v: Option<&Value<'_>>| v.and_then(Value::as_str).map(|s| s.as_bytes().to_vec());
    listed
        .iter()
        .map(|s| Session {
            name: bytes(s.get("name")),
            // Pi's search throws on an id that is not a string; we read String(id).
            id: match s.get("id") {
                Some(Value::String(id)) => id.as_bytes().to_vec(),
                Some(Value::Null) => b"null".to_vec(),
                None => b"undefined".to_vec(),
                Some(other) => session_core::json::to_json(other).into_bytes(),
            },
            cwd: bytes(s.get("cwd")).unwrap(),
            text: bytes(s.get("allMessagesText")).unwrap(),
            modified: bytes(s.get("modified"))
                .and_then(|m| session_core::jsdate::parse_js_date(&m, &session_scan::UTC))
                .unwrap_or(f64::NAN),
            path: s.get("path").and_then(Value::as_str).unwrap().to_str_lossy().into_owned(),
        })
        .collect()
}

/// Every recorded case of `corpus`: the same sessions match, with the same scores, in the same
/// order. Returns how many (case, session) matches were compared.
fn check_corpus(corpus: &str) -> usize {
    let sessions = sessions(corpus);
    let text = std::fs::read_to_string(corpus_files(corpus).1).unwrap();
    let golden = parse(&text);
    let cases = golden.get("cases").and_then(Value::as_array).unwrap();
    let mut compared = 0;
    for case in cases {
        let query = case.get("query").and_then(Value::as_str).unwrap().to_str_lossy().into_owned();
        let sort = case.get("sort").and_then(Value::as_str).unwrap().to_str_lossy().into_owned();
        let named = case.get("names").and_then(Value::as_str).unwrap().as_bytes() == b"named";
        let label = format!("{corpus}: {query:?} {sort} named={named}");
        let parsed = Query::parse(&query);
        if !matches!(case.get("error"), Some(Value::Null)) {
            assert!(parsed.is_err(), "{label}: Pi refuses the query, we took it");
            continue;
        }
        let parsed = parsed.unwrap_or_else(|e| panic!("{label}: {e}"));
        let throws: Vec<usize> =
            case.get("throws").and_then(Value::as_array).unwrap().iter().map(|k| number(k) as usize).collect();
        let expected: Vec<(usize, f64)> = case
            .get("matched")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .map(|m| {
                let m = m.as_array().unwrap();
                (number(&m[0]) as usize, number(&m[1]))
            })
            .collect();
        let mut ours = Vec::new();
        for (k, s) in sessions.iter().enumerate() {
            let name = s.name.as_deref().map(session_core::json::JsStr::borrowed);
            if throws.contains(&k) || (named && !has_session_name(name.as_ref())) {
                continue;
            }
            let score = match &parsed {
                Some(q) => q.score(&Searched { name: s.name.as_deref(), id: &s.id, cwd: &s.cwd, text: &s.text }),
                None => Some(0.0),
            };
            if let Some(score) = score {
                ours.push((k, score));
            }
        }
        if parsed.is_some() {
            assert_eq!(ours, expected, "{label}: matches and scores");
        }
        compared += ours.len();
        // The order: the listing's, then by score for relevance.
        let mut order = ours.clone();
        if parsed.is_some() && sort == "relevance" {
            sort_by_relevance(&mut order, |&(k, score)| (score, sessions[k].modified));
        }
        let order: Vec<usize> = order.iter().map(|&(k, _)| k).collect();
        let expected_order: Vec<usize> =
            case.get("order").and_then(Value::as_array).unwrap().iter().map(|k| number(k) as usize).collect();
        assert_eq!(order, expected_order, "{label}: order");
    }
    println!("{corpus} search: {} cases, {compared} matches compared", cases.len());
    compared
}

#[test]
fn sample_corpus_search_matches_pi_1_6() {
    assert!(check_corpus("sample-16") > 10_000);
}

#[test]
fn hostile_corpus_search_matches_pi_1_6() {
    let compared = check_corpus("hostile");
    // Another store's strings may match fewer queries; the committed one is held to its count.
    assert!(compared > if std::env::var_os("SESSION_SCAN_HOSTILE").is_some() { 0 } else { 1_000 });
}

/// The command itself, on the sample store: the same sessions in the same order, with Pi's scores.
#[test]
fn search_command_orders_the_store_as_pi_does() {
    let sessions = sessions("sample-16");
    let text = std::fs::read_to_string(corpora().join("search/expected/sample-16.json")).unwrap();
    let golden = parse(&text);
    let store = corpora().join("sample-16/sessions");
    let mut checked = 0;
    for case in golden.get("cases").and_then(Value::as_array).unwrap() {
        let query = case.get("query").and_then(Value::as_str).unwrap().to_str_lossy().into_owned();
        if !matches!(case.get("error"), Some(Value::Null))
            || !["auth refactor", "tree", "re:refactor\\s+`\\w+`", "\"pi mono\"", "ml exp", "ПРОЕКТЫ"]
                .contains(&query.as_str())
        {
            continue;
        }
        let sort = case.get("sort").and_then(Value::as_str).unwrap().to_str_lossy().into_owned();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_session-scan"));
        cmd.args(["search", &query]).arg(&store).args(["--json", "--fields", "path", "--sort", &sort]);
        if case.get("names").and_then(Value::as_str).unwrap().as_bytes() == b"named" {
            cmd.arg("--named");
        }
        let out = cmd.output().unwrap();
        // Nothing found is exit 1, as grep's.
        let found = !case.get("order").and_then(Value::as_array).unwrap().is_empty();
        assert_eq!(
            out.status.code(),
            Some(if found { 0 } else { 1 }),
            "{query}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let Value::Array(rows) = parse(std::str::from_utf8(&out.stdout).unwrap()) else { panic!() };
        let expected: Vec<&Session> = case
            .get("order")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .map(|k| &sessions[number(k) as usize])
            .collect();
        assert_eq!(rows.len(), expected.len(), "{query} {sort}");
        let matched = case.get("matched").and_then(Value::as_array).unwrap();
        for (row, s) in rows.iter().zip(&expected) {
            let path = row.get("path").and_then(Value::as_str).unwrap().to_str_lossy().into_owned();
            let rel = s.path.strip_prefix("sample-corpus-16/").unwrap();
            assert!(path.ends_with(rel), "{query} {sort}: {path} where Pi has {rel}");
            let k = sessions.iter().position(|x| std::ptr::eq(x, *s)).unwrap();
            let score = matched.iter().find(|m| number(&m.as_array().unwrap()[0]) as usize == k).unwrap();
            assert_eq!(row.get("score").map(number), Some(number(&score.as_array().unwrap()[1])), "{query}: {rel}");
            checked += 1;
        }
    }
    assert!(checked > 200, "{checked}");
}

/// A query Pi cannot use is an error that says why, not an empty list.
#[test]
fn a_bad_pattern_is_an_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_session-scan"))
        .args(["search", "re:(", "--json"])
        .arg(corpora().join("sample-16/sessions"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Invalid regular expression: /(/i"));
    assert!(out.stdout.is_empty());
}

/// `--hits`: each place given is the start of a line of that session file, that line is the
/// numbered one, it is a message of the role given with the id given, and its text holds the word.
#[test]
fn hits_point_at_the_messages_that_hold_the_query() {
    let store = corpora().join("sample-16/sessions");
    let mut checked = 0;
    for (query, word) in
        [("parser", "parser"), ("\"Auth refactor\"", "auth refactor"), ("re:session\\w+timeout", "session")]
    {
        let out = Command::new(env!("CARGO_BIN_EXE_session-scan"))
            .args(["search", query, "--hits", "3", "--json", "--fields", "path"])
            .arg(&store)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let Value::Array(rows) = parse(std::str::from_utf8(&out.stdout).unwrap()) else { panic!() };
        for row in &rows {
            let path = row.get("path").and_then(Value::as_str).unwrap().to_str_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap();
            for hit in row.get("hits").and_then(Value::as_array).unwrap() {
                let offset = number(hit.get("offset").unwrap()) as usize;
                let line_number = number(hit.get("line").unwrap()) as usize;
                assert!(offset == 0 || bytes[offset - 1] == b'\n', "{path}: {offset}");
                assert_eq!(bytes[..offset].iter().filter(|&&b| b == b'\n').count() + 1, line_number, "{path}");
                let end = bytes[offset..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |p| offset + p);
                let line = parse(std::str::from_utf8(&bytes[offset..end]).unwrap());
                assert_eq!(line.get("id"), hit.get("id"), "{path}:{line_number}");
                assert_eq!(line.get("message").and_then(|m| m.get("role")), hit.get("role"), "{path}:{line_number}");
                let text = hit.get("text").and_then(Value::as_str).unwrap().to_str_lossy().to_lowercase();
                assert!(text.split_whitespace().collect::<Vec<_>>().join(" ").contains(word), "{query}: {text}");
                checked += 1;
            }
            assert!(row.get("hits").and_then(Value::as_array).unwrap().len() <= 3);
        }
    }
    assert!(checked > 100, "{checked}");
}

/// `--limit` keeps the first sessions of the ordered result (not the newest files), and
/// `--ndjson` gives the same rows in the same order.
#[test]
fn limit_and_ndjson_follow_the_search_order() {
    let store = corpora().join("sample-16/sessions");
    let search = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_session-scan"))
            .args(["search", "tree parser", "--fields", "path"])
            .args(extra)
            .arg(&store)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let all = search(&["--json"]);
    let Value::Array(rows) = parse(&all) else { panic!() };
    assert!(rows.len() > 10, "{}", rows.len());
    let Value::Array(first) = parse(&search(&["--json", "--limit", "4"])) else { panic!() };
    assert_eq!(first[..], rows[..4]);
    let lines: Vec<Value<'static>> = search(&["--ndjson"]).lines().map(parse).collect();
    assert_eq!(lines, rows);
}
