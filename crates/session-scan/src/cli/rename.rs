//! `session-scan rename`: names a session as Pi's `/name` does (`appendSessionInfo`).

use std::io::Write;
use std::path::PathBuf;

use session_scan::append::{AppendOptions, Change};

/// Where a session argument is looked up, and how the line is written: what `rename` and `label`
/// share.
#[derive(clap::Args)]
pub struct WriteArgs {
    /// Print the line that would be appended; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Sync the file to disk after the write (Pi does not).
    #[arg(long)]
    pub sync: bool,
    /// Rewrite a version 1 or 2 session first, as Pi would when it opens it (atomically).
    #[arg(long)]
    pub migrate: bool,
    /// Look an id up as Pi run in this folder would.
    #[arg(long)]
    pub cwd: Option<String>,
    /// Pi's --session-dir, for looking up an id.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Look an id up in Atomic's store.
    #[arg(long)]
    pub atomic: bool,
}

/// `session-scan rename`.
#[derive(clap::Args)]
pub struct RenameArgs {
    /// The session: a file, an id or an id prefix.
    session: String,
    /// The new name (line breaks become spaces, the ends are trimmed, as Pi does; "" clears it).
    name: String,
    #[command(flatten)]
    write: WriteArgs,
}

/// Appends `change` to the session `arg` names; prints the new entry's id, or with `--dry-run`
/// the line.
pub fn append(arg: &str, change: &Change, w: &WriteArgs) -> anyhow::Result<bool> {
    let places = session_scan::resolve::Places::for_args(w.cwd.as_deref(), w.dir.clone(), w.atomic);
    let path = session_scan::named::resolve_arg(arg, &places)?;
    let done = session_scan::append::append(
        &path,
        change,
        AppendOptions { dry_run: w.dry_run, sync: w.sync, migrate: w.migrate },
    )?;
    let mut out = std::io::stdout().lock();
    if w.dry_run {
        out.write_all(&done.bytes)?;
    } else {
        writeln!(out, "{}", done.id)?;
    }
    out.flush()?;
    Ok(false)
}

/// Runs it.
pub fn run(a: &RenameArgs, _g: &super::Globals) -> anyhow::Result<bool> {
    append(&a.session, &Change::Name(a.name.clone()), &a.write)
}
