//! Shared inputs for the benchmarks: the committed corpora loaded into memory, and the naive
//! baseline (`serde_json::Value` per line) every hot path is compared with.

use std::path::{Path, PathBuf};

/// The files of a committed corpus (`corpora/<name>/sessions`), read into memory.
pub fn corpus(name: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora").join(name).join("sessions");
    session_scan::expand_paths(&[dir]).into_iter().filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b))).collect()
}

/// Total bytes of a corpus.
pub fn total_bytes(files: &[(PathBuf, Vec<u8>)]) -> u64 {
    files.iter().map(|(_, b)| b.len() as u64).sum()
}

/// The ceiling: count line starts with `memchr`.
pub fn memchr_lines(files: &[(PathBuf, Vec<u8>)]) -> usize {
    files.iter().map(|(_, b)| session_core::lines::count_lines(b)).sum()
}

/// The naive baseline: `serde_json::Value` for every line; returns how many parsed.
pub fn serde_json_per_line(files: &[(PathBuf, Vec<u8>)]) -> usize {
    files
        .iter()
        .flat_map(|(_, b)| b.split(|&c| c == b'\n'))
        .filter(|l| serde_json::from_slice::<serde_json::Value>(l).is_ok())
        .count()
}

/// Loading (indexing) every session: the validating scan, the id index and the leaf.
pub fn load_all(files: &[(PathBuf, Vec<u8>)]) -> usize {
    files.iter().filter_map(|(_, b)| session_core::Session::load(b).ok()).map(|s| s.records.len()).sum()
}

/// Full parse of every line into a JS-semantics value with simd-json.
pub fn full_parse_all(files: &[(PathBuf, Vec<u8>)]) -> usize {
    let mut arena = bumpalo::Bump::new();
    let mut n = 0;
    for (_, b) in files {
        for line in session_core::lines::Lines::new(b, session_core::lines::LineRule::Newline) {
            arena.reset();
            n += usize::from(session_core::json::parse_value(line.bytes, &arena).is_ok());
        }
    }
    n
}

/// Session totals of every file.
pub fn totals_all(files: &[(PathBuf, Vec<u8>)]) -> f64 {
    files
        .iter()
        .filter_map(|(_, b)| session_core::Session::load(b).ok())
        .map(|s| session_core::stats::session_totals(&s).stats.usage.cost)
        .sum()
}

/// `SessionInfo` of every file.
pub fn infos_all(files: &[(PathBuf, Vec<u8>)]) -> u64 {
    files.iter().filter_map(|(_, b)| session_core::info::session_info(b, 0.0).ok()).map(|i| i.message_count).sum()
}
