//! `session-scan grep`: a text or pattern in every text of the sessions, with its place.

use session_core::entry_texts::Kind;
use session_scan::grep::Grep;
use session_scan::render;

use super::filters::SessionFilter;
use super::per_file::{FileArgs, Outcome, load, run_files};
use super::sessions::{self, WhenNone};

/// The pattern, where to look, and how to print.
#[derive(clap::Args)]
pub struct GrepArgs {
    /// The text to find (with -E, a regular expression).
    ///
    /// The text to find (as it is; with --regex a regular expression).
    pattern: String,
    /// Sessions: files, folders, ids or id prefixes.
    ///
    /// Session files, folders of them, or session ids or id prefixes (default: Pi's whole store).
    #[arg(value_name = "SESSION")]
    sessions: Vec<String>,
    /// The pattern is a regular expression.
    ///
    /// A regular expression (the `regex` crate's syntax: Perl-like, Unicode, no look-around).
    #[arg(long, short = 'E')]
    regex: bool,
    /// Match in any case.
    #[arg(long, short = 'i')]
    ignore_case: bool,
    /// Only these kinds of text, comma-separated.
    ///
    /// Only these kinds of text, comma-separated: user, assistant, thinking, tool-call (the
    /// strings of a call's arguments), tool-result, bash (`!` commands and their output), summary,
    /// custom.
    #[arg(long = "in", value_name = "KINDS", value_delimiter = ',')]
    kinds: Vec<String>,
    /// At most N matches per session.
    #[arg(long, short = 'm', value_name = "N", value_parser = super::whole_number, allow_hyphen_values = true)]
    max_count: Option<usize>,
    /// Only the sessions with a match, and how many.
    #[arg(long, short = 'l')]
    files_with_matches: bool,
    /// One JSON object per match.
    ///
    /// One JSON object per match: {"file","sessionId","line","offset","id","kind","tool"?,"match","text"}
    /// (with -l, {"file","sessionId","matches"}).
    #[arg(long)]
    json: bool,
    /// Without a path, the Atomic fork's store.
    #[arg(long)]
    atomic: bool,
    /// Sessions and days: entries of those days (by their timestamp).
    #[command(flatten)]
    filter: SessionFilter,
}

/// Runs it: `Ok(true)` when nothing was found or a file could not be read, as grep's exit 1.
pub fn run(a: &GrepArgs, g: &super::Globals) -> anyhow::Result<bool> {
    let mut kinds = Vec::new();
    for name in &a.kinds {
        match Kind::from_name(name.trim()) {
            Some(k) => kinds.push(k),
            None => {
                let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
                anyhow::bail!("--in: no kind of text is named {name:?} (kinds: {})", names.join(", "));
            }
        }
    }
    let days = a.filter.days(g)?;
    let grep = Grep::new(&a.pattern, a.regex, a.ignore_case, &kinds)
        .map_err(|e| anyhow::anyhow!("not a regular expression: {e}"))?
        .on_days(days);
    // Text lines show files relative to the store (or with `~`), fitted to the terminal.
    let view =
        View { store: session_scan::store::store_here(a.atomic), width: session_scan::table::width(), color: g.color };
    let files = sessions::paths(&a.sessions, a.atomic, WhenNone::Store)?;
    let files = FileArgs { files, json: a.json };
    let totals =
        run_files(&files, g, |file, bytes, json| grep_session(a, &grep, &view, file, bytes, json, &g.local_zone))?;
    Ok(totals.failed || !totals.found)
}

/// How text lines are shown.
struct View {
    store: std::path::PathBuf,
    width: usize,
    color: bool,
}

fn grep_session(
    a: &GrepArgs,
    grep: &Grep,
    view: &View,
    file: &str,
    bytes: &[u8],
    json: bool,
    local: &jiff::tz::TimeZone,
) -> Outcome {
    let mut o = Outcome::new();
    let Some(session) = load(&mut o, file, bytes, json, local) else { return o };
    if !session_scan::in_project(&session, a.filter.project.as_deref()) {
        // Another project's session: not searched, nothing said of it.
        o.stderr.clear();
        o.notes.clear();
        return o;
    }
    let max = if a.files_with_matches { None } else { a.max_count };
    let hits = grep.session_hits(&session, max);
    o.found = !hits.is_empty();
    // A path longer than a third of the line gives way in its middle (its folder and its end stay).
    let shown = session_scan::table::short_path(std::path::Path::new(file), Some(&view.store));
    let most = (view.width / 3).max(24);
    let shown = if session_scan::table::display_width(&shown) > most && !json {
        session_scan::table::fit(&shown, most, session_scan::table::Cut::Middle, false)
    } else {
        shown
    };
    let text_form = render::GrepText { shown: &shown, width: view.width, color: view.color };
    render::write_grep_hits(&mut o.stdout, file, &session, &hits, a.files_with_matches, json, &text_form);
    o
}
