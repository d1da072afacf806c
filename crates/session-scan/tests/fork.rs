//! `fork` builds the session Pi 1.6's `createBranchedSession` (Pi's `/fork`) makes, and with
//! `--cwd` the one `forkFrom` (`pi --fork`) makes: held byte for byte (length and SHA-256) to what
//! Pi's own `SessionManager` wrote for the leaf and for an entry halfway along the branch of every
//! session of sample-16, edge and hostile, and for the whole of each (`corpora/fork/expected.jsonl`),
//! given Pi's new ids, clock and paths; where Pi refuses, or rewrites the file when it opens it,
//! nothing is made.

#![allow(clippy::unwrap_used)] // test inputs are committed; a panic is a failed test

use std::path::{Path, PathBuf};

use serde_json::Value;
use session_core::PropertyValue;
use session_core::branched::{BranchedFrom, branched_session};
use session_core::json::JsStr;
use sha2::{Digest, Sha256};

fn corpora() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora")
}

#[test]
fn branched_sessions_are_the_ones_pi_writes() {
    let expected = std::fs::read_to_string(corpora().join("fork/expected.jsonl")).unwrap();
    let (mut same, mut unwritten, mut refused, mut pi_failed, mut copied) = (0, 0, 0, 0, 0);
    for line in expected.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let file = case["file"].as_str().unwrap();
        let bytes = std::fs::read(corpora().join(file)).unwrap();
        let loaded = session_core::Session::load(&bytes);
        if case["pick"] == "copy" {
            // forkFrom: the whole file under a new header, whatever its version.
            let Some(expected_len) = case["length"].as_u64() else {
                assert!(loaded.is_err(), "{file}: Pi could not copy it ({})", case["error"]);
                refused += 1;
                continue;
            };
            let header = session_core::record::Header {
                id: case["sessionId"].as_str().unwrap(),
                timestamp: "2026-02-03T04:05:06.789Z",
                cwd: case["cwd"].as_str().unwrap(),
                parent_session: case["parentSession"].as_str(),
                workflow: None,
            };
            let made = session_core::branched::copied_session(loaded.as_ref().unwrap(), &header).unwrap();
            assert_eq!(
                (made.len() as u64, format!("{:x}", Sha256::digest(&made))),
                (expected_len, case["sha256"].as_str().unwrap().to_owned()),
                "{file} copied:\n{}",
                String::from_utf8_lossy(&made[..made.len().min(1500)])
            );
            copied += 1;
            continue;
        }
        let opened = loaded.as_ref().ok().filter(|s| s.migrated_from.is_none());
        if case.get("rewritten").is_some() || case["error"].as_str().is_some_and(|e| e.contains("not a valid")) {
            assert!(opened.is_none() || bytes.is_empty(), "{file}: Pi refuses or rewrites it; we must not write");
            refused += 1;
            continue;
        }
        let session = opened.unwrap_or_else(|| panic!("{file}: Pi opened it"));
        let leaf = match &case["leaf"] {
            Value::String(s) if s == "(undefined)" => Some(PropertyValue::Absent),
            Value::String(s) => Some(PropertyValue::Str(JsStr::owned(s.clone()))),
            Value::Null => Some(PropertyValue::Null),
            other => Some(PropertyValue::Raw(other.to_string().into_bytes().into())),
        };
        let leaf = if case["pick"] == "leaf" { None } else { leaf };
        // The new header's cwd as Pi resolved it (an empty one is the recorder's folder).
        let cwd = case["cwd"].as_str().map(str::to_owned);
        let mut labels: Vec<String> = case["labelIds"]
            .as_array()
            .map(|a| a.iter().rev().map(|v| v.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default();
        let pi_fails = case.get("error").is_some();
        let from = BranchedFrom {
            leaf: leaf.as_ref(),
            session_id: case["sessionId"].as_str().unwrap_or("019c0000-0000-7000-8000-000000000000"),
            timestamp: "2026-02-03T04:05:06.789Z",
            cwd: cwd.as_deref().unwrap_or("/"),
            parent_session: Some(case["parentSession"].as_str().unwrap_or("/")),
            workflow: None,
        };
        let made = branched_session(
            session,
            from,
            &mut || {
                labels.pop().unwrap_or_else(|| {
                    assert!(pi_fails, "{file} {}: more labels than Pi wrote", case["pick"]);
                    "0badc0de".to_owned()
                })
            },
            &mut || panic!("a hundred ids taken"),
        );
        match case["error"].as_str() {
            Some(e) if e.starts_with("Entry") => {
                assert!(made.is_err(), "{file} {}: Pi found no branch", case["pick"]);
                refused += 1;
                continue;
            }
            // Pi crashes or never ends (a parent loop): we make what the branch holds.
            Some(_) => {
                pi_failed += 1;
                continue;
            }
            None => {}
        }
        let made = made.unwrap_or_else(|e| panic!("{file} {}: {e}", case["pick"]));
        assert_eq!(made.file_name, case["name"].as_str().unwrap(), "{file}");
        if case["written"] == false {
            assert!(!made.has_conversation, "{file}: Pi writes no file for a branch without a conversation");
            unwritten += 1;
            continue;
        }
        assert!(made.has_conversation, "{file}");
        assert_eq!(
            (made.bytes.len() as u64, format!("{:x}", Sha256::digest(&made.bytes))),
            (case["length"].as_u64().unwrap(), case["sha256"].as_str().unwrap().to_owned()),
            "{file} {}:\n{}",
            case["pick"],
            String::from_utf8_lossy(&made.bytes[..made.bytes.len().min(2000)])
        );
        same += 1;
    }
    assert!(
        same > 500 && unwritten > 50 && refused > 100 && copied > 400,
        "{same} same, {unwritten} unwritten, {refused} refused, {pi_failed} where Pi fails, {copied} copied"
    );
}

/// `fork` on the command line: a new file in the same folder, named by its time and id, whose
/// context is the branch's; `--dry-run` writes nothing; a version-1 file is refused.
#[test]
fn the_fork_command_writes_a_new_session_beside_the_old() {
    let dir = std::env::temp_dir().join(format!("session-scan-fork-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = corpora().join(
        "sample-16/sessions/--Users-bob-work-api-server--/2025-01-12T06-58-57-143Z_0194594e-fff7-7099-acde-dd9516b14fbb.jsonl",
    );
    let old = dir.join("old.jsonl");
    std::fs::copy(&source, &old).unwrap();
    let scan =
        |args: &[&str]| std::process::Command::new(env!("CARGO_BIN_EXE_session-scan")).args(args).output().unwrap();
    let dry = scan(&["fork", old.to_str().unwrap(), "--dry-run"]);
    assert_eq!(dry.status.code(), Some(0));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "a dry run writes nothing");
    let out = scan(&["fork", old.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let made = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim_end());
    assert_eq!(made.parent(), Some(dir.as_path()));
    let name = made.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.len() > 30 && name.ends_with(".jsonl") && name.as_bytes()[4] == b'-', "{name}");
    let bytes = std::fs::read(&made).unwrap();
    let fork = session_core::Session::load(&bytes).unwrap();
    assert_eq!(
        fork.header.get("parentSession").and_then(|p| p.as_str()).unwrap().to_str_lossy(),
        old.to_str().unwrap()
    );
    let original = std::fs::read(&old).unwrap();
    let original = session_core::Session::load(&original).unwrap();
    // The same conversation from the leaf, and every entry of the new file on its one branch.
    let context = |s: &session_core::Session<'_>| {
        let arena = bumpalo::Bump::new();
        let leaf = session_core::context::LeafChoice::Session;
        let messages =
            session_core::context::build_context(s, &leaf, session_core::context::Dialect::Pi, &arena).messages;
        messages.iter().map(|m| session_core::json::to_json(&m.to_value(&arena))).collect::<Vec<_>>()
    };
    assert_eq!(context(&fork), context(&original));
    assert_eq!(fork.branch(None).path.len(), fork.records.len() - 1);
    // --cwd: the whole session copied into that project's folder of the store (pi --fork).
    let home = dir.join("home");
    let copied = std::process::Command::new(env!("CARGO_BIN_EXE_session-scan"))
        .args(["fork", old.to_str().unwrap(), "--cwd", "/home/u/elsewhere"])
        .env("HOME", &home)
        .env_remove("PI_CODING_AGENT_DIR")
        .output()
        .unwrap();
    assert_eq!(copied.status.code(), Some(0), "{}", String::from_utf8_lossy(&copied.stderr));
    let to = PathBuf::from(String::from_utf8(copied.stdout).unwrap().trim_end());
    assert_eq!(to.parent().unwrap(), home.join(".pi/agent/sessions/--home-u-elsewhere--"));
    let bytes = std::fs::read(&to).unwrap();
    let copy = session_core::Session::load(&bytes).unwrap();
    assert_eq!(copy.header.get("cwd").and_then(|c| c.as_str()).unwrap().to_str_lossy(), "/home/u/elsewhere");
    assert_eq!(copy.records.len(), original.records.len());
    assert_eq!(context(&copy), context(&original));
    let old_v1 = dir.join("v1.jsonl");
    std::fs::copy(corpora().join("real/sessions/before-compaction.jsonl"), &old_v1).unwrap();
    let refused = scan(&["fork", old_v1.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("a version 1 session"));
    std::fs::remove_dir_all(&dir).unwrap();
}
