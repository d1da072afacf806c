//! Architecture invariants, checked on every test run.

#![allow(clippy::unwrap_used)] // test helpers panic on a broken tree by design

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn session_core_does_no_io_and_no_unsafe() {
    let manifest = std::fs::read_to_string(root().join("crates/session-core/Cargo.toml")).unwrap();
    for banned in ["memmap2", "rayon", "clap"] {
        assert!(!manifest.contains(banned), "session-core must not depend on {banned}");
    }
    let mut files = Vec::new();
    rust_files(&root().join("crates/session-core/src"), &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for banned in ["std::fs", "std::net", "unsafe ", "TimeZone::system"] {
            assert!(!text.contains(banned), "{} uses {banned}", f.display());
        }
    }
}

#[test]
fn unsafe_code_lives_in_one_module() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        if text.contains("unsafe {") {
            assert!(f.ends_with("session-scan/src/mmap.rs"), "unsafe code in {}", f.display());
            assert!(text.contains("// SAFETY:"), "{} lacks a SAFETY comment", f.display());
        }
    }
}

#[test]
fn every_module_starts_with_a_doc_line() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    rust_files(&root().join("xtask"), &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(text.starts_with("//!"), "{} does not start with a //! line", f.display());
    }
}

/// A mention of a numbered period of work or of an issue (the word, then one to three digits), the
/// marks of a development diary; long ids pass, and a flag's number is written `--name=N`.
fn history_marker(line: &str) -> Option<String> {
    let lower = line.to_lowercase();
    for word in ["sessions ", "session ", "issues ", "issue #", "issue "] {
        let mut from = 0;
        while let Some(k) = lower[from..].find(word) {
            let at = from + k;
            from = at + word.len();
            let before = &lower[..at];
            if before.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let digits: String = lower[from..].chars().take_while(char::is_ascii_digit).collect();
            let mut rest = lower[from + digits.len()..].chars();
            let (next, after) = (rest.next(), rest.next());
            let decimal = next == Some('.') && after.is_some_and(|c| c.is_ascii_digit());
            if (1..=3).contains(&digits.len()) && !decimal && next.is_none_or(|c| !c.is_alphanumeric() && c != '_') {
                return Some(line[at..].chars().take(40).collect());
            }
        }
    }
    None
}

#[test]
fn documents_and_code_speak_of_the_product_not_its_history() {
    let mut files = Vec::new();
    source_files(&root(), &mut files);
    let mut found = Vec::new();
    for f in files {
        if f.ends_with("xtask/tests/tidy.rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&f) else { continue };
        for (n, line) in text.lines().enumerate() {
            if let Some(m) = history_marker(line) {
                found.push(format!("{}:{}: {m}", f.display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "development history in the repository:\n{}", found.join("\n"));
}

#[test]
fn history_markers_are_recognised() {
    // Each probe is a word and a number put together here, so that no such phrase is written in
    // the repository, this file included.
    let probe = |before: &str, word: &str, after: &str| format!("{before}{word}{after}");
    for marked in [
        probe("", "Session", " 28, the same VM"),
        probe("", "sessions", " 18-27 measured"),
        probe("(", "session", " 9)"),
        probe("see ", "issue", " 4."),
        probe("", "issue", " #12"),
        probe("--", "sessions", " 200"),
    ] {
        assert!(history_marker(&marked).is_some(), "{marked}");
    }
    for clean in [
        probe("gen.mjs --", "sessions", "=200"),
        probe("200 ", "sessions", ""),
        probe("a ", "session", " 0194a1c1-2e97"),
        probe("Pi ", "issues", " #3611"),
        probe("", "session", " 2.5"),
    ] {
        assert!(history_marker(&clean).is_none(), "{clean}");
    }
}

/// Every file git would commit that a person or a script reads: code, documents, recorders,
/// manifests (committed session data aside).
fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !matches!(name.as_str(), "target" | ".git" | "node_modules" | "sessions" | "store" | "expected") {
                source_files(&p, out);
            }
        } else if ["rs", "md", "mjs", "sh", "py", "toml", "yml", "json"]
            .iter()
            .any(|x| name.ends_with(&format!(".{x}")))
            || name == "run"
        {
            out.push(p);
        }
    }
}

/// The project stands alone: no code, document or script names a folder beside the repository;
/// what needs Pi installs it under `target/` (`reference/`, `cargo xtask recorder`).
#[test]
fn nothing_refers_to_a_folder_outside_the_repository() {
    let mut files = Vec::new();
    source_files(&root(), &mut files);
    let outside = ["../shared", "shared/oracle", "pi-session-spec", "real-fixtures", "perf-anchors"];
    let mut found = Vec::new();
    for f in files {
        if f.ends_with("xtask/tests/tidy.rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&f) else { continue };
        for (n, line) in text.lines().enumerate() {
            if let Some(m) = outside.iter().find(|m| line.contains(*m)) {
                found.push(format!("{}:{}: {m}", f.display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "references to folders outside the repository:\n{}", found.join("\n"));
}
