//! The scan's shortcuts for the shapes Pi usually writes give, on every line of the committed
//! corpora, what the plain walk gives.

#![allow(clippy::unwrap_used)] // a corpus that cannot be read fails the test

mod common;

use session_core::json::{ScanOptions, scan_line_plain, scan_line_with};

/// Every line of Pi's own sessions, the generated, edge and adversarial ones: the same fields,
/// flags, spans and errors with the shortcuts as without (`pi_prefix` and the usage marks
/// aside, which only say that a shortcut was taken).
#[test]
fn corpora_scan_the_same_with_and_without_shortcuts() {
    let paths = common::jsonl_files(&common::corpora());
    let (mut lines, mut prefixed, mut with_usage) = (0, 0, 0);
    for path in &paths {
        let bytes = std::fs::read(path).unwrap();
        for line in bytes.split(|&c| c == b'\n') {
            for options in [ScanOptions::default(), ScanOptions { blocks: true }] {
                let with = scan_line_with(line, options).map(|s| {
                    prefixed += usize::from(s.pi_prefix);
                    s.without_shortcut_marks()
                });
                let plain = scan_line_plain(line, options);
                assert!(plain.as_ref().is_ok_and(|s| !s.pi_prefix) || plain.is_err());
                assert_eq!(
                    format!("{with:?}"),
                    format!("{plain:?}"),
                    "{}: {}",
                    path.display(),
                    String::from_utf8_lossy(line)
                );
            }
            lines += 1;
            with_usage += usize::from(memchr::memmem::find(line, br#""usage":{"input":"#).is_some());
        }
    }
    assert!(
        paths.len() > 50 && lines > 10_000 && prefixed > 10_000 && with_usage > 1_000,
        "{} files, {lines} lines, {prefixed} with Pi's prefix, {with_usage} with usage",
        paths.len()
    );
}
