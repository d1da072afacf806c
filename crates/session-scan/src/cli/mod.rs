//! The `session-scan` command line: its options, its commands and the one dispatch between them.
//!
//! Each command has a file of its own here, holding its arguments and its `run`, which returns
//! `Ok(false)` for success (exit 0), `Ok(true)` when something was not found or a file could not
//! be used (exit 1), and an error for a request that cannot be carried out (exit 2).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod completions;
mod context;
#[cfg(feature = "dataset")]
mod dataset;
mod export;
mod files;
mod filters;
mod fork;
mod grep;
mod label;
mod list;
mod per_file;
mod pick;
#[cfg(test)]
mod reference;
mod rename;
mod resolve;
mod search;
mod sessions;
mod stats;
mod tools;
mod tree;
mod usage;

/// The command line.
#[derive(Parser)]
#[command(
    name = "session-scan",
    version,
    about = "Fast, exact reader of Pi coding-agent session files",
    max_term_width = 100,
    after_help = "Sessions: every command takes session files, folders of them, or session ids or id prefixes\n\
                  (as `pi --session` finds them). See `session-scan help COMMAND`.",
    after_long_help = "Sessions: every command takes session files, folders of them, or session ids or id prefixes\n\
                  (as `pi --session` finds them; an ambiguous prefix is an error listing the candidates). With\n\
                  none, tree, stats, context and export read the session `pi -c` would continue here; the others\n\
                  read Pi's whole store.\n\n\
                  Exit codes: 0 done; 1 a session could not be used (said with its file, line and byte offset)\n\
                  or nothing was found; 2 the request cannot be carried out (an unknown option or value, a\n\
                  path that is not there, a session id that matches nothing or several sessions)."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Show times in this zone: an IANA name or an offset.
    ///
    /// For example Europe/Paris, or +02:00. Default: the machine's zone (TZ first). Days of --since and --until are this zone's days.
    #[arg(long, global = true, value_name = "ZONE", allow_hyphen_values = true)]
    timezone: Option<String>,
    /// Show times in UTC (as --timezone UTC).
    #[arg(long, global = true, conflicts_with = "timezone")]
    utc: bool,
    /// When to colour: auto, always or never.
    ///
    /// When to colour the output: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", hide_possible_values = true)]
    color: ColorChoice,
    /// Name every line Pi skips or fails on.
    ///
    /// Name every line Pi skips or fails on, with its place (by default, one line sums them up).
    #[arg(long, short = 'v', global = true, conflicts_with = "quiet")]
    verbose: bool,
    /// Say nothing of the lines Pi skips or fails on.
    #[arg(long, short = 'q', global = true)]
    quiet: bool,
    /// Worker threads (default: all cores).
    #[arg(long, global = true, hide_short_help = true, value_name = "N", value_parser = at_least_one)]
    threads: Option<usize>,
    /// Map large files instead of reading them.
    ///
    /// The default maps, in a pass over lines, files of 8 MiB or more (64 MiB among many) and the
    /// rest of a file from a line of 1 MiB; a file that shrinks while mapped is read again.
    #[arg(long, global = true, overrides_with = "no_mmap", hide_short_help = true)]
    mmap: bool,
    /// Read every file into memory; never map.
    #[arg(long, global = true, hide_short_help = true)]
    no_mmap: bool,
}

/// When to colour: auto, always or never.
///
/// When to colour the output.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// A whole number (0 or more).
pub fn whole_number(s: &str) -> Result<usize, String> {
    s.parse::<usize>().map_err(|_| format!("{s:?} is not a whole number (0 or more)"))
}

/// A whole number of 1 or more.
pub fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{s:?} is not a whole number of 1 or more")),
    }
}

/// How much to say of the lines Pi skips or fails on.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verbosity {
    /// Nothing.
    Quiet,
    /// One line summing them up.
    Summary,
    /// Each, with its file, line and byte offset.
    Each,
}

/// What every command is told by the options common to all: the zone, colour, how much to say.
pub struct Globals {
    /// The zone times are shown in.
    pub zone: session_scan::days::Zone,
    /// Colour on stdout.
    pub color: bool,
    /// How much to say of the lines Pi skips or fails on.
    pub verbosity: Verbosity,
    /// How files are read: buffered, or mapped where that is faster.
    pub strategy: session_scan::ReadStrategy,
    /// The zone `Date.parse` reads a time without an offset in, as Node does: the machine's (`TZ`
    /// first), whatever zone times are shown in.
    pub local_zone: jiff::tz::TimeZone,
}

#[derive(Subcommand)]
enum Command {
    /// The entry tree of each session.
    ///
    /// The entry tree of each session (getTree()).
    #[command(
        after_long_help = "Examples:\n  session-scan tree                 the session pi -c would continue here\n  session-scan tree 0194a1c1 --unfold\n  session-scan tree --json FILE | jq .nodes"
    )]
    Tree(tree::TreeArgs),
    /// Each session's totals and cost by model.
    ///
    /// Session totals and cost breakdown (getSessionStats(), getUsageCostBreakdown()).
    Stats(stats::StatsArgs),
    /// What the model sees from the leaf.
    ///
    /// The context the model sees from the leaf (buildSessionContext()).
    Context(context::ContextArgs),
    /// The sessions, as Pi's picker lists them.
    ///
    /// List sessions as Pi's session picker does (listAll() / list()).
    #[command(
        after_long_help = "Examples:\n  session-scan list --limit 20\n  session-scan list --cwd . --threaded\n  pi --session \"$(session-scan list --paths | fzf)\"\n  session-scan list --json --fields id,name,modified | jq"
    )]
    List(list::ListArgs),
    /// The sessions Pi's picker search finds.
    ///
    /// Find sessions as Pi's picker search does: words, "phrases" or re:PATTERN, best first.
    #[command(
        after_long_help = "Examples:\n  session-scan search \"auth refactor\" --hits 3\n  session-scan search 're:fix(ed)? the (parser|scanner)' --sort recent"
    )]
    Search(search::SearchArgs),
    /// Tokens and cost by day, session, project or model.
    ///
    /// Tokens and cost by hour, day, week, month, session, project or model; fork copies counted once.
    #[command(
        after_long_help = "Examples:\n  session-scan usage                        daily, the whole store\n  session-scan usage monthly --since 2026-01-01\n  session-scan usage session --sort cost --order desc --limit 10\n  session-scan usage model --json | jq .totals"
    )]
    Usage(usage::UsageArgs),
    /// The file `pi --session ARG` or `pi -c` would open.
    ///
    /// The session file `pi --session ARG` or `pi -c` would open (resolveSessionPath, continueRecent).
    Resolve(resolve::ResolveArgs),
    /// One session's branch as Markdown.
    ///
    /// One session's branch as Markdown, for reading or sharing; --redact hides secrets.
    #[command(
        after_long_help = "Examples:\n  session-scan export > session.md          the session pi -c would continue\n  session-scan export 0194a1c1 --redact --max-output-lines 20"
    )]
    Export(export::ExportArgs),
    /// The files each session read and changed.
    ///
    /// The files each session read and changed, as Pi's compaction lists them (readFiles,
    /// modifiedFiles).
    Files(files::FilesArgs),
    /// A text or pattern in every text of the sessions.
    ///
    /// A text or pattern in every text of the sessions (messages, thinking, tool calls' arguments,
    /// tool output, shell commands, summaries), all branches, with the entry, line and offset.
    #[command(
        after_long_help = "Examples:\n  session-scan grep \"cargo build\"\n  session-scan grep -E 'fn\\s+main' --in tool-call -l\n  session-scan grep TODO --project myapp --since 2026-11-01 --json"
    )]
    Grep(grep::GrepArgs),
    /// Every tool's calls, failures and durations.
    ///
    /// Every tool's calls, failures, calls left without a result and durations, across sessions;
    /// fork copies counted once.
    Tools(tools::ToolsArgs),
    /// The sessions as Parquet tables for SQL engines.
    ///
    /// The sessions as Parquet tables for DuckDB, Polars, pandas, Spark or Trino: sessions, entries,
    /// messages, usage and tool_calls, one folder each under OUT_DIR. Usage and tool calls that
    /// forks and clones copied are kept and marked is_copy, so that `WHERE NOT is_copy` gives the
    /// totals of usage and tools. Files are written whole and renamed into place: a reader never
    /// sees half a file, and a run that stops leaves the previous dataset as it was. The schema
    /// and example queries are in docs/dataset.md.
    #[cfg(feature = "dataset")]
    #[command(
        after_long_help = "Examples:\n  session-scan dataset ~/pi-data\n  session-scan dataset --partition month --source laptop /shared/pi-data\n  duckdb -c \"SELECT sum(cost) FROM '~/pi-data/usage/*.parquet' WHERE NOT is_copy\""
    )]
    Dataset(dataset::DatasetArgs),
    /// Name a session, as Pi's /name does.
    ///
    /// Appends a session_info entry, as Pi's appendSessionInfo writes it: a child of the leaf,
    /// the name with line breaks made spaces and trimmed. One write of one line in append mode;
    /// the file is locked against other session-scan writers meanwhile (Pi takes no lock). Prints
    /// the new entry's id. Version 1 and 2 files, which Pi rewrites when it opens them, are refused.
    #[command(
        after_long_help = "Examples:\n  session-scan rename 0194 \"parser rewrite\"\n  session-scan rename session.jsonl \"\" --dry-run"
    )]
    Rename(rename::RenameArgs),
    /// A new session holding one branch of another, as Pi's /fork makes it.
    ///
    /// Writes the session Pi's createBranchedSession makes, in the same folder: a new header
    /// naming this session as its parent, the branch from the root to the leaf (or --leaf), label
    /// entries left out and the entries after them re-chained, then the labels still set on the
    /// branch. The new file is created exclusively and written whole. Prints its path.
    #[command(
        after_long_help = "Examples:\n  pi --session \"$(session-scan fork 0194)\"\n  session-scan fork session.jsonl --leaf a1b2c3d4 --dry-run"
    )]
    Fork(fork::ForkArgs),
    /// Set or clear the label of an entry, as Pi's tree view does.
    ///
    /// Appends a label entry, as Pi's appendLabelChange writes it (without TEXT, the label is
    /// cleared: the entry has no label key). The entry must exist. Prints the new entry's id.
    #[command(
        after_long_help = "Examples:\n  session-scan label 0194 a1b2c3d4 checkpoint\n  session-scan label 0194 a1b2c3d4"
    )]
    Label(label::LabelArgs),
    /// Pick a session in a full-screen picker; its path on stdout.
    ///
    /// A full-screen session picker that opens at once (rows from the listing cache, the others as
    /// they are read), searches as you type with Pi's picker search (words, "phrases", re:), shows
    /// a preview of the selected session, and prints the chosen session's path on stdout, so that
    /// `pi --session "$(session-scan pick)"` opens it. It draws on /dev/tty. Enter chooses (exit 0),
    /// Esc or Ctrl-C leave (exit 130); Tab switches between this project and all, Ctrl-T the
    /// threaded view, Ctrl-D moves the selected session to the trash after a confirmation.
    #[command(
        after_long_help = "Examples:\n  pi --session \"$(session-scan pick)\"\n  session-scan pick --exec\n  session-scan pick --all --flat"
    )]
    Pick(pick::PickArgs),
    /// A completion script for a shell, on stdout.
    ///
    /// For example: `session-scan completions bash >
    /// ~/.local/share/bash-completion/completions/session-scan`.
    Completions(completions::CompletionsArgs),
}

/// Parses the arguments, sets up the process and runs the command.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let zone = match session_scan::days::Zone::from_args(cli.timezone.as_deref(), cli.utc) {
        Ok(zone) => zone,
        Err(e) => {
            eprintln!("session-scan: {e}");
            return ExitCode::from(2);
        }
    };
    let color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => session_scan::render::stdout_color(),
    };
    let verbosity = match (cli.quiet, cli.verbose) {
        (true, _) => Verbosity::Quiet,
        (false, true) => Verbosity::Each,
        (false, false) => Verbosity::Summary,
    };
    // `--mmap` maps wherever it is worth it at all; `--no-mmap` never maps.
    let strategy = match (cli.mmap, cli.no_mmap) {
        (true, _) => session_scan::ReadStrategy::Mmap,
        (false, true) => session_scan::ReadStrategy::Buffered,
        (false, false) => session_scan::ReadStrategy::Auto,
    };
    let g = Globals { zone, color, verbosity, strategy, local_zone: jiff::tz::TimeZone::system() };
    if let Some(n) = cli.threads
        && let Err(e) = rayon::ThreadPoolBuilder::new().num_threads(n).build_global()
    {
        eprintln!("session-scan: {e}");
        return ExitCode::from(2);
    }
    let result = match &cli.command {
        Command::Tree(a) => tree::run(a, &g),
        Command::Stats(a) => stats::run(a, &g),
        Command::Context(a) => context::run(a, &g),
        Command::List(a) => list::run(a, &g),
        Command::Search(a) => search::run(a, &g),
        Command::Usage(a) => usage::run(a, &g),
        Command::Resolve(a) => resolve::run(a, &g),
        Command::Export(a) => export::run(a, &g),
        Command::Files(a) => files::run(a, &g),
        Command::Grep(a) => grep::run(a, &g),
        Command::Tools(a) => tools::run(a, &g),
        #[cfg(feature = "dataset")]
        Command::Dataset(a) => dataset::run(a, &g),
        Command::Pick(a) => pick::run(a, &g),
        Command::Rename(a) => rename::run(a, &g),
        Command::Fork(a) => fork::run(a, &g),
        Command::Label(a) => label::run(a, &g),
        Command::Completions(a) => completions::run(a, &g),
    };
    match result {
        Ok(false) => ExitCode::SUCCESS,
        Ok(true) => ExitCode::from(1),
        Err(e) => {
            eprintln!("session-scan: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The clap definition of the whole command line, for completions and the generated reference.
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}
