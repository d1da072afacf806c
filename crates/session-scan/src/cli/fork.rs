//! `session-scan fork`: a new session holding one branch of another, as Pi's `/fork` makes it
//! (`createBranchedSession`, in the same folder), or with `--cwd` the whole session copied into
//! another project, as `pi --fork` makes it (`forkFrom`).

use std::io::Write;
use std::path::PathBuf;

/// `session-scan fork`.
#[derive(clap::Args)]
pub struct ForkArgs {
    /// The session: a file, an id or an id prefix (looked up as Pi run here would).
    session: String,
    /// End the branch at this entry instead of the session's leaf.
    #[arg(long, conflicts_with = "cwd")]
    leaf: Option<String>,
    /// Copy the whole session into this project's folder of the store (pi --fork).
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
    /// Pi's --session-dir: where an id is looked up, and where --cwd writes.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Atomic's store.
    #[arg(long)]
    atomic: bool,
    /// Print the new session's lines; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Sync the new file to disk (Pi does not).
    #[arg(long)]
    sync: bool,
    /// Rewrite a version 1 or 2 session first, as Pi would when it opens it (atomically).
    #[arg(long, conflicts_with = "cwd")]
    migrate: bool,
}

/// Runs it: the new file's path on stdout (with `--dry-run`, its lines).
pub fn run(a: &ForkArgs, _g: &super::Globals) -> anyhow::Result<bool> {
    let here = session_scan::resolve::Places::for_args(None, a.dir.clone(), a.atomic);
    let path = session_scan::named::resolve_arg(&a.session, &here)?;
    let opts = session_scan::append::AppendOptions { dry_run: a.dry_run, sync: a.sync, migrate: a.migrate };
    let made = match &a.cwd {
        Some(target) => {
            let there = session_scan::resolve::Places::for_args(Some(target), a.dir.clone(), a.atomic);
            session_scan::append::fork_to(&path, &there.cwd, &there.cwd_dir, opts)?
        }
        None => session_scan::append::fork(&path, a.leaf.as_deref(), opts)?,
    };
    let mut out = std::io::stdout().lock();
    if a.dry_run {
        out.write_all(&made.bytes)?;
    } else {
        writeln!(out, "{}", made.path.display())?;
    }
    out.flush()?;
    Ok(false)
}
