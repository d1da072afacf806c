//! `tools`: every tool's calls across sessions, with failures, calls left without a result and
//! how long calls took; a call copied into a fork or clone (same call id) is counted once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use session_core::tools::{ToolCall, tool_calls};

/// One tool's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolFigures {
    /// Calls (each call id once).
    pub calls: u64,
    /// Calls whose result has `isError: true`.
    pub errors: u64,
    /// Calls with no result in their file (interrupted, or still running).
    pub unanswered: u64,
    /// Sessions with at least one of these calls (counted where the call was first seen).
    pub sessions: u64,
    /// Each answered call's time from the assistant's message to the result (ms), when known.
    pub durations_ms: Vec<f64>,
}

impl ToolFigures {
    /// The share of calls that failed.
    pub fn error_rate(&self) -> f64 {
        if self.calls == 0 { 0.0 } else { self.errors as f64 / self.calls as f64 }
    }

    /// The `q`-quantile of the durations (nearest rank), `None` without any.
    pub fn duration_quantile(&self, q: f64) -> Option<f64> {
        let mut d = self.durations_ms.clone();
        if d.is_empty() {
            return None;
        }
        d.sort_by(f64::total_cmp);
        let rank = ((q * d.len() as f64).ceil() as usize).clamp(1, d.len());
        Some(d[rank - 1])
    }
}

/// The figures of every tool over a set of session files.
#[derive(Debug, Clone, Default)]
pub struct ToolsReport {
    /// Sessions read.
    pub sessions: u64,
    /// By tool name.
    pub tools: BTreeMap<String, ToolFigures>,
    /// Calls seen again (a fork's or clone's copy), not counted.
    pub copies: u64,
    /// Files that could not be read or are not sessions, with why.
    pub errors: Vec<(PathBuf, String)>,
    /// The lines Pi skips or fails on, by file (`path:line: byte N: message`).
    pub notes: Vec<Vec<String>>,
}

/// A file's tool calls, whether it is of the project, and its notes; or why it is no session.
type FileCalls = Result<(Vec<ToolCall>, bool, Vec<String>), String>;

/// A file's tool calls, and whether its cwd contains `project`; a mapped file that shrank while it
/// was read is read again into memory.
fn calls_of(
    path: &Path,
    strategy: crate::ReadStrategy,
    project: Option<&str>,
    local: &jiff::tz::TimeZone,
    buf: &mut Vec<u8>,
) -> FileCalls {
    let mut strategy = strategy;
    loop {
        let (map, _) = crate::read::read_file_into(path, strategy, buf).map_err(|e| {
            crate::render::error_text(&path.to_string_lossy(), None, None, &format!("cannot read: {e}"))
        })?;
        let bytes: &[u8] = map.as_deref().unwrap_or(buf);
        let file = path.to_string_lossy();
        let calls = crate::load_session(bytes, local).map(|session| {
            let notes = session
                .diagnostics
                .iter()
                .map(|d| format!("{file}:{}: byte {}: {}", d.line, d.offset, d.message))
                .collect();
            (tool_calls(&session), crate::in_project(&session, project), notes)
        });
        if map.as_ref().is_some_and(|m| m.truncated()) && strategy != crate::ReadStrategy::Buffered {
            strategy = crate::ReadStrategy::Buffered;
            continue;
        }
        return calls.map_err(|e| {
            let (line, offset) = e.place();
            crate::render::error_text(&path.to_string_lossy(), line, offset, &e.reason())
        });
    }
}

/// Reads the files on all cores and adds them up in file order: a call id met again in a later
/// file is a copy (an empty id is never taken for one). With `project`, only sessions whose cwd
/// contains it are counted; copies are still found among all (a call first made in another
/// project is counted there, not here).
/// With `days`, only calls made on those days (by the assistant message's entry time); times without
/// an offset are read in `local`.
pub fn build(
    files: &[PathBuf],
    strategy: crate::ReadStrategy,
    project: Option<&str>,
    days: &crate::days::DayRange,
    local: &jiff::tz::TimeZone,
) -> ToolsReport {
    let per_file: Vec<FileCalls> =
        files.par_iter().map_init(Vec::new, |buf, path| calls_of(path, strategy, project, local, buf)).collect();
    let mut report = ToolsReport::default();
    let mut seen: ahash::AHashSet<String> = ahash::AHashSet::new();
    for (path, calls) in files.iter().zip(per_file) {
        let (calls, counted) = match calls {
            Ok((calls, counted, notes)) => {
                if !notes.is_empty() {
                    report.notes.push(notes);
                }
                (calls, counted)
            }
            Err(why) => {
                report.errors.push((path.clone(), why));
                continue;
            }
        };
        report.sessions += u64::from(counted);
        let mut used_here: ahash::AHashSet<&str> = ahash::AHashSet::new();
        for call in &calls {
            if !call.call_id.is_empty() && !seen.insert(call.call_id.clone()) {
                report.copies += u64::from(counted);
                continue;
            }
            if !counted || !days.holds(call.called_ms) {
                continue;
            }
            let figures = report.tools.entry(call.name.clone()).or_default();
            figures.calls += 1;
            if used_here.insert(&call.name) {
                figures.sessions += 1;
            }
            match call.result {
                None => figures.unanswered += 1,
                Some(outcome) => figures.errors += u64::from(outcome.is_error),
            }
            figures.durations_ms.extend(call.duration_ms());
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_ranks() {
        let f = ToolFigures { durations_ms: vec![5.0, 1.0, 3.0, 2.0, 4.0], ..ToolFigures::default() };
        assert_eq!(f.duration_quantile(0.5), Some(3.0));
        assert_eq!(f.duration_quantile(0.95), Some(5.0));
        assert_eq!(f.duration_quantile(0.0), Some(1.0));
        assert_eq!(ToolFigures::default().duration_quantile(0.5), None);
    }
}
