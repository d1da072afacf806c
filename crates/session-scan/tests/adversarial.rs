//! Hostile inputs: nothing panics, hangs or grows without bound, and every problem is reported.
//! Inputs are made here (the largest ones live in `cargo xtask stress`, run in release).

#![allow(clippy::unwrap_used)] // test inputs are made here; a panic is a failed test

mod common;

use std::time::{Duration, Instant};

use session_core::Session;
use session_core::context::{Dialect, LeafChoice, build_context};

const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

fn line(id: &str, parent: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"x"}}}}"#
    )
}

/// Everything a user can ask of one file, timed.
fn exercise(bytes: &[u8]) -> Duration {
    let t = Instant::now();
    if let Ok(s) = Session::load(bytes) {
        let tree = s.tree();
        let _ = session_scan::render::tree_record("f", &s, &tree);
        let _ = session_core::stats::session_totals(&s);
        for d in [Dialect::Pi, Dialect::Atomic, Dialect::Harness] {
            let arena = bumpalo::Bump::new();
            let _ = build_context(&s, &LeafChoice::Session, d, &arena);
        }
        let redactor = session_scan::redact::Redactor::new();
        let options = session_scan::export::ExportOptions { max_output_lines: Some(3), ..Default::default() };
        let mut markdown = Vec::new();
        let path = s.branch(None).path;
        session_scan::export::write_markdown(&mut markdown, "f", &s, &path, &options, Some(&redactor)).unwrap();
        assert!(markdown.starts_with(b"# "));
        let _ = session_core::files::file_lists(&s);
        let _ = session_core::tools::tool_calls(&s);
        for (pattern, regex) in [("x", false), ("(?i)\\w+$", true)] {
            let grep = session_scan::grep::Grep::new(pattern, regex, false, &[]).unwrap();
            let _ = grep.session_hits(&s, Some(1000));
        }
    }
    let _ = session_core::info::session_info(bytes, 0.0, true);
    let _ = session_core::usage::file_usage(bytes);
    t.elapsed()
}

#[test]
fn a_hundred_thousand_duplicate_ids() {
    let mut f = format!("{HEADER}\n");
    for k in 0..100_000 {
        let parent = if k == 0 { "null".to_string() } else { "\"d\"".to_string() };
        f.push_str(&line("d", &parent));
        f.push('\n');
    }
    let s = Session::load(f.as_bytes()).unwrap();
    assert_eq!(s.records.len(), 100_001);
    // The last record is its own parent: the walk stops at once.
    assert!(s.branch(None).cycle_at.is_some());
    assert!(exercise(f.as_bytes()) < Duration::from_secs(60));
}

#[test]
fn duplicate_ids_that_form_loops_of_every_length() {
    let mut f = format!("{HEADER}\n");
    for k in 0..2_000 {
        f.push_str(&line(&format!("n{}", k % 50), &format!("\"n{}\"", (k + 1) % 50)));
        f.push('\n');
    }
    let s = Session::load(f.as_bytes()).unwrap();
    let (_, notes) = session_scan::render::tree_record("f", &s, &s.tree());
    assert!(!notes.truncated);
    exercise(f.as_bytes());
}

#[test]
fn nesting_a_hundred_thousand_deep() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let f = format!(
        "{HEADER}\n{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":{deep}}}}}\n"
    );
    // The scan accepts it (JSON.parse does); a full parse refuses it past depth 1,024 and the
    // entry contributes nothing instead of overflowing the stack.
    let s = Session::load(f.as_bytes()).unwrap();
    assert_eq!(s.records.len(), 2);
    let arena = bumpalo::Bump::new();
    assert!(s.records[1].value(&arena).is_err());
    exercise(f.as_bytes());
}

#[test]
fn invalid_utf8_nul_bytes_and_noise_never_panic() {
    let mut next = common::xorshift(0x9e37_79b9_7f4a_7c15);
    for round in 0..200 {
        let mut f = format!("{HEADER}\n").into_bytes();
        for _ in 0..(next() % 40) {
            let mut l = line(&format!("i{}", next() % 9), &format!("\"i{}\"", next() % 9)).into_bytes();
            // Damage some bytes: NULs, invalid UTF-8, quotes, backslashes, truncation.
            for _ in 0..(next() % 4) {
                let at = (next() as usize) % l.len();
                l[at] = [0u8, 0xff, 0xc3, b'"', b'\\', b'\r', b'{'][(next() % 7) as usize];
            }
            if next().is_multiple_of(5) {
                l.truncate((next() as usize) % l.len());
            }
            f.extend_from_slice(&l);
            f.push(if next().is_multiple_of(9) { b'\r' } else { b'\n' });
        }
        assert!(exercise(&f) < Duration::from_secs(30), "round {round}");
    }
}

#[test]
fn folders_that_look_like_sessions_and_symlink_loops() {
    let dir = std::env::temp_dir().join(format!("session-scan-adv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cwd_dir = dir.join("--w--");
    std::fs::create_dir_all(cwd_dir.join("x.jsonl")).unwrap();
    std::fs::write(cwd_dir.join("ok.jsonl"), format!("{HEADER}\n{}\n", line("a", "null"))).unwrap();
    std::os::unix::fs::symlink(".", cwd_dir.join("loop")).unwrap();
    std::os::unix::fs::symlink("--w--", dir.join("--again--")).unwrap();
    let candidates = session_scan::list::discover(&session_scan::list::Scope::All { root: dir.clone() });
    let listed = session_scan::list::read_infos(
        &candidates,
        session_scan::list::Reading::new(session_scan::list::Texts::Json, false),
    );
    let ok = listed.iter().filter(|l| l.info.is_ok()).count();
    let failed: Vec<_> = listed.iter().filter_map(|l| l.info.as_ref().err()).collect();
    // ok.jsonl twice (its folder and the symlink to it); the folder named x.jsonl is reported.
    assert_eq!(ok, 2);
    assert!(failed.iter().all(|e| e.reason.contains("directory")), "{failed:?}");
    // Expanding a folder with a symlink loop ends.
    let files = session_scan::expand_paths(std::slice::from_ref(&dir));
    assert!(files.len() < 1000);
    std::fs::remove_dir_all(&dir).unwrap();
}
