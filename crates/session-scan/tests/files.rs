//! `session-scan files` against Pi 1.6's own `extractFileOpsFromMessage` and `computeFileLists`,
//! recorded on seven of the committed corpora (471 sessions) by `corpora/files/record.mjs` (`corpora/files/expected.jsonl`):
//! the same read and modified lists, in the same order, and a note wherever Pi's code throws.

#![allow(clippy::unwrap_used)] // test inputs are made here; a panic is a failed test

mod common;

use std::collections::HashMap;
use std::process::Command;

use session_core::json::{Value, to_json};

#[test]
fn file_lists_equal_pi_compactions_lists() {
    let corpora = common::corpora();
    let expected = std::fs::read_to_string(corpora.join("files/expected.jsonl")).unwrap();
    let mut ours: HashMap<String, (Value<'static>, usize)> = HashMap::new();
    for corpus in ["sample-16", "real", "files", "edge", "escapes", "hostile", "adversarial"] {
        let part = format!("{corpus}/sessions");
        let out = Command::new(env!("CARGO_BIN_EXE_session-scan"))
            .args(["files", "--json", "-v"])
            .arg(corpora.join(part))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            let v = common::parse(line);
            let file = v.get("file").and_then(Value::as_str).unwrap().to_str_lossy().into_owned();
            let rel = file.split("corpora/").last().unwrap().to_string();
            let throws = stderr
                .lines()
                .filter(|l| l.starts_with(&file) && l.contains("extractFileOpsFromMessage throws"))
                .count();
            ours.insert(rel, (v, throws));
        }
    }
    let mut checked = 0;
    let mut nonempty = 0;
    for line in expected.lines() {
        let want = common::parse(line);
        let file = want.get("file").and_then(Value::as_str).unwrap().to_str_lossy().into_owned();
        let (got, throws) = ours.remove(&file).unwrap_or_else(|| panic!("{file}: not listed"));
        for key in ["readFiles", "modifiedFiles"] {
            assert_eq!(to_json(got.get(key).unwrap()), to_json(want.get(key).unwrap()), "{file} {key}");
        }
        assert_eq!(throws as f64, want.get("throws").and_then(Value::as_f64).unwrap(), "{file}");
        nonempty += usize::from(!matches!(want.get("modifiedFiles"), Some(Value::Array(a)) if a.is_empty()));
        checked += 1;
    }
    assert!(checked >= 450 && nonempty >= 100, "{checked} sessions, {nonempty} with modified files");
    // What is left are files Pi does not load as sessions: each is an error record, not a listing.
    for (file, (v, _)) in ours {
        assert!(v.get("error").is_some(), "{file}: listed, but Pi does not load it");
    }
}

#[test]
fn path_keeps_only_the_paths_that_contain_it() {
    let dir = common::corpora().join("files/sessions");
    let out =
        Command::new(env!("CARGO_BIN_EXE_session-scan")).args(["files", "--path", "src/"]).arg(&dir).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let file = dir.join("blocks.jsonl");
    assert_eq!(text, format!("{}\n  modified src/b.rs\n  read     src/a.rs\n", file.display()));
}
