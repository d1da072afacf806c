//! The one rule by which every command takes its sessions, command by command: a path, an id or
//! id prefix (an ambiguous one is an error naming the candidates), or nothing.

#![allow(clippy::unwrap_used)] // test inputs are made here; a panic is a failed test

mod common;

use common::binary::*;
use std::path::{Path, PathBuf};

/// A home with Pi's store: a project with two sessions whose ids share `abcd`, and another
/// project's session `ef01…`. Returns (home, project folder, the store's project folder).
fn store(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let home = scratch(name);
    let project = home.join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let cwd = project.to_string_lossy().into_owned();
    let encoded = format!("--{}--", cwd.trim_start_matches('/').replace('/', "-"));
    let folder = home.join(".pi/agent/sessions").join(encoded);
    let other = home.join(".pi/agent/sessions/--elsewhere--");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    let write = |dir: &Path, id: &str, cwd: &str, minute: u32, text: &str| {
        let header = format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:{minute:02}:00.000Z","cwd":"{cwd}"}}"#
        );
        let message = format!(
            r#"{{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:{minute:02}:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1767225601000}}}}"#
        );
        let path = dir.join(format!("2026-01-01T00-{minute:02}-00-000Z_{id}.jsonl"));
        std::fs::write(&path, format!("{header}\n{message}\n")).unwrap();
        // The newest by mtime is the one `pi -c` continues.
        let mtime = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_767_225_600 + u64::from(minute) * 60);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(mtime).unwrap();
    };
    write(&folder, "abcd1111-0000-7000-8000-000000000001", &cwd, 1, "first needle");
    write(&folder, "abcd2222-0000-7000-8000-000000000002", &cwd, 2, "second needle");
    write(&other, "ef012345-0000-7000-8000-000000000003", "/elsewhere", 3, "third needle");
    (home, project, folder)
}

/// Every command that reads sessions, with the arguments that come before the sessions.
const COMMANDS: &[&[&str]] = &[
    &["tree"],
    &["stats"],
    &["context"],
    &["files"],
    &["grep", "needle"],
    &["tools"],
    &["usage", "daily"],
    &["list"],
    &["export"],
];

#[test]
fn an_ambiguous_id_prefix_is_refused_with_its_candidates_by_every_command() {
    let (home, project, _) = store("ambiguous");
    for command in COMMANDS {
        let out = run(scan_at(&home, &project, &[]).args(*command).arg("abcd"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {stderr}");
        assert!(stderr.contains("abcd: the id prefix is ambiguous; 2 sessions match"), "{command:?}: {stderr}");
        assert!(stderr.contains("abcd1111-0000") && stderr.contains("abcd2222-0000"), "{command:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{command:?}");
    }
    std::fs::remove_dir_all(&home).unwrap();
}

#[test]
fn a_unique_prefix_or_an_id_of_another_project_names_one_session_for_every_command() {
    let (home, project, _) = store("unique");
    for command in COMMANDS {
        for (arg, id) in [("abcd2", "abcd2222-0000"), ("ef01", "ef012345-0000")] {
            // Every command's JSON names the session's file or id (export: its Markdown; tools and
            // usage, which hold no usage here, count one session).
            let mut cmd = scan_at(&home, &project, &[]);
            cmd.args(*command).arg(arg);
            if command[0] != "export" {
                cmd.arg("--json");
            }
            let out = run(&mut cmd);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{command:?} {arg}: {stderr}");
            let stdout = String::from_utf8_lossy(&out.stdout);
            let other = if arg == "ef01" { "abcd" } else { "ef012345" };
            if matches!(command[0], "tools" | "usage") {
                assert!(stdout.contains("\"sessions\":1"), "{command:?} {arg}: {stdout}");
            } else {
                assert!(stdout.contains(id), "{command:?} {arg}: {stdout}");
                assert!(!stdout.contains(other), "{command:?} {arg}: only that session: {stdout}");
            }
        }
    }
    std::fs::remove_dir_all(&home).unwrap();
}

#[test]
fn a_name_that_matches_nothing_is_exit_two_for_every_command() {
    let (home, project, _) = store("nomatch");
    for command in COMMANDS {
        for arg in ["9999", "no/such/file.jsonl"] {
            let out = run(scan_at(&home, &project, &[]).args(*command).arg(arg));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{command:?} {arg}: {stderr}");
            let said = if arg == "9999" {
                "9999: no session file, folder or session id matches"
            } else {
                "no such file or folder"
            };
            assert!(stderr.contains(said), "{command:?} {arg}: {stderr}");
        }
    }
    std::fs::remove_dir_all(&home).unwrap();
}

/// Without a session: the commands that read one session take the one `pi -c` would continue
/// here; the others read the whole store.
#[test]
fn without_a_session_one_session_commands_take_the_recent_one_and_others_the_store() {
    let (home, project, folder) = store("default");
    let recent = folder.join("2026-01-01T00-02-00-000Z_abcd2222-0000-7000-8000-000000000002.jsonl");
    for command in ["tree", "stats", "context"] {
        let out = run(scan_at(&home, &project, &[]).args([command, "--json"]));
        assert_eq!(out.status.code(), Some(0), "{command}");
        let records = json_lines(&out.stdout);
        assert_eq!(records.len(), 1, "{command}");
        assert_eq!(records[0]["file"], recent.to_string_lossy().as_ref(), "{command}");
    }
    let out = run(scan_at(&home, &project, &[]).arg("export"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("second needle"));
    let out = run(scan_at(&home, &project, &[]).args(["grep", "needle", "-l", "--json"]));
    assert_eq!(json_lines(&out.stdout).len(), 3, "the whole store");
    let out = run(scan_at(&home, &project, &[]).args(["list", "--json"]));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.as_array().map(Vec::len), Some(3), "the whole store");
    // A project without sessions has none to continue: said, exit 2.
    let empty = home.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = run(scan_at(&home, &empty, &[]).arg("stats"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session of this project to read"));
    std::fs::remove_dir_all(&home).unwrap();
}
