//! Files and folders of Pi sessions: reading them (buffered or mapped), running `session-core`
//! over many in parallel, and shaping the results as the reference's JSON records.

#![deny(unsafe_code)]

pub mod append;
pub mod cache;
pub mod collation;
#[cfg(feature = "dataset")]
pub mod dataset;
pub mod days;
pub mod export;
pub mod grep;
pub mod in_order;
pub mod list;
pub mod manager;
pub mod manifest;
#[allow(unsafe_code)] // the one module that maps files; each block has its `// SAFETY:` reason
mod mmap;
pub mod named;
pub mod picker;
pub mod read;
pub mod redact;
pub mod render;
pub mod resolve;
pub mod store;
pub mod table;
pub mod tools;
pub mod trash;
pub mod usage;

pub use read::{FileBytes, ReadStrategy, expand_paths, read_file, read_file_into};

/// Whether a session's header `cwd` contains `project` (always true without one).
pub fn in_project(session: &session_core::Session<'_>, project: Option<&str>) -> bool {
    let cwd = session.header.get("cwd").and_then(session_core::json::Value::as_str);
    project.is_none_or(|p| cwd.is_some_and(|c| c.to_str_lossy().contains(p)))
}

/// Files at least this large are split at line boundaries and scanned on several threads.
pub const PARALLEL_SCAN_THRESHOLD: usize = 8 << 20;

/// Loads a session, scanning a large file's chunks in parallel on the current rayon pool; times
/// without an offset are read in `local` (the zone Node would run in: the machine's, `TZ` first).
pub fn load_session<'a>(
    bytes: &'a [u8],
    local: &jiff::tz::TimeZone,
) -> Result<session_core::Session<'a>, session_core::LoadError> {
    use rayon::prelude::*;
    use session_core::session::{scan_chunk, split_points};
    let session = if bytes.len() < PARALLEL_SCAN_THRESHOLD {
        session_core::Session::load(bytes)
    } else {
        let parts = rayon::current_num_threads().max(1) * 2;
        let chunks = split_points(bytes, parts).into_par_iter().map(|r| scan_chunk(bytes, r)).collect();
        session_core::Session::from_chunks(bytes, chunks)
    };
    session.map(|s| s.with_local_zone(local.clone()))
}

/// UTC, the zone a library caller gets for times without an offset unless it names another.
pub static UTC: jiff::tz::TimeZone = jiff::tz::TimeZone::UTC;
