//! The `session-scan` command line: trees, totals, context, listing, search, usage, lookups, exports and
//! file lists of Pi session files.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod export_cmd;
mod filters;
mod list_cmd;
mod resolve_cmd;
mod tools_cmd;
mod usage_cmd;
use session_core::json::{JsStr, Value, write_json};
use session_scan::report;
use session_scan::{ReadStrategy, expand_paths, read_file_into};

#[derive(Parser)]
#[command(name = "session-scan", version, about = "Fast, exact reader of Pi coding-agent session files")]
struct Cli {
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
    Tree(FileArgs),
    /// Session totals and cost breakdown (getSessionStats(), getUsageCostBreakdown()).
    Stats(FileArgs),
    /// The context the model sees from the leaf (buildSessionContext()).
    Context(ContextArgs),
    /// List sessions as Pi's session picker does (listAll() / list()).
    List(list_cmd::ListArgs),
    /// Find sessions as Pi's picker search does: words, "phrases" or re:PATTERN, best first.
    Search(list_cmd::SearchArgs),
    /// Tokens and cost by hour, day, week, month, session, project or model; fork copies counted once.
    Usage(usage_cmd::UsageArgs),
    /// The session file `pi --session ARG` or `pi -c` would open (resolveSessionPath, continueRecent).
    Resolve(resolve_cmd::ResolveArgs),
    /// One session's branch as Markdown, for reading or sharing; --redact hides secrets.
    Export(export_cmd::ExportArgs),
    /// The files each session read and changed, as Pi's compaction lists them (readFiles,
    /// modifiedFiles).
    Files(FilesArgs),
    /// A text or pattern in every text of the sessions (messages, thinking, tool calls' arguments,
    /// tool output, shell commands, summaries), all branches, with the entry, line and offset.
    Grep(GrepArgs),
    /// Every tool's calls, failures, calls left without a result and durations, across sessions;
    /// fork copies counted once.
    Tools(tools_cmd::ToolsArgs),
    /// A completion script for a shell, on stdout.
    ///
    /// For example: `session-scan completions bash >
    /// ~/.local/share/bash-completion/completions/session-scan`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

#[derive(clap::Args)]
struct ContextArgs {
    #[command(flatten)]
    files: FileArgs,
    /// Rebuild from this entry instead of the session's leaf.
    #[arg(long)]
    leaf: Option<String>,
    /// Whose rules: Pi 1.6, the Atomic fork, or pi-agent-core's harness (generation A for v3
    /// lines; generation C for `{"v":4,"kind":"header"}` files).
    #[arg(long, value_enum, default_value_t = DialectArg::Pi)]
    dialect: DialectArg,
    /// Harness generation C: the branch whose tip to start from.
    #[arg(long, default_value = "main")]
    branch: String,
    /// `context`: the session messages; `llm`: after Pi's convertToLlm.
    #[arg(long, value_enum, default_value_t = FormatArg::Context)]
    format: FormatArg,
}

#[derive(clap::Args)]
struct FilesArgs {
    /// Session files, or folders searched for *.jsonl (default: Pi's session store).
    files: Vec<PathBuf>,
    /// Only paths that contain this text, and only the sessions that have one.
    #[arg(long, value_name = "TEXT")]
    path: Option<String>,
    /// One JSON object per session per line: {"file","sessionId","cwd"?,"readFiles","modifiedFiles"}.
    #[arg(long)]
    json: bool,
    /// Without a path, the Atomic fork's store (`~/.atomic/agent/sessions`, its variables and
    /// settings).
    #[arg(long)]
    atomic: bool,
}

#[derive(clap::Args)]
struct GrepArgs {
    /// The text to find (as it is; with --regex a regular expression).
    pattern: String,
    /// Session files, or folders searched for *.jsonl (default: Pi's session store).
    files: Vec<PathBuf>,
    /// A regular expression (the `regex` crate's syntax: Perl-like, Unicode, no look-around).
    #[arg(long, short = 'E')]
    regex: bool,
    /// Match in any case.
    #[arg(long, short = 'i')]
    ignore_case: bool,
    /// Only these kinds of text, comma-separated: user, assistant, thinking, tool-call (the
    /// strings of a call's arguments), tool-result, bash (`!` commands and their output), summary,
    /// custom.
    #[arg(long = "in", value_name = "KINDS", value_delimiter = ',')]
    kinds: Vec<String>,
    /// At most N matches per session.
    #[arg(long, short = 'm', value_name = "N")]
    max_count: Option<usize>,
    /// Only the sessions with a match, and how many.
    #[arg(long, short = 'l')]
    files_with_matches: bool,
    /// One JSON object per match: {"file","sessionId","line","offset","id","kind","tool"?,"match","text"}
    /// (with -l, {"file","sessionId","matches"}).
    #[arg(long)]
    json: bool,
    /// Without a path, the Atomic fork's store.
    #[arg(long)]
    atomic: bool,
    /// Sessions and days: entries of those days (by their timestamp).
    #[command(flatten)]
    filter: filters::SessionFilter,
}

/// A grep run: its compiled search and how it prints.
struct GrepRun<'a> {
    args: &'a GrepArgs,
    grep: session_scan::grep::Grep,
    color: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum DialectArg {
    Pi,
    Atomic,
    Harness,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FormatArg {
    Context,
    Llm,
}

#[derive(clap::Args)]
struct FileArgs {
    /// Session files, or folders searched for *.jsonl.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// One JSON object per file per line.
    #[arg(long)]
    json: bool,
}

/// What one file produced: its stdout text and its diagnostics.
struct Outcome {
    stdout: Vec<u8>,
    stderr: Vec<String>,
    failed: bool,
    /// `grep` found something here.
    found: bool,
}

impl Outcome {
    /// Records that `file` could not be used: on stderr with its line and offset, and in place of
    /// the record when `json`.
    fn fail(&mut self, file: &str, json: bool, line: Option<u64>, offset: Option<u64>, msg: String) {
        self.stderr.push(session_scan::report::error_text(file, line, offset, &msg));
        self.failed = true;
        if json {
            self.stdout.extend(error_record(file, line, offset, &msg));
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `Date.parse` takes a time without an offset in the machine's zone (`TZ` first), as Node does;
    // it is read only if such a time is met.
    session_core::jsdate::set_local_zone(jiff::tz::TimeZone::system);
    if cli.no_mmap && !cli.mmap {
        session_scan::read::set_default_strategy(ReadStrategy::Buffered);
    }
    if let Some(n) = cli.threads
        && let Err(e) = rayon::ThreadPoolBuilder::new().num_threads(n).build_global()
    {
        eprintln!("session-scan: {e}");
        return ExitCode::from(2);
    }
    if let Command::Completions { shell } = &cli.command {
        use clap::CommandFactory;
        clap_complete::generate(*shell, &mut Cli::command(), "session-scan", &mut std::io::stdout());
        return ExitCode::SUCCESS;
    }
    let own_command = match &cli.command {
        Command::List(a) => Some(list_cmd::run(a)),
        Command::Search(a) => Some(list_cmd::search(a)),
        Command::Usage(a) => Some(usage_cmd::run(a)),
        Command::Resolve(a) => Some(resolve_cmd::run(a)),
        Command::Export(a) => Some(export_cmd::run(a)),
        Command::Tools(a) => Some(tools_cmd::run(a)),
        _ => None,
    };
    if let Some(result) = own_command {
        return match result {
            Ok(false) => ExitCode::SUCCESS,
            Ok(true) => ExitCode::from(1),
            Err(e) => {
                eprintln!("session-scan: {e}");
                ExitCode::from(2)
            }
        };
    }
    let files_args;
    let grep_run;
    let (args, which) = match &cli.command {
        Command::Grep(g) => {
            let mut kinds = Vec::new();
            for name in &g.kinds {
                match session_core::pieces::Kind::from_name(name.trim()) {
                    Some(k) => kinds.push(k),
                    None => {
                        let names: Vec<&str> = session_core::pieces::Kind::ALL.iter().map(|k| k.name()).collect();
                        eprintln!(
                            "session-scan: --in: no kind of text is named {name:?} (kinds: {})",
                            names.join(", ")
                        );
                        return ExitCode::from(2);
                    }
                }
            }
            let days = match g.filter.days() {
                Ok(days) => days,
                Err(e) => {
                    eprintln!("session-scan: {e}");
                    return ExitCode::from(2);
                }
            };
            let grep = match session_scan::grep::Grep::new(&g.pattern, g.regex, g.ignore_case, &kinds) {
                Ok(grep) => grep.on_days(days),
                Err(e) => {
                    eprintln!("session-scan: not a regular expression: {e}");
                    return ExitCode::from(2);
                }
            };
            grep_run = GrepRun { args: g, grep, color: session_scan::report::stdout_color() };
            let files =
                if g.files.is_empty() { vec![session_scan::list::store_here(g.atomic)] } else { g.files.clone() };
            files_args = FileArgs { files, json: g.json };
            (&files_args, Which::Grep(&grep_run))
        }
        Command::Files(f) => {
            // Without a path, Pi's store (its session-dir override first), as `usage` reads it.
            let files =
                if f.files.is_empty() { vec![session_scan::list::store_here(f.atomic)] } else { f.files.clone() };
            files_args = FileArgs { files, json: f.json };
            (&files_args, Which::Files(f))
        }
        Command::Tree(a) => (a, Which::Tree),
        Command::Stats(a) => (a, Which::Stats),
        Command::Context(c) => (&c.files, Which::Context(c)),
        Command::List(_)
        | Command::Search(_)
        | Command::Usage(_)
        | Command::Resolve(_)
        | Command::Export(_)
        | Command::Tools(_)
        | Command::Completions { .. } => return ExitCode::from(2),
    };
    let paths = expand_paths(&args.files);
    // A folder with no session file in it (a mistyped root, say) is said, not passed in silence.
    for dir in args.files.iter().filter(|a| a.is_dir()) {
        if !paths.iter().any(|p| p.starts_with(dir)) {
            eprintln!("{}: no *.jsonl session files under this folder", dir.display());
        }
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut failed = false;
    let mut found = false;
    // Files are read in parallel and printed in order as each is ready; memory holds a window
    // of outputs, not the whole run's.
    let window = rayon::current_num_threads().max(1) * 8;
    let mut status = None;
    session_scan::ordered::map_ordered(
        &paths,
        window,
        |buf: &mut Vec<u8>, p| run_file_safely(p, which, args.json, buf),
        |o| {
            for line in &o.stderr {
                eprintln!("{line}");
            }
            failed |= o.failed;
            found |= o.found;
            match out.write_all(&o.stdout) {
                Ok(()) => true,
                Err(e) => {
                    status = Some(if e.kind() == std::io::ErrorKind::BrokenPipe {
                        ExitCode::SUCCESS
                    } else {
                        eprintln!("session-scan: {e}");
                        ExitCode::from(2)
                    });
                    false
                }
            }
        },
    );
    if let Some(status) = status {
        return status;
    }
    if out.flush().is_err() {
        return ExitCode::SUCCESS;
    }
    // grep, as grep does: nothing found is exit 1 too.
    let none_found = matches!(which, Which::Grep(_)) && !found;
    if failed || none_found { ExitCode::from(1) } else { ExitCode::SUCCESS }
}

#[derive(Clone, Copy)]
enum Which<'c> {
    Files(&'c FilesArgs),
    Grep(&'c GrepRun<'c>),
    Tree,
    Stats,
    Context(&'c ContextArgs),
}

fn error_record(file: &str, line: Option<u64>, offset: Option<u64>, message: &str) -> Vec<u8> {
    let mut buf = report::error_json(file, line, offset, message).into_bytes();
    buf.push(b'\n');
    buf
}

/// Runs one file; when a mapped file shrank under us, its output is thrown away and the file is
/// read again into memory, so that what is printed is a state the file really had.
fn run_file_safely(path: &std::path::Path, which: Which<'_>, json: bool, buf: &mut Vec<u8>) -> Outcome {
    let file = path.to_string_lossy().into_owned();
    let mut strategy = session_scan::read::default_strategy();
    let mut note = None;
    loop {
        let map = match read_file_into(path, strategy, buf) {
            Ok((map, _)) => map,
            Err(e) => {
                let mut o = Outcome { stdout: Vec::new(), stderr: Vec::new(), failed: false, found: false };
                o.fail(&file, json, None, None, format!("cannot read: {e}"));
                return o;
            }
        };
        let bytes: &[u8] = map.as_deref().unwrap_or(buf);
        let mut o = run_file(&file, bytes, which, json);
        if map.as_ref().is_some_and(|m| m.truncated()) && strategy != ReadStrategy::Buffered {
            note = Some(format!("{file}: the file shrank while it was mapped: read it again"));
            strategy = ReadStrategy::Buffered;
            continue;
        }
        if let Some(note) = note {
            o.stderr.insert(0, note);
        }
        return o;
    }
}

/// The context messages to print: as rebuilt, or after `convertToLlm`.
fn chosen_messages<'m, 'b>(
    format: FormatArg,
    messages: &'m [session_core::context::Message<'b>],
    arena: &'b bumpalo::Bump,
) -> std::borrow::Cow<'m, [session_core::context::Message<'b>]> {
    match format {
        FormatArg::Llm => std::borrow::Cow::Owned(session_core::context::convert_to_llm(messages, arena)),
        FormatArg::Context => std::borrow::Cow::Borrowed(messages),
    }
}

/// The readable transcript of context messages.
fn push_transcript<'b>(
    o: &mut Outcome,
    file: &str,
    messages: &[session_core::context::Message<'b>],
    arena: &'b bumpalo::Bump,
) {
    let values: Vec<Value<'_>> = messages.iter().map(|m| m.to_value(arena)).collect();
    o.stdout.extend(report::context_text(file, &values).into_bytes());
}

fn run_file(file: &str, bytes: &[u8], which: Which<'_>, json: bool) -> Outcome {
    let mut o = Outcome { stdout: Vec::new(), stderr: Vec::new(), failed: false, found: false };
    if let Which::Context(c) = which
        && c.dialect == DialectArg::Harness
        && session_core::harness4::is_format4(bytes)
    {
        let arena = bumpalo::Bump::new();
        let built = session_core::harness4::load_format4(bytes, &arena)
            .and_then(|f| session_core::harness4::build_context4(&f, &c.branch).map(|ctx| (f, ctx)));
        match built {
            Ok((f, ctx)) => {
                let messages = chosen_messages(c.format, &ctx.messages, &arena);
                if json {
                    report::write_format4_record(&mut o.stdout, file, &f, &ctx, &c.branch, &messages);
                } else {
                    push_transcript(&mut o, file, &messages, &arena);
                }
            }
            Err(e) => o.fail(file, json, e.line, e.offset, e.reason),
        }
        return o;
    }
    let session = match session_scan::load_session(bytes) {
        Ok(s) => s,
        Err(e) => {
            let (line, offset) = e.place();
            o.fail(file, json, line, offset, e.reason());
            return o;
        }
    };
    for d in &session.diagnostics {
        o.stderr.push(format!("{file}:{}: byte {}: {}", d.line, d.offset, d.message));
    }
    match which {
        Which::Grep(g) => {
            if !session_scan::in_project(&session, g.args.filter.project.as_deref()) {
                // Another project's session: not searched, nothing said of it.
                o.stderr.clear();
                return o;
            }
            let max = if g.args.files_with_matches { None } else { g.args.max_count };
            let hits = g.grep.session_hits(&session, max);
            o.found = !hits.is_empty();
            report::write_grep_hits(&mut o.stdout, file, &session, &hits, g.args.files_with_matches, json, g.color);
        }
        Which::Files(f) => {
            let (lists, diagnostics) = session_core::files::file_lists(&session);
            for d in &diagnostics {
                o.stderr.push(format!("{file}:{}: byte {}: {}", d.line, d.offset, d.message));
            }
            report::write_file_lists(&mut o.stdout, file, &session, &lists, f.path.as_deref(), json);
        }
        Which::Tree => {
            let tree = session.tree();
            let notes = if json {
                let (rec, notes) = report::tree_record(file, &session, &tree);
                write_json(&rec, &mut o.stdout);
                o.stdout.push(b'\n');
                notes
            } else {
                let (text, notes) = report::tree_text(file, &session, &tree);
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
                o.stderr.push(format!("{file}: tree listing stopped at {} nodes", report::MAX_TREE_NODES));
            }
        }
        Which::Context(c) => {
            use session_core::context::{Dialect, LeafChoice, build_context};
            let dialect = match c.dialect {
                DialectArg::Pi => Dialect::Pi,
                DialectArg::Atomic => Dialect::Atomic,
                DialectArg::Harness => Dialect::Harness,
            };
            let leaf_field;
            let (choice, leaf, branch) = match &c.leaf {
                None => (LeafChoice::Session, session.leaf_id(), session.branch(None).path),
                Some(id) => {
                    leaf_field = session_core::Field::Str(JsStr::owned(id.clone()));
                    (
                        LeafChoice::Id(JsStr::owned(id.clone())),
                        Some(&leaf_field),
                        session.branch(Some(&leaf_field)).path,
                    )
                }
            };
            let arena = bumpalo::Bump::new();
            let ctx = build_context(&session, &choice, dialect, &arena);
            for d in &ctx.diagnostics {
                o.stderr.push(format!("{file}:{}: byte {}: {}", d.line, d.offset, d.message));
            }
            if let Some((line, offset)) = session.name_that_throws() {
                o.stderr.push(format!(
                    "{file}:{line}: byte {offset}: session name that is not a string (Pi 1.6's getSessionName() throws \
                     here): no name"
                ));
            }
            let messages = chosen_messages(c.format, &ctx.messages, &arena);
            if json {
                o.stdout.reserve(bytes.len().min(256 << 20));
                report::write_context_record(&mut o.stdout, file, &session, leaf, &branch, &ctx, &messages);
            } else {
                push_transcript(&mut o, file, &messages, &arena);
            }
        }
        Which::Stats => {
            let totals = session_core::stats::session_totals(&session);
            for d in &totals.diagnostics {
                o.stderr.push(format!("{file}:{}: byte {}: {}", d.line, d.offset, d.message));
            }
            // Beyond Pi: what the active branch spent (the rest went to branches it left).
            let branch = session.branch(None);
            let branch_totals = session_core::stats::branch_totals(&session, &branch.path);
            if json {
                let mut record = report::stats_record(file, &session, &totals);
                if let Value::Object(o) = &mut record {
                    o.insert(
                        "activeBranch",
                        report::branch_record(&branch_totals, session.leaf_id(), branch.path.len()),
                    );
                }
                write_json(&record, &mut o.stdout);
                o.stdout.push(b'\n');
            } else {
                o.stdout.extend(report::stats_text(file, &session, &totals, Some(&branch_totals)).into_bytes());
            }
        }
    }
    o
}
