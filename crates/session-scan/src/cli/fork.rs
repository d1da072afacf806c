//! `session-scan fork`: a new session holding one branch of another, as Pi's `/fork` makes it
//! (`createBranchedSession`), in the same folder.

use std::io::Write;

use super::rename::WriteArgs;

/// `session-scan fork`.
#[derive(clap::Args)]
pub struct ForkArgs {
    /// The session: a file, an id or an id prefix.
    session: String,
    /// End the branch at this entry instead of the session's leaf.
    #[arg(long)]
    leaf: Option<String>,
    #[command(flatten)]
    write: WriteArgs,
}

/// Runs it: the new file's path on stdout (with `--dry-run`, its lines).
pub fn run(a: &ForkArgs, _g: &super::Globals) -> anyhow::Result<bool> {
    let w = &a.write;
    let places = session_scan::resolve::Places::for_args(w.cwd.as_deref(), w.dir.clone(), w.atomic);
    let path = session_scan::named::resolve_arg(&a.session, &places)?;
    let opts = session_scan::append::AppendOptions { dry_run: w.dry_run, sync: w.sync };
    let made = session_scan::append::fork(&path, a.leaf.as_deref(), opts)?;
    let mut out = std::io::stdout().lock();
    if w.dry_run {
        out.write_all(&made.bytes)?;
    } else {
        writeln!(out, "{}", made.path.display())?;
    }
    out.flush()?;
    Ok(false)
}
