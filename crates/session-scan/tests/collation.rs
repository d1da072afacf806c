//! Ties in the listing follow Node's collation in the user's locale: the 500 names of
//! `corpora/collation`, as session files that tie on everything but their names, are listed in the
//! order Pi 1.6's `listAll()` gave under each `LANG` (`expected/orders.json`).

#![allow(clippy::unwrap_used)] // test inputs are committed; a panic is a failed test

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// What every file holds, and their one mtime, as `record.mjs` writes them.
const CONTENT: &str = concat!(
    r#"{"type":"session","version":3,"id":"c0ffee00-0000-4000-8000-000000000000","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/proj"}"#,
    "\n",
    r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1767225601000}}"#,
    "\n"
);
const MTIME_S: u64 = 1_767_225_600;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/collation")
}

fn store(names: &[String]) -> PathBuf {
    let root = std::env::temp_dir().join(format!("session-scan-collation-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let folder = root.join("--home-u-proj--");
    std::fs::create_dir_all(&folder).unwrap();
    let mtime = std::time::UNIX_EPOCH + std::time::Duration::from_secs(MTIME_S);
    for name in names {
        let path = folder.join(name);
        std::fs::write(&path, CONTENT).unwrap();
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(mtime).unwrap();
    }
    root
}

#[test]
fn ties_follow_the_collation_of_the_users_locale() {
    let names: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(corpus().join("names.json")).unwrap()).unwrap();
    assert_eq!(names.len(), 500);
    let orders: Value =
        serde_json::from_str(&std::fs::read_to_string(corpus().join("expected/orders.json")).unwrap()).unwrap();
    let root = store(&names);
    let mut differ = 0;
    for (lang, expected) in orders.as_object().unwrap() {
        let out = Command::new(env!("CARGO_BIN_EXE_session-scan"))
            .args(["list", "--json", "--fields", "path"])
            .arg(&root)
            .env("LANG", lang)
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .output()
            .unwrap();
        assert!(out.status.success(), "{lang}: {}", String::from_utf8_lossy(&out.stderr));
        let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
        let ours: Vec<&str> = listed
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().rsplit('/').next().unwrap())
            .collect();
        let pi: Vec<&str> = expected["names"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
        if let Some(k) = ours.iter().zip(&pi).position(|(a, b)| a != b) {
            panic!("{lang}: first difference at {k}: ours {:?}, Pi's {:?}", &ours[k..k + 3], &pi[k..k + 3]);
        }
        assert_eq!(ours.len(), pi.len(), "{lang}");
        differ += usize::from(
            lang != "en_US.UTF-8"
                && pi
                    != orders["en_US.UTF-8"]["names"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|n| n.as_str().unwrap())
                        .collect::<Vec<_>>(),
        );
    }
    assert!(differ >= 2, "Swedish and Japanese order these names otherwise than English");
    std::fs::remove_dir_all(&root).unwrap();
}
