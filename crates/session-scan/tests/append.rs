//! Appending as Pi 1.6 appends: a name (`appendSessionInfo`) then a label (`appendLabelChange`) on
//! every session of sample-16, edge and hostile, held byte for byte to what Pi's own
//! `SessionManager` appended to a copy of the same file with the clock stopped
//! (`corpora/append/expected.jsonl`); the files Pi refuses, or rewrites when it opens them, are
//! refused and left as they were.

#![allow(clippy::unwrap_used)] // test inputs are committed; a panic is a failed test

use std::path::{Path, PathBuf};

use serde_json::Value;
use session_scan::append::{AppendOptions, Change, Sources, append_with};

fn corpora() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora")
}

#[test]
fn names_and_labels_are_appended_as_pi_appends_them() {
    let expected = std::fs::read_to_string(corpora().join("append/expected.jsonl")).unwrap();
    let dir = std::env::temp_dir().join(format!("session-scan-append-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut same, mut refused) = (0, 0);
    for line in expected.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let file = case["file"].as_str().unwrap();
        let copy = dir.join("s.jsonl");
        std::fs::copy(corpora().join(file), &copy).unwrap();
        let before = std::fs::read(&copy).unwrap();
        let name = Change::Name(case["name"].as_str().unwrap().to_owned());
        let Some(appended) = case["appended"].as_str() else {
            // Pi refused the file, or rewrote it when it opened it: we write nothing.
            let result = with_fixed(Vec::new(), |sources| append_with(&copy, &name, AppendOptions::default(), sources));
            assert!(result.is_err(), "{file}: appended to a file Pi refuses or rewrites");
            assert_eq!(std::fs::read(&copy).unwrap(), before, "{file}");
            refused += 1;
            continue;
        };
        // Pi's new ids, in order, given to our writer as its random ids.
        let ids: Vec<String> = appended
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].as_str().unwrap().to_owned())
            .collect();
        let first =
            with_fixed(vec![ids[0].clone()], |sources| append_with(&copy, &name, AppendOptions::default(), sources))
                .unwrap();
        if let Some(target) = case["target"].as_str() {
            let label = Change::Label { target: target.to_owned(), label: case["label"].as_str().map(str::to_owned) };
            let second = with_fixed(vec![ids[1].clone()], |sources| {
                append_with(&copy, &label, AppendOptions::default(), sources)
            })
            .unwrap();
            assert_ne!(first.id, second.id);
        }
        let after = std::fs::read(&copy).unwrap();
        assert_eq!(String::from_utf8_lossy(&after[before.len()..]), appended, "{file}");
        same += 1;
    }
    assert!(same > 300 && refused > 100, "{same} appended, {refused} refused");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `f` with the clock stopped where the recording stopped it and `ids` (Pi's, in order) as
/// the random ids.
fn with_fixed<T>(mut ids: Vec<String>, f: impl FnOnce(Sources<'_>) -> T) -> T {
    ids.reverse();
    let mut now = || "2026-02-03T04:05:06.789Z".to_owned();
    let mut short = || ids.pop().expect("one id per entry");
    let mut long = || -> String { panic!("a hundred ids taken") };
    f(Sources { now: &mut now, short_id: &mut short, long_id: &mut long })
}

/// A dry run writes nothing; a second writer of ours is refused while the first holds the file.
#[test]
fn dry_runs_write_nothing_and_writers_take_turns() {
    let dir = std::env::temp_dir().join(format!("session-scan-append-lock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("s.jsonl");
    let source = corpora().join("sample-16/sessions/--Users-bob-work-api-server--");
    let first = std::fs::read_dir(&source).unwrap().next().unwrap().unwrap().path();
    std::fs::copy(&first, &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let dry = session_scan::append::append(
        &copy,
        &Change::Name("x".into()),
        AppendOptions { dry_run: true, ..AppendOptions::default() },
    )
    .unwrap();
    assert!(String::from_utf8(dry.bytes).unwrap().contains("\"name\":\"x\""));
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    let holder = std::fs::OpenOptions::new().read(true).open(&copy).unwrap();
    holder.lock().unwrap();
    let refused = session_scan::append::append(&copy, &Change::Name("y".into()), AppendOptions::default());
    assert!(refused.unwrap_err().to_string().contains("another session-scan is writing to it"));
    holder.unlock().unwrap();
    let done = session_scan::append::append(
        &copy,
        &Change::Name("y".into()),
        AppendOptions { sync: true, ..AppendOptions::default() },
    )
    .unwrap();
    assert_eq!(done.id.len(), 8);
    let session = std::fs::read(&copy).unwrap();
    assert_eq!(session_core::Session::load(&session).unwrap().name().unwrap().to_str_lossy(), "y");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `rename` and `label` on the command line: the new entry's id on stdout, the line with
/// `--dry-run`, a clear refusal (exit 2) for an entry that is not there or a file Pi would rewrite.
#[test]
fn rename_and_label_commands() {
    let dir = std::env::temp_dir().join(format!("session-scan-append-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("s.jsonl");
    let source = corpora().join("sample-16/sessions/--Users-bob-work-api-server--");
    let first = std::fs::read_dir(&source).unwrap().next().unwrap().unwrap().path();
    std::fs::copy(&first, &copy).unwrap();
    let scan =
        |args: &[&str]| std::process::Command::new(env!("CARGO_BIN_EXE_session-scan")).args(args).output().unwrap();
    let c = copy.to_str().unwrap();
    let before = std::fs::read(&copy).unwrap();
    let dry = scan(&["rename", c, "dry\nrun", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&dry.stdout).contains(r#""name":"dry run"}"#));
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    let named = scan(&["rename", c, "a name"]);
    let id = String::from_utf8(named.stdout).unwrap();
    assert!(id.trim_end().len() == 8 && id.ends_with('\n'), "{id:?}");
    let session = std::fs::read(&copy).unwrap();
    let s = session_core::Session::load(&session).unwrap();
    assert_eq!(s.name().unwrap().to_str_lossy(), "a name");
    let target = s.entries().next().unwrap().1.id.as_str().unwrap().to_str_lossy().into_owned();
    let labelled = scan(&["label", c, &target, "checkpoint"]);
    assert_eq!(labelled.status.code(), Some(0));
    let session = std::fs::read(&copy).unwrap();
    let s = session_core::Session::load(&session).unwrap();
    let label = s.label(&session_core::PropertyValue::Str(target.as_str().into())).unwrap();
    assert_eq!(label.0.as_str().unwrap().to_str_lossy(), "checkpoint");
    let missing = scan(&["label", c, "no-such-entry", "x"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no entry has the id \"no-such-entry\""));
    // A version-1 session: Pi rewrites it whole when it opens it; we write nothing.
    let old = corpora().join("real/sessions/before-compaction.jsonl");
    let old_copy = dir.join("old.jsonl");
    std::fs::copy(&old, &old_copy).unwrap();
    let refused = scan(&["rename", old_copy.to_str().unwrap(), "x"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("a version 1 session"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert_eq!(std::fs::read(&old_copy).unwrap(), std::fs::read(&old).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A version 1 session: refused and left alone, unless migration is asked for, which rewrites it
/// as version 3 (fresh ids, chained) before the name is appended; never on a dry run.
#[test]
fn an_old_session_is_migrated_only_when_asked() {
    let dir = std::env::temp_dir().join(format!("session-scan-append-migrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("s.jsonl");
    std::fs::copy(corpora().join("edge/sessions/01-v1-legacy-linear.jsonl"), &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let old = session_core::Session::load(&before).unwrap();
    assert_eq!(old.migrated_from, Some(1));
    let name = Change::Name("migrated".into());
    let refused = session_scan::append::append(&copy, &name, AppendOptions::default());
    assert!(refused.unwrap_err().to_string().contains("--migrate"));
    let dry = AppendOptions { dry_run: true, migrate: true, ..AppendOptions::default() };
    assert!(session_scan::append::append(&copy, &name, dry).is_err());
    assert_eq!(std::fs::read(&copy).unwrap(), before, "refusals and dry runs leave the file alone");
    let done = session_scan::append::append(&copy, &name, AppendOptions { migrate: true, ..AppendOptions::default() });
    done.unwrap();
    let after = std::fs::read(&copy).unwrap();
    let new = session_core::Session::load(&after).unwrap();
    assert_eq!(new.migrated_from, None);
    assert!(
        String::from_utf8_lossy(&after).starts_with(r#"{"type":"session","#)
            && String::from_utf8_lossy(&after).contains(r#""version":3"#)
    );
    assert_eq!(new.entries().count(), old.entries().count() + 1);
    assert_eq!(new.name().unwrap().to_str_lossy(), "migrated");
    std::fs::remove_dir_all(&dir).unwrap();
}
