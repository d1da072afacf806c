//! The writer against Pi 1.6's own `SessionManager` (`corpora/writer`): random scripts of
//! operations replayed through `session_scan::manager` with the times and ids Pi had must give
//! the same result for each operation, the same leaf and file, and leave the same files byte for
//! byte; version 1 and 2 sessions migrated on request must be rewritten as Pi rewrites them.
#![allow(clippy::unwrap_used)] // test inputs are committed; a panic is a failed test

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value as Json;
use session_core::json::{Value, parse_value};
use session_core::state::{BranchSummary, Compaction, NewSession, Sources};
use session_scan::manager::{ManagerError, Opener, SessionManager};

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
    Opener::default().sources(sources.clone())
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
    let text = std::fs::read_to_string(corpus("cases.jsonl")).unwrap();
    let (mut cases, mut ops_run, mut files_compared) = (0, 0, 0);
    for line in text.lines() {
        let case: Json = serde_json::from_str(line).unwrap();
        let seed = case["seed"].as_u64().unwrap();
        let tmp = tempdir(&format!("writer-{seed}"));
        let dir = tmp.as_path();
        let sources = Shared::default();
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
        cases += 1;
    }
    assert!(cases >= 100 && ops_run >= 3000 && files_compared >= 100, "{cases} {ops_run} {files_compared}");
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
