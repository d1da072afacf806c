//! The `session-scan` command line: its options, its commands and the one dispatch between them.
//!
//! Each command has a file of its own here, holding its arguments and its `run`, which returns
//! `Ok(false)` for success (exit 0), `Ok(true)` when something was not found or a file could not
//! be used (exit 1), and an error for a request that cannot be carried out (exit 2).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod completions;
mod context;
mod export;
mod files;
mod filters;
mod grep;
mod list;
mod per_file;
#[cfg(test)]
mod reference;
mod resolve;
mod search;
mod sessions;
mod stats;
mod tools;
mod tree;
mod usage;

/// The command line.
#[derive(Parser)]
#[command(name = "session-scan", version, about = "Fast, exact reader of Pi coding-agent session files")]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Worker threads (default: all cores).
    #[arg(long, global = true)]
    threads: Option<usize>,
    /// Map large files instead of reading them (the default: in a pass over lines, files of 8 MiB
    /// or more, 64 MiB among many, and the rest of a file from a line of 1 MiB; a file that shrinks
    /// while mapped is detected and read again).
    #[arg(long, global = true, overrides_with = "no_mmap")]
    mmap: bool,
    /// Read every file into memory; never map.
    #[arg(long, global = true)]
    no_mmap: bool,
}

#[derive(Subcommand)]
enum Command {
    /// The entry tree of each session (getTree()).
    Tree(tree::TreeArgs),
    /// Session totals and cost breakdown (getSessionStats(), getUsageCostBreakdown()).
    Stats(stats::StatsArgs),
    /// The context the model sees from the leaf (buildSessionContext()).
    Context(context::ContextArgs),
    /// List sessions as Pi's session picker does (listAll() / list()).
    List(list::ListArgs),
    /// Find sessions as Pi's picker search does: words, "phrases" or re:PATTERN, best first.
    Search(search::SearchArgs),
    /// Tokens and cost by hour, day, week, month, session, project or model; fork copies counted once.
    Usage(usage::UsageArgs),
    /// The session file `pi --session ARG` or `pi -c` would open (resolveSessionPath, continueRecent).
    Resolve(resolve::ResolveArgs),
    /// One session's branch as Markdown, for reading or sharing; --redact hides secrets.
    Export(export::ExportArgs),
    /// The files each session read and changed, as Pi's compaction lists them (readFiles,
    /// modifiedFiles).
    Files(files::FilesArgs),
    /// A text or pattern in every text of the sessions (messages, thinking, tool calls' arguments,
    /// tool output, shell commands, summaries), all branches, with the entry, line and offset.
    Grep(grep::GrepArgs),
    /// Every tool's calls, failures, calls left without a result and durations, across sessions;
    /// fork copies counted once.
    Tools(tools::ToolsArgs),
    /// A completion script for a shell, on stdout.
    ///
    /// For example: `session-scan completions bash >
    /// ~/.local/share/bash-completion/completions/session-scan`.
    Completions(completions::CompletionsArgs),
}

/// Parses the arguments, sets up the process and runs the command.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // `Date.parse` takes a time without an offset in the machine's zone (`TZ` first), as Node does;
    // it is read only if such a time is met.
    session_core::jsdate::set_local_zone(jiff::tz::TimeZone::system);
    if cli.no_mmap && !cli.mmap {
        session_scan::read::set_default_strategy(session_scan::ReadStrategy::Buffered);
    }
    if let Some(n) = cli.threads
        && let Err(e) = rayon::ThreadPoolBuilder::new().num_threads(n).build_global()
    {
        eprintln!("session-scan: {e}");
        return ExitCode::from(2);
    }
    let result = match &cli.command {
        Command::Tree(a) => tree::run(a),
        Command::Stats(a) => stats::run(a),
        Command::Context(a) => context::run(a),
        Command::List(a) => list::run(a),
        Command::Search(a) => search::run(a),
        Command::Usage(a) => usage::run(a),
        Command::Resolve(a) => resolve::run(a),
        Command::Export(a) => export::run(a),
        Command::Files(a) => files::run(a),
        Command::Grep(a) => grep::run(a),
        Command::Tools(a) => tools::run(a),
        Command::Completions(a) => completions::run(a),
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
