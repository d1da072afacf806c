//! `session-scan resolve` against Pi 1.6 (`corpora/resolve`, recorded by its `record.mjs`): the
//! file `pi -c` continues (`continueRecent`) and the file `pi --session ARG` opens
//! (`resolveSessionPath`), spec format.md §1 and "Related lookups".

#![allow(clippy::unwrap_used)] // test inputs are made here; a panic is a failed test

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

/// A copy of the corpus's store (`sessions/` and `flat/`) in a fresh agent folder, with the
/// recorded mtimes.
fn agent_folder(corpus: &Path) -> PathBuf {
    let agent = std::env::temp_dir().join(format!("session-scan-resolve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&agent);
    for part in ["sessions", "flat"] {
        if corpus.join(part).exists() {
            copy_tree(&corpus.join(part), &agent.join(part));
        }
    }
    let mtimes: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(corpus.join("mtimes.json")).unwrap()).unwrap();
    for (rel, secs) in mtimes {
        let file = std::fs::File::open(agent.join(&rel)).unwrap();
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs.as_u64().unwrap())).unwrap();
    }
    agent
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// `SESSION_SCAN_RESOLVE` may name another folder laid out the same way (`cargo xtask differential
/// --shape resolve` writes them from random stores).
#[test]
fn resolve_matches_pi_1_6_continue_recent_and_resolve_session_path() {
    let other = std::env::var_os("SESSION_SCAN_RESOLVE").map(PathBuf::from);
    let committed = other.is_none();
    let corpus = other.unwrap_or_else(|| common::corpora().join("resolve"));
    let agent = agent_folder(&corpus);
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(corpus.join("cases.json")).unwrap()).unwrap();
    let expected: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(corpus.join("expected/resolve.json")).unwrap()).unwrap();
    assert_eq!(cases.len(), expected.len());
    let (mut thrown, mut found) = (0, 0);
    for (case, pi) in cases.iter().zip(&expected) {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_session-scan"));
        cmd.arg("resolve").arg("--json").arg("--cwd").arg(case["cwd"].as_str().unwrap());
        if let Some(dir) = case["dir"].as_str() {
            cmd.arg("--dir").arg(agent.join(dir));
        }
        match case["session"].as_str() {
            // After `--`: an id may start with `-`.
            Some(arg) => cmd.arg("--").arg(arg),
            None => cmd.arg("--continue"),
        };
        let out = cmd
            .env("PI_CODING_AGENT_DIR", &agent)
            .env("HOME", "/home/tester")
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut ours: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{case}: {e}: {stderr}"));
        if let Some(Value::String(path)) = ours.get_mut("path")
            && let Ok(inside) = Path::new(path.as_str()).strip_prefix(&agent)
        {
            *path = inside.to_string_lossy().into_owned();
        }
        // Where Pi's prefix search throws on an id that is not a string, we pass such sessions
        // over and say so: the answer is Pi's with them left out of its listings.
        let want = match pi.get("throws") {
            Some(_) => {
                thrown += 1;
                assert!(stderr.contains("its id is not a string"), "{case}: {stderr}");
                &pi["skipping"]
            }
            None => pi,
        };
        assert_eq!(&ours, want, "{case}: {stderr}");
        let nothing = matches!(want["type"].as_str(), Some("new" | "not_found"));
        found += usize::from(!nothing);
        assert_eq!(out.status.code(), Some(if nothing { 1 } else { 0 }), "{case}: {stderr}");
    }
    std::fs::remove_dir_all(&agent).unwrap();
    println!("resolve {}: {} cases equal, {found} found, {thrown} where Pi throws", corpus.display(), cases.len());
    if committed {
        assert!(thrown >= 3 && found >= 25, "{thrown} thrown, {found} found");
    }
}

/// An agent folder whose store has one cwd folder (`/w`) holding one session, `a.jsonl`: the
/// agent folder and that session's path.
fn one_session_store(name: &str) -> (PathBuf, PathBuf) {
    let agent = std::env::temp_dir().join(format!("session-scan-resolve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&agent);
    let folder = agent.join("sessions/--w--");
    std::fs::create_dir_all(&folder).unwrap();
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let session = folder.join("a.jsonl");
    std::fs::write(&session, format!("{header}\n")).unwrap();
    (agent, session)
}

/// Pi's discovery gives up on a whole folder when one `*.jsonl` name there cannot be `stat`ed (a
/// dangling link): `findMostRecentSession` returns null and `pi -c` starts a new session.
#[test]
fn a_dangling_link_makes_continue_start_a_new_session_as_in_pi() {
    let (agent, session) = one_session_store("dangling");
    let folder = session.parent().unwrap();
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_session-scan"))
            .args(["resolve", "--continue", "--json", "--cwd", "/w"])
            .env("PI_CODING_AGENT_DIR", &agent)
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .output()
            .unwrap()
    };
    let out = run();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!(r#"{{"type":"recent","path":"{}"}}"#, session.display())
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(folder.join("gone"), folder.join("b.jsonl")).unwrap();
        let out = run();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), r#"{"type":"new"}"#);
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("b.jsonl: cannot be read for its mtime"));
    }
    std::fs::remove_dir_all(&agent).unwrap();
}

/// A FIFO named like a session: Pi's discovery opens it and waits for a writer; `resolve` passes it
/// over without waiting, says so, and goes on to the next file.
#[cfg(unix)]
#[test]
fn a_fifo_named_like_a_session_is_passed_over_without_waiting() {
    let (agent, older) = one_session_store("fifo");
    std::fs::File::options()
        .write(true)
        .open(&older)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600))
        .unwrap();
    let fifo = older.with_file_name("z.jsonl");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_session-scan"))
        .args(["resolve", "--continue", "--cwd", "/w"])
        .env("PI_CODING_AGENT_DIR", &agent)
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("resolve --continue waited on a FIFO");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), older.display().to_string());
    assert!(String::from_utf8_lossy(&out.stderr).contains("z.jsonl: not a regular file, passed over"));
    std::fs::remove_dir_all(&agent).unwrap();
}
