//! `is_stringified` proves only what is true: every line of every committed corpus (Pi's own
//! files, hand-made edge cases, hostile and adversarial files) that it accepts is exactly what
//! parsing and printing it again gives; and Pi's own files are nearly all accepted.

#![allow(clippy::unwrap_used)] // test inputs are committed; a panic is a failed test

mod common;

use session_core::json::canonical::is_stringified;
use session_core::json::{parse_value, write_json};

#[test]
fn a_line_proven_stringified_prints_as_it_is() {
    let paths = common::jsonl_files(&common::corpora());
    let (mut proven, mut lines) = (0usize, 0usize);
    for path in &paths {
        // FIFOs and unreadable files of the hostile corpus are not lines.
        let Ok(bytes) = std::fs::read(path) else { continue };
        for line in bytes.split(|&b| b == b'\n') {
            let arena = bumpalo::Bump::new();
            let Ok(value) = parse_value(line, &arena) else { continue };
            lines += 1;
            if is_stringified(line) {
                let mut printed = Vec::new();
                write_json(&value, &mut printed);
                assert_eq!(
                    String::from_utf8_lossy(&printed),
                    String::from_utf8_lossy(line),
                    "{} holds a line proven stringified that prints otherwise",
                    path.display()
                );
                proven += 1;
            }
        }
    }
    eprintln!("{proven} of {lines} lines proven stringified");
    assert!(lines > 20_000 && proven > lines * 9 / 10, "{proven} of {lines} lines proven");
}
