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
