//! The writer against Pi 1.6's own `SessionManager` (`corpora/writer`): random scripts of
//! operations replayed through `session_scan::manager` with the times and ids Pi had must give
//! the same result for each operation, the same leaf and file, and leave the same files byte for
//! byte; version 1 and 2 sessions migrated on request must be rewritten as Pi rewrites them.
#![allow(clippy::unwrap_used)] // test inputs are committed; a panic is a failed test

mod common;

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value as Json;
use session_core::json::{Value, parse_value};
use session_core::state::{BranchSummary, Compaction, NewSession, Sources};
use session_scan::manager::{ManagerError, Opener, SessionManager};

use common::records::{CONTEXT_KEYS, ours_context, ours_tree, same, strip};

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/writer").join(name)
}

/// The k-th counted UUID, as the recorder's `countedUuid(k)` makes it.
fn counted_uuid(k: u32) -> String {
    format!("{:08x}-0000-4000-8000-{k:012x}", k.wrapping_mul(2_654_435_761) % 97)
}

#[derive(Default)]
struct Replay {
    now: i64,
    count: u32,
    session_ids: VecDeque<String>,
    /// Open every file as a large one is opened: indexed, its bytes read back when needed.
    indexed_only: bool,
}

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Replay>>);

impl Sources for Shared {
    fn now_ms(&mut self) -> i64 {
        self.0.lock().unwrap().now
    }
    fn random_uuid(&mut self) -> String {
        let mut r = self.0.lock().unwrap();
        r.count += 1;
        counted_uuid(r.count)
    }
    fn session_id(&mut self) -> String {
        self.0.lock().unwrap().session_ids.pop_front().expect("Pi drew as many session ids")
    }
}

fn opener(sources: &Shared) -> Opener {
    let opener = Opener::default().sources(sources.clone());
    // Every file opened indexed only, as a large one is, when the replay asks.
    if sources.0.lock().unwrap().indexed_only { opener.held_below(1) } else { opener }
}

/// The files under `dir`, by relative path, with `dir` written as `<dir>`.
fn files_of(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<String, String>) {
        let Ok(names) = std::fs::read_dir(d) else { return };
        let mut names: Vec<_> = names.map(|e| e.unwrap().path()).collect();
        names.sort();
        for p in names {
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let text = String::from_utf8(std::fs::read(&p).unwrap()).unwrap();
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, text.replace(&root.to_string_lossy().into_owned(), "<dir>"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn parsed<'b>(op: &Json, key: &str, arena: &'b bumpalo::Bump) -> Option<Value<'b>> {
    op.get(key).and_then(Json::as_str).map(|t| parse_value(t.as_bytes(), arena).unwrap())
}

fn options(op: &Json) -> NewSession {
    let v: Json = op.get("options").and_then(Json::as_str).map_or(Json::Null, |t| serde_json::from_str(t).unwrap());
    NewSession {
        id: v.get("id").and_then(Json::as_str).map(str::to_owned),
        parent_session: v.get("parentSession").and_then(Json::as_str).map(str::to_owned),
        workflow: None,
    }
}

/// The manager a constructing operation makes (`None` for other operations).
fn constructed(kind: &str, op: &Json, dir: &Path, sources: &Shared) -> Result<Option<SessionManager>, ManagerError> {
    let s = |k: &str| op.get(k).and_then(Json::as_str);
    let sessions = dir.join("sessions");
    let cwd = "/work/project";
    Ok(match kind {
        "create" => Some(opener(sources).create(cwd, Some(&sessions), &options(op))?),
        "inMemory" => Some(opener(sources).in_memory(cwd, &NewSession::default())?),
        "open" => Some(opener(sources).open(&dir.join(s("file").unwrap()), None, None)?),
        "continueRecent" => Some(opener(sources).continue_recent(cwd, Some(&sessions))?),
        "forkFrom" => Some(opener(sources).fork_from(
            &dir.join(s("file").unwrap()),
            "/work/other",
            Some(&dir.join("forks")),
            &NewSession::default(),
        )?),
        _ => None,
    })
}

/// Runs one operation; the value Pi returns, as the recorder shows it.
fn run(
    op: &Json,
    sm: &mut Option<SessionManager>,
    dir: &Path,
    sources: &Shared,
) -> Result<Option<String>, ManagerError> {
    let arena = bumpalo::Bump::new();
    let s = |k: &str| op.get(k).and_then(Json::as_str);
    let path_of = |m: &SessionManager| m.session_file().map(|p| p.to_string_lossy().into_owned());
    let kind = s("op").unwrap();
    let made = match constructed(kind, op, dir, sources) {
        // A second manager of ours on one file is refused while the first has it: the manager
        // replaced lets go of it (Pi's scripts drop the old one too).
        Err(ManagerError::Locked(_)) => {
            *sm = None;
            constructed(kind, op, dir, sources)?
        }
        made => made?,
    };
    if let Some(m) = made {
        let file = if kind == "inMemory" { None } else { path_of(&m) };
        *sm = Some(m);
        return Ok(file);
    }
    let m = sm.as_mut().unwrap_or_else(|| panic!("no manager for {op}"));
    let id = match kind {
        "setSessionFile" => {
            m.set_session_file(&dir.join(s("file").unwrap()))?;
            return Ok(path_of(m));
        }
        "newSession" => return Ok(m.new_session(&options(op))?.map(|p| p.to_string_lossy().into_owned())),
        "message" => m.append_message(&parsed(op, "message", &arena).unwrap())?,
        "thinking" => m.append_thinking_level_change(s("level").unwrap())?,
        "model" => m.append_model_change(s("provider").unwrap(), s("modelId").unwrap())?,
        "usage" => m.append_usage(
            s("kind").unwrap(),
            s("provider").unwrap(),
            s("model").unwrap(),
            &parsed(op, "usage", &arena).unwrap(),
            s("note"),
        )?,
        "compaction" => {
            let details = parsed(op, "details", &arena);
            let usage = parsed(op, "usage", &arena);
            m.append_compaction(&Compaction {
                summary: s("summary").unwrap(),
                first_kept_entry_id: s("firstKept"),
                tokens_before: op["tokensBefore"].as_f64().unwrap(),
                details: details.as_ref(),
                from_hook: op.get("fromHook").and_then(Json::as_bool),
                usage: usage.as_ref(),
            })?
        }
        "custom" => m.append_custom(s("customType").unwrap(), parsed(op, "data", &arena).as_ref())?,
        "customMessage" => m.append_custom_message(
            s("customType").unwrap(),
            &parsed(op, "content", &arena).unwrap(),
            op["display"].as_bool().unwrap(),
            parsed(op, "details", &arena).as_ref(),
        )?,
        "sessionInfo" => m.append_session_info(s("name").unwrap())?,
        "label" => m.append_label_change(s("target").unwrap(), s("label"))?,
        "contextEdit" => m.append_context_edit(s("target").unwrap(), &parsed(op, "replacement", &arena).unwrap())?,
        "branch" => {
            m.branch(s("target").unwrap())?;
            return Ok(None);
        }
        "resetLeaf" => {
            m.reset_leaf();
            return Ok(None);
        }
        "branchWithSummary" => {
            let details = parsed(op, "details", &arena);
            let usage = parsed(op, "usage", &arena);
            m.branch_with_summary(
                s("target"),
                &BranchSummary {
                    summary: s("summary").unwrap(),
                    details: details.as_ref(),
                    from_hook: op.get("fromHook").and_then(Json::as_bool),
                    usage: usage.as_ref(),
                },
            )?
        }
        "createBranchedSession" => {
            return Ok(m.create_branched_session(s("target"))?.map(|p| p.to_string_lossy().into_owned()));
        }
        other => panic!("unknown operation {other}"),
    };
    Ok(Some(id))
}

fn leaf_text(m: &SessionManager) -> Json {
    match m.state().leaf_id() {
        None => Json::Null,
        Some(session_core::PropertyValue::Str(s)) => Json::String(s.to_str_lossy().into_owned()),
        Some(other) => Json::String(format!("{other:?}")),
    }
}

#[test]
fn scripts_leave_the_files_pi_leaves() {
    replay_scripts(false);
    // Again with every file opened as a large one is: indexed, its bytes read back when needed.
    replay_scripts(true);
}

fn replay_scripts(indexed_only: bool) {
    let text = std::fs::read_to_string(corpus("cases.jsonl")).unwrap();
    let (mut cases, mut ops_run, mut files_compared, mut loads_compared) = (0, 0, 0, 0);
    for line in text.lines() {
        let case: Json = serde_json::from_str(line).unwrap();
        let seed = case["seed"].as_u64().unwrap();
        let tmp = tempdir(&format!("writer-{seed}"));
        let dir = tmp.as_path();
        let sources = Shared::default();
        sources.0.lock().unwrap().indexed_only = indexed_only;
        sources.0.lock().unwrap().session_ids =
            case["sessionIds"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect();
        let mut sm: Option<SessionManager> = None;
        let shown = |s: String| s.replace(&dir.to_string_lossy().into_owned(), "<dir>");
        for (k, op) in case["ops"].as_array().unwrap().iter().enumerate() {
            let time = op["time"].as_str().unwrap();
            let ms = time.parse::<jiff::Timestamp>().unwrap().as_millisecond();
            sources.0.lock().unwrap().now = ms;
            let before = files_of(dir);
            let got = run(op, &mut sm, dir, &sources);
            for (f, text) in files_of(dir) {
                if before.get(&f) != Some(&text) {
                    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms as u64);
                    std::fs::File::options().write(true).open(dir.join(&f)).unwrap().set_modified(t).unwrap();
                }
            }
            let place = format!("seed {seed}, operation {k} ({})", op["op"]);
            match (&op["result"].get("ok"), &op["result"].get("error"), got) {
                (Some(expected), None, Ok(value)) => {
                    assert_eq!(value.map(shown).map_or(Json::Null, Json::String), **expected, "{place}");
                }
                (None, Some(expected), Err(e)) => {
                    if let ManagerError::Refused(why) = &e {
                        assert_eq!(why.to_string(), expected.as_str().unwrap(), "{place}");
                    }
                }
                (ok, err, got) => panic!("{place}: Pi gave {ok:?} {err:?}, we gave {got:?}"),
            }
            if let Some(m) = &sm {
                assert_eq!(leaf_text(m), op["leaf"], "{place}: leaf");
                let file = m.session_file().map(|p| shown(p.to_string_lossy().into_owned()));
                assert_eq!(file.map_or(Json::Null, Json::String), op["sessionFile"], "{place}: session file");
            }
            ops_run += 1;
        }
        drop(sm);
        let ours = files_of(dir);
        let theirs: BTreeMap<String, String> = case["files"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
            .collect();
        assert_eq!(ours.keys().collect::<Vec<_>>(), theirs.keys().collect::<Vec<_>>(), "seed {seed}: files");
        for (name, text) in &theirs {
            assert_eq!(&ours[name], text, "seed {seed}: {name}");
            files_compared += 1;
        }
        // Each file loads in our reader with the tree and context Pi's gives it.
        type Ours = fn(&Path, &str) -> Result<session_core::json::Value<'static>, String>;
        let checks: [(&str, &[&'static str], Ours); 2] =
            [("tree", &["roots", "nodes"], ours_tree), ("context", CONTEXT_KEYS, ours_context)];
        for (what, keys, ours) in checks {
            for rec in case["loaded"][what].as_array().into_iter().flatten() {
                let pi = common::parse(&rec.to_string());
                let file = rec["file"].as_str().unwrap();
                let mine = ours(&dir.join(file), file).unwrap_or_else(|e| panic!("seed {seed}: {file}: {e}"));
                let mine = common::parse(&shown(session_core::json::to_json(&strip(&mine, keys))));
                assert!(
                    same(&mine, &strip(&pi, keys)),
                    "seed {seed}: {what} of {file}\nours: {}\nPi's: {}",
                    session_core::json::to_json(&mine),
                    session_core::json::to_json(&strip(&pi, keys))
                );
                loads_compared += 1;
            }
        }
        cases += 1;
    }
    assert!(
        cases >= 100 && ops_run >= 3000 && files_compared >= 100 && loads_compared >= 400,
        "{cases} cases, {ops_run} operations, {files_compared} files, {loads_compared} trees and contexts"
    );
}

#[test]
fn old_sessions_migrated_on_request_are_rewritten_as_pi_rewrites_them() {
    let text = std::fs::read_to_string(corpus("migrations.jsonl")).unwrap();
    let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora");
    let (mut same, mut refused) = (0, 0);
    for line in text.lines() {
        let case: Json = serde_json::from_str(line).unwrap();
        let file = case["file"].as_str().unwrap();
        let tmp = tempdir("migrate");
        let copy = tmp.as_path().join("s.jsonl");
        std::fs::copy(corpora.join(file), &copy).unwrap();
        let original = std::fs::read(&copy).unwrap();
        // Without migration asked for, the file is refused and left alone.
        let plain = SessionManager::open(&copy);
        if case.get("rewritten").is_some() {
            assert!(matches!(plain, Err(ManagerError::NeedsMigration { .. })), "{file}");
        } else {
            assert!(plain.is_err(), "{file}");
        }
        assert_eq!(std::fs::read(&copy).unwrap(), original, "{file}");
        let got = Opener::default().sources(Shared::default()).migrate(true).open(&copy, None, None);
        match case.get("rewritten").and_then(Json::as_str) {
            Some(expected) => {
                assert!(got.is_ok(), "{file}: {:?}", got.err());
                assert_eq!(String::from_utf8_lossy(&std::fs::read(&copy).unwrap()), expected, "{file}");
                same += 1;
            }
            None => {
                assert!(got.is_err(), "{file}: Pi failed ({}), we migrated it", case["error"]);
                assert_eq!(std::fs::read(&copy).unwrap(), original, "{file}: a refused file is left alone");
                refused += 1;
            }
        }
    }
    assert!(same >= 50, "{same} migrated, {refused} refused");
}

/// A fresh folder under the target directory's temporary space.
fn tempdir(name: &str) -> TempDir {
    let base = std::env::temp_dir().join(format!("session-scan-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    TempDir(base)
}

struct TempDir(PathBuf);

impl TempDir {
    fn as_path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Fixed time and counted ids, for files written outside the scripts.
fn fixed_sources() -> Shared {
    let s = Shared::default();
    s.0.lock().unwrap().now = 1_772_400_000_000;
    s.0.lock().unwrap().session_ids = (0..10).map(|k| format!("019ca000-0000-7000-8000-{k:012x}")).collect();
    s
}

#[test]
fn every_cut_of_a_written_file_keeps_its_complete_records() {
    let bytes = std::fs::read(corpus("cut.jsonl")).unwrap();
    let runs: Vec<Json> = std::fs::read_to_string(corpus("cuts.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outcome = |at: usize| {
        let run = runs
            .iter()
            .find(|r| r["from"].as_u64().unwrap() as usize <= at && at <= r["to"].as_u64().unwrap() as usize);
        run.unwrap_or_else(|| panic!("no outcome recorded for {at}"))["outcome"].clone()
    };
    let tmp = tempdir("cuts");
    let file = tmp.as_path().join("cut.jsonl");
    let mut appended = 0;
    for at in 0..=bytes.len() {
        let prefix = &bytes[..at];
        let expected = outcome(at);
        // Our loader sees what Pi's sees.
        match session_core::Session::load(prefix) {
            Ok(s) => {
                let leaf = match s.leaf_id() {
                    Some(session_core::PropertyValue::Str(id)) => Json::String(id.to_str_lossy().into_owned()),
                    _ => Json::Null,
                };
                assert_eq!(expected["entries"].as_u64(), Some(s.entries().count() as u64), "cut at {at}");
                assert_eq!(expected["leaf"], leaf, "cut at {at}");
                // Every complete line is a record: only the cut line can be lost.
                let complete = prefix.iter().filter(|&&b| b == b'\n').count();
                assert!(s.entries().count() + 1 >= complete, "cut at {at}: a complete record was lost");
            }
            Err(session_core::LoadError::Empty) => assert_eq!(expected["entries"], 0, "cut at {at}"),
            Err(e) => assert!(expected.get("error").is_some(), "cut at {at}: Pi loaded it, we said {e:?}"),
        }
        // Appending to the cut file keeps every record it holds, and the new one loads.
        std::fs::write(&file, prefix).unwrap();
        match Opener::default().sources(fixed_sources()).open(&file, None, None) {
            Ok(mut m) => {
                let before = m.state().entry_count();
                let id = m.append_session_info("after the cut").unwrap();
                drop(m);
                let written = std::fs::read(&file).unwrap();
                assert!(written.starts_with(prefix) || at == 0, "cut at {at}: the file's bytes were changed");
                let s = session_core::Session::load(&written).unwrap();
                assert_eq!(s.entries().count(), before + 1, "cut at {at}");
                assert_eq!(s.leaf_id().map(|l| l.to_js_string().into_owned()), Some(id.into_bytes()), "cut at {at}");
                appended += 1;
            }
            Err(_) => {
                assert!(expected.get("error").is_some(), "cut at {at}: Pi opened it, we did not");
                assert_eq!(std::fs::read(&file).unwrap(), prefix, "cut at {at}: a refused file was changed");
            }
        }
    }
    assert!(appended > 7000, "{appended}");
}

/// A disk that takes `budget` more bytes, then fails (having written what fitted).
#[derive(Clone)]
struct FailingDisk(Arc<std::sync::atomic::AtomicUsize>);

impl session_scan::manager::Disk for FailingDisk {
    fn write(&mut self, file: &mut std::fs::File, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        use std::sync::atomic::Ordering;
        let budget = self.0.load(Ordering::SeqCst);
        if bytes.len() <= budget {
            self.0.store(budget - bytes.len(), Ordering::SeqCst);
            return file.write_all(bytes);
        }
        file.write_all(&bytes[..budget])?;
        self.0.store(0, Ordering::SeqCst);
        Err(std::io::Error::other("no space left (injected)"))
    }
}

fn user_message(text: &str) -> String {
    format!(r#"{{"role":"user","content":"{text}","timestamp":1772400000000}}"#)
}

#[test]
fn a_failing_disk_leaves_the_file_and_the_session_as_they_were() {
    use std::sync::atomic::Ordering;
    let tmp = tempdir("failing-disk");
    let dir = tmp.as_path();
    let budget = Arc::new(std::sync::atomic::AtomicUsize::new(usize::MAX));
    let disk = FailingDisk(budget.clone());
    let arena = bumpalo::Bump::new();
    let first = user_message("first");
    let first = parse_value(first.as_bytes(), &arena).unwrap();

    // The first message creates the file: a failure at any byte leaves no file and no entry.
    let mut m = Opener::default()
        .sources(fixed_sources())
        .disk(disk.clone())
        .create("/work/project", Some(dir), &NewSession::default())
        .unwrap();
    let path = m.session_file().unwrap().to_owned();
    let mut failures = 0;
    for n in 0.. {
        budget.store(n, Ordering::SeqCst);
        match m.append_message(&first) {
            Ok(_) => break,
            Err(e) => {
                assert!(matches!(e, ManagerError::Io { .. }), "{e}");
                assert!(!path.exists(), "a failed first write left {}", path.display());
                assert_eq!(m.state().entry_count(), 0);
                assert_eq!(m.state().leaf_id(), None);
                failures += 1;
            }
        }
    }
    assert!(failures > 100, "{failures}");

    // Each later append: a failure at any byte leaves the file's bytes, the leaf and the ids.
    budget.store(usize::MAX, Ordering::SeqCst);
    m.append_model_change("anthropic", "claude").unwrap();
    let next = user_message("second, with a longer text to cut");
    let next = parse_value(next.as_bytes(), &arena).unwrap();
    let before = std::fs::read(&path).unwrap();
    let leaf = m.state().leaf_id().cloned();
    let count = m.state().entry_count();
    let mut failures = 0;
    let id = loop {
        budget.store(failures, Ordering::SeqCst);
        match m.append_message(&next) {
            Ok(id) => break id,
            Err(_) => {
                assert_eq!(
                    std::fs::read(&path).unwrap(),
                    before,
                    "a failed append at byte {failures} changed the file"
                );
                assert_eq!(m.state().leaf_id().cloned(), leaf);
                assert_eq!(m.state().entry_count(), count);
                failures += 1;
            }
        }
    };
    assert!(failures > 50, "{failures}");
    drop(m);
    let after = std::fs::read(&path).unwrap();
    let s = session_core::Session::load(&after).unwrap();
    assert_eq!(s.entries().count(), count + 1);
    assert_eq!(s.leaf_id().map(|l| l.to_js_string().into_owned()), Some(id.into_bytes()));

    // A migration's rewrite: a failure at any byte leaves the old file and no temporary file.
    let old = concat!(
        r#"{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
        "\n"
    );
    let old_path = dir.join("old.jsonl");
    std::fs::write(&old_path, old).unwrap();
    let names = || std::fs::read_dir(dir).unwrap().count();
    let files_before = names();
    let mut failures = 0;
    loop {
        budget.store(failures, Ordering::SeqCst);
        let opened =
            Opener::default().sources(fixed_sources()).disk(disk.clone()).migrate(true).open(&old_path, None, None);
        match opened {
            Ok(_) => break,
            Err(_) => {
                assert_eq!(std::fs::read_to_string(&old_path).unwrap(), old, "a failed rewrite at byte {failures}");
                assert_eq!(names(), files_before, "a temporary file was left");
                failures += 1;
            }
        }
    }
    assert!(failures > 100, "{failures}");
    assert!(std::fs::read_to_string(&old_path).unwrap().contains(r#""version":3"#));
}

#[test]
fn a_second_writer_of_ours_is_refused() {
    let tmp = tempdir("locked");
    let path = tmp.as_path().join("s.jsonl");
    let mut m = Opener::default().sources(fixed_sources()).open(&path, None, None).unwrap();
    let arena = bumpalo::Bump::new();
    let text = user_message("hi");
    m.append_message(&parse_value(text.as_bytes(), &arena).unwrap()).unwrap();
    assert!(matches!(SessionManager::open(&path), Err(ManagerError::Locked(_))));
    drop(m);
    assert!(SessionManager::open(&path).is_ok());
}

/// The session files of a corpus, in name order.
fn corpus_sessions(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut names: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    names.sort_by_key(std::fs::DirEntry::path);
    for e in names {
        let kind = e.file_type().unwrap();
        if kind.is_dir() {
            corpus_sessions(&e.path(), out);
        } else if kind.is_file() && e.path().extension().is_some_and(|x| x == "jsonl") {
            out.push(e.path());
        }
    }
}

#[test]
fn fork_copies_file_to_file_what_the_branched_session_holds() {
    let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora");
    let mut files = Vec::new();
    for c in ["sample-16/sessions", "edge/sessions", "hostile/sessions", "escapes/sessions"] {
        corpus_sessions(&corpora.join(c), &mut files);
    }
    let tmp = tempdir("fork-pieces");
    let mut same = 0;
    for file in files {
        let Ok(bytes) = std::fs::read(&file) else { continue };
        let Ok(session) = session_core::Session::load(&bytes) else { continue };
        if session.migrated_from.is_some() {
            continue;
        }
        let copy = tmp.as_path().join("s.jsonl");
        std::fs::write(&copy, &bytes).unwrap();
        let opts = session_scan::append::AppendOptions::default();
        let forked = session_scan::append::fork_with(&copy, None, opts, &mut fixed_sources());
        let cwd = session.header.get("cwd").and_then(Value::as_str).map(|c| c.to_str_lossy().into_owned());
        let cwd = session_scan::store::resolve_path(cwd.as_deref().unwrap_or(""));
        let parent = copy.to_string_lossy().into_owned();
        let mut sources = fixed_sources();
        let from = session_core::branched::BranchedFrom {
            leaf: None,
            session_id: &sources.session_id(),
            timestamp: &session_core::state::iso_time(sources.now_ms()),
            cwd: &cwd,
            parent_session: Some(&parent),
            workflow: None,
        };
        let cell = std::cell::RefCell::new(&mut sources);
        let expected = session_core::branched::branched_session(
            &session,
            from,
            &mut || cell.borrow_mut().random_uuid()[..8].to_owned(),
            &mut || cell.borrow_mut().random_uuid(),
        );
        match (forked, expected) {
            (Ok(f), Ok(e)) => {
                let written = std::fs::read(&f.path).unwrap();
                assert_eq!(String::from_utf8_lossy(&written), String::from_utf8_lossy(&e.bytes), "{}", file.display());
                std::fs::remove_file(&f.path).unwrap();
                same += 1;
            }
            (Err(_), Err(_)) => {}
            (Err(_), Ok(e)) => {
                assert!(!e.has_conversation, "{}: fork refused a branch with a conversation", file.display())
            }
            (Ok(_), Err(e)) => panic!("{}: forked, but no branch: {e}", file.display()),
        }
    }
    assert!(same > 250, "{same} forked");
}

#[test]
fn atomic_internal_markers_are_written_kept_and_inherited() {
    use session_core::record::Workflow;
    let tmp = tempdir("internal");
    let dir = tmp.as_path();
    let arena = bumpalo::Bump::new();
    let text = user_message("hi");
    let hi = parse_value(text.as_bytes(), &arena).unwrap();
    let stage = Workflow { run_id: "run-1".into(), stage_id: "s1".into(), stage_name: " plan ".into() };

    // Made internal: the header carries the marker after parentSession, values untrimmed.
    let options = NewSession { workflow: Some(stage.clone()), ..NewSession::default() };
    let mut m = Opener::default().sources(fixed_sources()).create("/work/p", Some(dir), &options).unwrap();
    m.append_message(&hi).unwrap();
    let path = m.session_file().unwrap().to_owned();
    let header = std::fs::read_to_string(&path).unwrap().lines().next().unwrap().to_owned();
    assert!(
        header.ends_with(
            r#""cwd":"/work/p","internal":true,"workflow":{"runId":"run-1","stageId":"s1","stageName":" plan "}}"#
        ),
        "{header}"
    );
    // A valid marker is never overwritten.
    let other = Workflow { run_id: "run-2".into(), ..stage.clone() };
    assert!(!m.mark_session_internal(&other).unwrap());
    // A branched session inherits it.
    let branched = m.create_branched_session(None).unwrap().unwrap();
    let first = std::fs::read_to_string(&branched).unwrap();
    assert!(first.lines().next().unwrap().contains(r#""internal":true,"workflow":{"runId":"run-1""#), "{first}");
    drop(m);

    // Marked later: the written file's header is rewritten (the other lines byte for byte), and
    // a marker with an empty field is refused.
    let later = dir.join("later");
    let mut m =
        Opener::default().sources(fixed_sources()).create("/work/p", Some(&later), &NewSession::default()).unwrap();
    m.append_message(&hi).unwrap();
    m.append_session_info("plain").unwrap();
    let path = m.session_file().unwrap().to_owned();
    let before = std::fs::read_to_string(&path).unwrap();
    let empty = Workflow { stage_name: "  ".into(), ..stage.clone() };
    assert!(m.mark_session_internal(&empty).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    assert!(m.mark_session_internal(&stage).unwrap());
    let after = std::fs::read_to_string(&path).unwrap();
    let (old_head, old_rest) = before.split_once('\n').unwrap();
    let (new_head, new_rest) = after.split_once('\n').unwrap();
    assert_eq!(new_rest, old_rest);
    assert_eq!(
        new_head,
        format!(
            r#"{},"internal":true,"workflow":{{"runId":"run-1","stageId":"s1","stageName":" plan "}}}}"#,
            &old_head[..old_head.len() - 1]
        )
    );
    // Appends go on after the rewrite, to the new file.
    m.append_session_info("still appending").unwrap();
    drop(m);
    let s = std::fs::read(&path).unwrap();
    assert_eq!(session_core::Session::load(&s).unwrap().name().unwrap().to_str_lossy(), "still appending");
    let marker = session_core::record::Workflow::of_header(&session_core::Session::load(&s).unwrap().header);
    assert_eq!(marker, Some(stage));
}
