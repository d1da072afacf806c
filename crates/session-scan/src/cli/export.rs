//! `session-scan export`: one session's branch as Markdown on stdout, secrets redacted on request.

use std::io::Write;
use std::path::PathBuf;

use session_core::PropertyValue;
use session_core::json::JsStr;
use session_scan::export::{ExportOptions, write_markdown};
use session_scan::named;
use session_scan::redact::Redactor;
use session_scan::resolve::Places;

/// `session-scan export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// The session: a file, an id or an id prefix.
    ///
    /// A session file, or a session id or id prefix found as `pi --session` finds it (the cwd's
    /// sessions first, then the whole store; an ambiguous prefix is refused). Default: the session
    /// `pi -c` would continue here.
    session: Option<String>,
    /// End the branch at this entry instead of the session's leaf.
    #[arg(long)]
    leaf: Option<String>,
    /// Hide keys, tokens, passwords and home folders.
    ///
    /// Replace keys, tokens, passwords and private keys by `[REDACTED <kind>]` and home folders by
    /// `~` (patterns: they catch the usual forms, not every secret); what was replaced is counted
    /// on stderr.
    #[arg(long)]
    redact: bool,
    /// Show at most this many lines of each tool or command output.
    #[arg(long, value_name = "N", value_parser = super::whole_number, allow_hyphen_values = true)]
    max_output_lines: Option<usize>,
    /// Look an id up as Pi run in this folder would.
    ///
    /// Where an id is looked up: as Pi run in this folder (default: the current folder).
    #[arg(long)]
    cwd: Option<String>,
    /// Pi's --session-dir, for looking up an id.
    ///
    /// Pi's --session-dir, for looking up an id (default: Pi's own override, if any).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Look an id up in Atomic's store.
    ///
    /// Look an id up in the Atomic fork's store (`~/.atomic/agent/sessions`, its variables and
    /// settings), internal workflow sessions included.
    #[arg(long)]
    atomic: bool,
}

/// The file SESSION names, by the rule every command follows.
fn session_file(a: &ExportArgs) -> anyhow::Result<PathBuf> {
    let places = Places::for_args(a.cwd.as_deref(), a.dir.clone(), a.atomic);
    Ok(match &a.session {
        Some(arg) => named::resolve_arg(arg, &places)?,
        None => named::recent(&places)?,
    })
}

/// Runs it (lines Pi skips are summed up on stderr, as every command sums them up, and do not
/// fail it).
pub fn run(a: &ExportArgs, g: &super::Globals) -> anyhow::Result<bool> {
    let path = session_file(a)?;
    let file = path.to_string_lossy().into_owned();
    let mut buf = Vec::new();
    // A session that cannot be read is said as every command says it, and is exit 1.
    let (map, _) = match session_scan::read_file_into(&path, g.strategy, &mut buf) {
        Ok(read) => read,
        Err(e) => {
            eprintln!("{}", session_scan::render::error_text(&file, None, None, &format!("cannot read: {e}")));
            return Ok(true);
        }
    };
    let bytes: &[u8] = map.as_deref().unwrap_or(&buf);
    let session = match session_scan::load_session(bytes, &g.local_zone) {
        Ok(session) => session,
        Err(e) => {
            let (line, offset) = e.place();
            eprintln!("{}", session_scan::render::error_text(&file, line, offset, &e.reason()));
            return Ok(true);
        }
    };
    let mut notes = super::per_file::Notes::default();
    let said: Vec<String> =
        session.diagnostics.iter().map(|d| format!("{file}:{}: byte {}: {}", d.line, d.offset, d.message)).collect();
    notes.take(&said, g.verbosity);
    notes.sum_up(g.verbosity);
    let leaf = a.leaf.as_ref().map(|id| PropertyValue::Str(JsStr::owned(id.clone())));
    let branch = session.branch(leaf.as_ref());
    if let Some(id) = &a.leaf
        && branch.path.is_empty()
    {
        anyhow::bail!("{file}: no entry has the id {id:?}");
    }
    if branch.cycle_at.is_some() {
        eprintln!("{file}: the branch's parent links form a loop: it is shown from where the loop closes");
    }
    let opts = ExportOptions { max_output_lines: a.max_output_lines, zone: g.zone.clone() };
    let redactor = a.redact.then(Redactor::new);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let written = write_markdown(&mut out, &file, &session, &branch.path, &opts, redactor.as_ref())
        .and_then(|counts| out.flush().map(|()| counts));
    match written {
        Ok(counts) if a.redact => {
            let said: Vec<String> = counts.iter().map(|(kind, n)| format!("{n} {kind}")).collect();
            eprintln!(
                "session-scan: redacted: {}",
                if said.is_empty() { "nothing found".into() } else { said.join(", ") }
            );
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => return Err(e.into()),
    }
    Ok(false)
}
