//! `session-scan tree`: the entry tree of each session.

use session_core::json::write_json;
use session_scan::render;

use super::per_file::{FileArgs, Outcome, load, run_files};
use super::sessions::{self, WhenNone};

/// Session files to read, and the output form.
#[derive(clap::Args)]
pub struct TreeArgs {
    /// Sessions: files, folders, ids or id prefixes.
    ///
    /// Session files, folders of them, or session ids or id prefixes (default: the session `pi -c`
    /// would continue here).
    #[arg(value_name = "SESSION")]
    sessions: Vec<String>,
    /// One JSON object per file per line.
    #[arg(long)]
    json: bool,
    /// Draw every entry: long straight runs are not folded.
    #[arg(long)]
    unfold: bool,
}

/// Runs it: `Ok(true)` when a file could not be read.
pub fn run(a: &TreeArgs, g: &super::Globals) -> anyhow::Result<bool> {
    let files = FileArgs { files: sessions::paths(&a.sessions, false, WhenNone::Recent)?, json: a.json };
    let view = render::TreeView { fold: !a.unfold, width: session_scan::table::width().max(60), zone: &g.zone };
    Ok(run_files(&files, g, |file, bytes, json| tree_of_file(view, file, bytes, json, &g.local_zone))?.failed)
}

fn tree_of_file(
    view: render::TreeView<'_>,
    file: &str,
    bytes: &[u8],
    json: bool,
    local: &jiff::tz::TimeZone,
) -> Outcome {
    let mut o = Outcome::new();
    let Some(session) = load(&mut o, file, bytes, json, local) else { return o };
    let tree = session.tree();
    let notes = if json {
        let (rec, notes) = render::tree_record(file, &session, &tree);
        write_json(&rec, &mut o.stdout);
        o.stdout.push(b'\n');
        notes
    } else {
        let (text, notes) = render::tree_text(file, &session, &tree, view);
        o.stdout.extend(text.into_bytes());
        notes
    };
    if notes.cycles_cut > 0 {
        o.stderr.push(format!(
            "{file}: {} child link(s) would re-enter an ancestor (duplicate ids form a loop): not followed",
            notes.cycles_cut
        ));
    }
    if notes.truncated {
        o.stderr.push(format!("{file}: tree listing stopped at {} nodes", render::MAX_TREE_NODES));
    }
    o
}
