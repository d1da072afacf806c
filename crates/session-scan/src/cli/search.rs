//! `session-scan search`: the sessions Pi's picker search finds, from `list`'s listing.

use super::list::{ListArgs, run_with};

/// `session-scan search`: the listing, filtered and ordered by Pi's picker search.
#[derive(clap::Args)]
pub struct SearchArgs {
    /// Words, "a phrase" or re:PATTERN.
    ///
    /// What to look for, as Pi's picker reads it: words (each found as it is in the name, id,
    /// messages or cwd, or scattered in order in the name or cwd), "quoted phrases", or
    /// re:PATTERN (a JavaScript regular expression, case-insensitive).
    query: String,
    #[command(flatten)]
    list: ListArgs,
    /// Order: relevance (best first) or recent.
    ///
    /// relevance: best score first, then newest (Pi's Threaded and Fuzzy modes while searching);
    /// recent: newest first (Pi's Recent mode).
    #[arg(long, value_enum, default_value_t = SortMode::Relevance, hide_possible_values = true)]
    sort: SortMode,
    /// Only sessions that have a name.
    #[arg(long)]
    named: bool,
    /// Show up to N places in each session that match.
    ///
    /// Also show where: up to N messages of each session whose text holds a word or phrase of the
    /// query as it is (or a match of the pattern), with their line, byte offset, entry id, role
    /// and the text around the first place found.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = super::whole_number, allow_hyphen_values = true)]
    hits: usize,
}

/// How found sessions are ordered.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum SortMode {
    Relevance,
    Recent,
}

/// A search, parsed.
pub(super) struct Search {
    /// `None` for a blank query: every session, in the listing's order.
    pub(super) query: Option<session_core::search::Query>,
    pub(super) sort: SortMode,
    pub(super) named: bool,
    /// At most this many messages found, for each session.
    pub(super) hits: usize,
}

/// `session-scan search`.
pub fn run(a: &SearchArgs, g: &super::Globals) -> anyhow::Result<bool> {
    let query = session_core::search::Query::parse(&a.query).map_err(|e| anyhow::anyhow!("search: {e}"))?;
    run_with(&a.list, g, Some(&Search { query, sort: a.sort, named: a.named, hits: a.hits }))
}
