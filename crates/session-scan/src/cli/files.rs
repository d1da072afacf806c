//! `session-scan files`: the files each session read and changed.

use session_scan::render;

use super::per_file::{FileArgs, Outcome, load, run_files};
use super::sessions::{self, WhenNone};

/// The sessions to read and which paths to show.
#[derive(clap::Args)]
pub struct FilesArgs {
    /// Sessions: files, folders, ids or id prefixes.
    ///
    /// Session files, folders of them, or session ids or id prefixes (default: Pi's whole store).
    #[arg(value_name = "SESSION")]
    sessions: Vec<String>,
    /// Only paths that contain this text.
    ///
    /// Only paths that contain this text, and only the sessions that have one.
    #[arg(long, value_name = "TEXT")]
    path: Option<String>,
    /// One JSON object per session per line.
    ///
    /// One JSON object per session per line: {"file","sessionId","cwd"?,"readFiles","modifiedFiles"}.
    #[arg(long)]
    json: bool,
    /// Without a session named, Atomic's store.
    ///
    /// Without a path, the Atomic fork's store (`~/.atomic/agent/sessions`, its variables and
    /// settings).
    #[arg(long)]
    atomic: bool,
}

/// Runs it: `Ok(true)` when a file could not be read.
pub fn run(a: &FilesArgs, g: &super::Globals) -> anyhow::Result<bool> {
    // Without a path, Pi's store (its session-dir override first), as `usage` reads it.
    let files = sessions::paths(&a.sessions, a.atomic, WhenNone::Store)?;
    let files = FileArgs { files, json: a.json };
    Ok(run_files(&files, g, |file, bytes, json| files_of_session(a, file, bytes, json, &g.local_zone))?.failed)
}

fn files_of_session(a: &FilesArgs, file: &str, bytes: &[u8], json: bool, local: &jiff::tz::TimeZone) -> Outcome {
    let mut o = Outcome::new();
    let Some(session) = load(&mut o, file, bytes, json, local) else { return o };
    let (lists, diagnostics) = session_core::files::file_lists(&session);
    for d in &diagnostics {
        o.note(file, d.line, d.offset, &d.message);
    }
    render::write_file_lists(&mut o.stdout, file, &session, &lists, a.path.as_deref(), json);
    o
}
