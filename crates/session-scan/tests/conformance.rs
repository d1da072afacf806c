//! Conformance: our tree, totals and SessionInfo against Pi 1.6's own outputs on every committed
//! corpus (`corpora/*/expected`, recorded from Pi 1.6 itself). Deliberate differences are listed in
//! `corpora/README.md` and asserted here one by one.

#![allow(clippy::unwrap_used)] // test helpers panic on broken fixtures by design

mod common;

use session_scan::store;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::records::{CONTEXT_KEYS, ours_context, ours_tree, same, strip};
use common::{corpora, parse};
use session_core::Session;
use session_core::json::{JsStr, Object, Value, to_json};
use session_core::stats::session_totals;
use session_scan::render;

/// Where a corpus lies: `corpora/NAME`; but `SESSION_SCAN_HOSTILE` may name another folder laid out
/// as `corpora/hostile` is (`sessions/`, and `expected/` as its `record.sh` writes it): `cargo
/// xtask differential --trees` runs the hostile tests so on stores of other seeds.
fn corpus_dir(corpus: &str) -> PathBuf {
    match std::env::var_os("SESSION_SCAN_HOSTILE") {
        Some(dir) if corpus == "hostile" => PathBuf::from(dir),
        _ => corpora().join(corpus),
    }
}

/// Replaces each 8-hex-digit string by its rank of first appearance, so that v1 files (whose ids
/// Pi regenerates at random) compare by structure.
fn normalise_ids(v: &Value<'_>, ranks: &mut HashMap<Vec<u8>, usize>) -> Value<'static> {
    match v {
        Value::String(s) if s.as_bytes().len() == 8 && s.as_bytes().iter().all(u8::is_ascii_hexdigit) => {
            let n = ranks.len();
            let r = *ranks.entry(s.as_bytes().to_vec()).or_insert(n);
            Value::String(JsStr::owned(format!("#{r}")))
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| normalise_ids(x, ranks)).collect()),
        Value::Object(o) => {
            let mut out = Object::new();
            for (k, x) in o.iter() {
                out.insert(k.clone().into_owned(), normalise_ids(x, ranks));
            }
            Value::Object(out)
        }
        other => other.clone().into_owned(),
    }
}

fn golden_lines(path: &Path) -> Vec<Value<'static>> {
    std::fs::read_to_string(path).unwrap().lines().filter(|l| !l.is_empty()).map(parse).collect()
}

fn file_of(rec: &Value<'_>) -> String {
    rec.get("file").and_then(Value::as_str).unwrap().to_str_lossy().into_owned()
}

/// Maps a golden's `file` (`sample-corpus-16/x/y.jsonl`, `edge-cases/z.jsonl`, `a.jsonl`) to
/// the committed copy.
fn local_path(corpus: &str, file: &str) -> PathBuf {
    let rel = match file.split_once('/') {
        Some((_, rest)) => rest,
        None => file,
    };
    corpus_dir(corpus).join("sessions").join(rel)
}

/// What happened to one file of a golden: matched, or one of the listed deliberate differences.
#[derive(Debug, PartialEq)]
enum Outcome {
    Match,
    /// We refuse to load it (empty, missing, not a session) where the reference threw or made up
    /// a new session.
    Refused(String),
    /// The reference gave no answer (it threw or hung); we did.
    ReferenceFailed,
}

type Ours = fn(&Path, &str) -> Result<Value<'static>, String>;

fn check_golden(corpus: &str, golden: &str, keys: &[&'static str], ours: Ours) -> Vec<(String, Outcome)> {
    let mut results = Vec::new();
    for g in golden_lines(&corpus_dir(corpus).join("expected").join(golden)) {
        let file = file_of(&g);
        let path = local_path(corpus, &file);
        let outcome = match ours(&path, &file) {
            Err(e) => Outcome::Refused(e),
            Ok(_) if g.get("error").is_some() => Outcome::ReferenceFailed,
            Ok(o) => {
                let bytes = std::fs::read(&path).unwrap();
                let migrated = Session::load(&bytes).ok().and_then(|s| s.migrated_from) == Some(1);
                // Through JSON text, as the goldens went: infinities print as null.
                let (mut a, mut b) = (parse(&to_json(&strip(&o, keys))), strip(&g, keys));
                if migrated {
                    a = normalise_ids(&a, &mut HashMap::new());
                    b = normalise_ids(&b, &mut HashMap::new());
                }
                assert!(
                    same(&a, &b),
                    "{corpus}/{golden}: {file} differs\nours: {}\ngold: {}",
                    to_json(&a).chars().take(800).collect::<String>(),
                    to_json(&b).chars().take(800).collect::<String>()
                );
                Outcome::Match
            }
        };
        results.push((file, outcome));
    }
    results
}

fn ours_stats(path: &Path, file: &str) -> Result<Value<'static>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let s = Session::load(&bytes).map_err(|e| e.to_string())?;
    let totals = session_totals(&s);
    Ok(render::stats_record(file, &s, &totals).into_owned())
}

fn expect_outcomes(results: &[(String, Outcome)], differences: &[(&str, &str)]) {
    for (file, outcome) in results {
        let listed = differences.iter().find(|(f, _)| file.ends_with(f)).map(|(_, k)| *k);
        match (outcome, listed) {
            (Outcome::Match, None) | (Outcome::ReferenceFailed, Some("reference-failed")) => {}
            // A refusal must give its own diagnostic, not any error.
            (Outcome::Refused(why), Some(k))
                if k.strip_prefix("refused: ").is_some_and(|want| why.starts_with(want)) => {}
            (o, k) => panic!("{file}: {o:?}, expected {}", k.unwrap_or("a match")),
        }
    }
    for (f, _) in differences {
        assert!(results.iter().any(|(file, _)| file.ends_with(f)), "{f} is not in the golden");
    }
}

#[test]
fn sample_corpus_trees_match_pi_1_6() {
    let r = check_golden("sample-16", "tree.jsonl", &["roots", "nodes"], ours_tree);
    assert_eq!(r.len(), 200);
    expect_outcomes(&r, &[]);
}

#[test]
fn sample_corpus_stats_match_pi_1_6() {
    let r = check_golden("sample-16", "stats.jsonl", &["sessionId", "stats", "breakdown"], ours_stats);
    assert_eq!(r.len(), 200);
    expect_outcomes(&r, &[]);
}

/// Files we refuse where Pi 1.6 throws on open or writes a new session into them
/// (corpora/README.md, "Deliberate differences").
/// Each with the diagnostic it must give.
const REFUSED: &[(&str, &str)] = &[
    (
        "20-utf8-bom.jsonl",
        "refused: line 2, byte 140: not a valid pi session: the first parsed record is not a session header",
    ),
    ("25-empty-file.jsonl", "refused: empty file: not a session (Pi would write a new header into it)"),
    (
        "27-header-not-first.jsonl",
        "refused: line 1, byte 0: not a valid pi session: the first parsed record is not a session header",
    ),
    ("28-header-bad-id.jsonl", "refused: line 1, byte 0: not a valid pi session: the header's id is not a string"),
    ("29-cr-only.jsonl", "refused: line 1, byte 137: not a valid pi session: no line parses as JSON"),
    ("40-missing-file.jsonl", "refused: cannot read: No such file or directory"),
    (
        "47-unicode-whitespace.jsonl",
        "refused: line 2, byte 139: not a valid pi session: the first parsed record is not a session header",
    ),
];

#[test]
fn edge_case_trees_match_pi_1_6() {
    let r = check_golden("edge", "tree.jsonl", &["roots", "nodes"], ours_tree);
    assert_eq!(r.len(), 49);
    let mut diffs = REFUSED.to_vec();
    // getTree() never returns on this file; we cut the loop (see cycles test below).
    diffs.push(("11-duplicate-id-cycle.jsonl", "reference-failed"));
    expect_outcomes(&r, &diffs);
}

#[test]
fn edge_case_stats_match_pi_1_6() {
    let r = check_golden("edge", "stats.jsonl", &["sessionId", "stats", "breakdown"], ours_stats);
    assert_eq!(r.len(), 49);
    let mut diffs = REFUSED.to_vec();
    // The reference throws inside getSessionStats; we count what is there and report the entry.
    diffs.extend([
        ("34-message-null.jsonl", "reference-failed"),
        ("35-message-missing.jsonl", "reference-failed"),
        ("49-deep-linear-chain.jsonl", "reference-failed"),
    ]);
    expect_outcomes(&r, &diffs);
}

#[test]
fn real_fixtures_match_pi_1_6_after_migration() {
    let t = check_golden("real", "golden-tree.jsonl", &["roots", "nodes"], ours_tree);
    let s = check_golden("real", "golden-stats.jsonl", &["sessionId", "stats", "breakdown"], ours_stats);
    assert_eq!((t.len(), s.len()), (2, 2));
    expect_outcomes(&t, &[]);
    expect_outcomes(&s, &[]);
}

#[test]
fn reference_crashes_become_diagnostics_with_line_and_offset() {
    // Edge case 49: assistants without usage make Pi 1.6 throw; we count them and say where.
    let bytes = std::fs::read(corpora().join("edge/sessions/49-deep-linear-chain.jsonl")).unwrap();
    let t = session_totals(&Session::load(&bytes).unwrap());
    assert_eq!(t.stats.assistant_messages, 5000);
    assert_eq!(t.diagnostics.len(), 5000);
    let d = &t.diagnostics[0];
    assert!(d.line > 1 && d.offset > 0 && d.message.contains("without usage"), "{d:?}");
    // Edge case 34: `message: null` counts as a message and is reported.
    let bytes = std::fs::read(corpora().join("edge/sessions/34-message-null.jsonl")).unwrap();
    let t = session_totals(&Session::load(&bytes).unwrap());
    assert_eq!((t.stats.total_messages, t.diagnostics.len()), (3, 1));
}

#[test]
fn cycles_terminate_where_the_reference_hangs() {
    // format.md §5: getBranch/context never return on 11, 12 and 13 (its leaf is the self-parent);
    // getTree never returns on 11.
    for (name, cycle) in
        [("11-duplicate-id-cycle.jsonl", true), ("12-parent-cycle.jsonl", true), ("13-self-parent.jsonl", true)]
    {
        let bytes = std::fs::read(corpora().join("edge/sessions").join(name)).unwrap();
        let s = Session::load(&bytes).unwrap();
        assert_eq!(s.branch(None).cycle_at.is_some(), cycle, "{name}");
        let (_, notes) = render::tree_record(name, &s, &s.tree());
        assert!(!notes.truncated);
        assert_eq!(notes.cycles_cut > 0, name.starts_with("11-"), "{name}");
    }
}

/// SessionInfo of every listed file equals `listAll()`'s, and every file it leaves out we leave
/// out too (with a reason). Returns (listed, omitted, modified-from-mtime).
fn check_listing(corpus: &str, golden: &str, prefix: &str) -> (usize, usize, usize) {
    let text = std::fs::read_to_string(corpus_dir(corpus).join("expected").join(golden)).unwrap();
    let Value::Array(listed) = parse(&text) else { panic!("not an array") };
    let sessions = corpus_dir(corpus).join("sessions");
    let mut seen = std::collections::HashSet::new();
    let mut from_mtime = 0;
    for g in &listed {
        let path = g.get("path").and_then(Value::as_str).unwrap().to_str_lossy().into_owned();
        let rel = path.strip_prefix(prefix).unwrap_or(&path).to_string();
        let bytes = std::fs::read(sessions.join(&rel)).unwrap();
        // A distinctive mtime shows when `modified` falls back to it: git does not keep mtimes,
        // so only that field is then taken from the golden.
        const MTIME: f64 = 1.0;
        let info = session_core::info::session_info(&bytes, MTIME, true).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let mut ours = parse(&to_json(&render::info_record(&path, &info)));
        if info.modified == MTIME {
            from_mtime += 1;
            let Value::Object(o) = &mut ours else { unreachable!() };
            o.insert("modified", g.get("modified").cloned().unwrap());
        }
        assert!(same(&ours, g), "{rel}\nours: {}\ngold: {}", to_json(&ours), to_json(g));
        seen.insert(rel);
    }
    let mut omitted = 0;
    for f in session_scan::expand_paths(std::slice::from_ref(&sessions)) {
        let rel = f.strip_prefix(&sessions).unwrap().to_string_lossy().into_owned();
        if !seen.contains(&rel) {
            let bytes = std::fs::read(&f).unwrap();
            assert!(
                session_core::info::session_info(&bytes, 0.0, true).is_err(),
                "{rel} is listed by us but not by Pi"
            );
            omitted += 1;
        }
    }
    (listed.len(), omitted, from_mtime)
}

#[test]
fn sample_corpus_session_info_matches_list_all() {
    assert_eq!(check_listing("sample-16", "list.json", "sample-corpus-16/"), (200, 0, 0));
}

/// `corpora/escapes`: sessions of the sample corpus with escapes put into their texts, some of
/// which `JSON.parse` refuses (Pi skips those lines: 79 fewer messages than the originals).
#[test]
fn escape_corpus_session_info_matches_list_all() {
    assert_eq!(check_listing("escapes", "list.json", "escapes/"), (40, 0, 0));
}

#[test]
fn escape_corpus_contexts_match_pi_1_6() {
    let r = check_golden("escapes", "context.jsonl", CONTEXT_KEYS, ours_context);
    assert_eq!(r.len(), 40);
    expect_outcomes(&r, &[]);
}

#[test]
fn edge_case_session_info_matches_list_all() {
    let (listed, omitted, from_mtime) = check_listing("edge", "listall.json", "edge-cases/");
    assert_eq!(listed + omitted, 48);
    assert!(omitted >= 5, "{omitted}");
    assert!(from_mtime <= 2, "{from_mtime}");
}

#[test]
fn manifest_is_current() {
    let text = session_scan::manifest::render_manifest(&corpora()).unwrap() + "\n";
    let committed = std::fs::read_to_string(corpora().join("manifest.json")).unwrap();
    assert!(committed == text, "corpora/manifest.json is out of date: run `cargo xtask manifest`");
}

/// `getLeafId()`, `getBranch()` and `getSessionName()` against Pi's recorded `context.jsonl`
/// records (`leafId`, `branch`, `sessionName`). Returns how many files were compared.
fn check_leaf_branch_name(corpus: &str, golden: &str) -> usize {
    let mut compared = 0;
    for g in golden_lines(&corpus_dir(corpus).join("expected").join(golden)) {
        let file = file_of(&g);
        let stage =
            g.get("error").and_then(|e| e.get("stage")).and_then(Value::as_str).map(|s| s.to_str_lossy().into_owned());
        if stage.as_deref() == Some("open") {
            continue; // refused by both; asserted by the tree and stats tests
        }
        let Ok(bytes) = std::fs::read(local_path(corpus, &file)) else { continue };
        let Ok(s) = Session::load(&bytes) else { continue }; // empty file: see REFUSED
        let mut ours = Object::new();
        match s.leaf_id() {
            None => ours.insert("leafId", Value::Null),
            Some(leaf) => {
                if let Some(v) = leaf.to_value() {
                    ours.insert("leafId", v.into_owned());
                }
            }
        }
        ours.insert("sessionName", s.name().map_or(Value::Null, |n| Value::String(n.into_owned())));
        if g.get("branch").is_some() {
            let path = s.branch(None).path;
            let ids = path.iter().map(|&i| s.records[i].id.to_value().unwrap_or(Value::Null).into_owned());
            ours.insert("branch", Value::Array(ids.collect()));
        } else {
            // The reference never returned (a parent cycle); we stop at the repeated record.
            assert!(s.branch(None).cycle_at.is_some() || stage.is_some(), "{file}: no branch in golden");
        }
        let (mut a, mut b) = (parse(&to_json(&Value::Object(ours))), strip(&g, &["leafId", "sessionName", "branch"]));
        if s.migrated_from == Some(1) {
            a = normalise_ids(&a, &mut HashMap::new());
            b = normalise_ids(&b, &mut HashMap::new());
        }
        assert!(same(&a, &b), "{corpus}: {file}\nours: {}\ngold: {}", to_json(&a), to_json(&b));
        compared += 1;
    }
    compared
}

#[test]
fn leaf_branch_and_name_match_pi_1_6() {
    assert_eq!(check_leaf_branch_name("sample-16", "context.jsonl"), 200);
    // 49 records: 5 refused on open by both, the empty and the missing file refused by us.
    assert_eq!(check_leaf_branch_name("edge", "context.jsonl"), 42);
    assert_eq!(check_leaf_branch_name("real", "golden-context.jsonl"), 2);
}

#[test]
fn sample_corpus_contexts_match_pi_1_6() {
    let r = check_golden("sample-16", "context.jsonl", CONTEXT_KEYS, ours_context);
    assert_eq!(r.len(), 200);
    expect_outcomes(&r, &[]);
}

#[test]
fn edge_case_contexts_match_pi_1_6() {
    let r = check_golden("edge", "context.jsonl", CONTEXT_KEYS, ours_context);
    assert_eq!(r.len(), 49);
    let mut diffs = REFUSED.to_vec();
    // Pi never returns (parent loops) or throws (`message` null or missing) in buildSessionContext;
    // we stop at the repeated entry or skip the entry, and report it.
    diffs.extend([
        ("11-duplicate-id-cycle.jsonl", "reference-failed"),
        ("12-parent-cycle.jsonl", "reference-failed"),
        ("13-self-parent.jsonl", "reference-failed"),
        ("34-message-null.jsonl", "reference-failed"),
        ("35-message-missing.jsonl", "reference-failed"),
    ]);
    expect_outcomes(&r, &diffs);
}

#[test]
fn real_fixture_contexts_match_pi_1_6_after_migration() {
    let r = check_golden("real", "golden-context.jsonl", CONTEXT_KEYS, ours_context);
    assert_eq!(r.len(), 2);
    expect_outcomes(&r, &[]);
}

#[test]
fn harness_dialect_matches_pi_agent_core_0_83() {
    use session_core::context::{Dialect, LeafChoice, build_context, convert_to_llm};
    // format.md §7.6 generation A, checked against pi-agent-core 0.83.0's own output.
    let goldens = golden_lines(&corpora().join("harness/expected/harness-golden-083.jsonl"));
    assert_eq!(goldens.len(), 7);
    for g in goldens {
        let file = file_of(&g);
        let bytes = std::fs::read(corpora().join("harness/sessions").join(file.rsplit('/').next().unwrap())).unwrap();
        let s = Session::load(&bytes).unwrap();
        let arena = bumpalo::Bump::new();
        let ctx = build_context(&s, &LeafChoice::Session, Dialect::Harness, &arena);
        let llm = convert_to_llm(&ctx.messages, &arena);
        let array = |ms: &[session_core::context::Message<'_>]| {
            let mut out = Vec::new();
            render::write_messages(&mut out, ms);
            parse(std::str::from_utf8(&out).unwrap())
        };
        let mut ours = Object::new();
        let leaf = ctx.path.last().map_or(Value::Null, |&i| s.records[i].id.to_value().unwrap().into_owned());
        ours.insert("leaf", leaf);
        ours.insert("model", ctx.model.clone().into_owned());
        ours.insert("thinkingLevel", ctx.thinking_level.clone().unwrap().into_owned());
        ours.insert("activeToolNames", ctx.active_tools.clone().unwrap().into_owned());
        ours.insert("context", array(&ctx.messages));
        ours.insert("llm", array(&llm));
        let ours = parse(&to_json(&Value::Object(ours)));
        let gold = strip(&g, &["leaf", "model", "thinkingLevel", "activeToolNames", "context", "llm"]);
        assert!(same(&ours, &gold), "{file}\nours: {}\ngold: {}", to_json(&ours), to_json(&gold));
    }
}

#[test]
fn picker_mode_gives_the_same_info_without_texts() {
    // Picker mode skips `allMessagesText` but must agree on everything else, omissions included.
    for corpus in ["sample-16", "edge", "real"] {
        for f in session_scan::expand_paths(&[corpus_dir(corpus).join("sessions")]) {
            let bytes = std::fs::read(&f).unwrap();
            let full = session_core::info::session_info(&bytes, 1.0, true);
            let picker = session_core::info::session_info(&bytes, 1.0, false);
            match (full, picker) {
                (Ok(mut a), Ok(b)) => {
                    a.all_messages_text.clear();
                    // Debug text, since `created` can be NaN.
                    assert_eq!(format!("{a:?}"), format!("{b:?}"), "{}", f.display());
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "{}", f.display()),
                (a, b) => panic!("{}: {a:?} vs {b:?}", f.display()),
            }
        }
    }
}

/// `listAll()`/`list()` as the CLI runs them: discovery, infos, Pi's order.
/// The listing as the CLI makes it, with the mtimes taken both ways (before any read, and as
/// each file is read, then pre-sorted): the two must agree, ties included.
fn listing(scope: &session_scan::list::Scope) -> Vec<Value<'static>> {
    use session_scan::list::{self, Stat};
    let now = listing_with(scope, Stat::Now);
    assert_eq!(listing_with(scope, Stat::Later), now, "mtimes taken as the files are read give another order");
    if let list::Scope::All { root } = scope {
        // Discovered folder by folder while it is read.
        let listed = list::read_store(root, list::Reading::new(list::Texts::Json, false));
        assert_eq!(in_pi_order(scope, listed), now, "the store read while it is discovered gives another listing");
    }
    now
}

fn listing_with(scope: &session_scan::list::Scope, stat: session_scan::list::Stat) -> Vec<Value<'static>> {
    use session_scan::list;
    let candidates = list::discover_with(scope, stat);
    let mut listed = list::read_infos(&candidates, list::Reading::new(list::Texts::Json, false));
    if stat == list::Stat::Later {
        list::presort(scope, &mut listed);
    }
    in_pi_order_presorted(scope, listed)
}

/// Read in discovery order without mtimes: pre-sorted, then as [`in_pi_order_presorted`].
fn in_pi_order(scope: &session_scan::list::Scope, mut listed: Vec<session_scan::list::Listed>) -> Vec<Value<'static>> {
    session_scan::list::presort(scope, &mut listed);
    in_pi_order_presorted(scope, listed)
}

fn in_pi_order_presorted(
    scope: &session_scan::list::Scope,
    mut listed: Vec<session_scan::list::Listed>,
) -> Vec<Value<'static>> {
    use session_scan::list;
    let filter = match scope {
        list::Scope::Dir { filter, .. } => filter.clone(),
        list::Scope::All { .. } | list::Scope::Files { .. } => None,
    };
    listed.retain(|l| l.info.as_ref().is_ok_and(|i| filter.as_deref().is_none_or(|c| list::cwd_matches(i, c))));
    list::sort_by_modified(&mut listed);
    listed
        .iter()
        .map(|l| parse(&to_json(&render::info_record(&l.path.to_string_lossy(), l.info.as_ref().unwrap()))))
        .collect()
}

fn with_prefix(mut rows: Vec<Value<'static>>, from: &str, to: &str) -> Value<'static> {
    for r in &mut rows {
        let Value::Object(o) = r else { unreachable!() };
        let p = o.get("path").and_then(Value::as_str).unwrap().to_str_lossy().replacen(from, to, 1);
        o.insert("path", Value::String(JsStr::owned(p)));
    }
    Value::Array(rows)
}

#[test]
fn list_all_matches_pi_1_6_in_order() {
    let root = corpora().join("sample-16/sessions");
    let ours = listing(&session_scan::list::Scope::All { root: root.clone() });
    let gold = parse(&std::fs::read_to_string(corpora().join("sample-16/expected/list.json")).unwrap());
    let ours = with_prefix(ours, &format!("{}/", root.display()), "sample-corpus-16/");
    assert!(same(&ours, &gold), "listAll differs");
}

/// `list --cache`: the store listed from a cache, cold and then warm, is `listAll()`'s listing
/// with the picker's fields (`allMessagesText` is not read, so it is empty); the warm listing
/// reads no file.
#[test]
fn cached_picker_listing_matches_list_all() {
    use session_scan::cache::ListCache;
    use session_scan::list::{self, Reading, Scope, Texts};
    let root = corpora().join("sample-16/sessions");
    let scope = Scope::All { root: root.clone() };
    let mut gold = parse(&std::fs::read_to_string(corpora().join("sample-16/expected/list.json")).unwrap());
    let Value::Array(rows) = &mut gold else { panic!("not an array") };
    for row in rows.iter_mut() {
        let Value::Object(o) = row else { panic!("not an object") };
        o.insert("allMessagesText", Value::String(JsStr::owned("")));
    }
    let file = std::env::temp_dir().join(format!("session-scan-conformance-{}.cache", std::process::id()));
    let _ = std::fs::remove_file(&file);
    for (pass, hits) in [("cold", 0), ("warm", 200)] {
        let cache = ListCache::open(&file);
        let listed = list::read_store(&root, Reading::new(Texts::Skip, false).with_cache(&cache));
        // Files changed in the last seconds are never kept: a checkout is older than the build.
        assert_eq!(cache.hits(), hits, "{pass}");
        let ours = with_prefix(in_pi_order(&scope, listed), &format!("{}/", root.display()), "sample-corpus-16/");
        assert!(same(&ours, &gold), "the {pass} cached listing differs from listAll()");
        cache.save(Some(session_scan::cache::ReadAll::Store(&root))).unwrap();
    }
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn list_of_a_cwd_filters_like_pi_1_6() {
    // `list.mjs ROOT CWD`: ROOT/<encoded CWD> is a custom dir to Pi 1.6, so it is cwd-filtered.
    use session_scan::list;
    let root = corpora().join("sample-16/sessions");
    let cwd = store::resolve_path("/home/dev/src-pi/mono");
    let scope = list::Scope::Dir { dir: root.join(store::encode_cwd(&cwd)), filter: Some(cwd) };
    let ours = with_prefix(listing(&scope), &format!("{}/", root.display()), "sample-corpus-16/");
    let gold = parse(&std::fs::read_to_string(corpora().join("sample-16/expected/list-cwd.json")).unwrap());
    assert!(same(&ours, &gold), "list(cwd) differs");
    // The default dir is not filtered (what /resume shows): both cwds that share the folder.
    let unfiltered = listing(&list::Scope::Dir { dir: root.join("--home-dev-src-pi-mono--"), filter: None });
    let unfiltered = with_prefix(unfiltered, &format!("{}/", root.display()), "sample-corpus-16/");
    let gold = parse(&std::fs::read_to_string(corpora().join("sample-16/expected/list-cwd-default.json")).unwrap());
    assert_eq!(unfiltered.as_array().unwrap().len(), 79);
    assert!(same(&unfiltered, &gold), "list(cwd) of the default dir differs");
}

#[test]
fn list_all_tie_breaks_match_pi_1_6() {
    // The store Pi's `listAll()` was recorded on for `edge/expected/listall-ties.json`, rebuilt here: equal `modified`, chosen mtimes, a
    // symlinked folder, a symlink to a file, a nested folder and a file in the root (format.md §1).
    use std::time::{Duration, SystemTime};
    let t = 1_740_830_400_000u64; // 2025-03-01T12:00:00Z
    let iso = |ms: u64| session_core::text::js_iso_string(ms as f64);
    let n = std::cell::Cell::new(0);
    let header = |cwd: &str, ts: &str| {
        n.set(n.get() + 1);
        let n = n.get();
        format!(
            r#"{{"type":"session","version":3,"id":"f0000000-0000-4000-8000-{n:012}","timestamp":"{ts}","cwd":"{cwd}"}}"#
        )
    };
    let user = |text: &str, ms: u64| {
        format!(
            r#"{{"type":"message","id":"u1","parentId":null,"timestamp":"{}","message":{{"role":"user","content":"{text}","timestamp":{ms}}}}}"#,
            iso(ms)
        )
    };
    let hour_before = iso(t - 3_600_000);
    let session = |text: &str, ms: u64, cwd: &str| format!("{}\n{}\n", header(cwd, &hour_before), user(text, ms));
    let a = "/home/dev/a";
    let b = "/home/dev/b";
    let files: Vec<(&str, String, u64)> = vec![
        ("--home-dev-a--/a-1.jsonl", session("a-1", t, a), t + 1000),
        ("--home-dev-a--/a-2.jsonl", session("a-2", t, a), t + 3000),
        ("--home-dev-a--/a-3.jsonl", session("a-3", t, a), t + 3000),
        ("--home-dev-a--/a-4.jsonl", session("a-4", t + 60000, a), t + 60000),
        ("--home-dev-a--/a-5.jsonl", format!("{}\n", header(a, &iso(t))), t + 4000),
        ("--home-dev-a--/a-6.jsonl", format!("{}\n", header(a, "not a date")), t + 2000),
        ("--home-dev-b--/b-1.jsonl", session("b-1", t, b), t + 2000),
        ("--home-dev-b--/B-2.jsonl", session("B-2", t, b), t + 2000),
        ("--home-dev-b--/zz.jsonl", session("zz", t, b), t - 10000),
        ("--home-dev-b--/nested/x.jsonl", session("nested", t + 120000, b), t),
        ("top.jsonl", session("top", t + 120000, a), t),
        ("target.jsonl", session("link target", t + 120000, a), t),
    ];
    let root = std::env::temp_dir().join(format!("session-scan-ties-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for (rel, content, mtime) in &files {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_millis(*mtime)).unwrap();
    }
    std::os::unix::fs::symlink("--home-dev-b--", root.join("--home-dev-c--")).unwrap();
    std::os::unix::fs::symlink("target.jsonl", root.join("--file-link--")).unwrap();
    let ours = listing(&session_scan::list::Scope::All { root: root.clone() });
    std::fs::remove_dir_all(&root).unwrap();
    let ours = with_prefix(ours, &root.display().to_string(), "<root>");
    let gold = parse(&std::fs::read_to_string(corpora().join("edge/expected/listall-ties.json")).unwrap());
    assert!(same(&ours, &gold), "ours: {}\ngold: {}", to_json(&ours), to_json(&gold));
}

/// `corpora/sort` (written by its `gen.py`): 90 sessions, 28 of them with an Invalid Date
/// `modified`, so that `listAll()`'s sort by `modified` compares `NaN` over more than 64 items
/// and V8's merges decide the order. (Rust's own sort gives another order here, and may panic on
/// a comparator that is not a total order.)
#[test]
fn list_all_order_with_invalid_dates_matches_pi_1_6() {
    use std::time::{Duration, SystemTime};
    let corpus = corpora().join("sort");
    let root = std::env::temp_dir().join(format!("session-scan-sort-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let folder = "--home-u-sort--";
    std::fs::create_dir_all(root.join(folder)).unwrap();
    let mut names: Vec<_> =
        std::fs::read_dir(corpus.join("sessions").join(folder)).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    // The mtimes the golden was taken with (see `gen.py`): they make the pre-sort order.
    for (k, name) in names.iter().enumerate() {
        let p = root.join(folder).join(name);
        std::fs::copy(corpus.join("sessions").join(folder).join(name), &p).unwrap();
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600 + 60 * k as u64)).unwrap();
    }
    let ours = listing(&session_scan::list::Scope::All { root: root.clone() });
    std::fs::remove_dir_all(&root).unwrap();
    let ids: Vec<String> =
        ours.iter().map(|v| v.get("id").and_then(Value::as_str).unwrap().to_str_lossy().into_owned()).collect();
    let invalid = ours.iter().filter(|v| v.get("modified").is_some_and(|m| matches!(m, Value::Null))).count();
    let gold: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(corpus.join("expected/listall-ids.json")).unwrap()).unwrap();
    assert_eq!(invalid, 28);
    assert_eq!(ids, gold);
}

/// `corpora/adversarial` (written by `cargo xtask adversarial`): Pi 1.6's outputs where it gave
/// one; where it hung, crashed or threw, we answer and report the entries at fault.
#[test]
fn adversarial_corpus_matches_pi_1_6_where_pi_answers() {
    let t = check_golden("adversarial", "tree.jsonl", &["roots", "nodes"], ours_tree);
    assert_eq!(t.len(), 12);
    // getTree() never returns on a duplicate id that closes a loop.
    expect_outcomes(&t, &[("duplicate-id-loops.jsonl", "reference-failed")]);
    let s = check_golden("adversarial", "stats.jsonl", &["sessionId", "stats", "breakdown"], ours_stats);
    assert_eq!(s.len(), 12);
    // getSessionStats() throws on assistants without usage and on a message entry without
    // `message`; we count what is there and report each entry.
    expect_outcomes(
        &s,
        &[
            ("almost-json.jsonl", "reference-failed"),
            ("cycle-two.jsonl", "reference-failed"),
            ("duplicate-id-loops.jsonl", "reference-failed"),
            ("duplicate-ids-100k.jsonl", "reference-failed"),
            ("invalid-utf8.jsonl", "reference-failed"),
            ("nul-bytes.jsonl", "reference-failed"),
            ("null-leaf-id.jsonl", "reference-failed"),
            ("v1-array-lines.jsonl", "reference-failed"),
        ],
    );
    let c = check_golden("adversarial", "context.jsonl", CONTEXT_KEYS, ours_context);
    assert_eq!(c.len(), 12);
    // buildSessionContext() walks parent loops until V8 runs out of memory and aborts.
    expect_outcomes(
        &c,
        &[
            ("cycle-two.jsonl", "reference-failed"),
            ("duplicate-id-loops.jsonl", "reference-failed"),
            ("duplicate-ids-100k.jsonl", "reference-failed"),
            ("self-parent.jsonl", "reference-failed"),
        ],
    );
}

#[test]
fn adversarial_store_lists_like_pi_1_6_and_reports_the_rest() {
    let root = corpora().join("adversarial").join("store");
    let ours = listing(&session_scan::list::Scope::All { root: root.clone() });
    let text = std::fs::read_to_string(corpora().join("adversarial/expected/list.json")).unwrap();
    let gold = parse(&text);
    let ours = with_prefix(ours, &format!("{}/", root.display()), "");
    assert!(same(&ours, &gold), "ours: {}\ngold: {}", to_json(&ours), to_json(&gold));
    // What Pi leaves out silently we leave out with a reason: the folder named x.jsonl (seen
    // through both cwd folders) and the dangling link.
    let candidates = session_scan::list::discover(&session_scan::list::Scope::All { root });
    let listed = session_scan::list::read_infos(
        &candidates,
        session_scan::list::Reading::new(session_scan::list::Texts::Json, false),
    );
    let mut reasons: Vec<String> = listed
        .iter()
        .filter_map(|l| l.info.as_ref().err().map(|e| (l, e)))
        .map(|(l, e)| {
            let name = l.path.file_name().unwrap().to_string_lossy().into_owned();
            format!("{name}: {}", e.reason)
        })
        .collect();
    reasons.sort();
    assert_eq!(
        reasons,
        [
            "dangling.jsonl: cannot read: No such file or directory (os error 2)",
            "dangling.jsonl: cannot read: No such file or directory (os error 2)",
            "x.jsonl: cannot read: is a directory",
            "x.jsonl: cannot read: is a directory"
        ]
    );
}

/// format.md §7.6 generation C (format 4 files), checked against pi-agent-core 0.87.1's own output:
/// the context and its LLM form, the tip and lane of each branch, and the files that fail to open.
/// The golden's v3 records (0.87.1 importing coding-agent files) are not compared: v3 files
/// follow generation A (the test above).
#[test]
fn harness_format_4_matches_pi_agent_core_0_87() {
    use session_core::context::convert_to_llm;
    use session_core::context::harness4::{build_context4, is_format4, load_format4};
    let goldens = golden_lines(&corpora().join("harness/expected/harness-golden-087.jsonl"));
    let mut compared = 0;
    for g in goldens {
        let file = file_of(&g);
        if file.contains("/v3/") {
            continue;
        }
        let bytes = std::fs::read(corpora().join("harness/sessions").join(file.rsplit('/').next().unwrap())).unwrap();
        assert!(is_format4(&bytes), "{file}");
        let branch = g.get("branch").and_then(Value::as_str).map_or("main".into(), |b| b.to_str_lossy().into_owned());
        let arena = bumpalo::Bump::new();
        let built = load_format4(&bytes, &arena).and_then(|f| build_context4(&f, &branch));
        compared += 1;
        if g.get("error").is_some() {
            assert!(built.is_err(), "{file}: the reference fails to open it, we did not");
            continue;
        }
        let ctx = built.unwrap_or_else(|e| panic!("{file}: {e}"));
        let array = |ms: &[session_core::context::Message<'_>]| {
            let mut out = Vec::new();
            render::write_messages(&mut out, ms);
            parse(std::str::from_utf8(&out).unwrap())
        };
        let mut ours = Object::new();
        ours.insert("lane", Value::String(JsStr::owned(ctx.lane)));
        ours.insert("tip", ctx.tip.as_ref().map_or(Value::Null, |t| Value::String(t.clone().into_owned())));
        ours.insert("context", array(&ctx.messages));
        ours.insert("llm", array(&convert_to_llm(&ctx.messages, &arena)));
        let ours = parse(&to_json(&Value::Object(ours)));
        let gold = strip(&g, &["lane", "tip", "context", "llm"]);
        assert!(same(&ours, &gold), "{file} ({branch})\nours: {}\ngold: {}", to_json(&ours), to_json(&gold));
    }
    assert_eq!(compared, 19);
}

/// `corpora/hostile` (its `gen.py`), copied to a temporary root with the mtimes its `record.sh`
/// gave the files before Pi listed them: `1767225600 s + 1000 s * (k % 6) + 0.4 ms * (k % 3)`,
/// `k` the file's place in name order.
fn hostile_root(name: &str) -> PathBuf {
    use std::time::{Duration, SystemTime};
    let sessions = corpus_dir("hostile").join("sessions");
    let root = std::env::temp_dir().join(format!("session-scan-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let mut files: Vec<PathBuf> = session_scan::expand_paths(std::slice::from_ref(&sessions))
        .into_iter()
        .map(|f| f.strip_prefix(&sessions).unwrap().to_path_buf())
        .collect();
    files.sort();
    for (k, rel) in files.iter().enumerate() {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::copy(sessions.join(rel), &p).unwrap();
        let when =
            Duration::from_secs(1_767_225_600 + 1000 * (k as u64 % 6)) + Duration::from_nanos(400_000 * (k as u64 % 3));
        std::fs::File::options().write(true).open(&p).unwrap().set_modified(SystemTime::UNIX_EPOCH + when).unwrap();
    }
    root
}

/// Every field and the order of `listAll()`, of `list(cwd)` and of `listAll(dir)` on one flat
/// folder, on 240 random hostile sessions (dates Pi reads with V8's fallback or in the local zone,
/// `modified` from a rounded mtime, ties, sessions Pi leaves out). The goldens were taken in UTC;
/// the in-process parse is in UTC too.
#[test]
fn hostile_corpus_listings_match_pi_1_6() {
    use session_scan::list;
    let root = hostile_root("list");
    let all =
        with_prefix(listing(&list::Scope::All { root: root.clone() }), &format!("{}/", root.display()), "hostile/");
    let cwd = store::resolve_path("/home/u/proj");
    let scope = list::Scope::Dir { dir: root.join(store::encode_cwd(&cwd)), filter: Some(cwd) };
    let one = with_prefix(listing(&scope), &format!("{}/", root.display()), "hostile/");
    // `listAll(dir)` on one flat folder (`--dir` without `--cwd`): no cwd filter.
    let flat = list::Scope::Dir { dir: root.join("--tmp-x y--"), filter: None };
    let flat = with_prefix(listing(&flat), &format!("{}/", root.display()), "hostile/");
    std::fs::remove_dir_all(&root).unwrap();
    for (ours, golden) in [(all, "list.json"), (one, "list-cwd.json"), (flat, "list-flat-all.json")] {
        let gold = parse(&std::fs::read_to_string(corpus_dir("hostile").join("expected").join(golden)).unwrap());
        let (Value::Array(o), Value::Array(g)) = (&ours, &gold) else { panic!("not arrays") };
        for (k, (a, b)) in o.iter().zip(g).enumerate() {
            assert!(same(a, b), "{golden} row {k}\nours: {}\ngold: {}", to_json(a), to_json(b));
        }
        assert_eq!(o.len(), g.len(), "{golden}");
    }
}

/// Whether our diagnostics for `path` say that Pi throws there (`stats`: the totals' notes;
/// `context`: the context's notes and a name that is not a string).
fn says_pi_throws(path: &Path, stats: bool) -> bool {
    use session_core::context::{Dialect, LeafChoice, build_context};
    let bytes = std::fs::read(path).unwrap();
    let s = Session::load(&bytes).unwrap();
    let notes: Vec<String> = if stats {
        session_totals(&s).diagnostics.into_iter().map(|d| d.message).collect()
    } else {
        let arena = bumpalo::Bump::new();
        let ctx = build_context(&s, &LeafChoice::Session, Dialect::Pi, &arena);
        let mut notes: Vec<String> = ctx.diagnostics.iter().map(|d| d.message.clone()).collect();
        notes.extend(s.name_that_throws().map(|_| "getSessionName() throws".to_string()));
        notes
    };
    notes.iter().any(|n| n.contains("throws"))
}

/// Tree, totals and context of the hostile corpus: equal to Pi's wherever Pi answers; refused
/// where Pi refuses to open the file; and where Pi throws on a file it opened, we answer and our
/// diagnostics say that Pi throws there.
#[test]
fn hostile_corpus_trees_totals_and_contexts_match_pi_1_6() {
    let goldens: [(&str, &[&'static str], Ours, Option<bool>); 3] = [
        ("tree.jsonl", &["roots", "nodes"], ours_tree, None),
        ("stats.jsonl", &["sessionId", "stats", "breakdown"], ours_stats, Some(true)),
        ("context.jsonl", CONTEXT_KEYS, ours_context, Some(false)),
    ];
    for (golden, keys, ours, throws_in) in goldens {
        let results = check_golden("hostile", golden, keys, ours);
        // The stage Pi failed at, by file.
        let stages: HashMap<String, String> = golden_lines(&corpus_dir("hostile").join("expected").join(golden))
            .iter()
            .filter_map(|g| {
                let stage = g.get("error")?.get("stage")?.as_str()?.to_str_lossy().into_owned();
                Some((file_of(g), stage))
            })
            .collect();
        let stage = |file: &str| stages.get(file).map(String::as_str);
        let (mut matched, mut refused, mut thrown) = (0, 0, 0);
        for (file, outcome) in &results {
            match outcome {
                Outcome::Match => matched += 1,
                Outcome::Refused(why) => {
                    assert_eq!(stage(file), Some("open"), "{golden}: {file}: we refuse ({why}), Pi opens it");
                    refused += 1;
                }
                Outcome::ReferenceFailed => {
                    let stats = throws_in.unwrap_or_else(|| panic!("{golden}: {file}: Pi failed"));
                    assert!(says_pi_throws(&local_path("hostile", file), stats), "{golden}: {file}: not said");
                    thrown += 1;
                }
            }
        }
        // One record a file (240 in the committed corpus).
        let files = session_scan::expand_paths(&[corpus_dir("hostile").join("sessions")]).len();
        assert_eq!(results.len(), files, "{golden}");
        println!("hostile {golden}: {matched} equal, {refused} refused as by Pi, {thrown} where Pi throws");
        // The committed corpus has every outcome: at least half of its files equal, a quarter refused.
        let committed = corpus_dir("hostile") == corpora().join("hostile");
        assert!(
            matched > 0 && (!committed || (matched * 2 >= files && refused * 4 >= files)),
            "{golden}: {matched} matched, {refused} refused, {thrown} thrown"
        );
    }
}

/// `list --threaded` against Pi 1.6's picker in its threaded mode (`corpora/threads`, recorded by
/// its `record.mjs` through the picker's own session list): forks under their parents through
/// `./` and `..` spellings, missing and empty parents, each level newest subtree first with ties
/// and Invalid Dates; sessions whose parents form a loop are left out, as there, and named on stderr.
/// `SESSION_SCAN_THREADS` may name another store laid out the same way (`cargo xtask differential
/// --shape threads` writes them from other seeds).
#[test]
fn threaded_view_matches_pi_1_6_picker() {
    use std::time::{Duration, SystemTime};
    let other = std::env::var_os("SESSION_SCAN_THREADS").map(std::path::PathBuf::from);
    let committed = other.is_none();
    let corpus = other.unwrap_or_else(|| corpora().join("threads"));
    let root = std::env::temp_dir().join(format!("session-scan-threads-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let mut files = Vec::new();
    for folder in std::fs::read_dir(corpus.join("sessions")).unwrap() {
        let folder = folder.unwrap().file_name();
        std::fs::create_dir_all(root.join(&folder)).unwrap();
        for f in std::fs::read_dir(corpus.join("sessions").join(&folder)).unwrap() {
            files.push(format!("{}/{}", folder.to_str().unwrap(), f.unwrap().file_name().to_str().unwrap()));
        }
    }
    files.sort();
    // The mtimes the golden was taken with (see `gen.py`).
    for (k, rel) in files.iter().enumerate() {
        std::fs::copy(corpus.join("sessions").join(rel), root.join(rel)).unwrap();
        let f = std::fs::File::options().write(true).open(root.join(rel)).unwrap();
        f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600 + 60 * k as u64)).unwrap();
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_session-scan"))
        .args(["list", ".", "--threaded", "--json", "--fields", "path"])
        .current_dir(&root)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&root).unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let Value::Array(rows) = parse(std::str::from_utf8(&out.stdout).unwrap()) else { panic!() };
    let ours: Vec<(String, f64)> = rows
        .iter()
        .map(|r| {
            let path = r.get("path").and_then(Value::as_str).unwrap().to_str_lossy().into_owned();
            let Some(Value::Number(depth)) = r.get("depth") else { panic!("no depth") };
            (path.strip_prefix("./").unwrap_or(&path).to_string(), *depth)
        })
        .collect();
    let golden = parse(&std::fs::read_to_string(corpus.join("expected/threaded.json")).unwrap());
    let pi: Vec<(String, f64)> = golden
        .get("rows")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|r| {
            let r = r.as_array().unwrap();
            let Value::Number(depth) = r[1] else { panic!() };
            (r[0].as_str().unwrap().to_str_lossy().into_owned(), depth)
        })
        .collect();
    if let Some(k) = (0..ours.len().max(pi.len())).find(|&k| ours.get(k) != pi.get(k)) {
        panic!(
            "row {k} differs: ours {:?}, Pi's {:?} ({} rows against {})",
            ours.get(k),
            pi.get(k),
            ours.len(),
            pi.len()
        );
    }
    let left_out = files.len() - pi.len();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("not in the threaded view").count(), left_out, "{stderr}");
    let forks = pi.iter().filter(|r| r.1 > 0.0).count();
    println!("threads {}: {} rows equal, {forks} under a parent, {left_out} left out", corpus.display(), pi.len());
    if committed {
        assert!(forks > 20 && left_out > 0);
    }
}
