//! The commands that print one record per session file (`tree`, `stats`, `context`, `files`,
//! `grep`): files read in parallel, printed in the order given.

use std::io::Write;
use std::path::{Path, PathBuf};

use session_scan::render;
use session_scan::{ReadStrategy, expand_paths, read_file_into};

/// The files a per-file command reads, and whether it prints JSON.
pub struct FileArgs {
    /// The paths given (files, or folders searched for `*.jsonl`).
    pub files: Vec<PathBuf>,
    /// One JSON object per file per line.
    pub json: bool,
}

/// What one file produced: its stdout text and its diagnostics.
pub struct Outcome {
    pub stdout: Vec<u8>,
    /// What could not be done: always said.
    pub stderr: Vec<String>,
    /// Lines Pi skips or fails on, with their place: said as `--verbose` and `--quiet` say.
    pub notes: Vec<String>,
    pub failed: bool,
    /// `grep` found something here.
    pub found: bool,
    /// `stats`: the session's totals, for the total of a run.
    pub sum: Option<StatsSum>,
}

/// Totals of sessions added up (`stats` over several files).
#[derive(Default, Clone, Copy)]
pub struct StatsSum {
    pub sessions: u64,
    pub messages: u64,
    pub tool_calls: u64,
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub cost: f64,
}

impl StatsSum {
    fn add(&mut self, o: &StatsSum) {
        self.sessions += o.sessions;
        self.messages += o.messages;
        self.tool_calls += o.tool_calls;
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.cost += o.cost;
    }
}

impl Outcome {
    pub fn new() -> Outcome {
        Outcome { stdout: Vec::new(), stderr: Vec::new(), notes: Vec::new(), failed: false, found: false, sum: None }
    }

    /// Records that `file` could not be used: on stderr with its line and offset, and in place of
    /// the record when `json`.
    pub fn fail(&mut self, file: &str, json: bool, line: Option<u64>, offset: Option<u64>, msg: String) {
        self.stderr.push(render::error_text(file, line, offset, &msg));
        self.failed = true;
        if json {
            self.stdout.extend(render::error_json(file, line, offset, &msg).into_bytes());
            self.stdout.push(b'\n');
        }
    }

    /// Notes a line Pi skips or fails on, with its line and byte offset.
    pub fn note(&mut self, file: &str, line: u64, offset: u64, message: &str) {
        self.notes.push(format!("{file}:{line}: byte {offset}: {message}"));
    }
}

/// What the files went through: whether one failed, and whether one was found (for `grep`).
pub struct Totals {
    pub failed: bool,
    pub found: bool,
    /// The sessions' totals added up, in file order.
    pub sum: StatsSum,
}

/// Runs `each` over every file under `args.files`, in parallel, printing each outcome in the
/// order the files were given; memory holds a window of outputs, not the whole run's.
pub fn run_files<F>(args: &FileArgs, g: &super::Globals, each: F) -> anyhow::Result<Totals>
where
    F: Fn(&str, &[u8], bool) -> Outcome + Sync,
{
    let paths = expand_paths(&args.files);
    // A folder with no session file in it (a mistyped root, say) is said, not passed in silence.
    for dir in args.files.iter().filter(|a| a.is_dir()) {
        if !paths.iter().any(|p| p.starts_with(dir)) {
            eprintln!("{}: no *.jsonl session files under this folder", dir.display());
        }
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut totals = Totals { failed: false, found: false, sum: StatsSum::default() };
    let window = rayon::current_num_threads().max(1) * 8;
    let mut write_error = None;
    let mut notes = Notes::default();
    session_scan::in_order::map_ordered(
        &paths,
        window,
        |buf: &mut Vec<u8>, p| run_file_safely(p, g.strategy, args.json, buf, &each),
        |o| {
            for line in &o.stderr {
                eprintln!("{line}");
            }
            notes.take(&o.notes, g.verbosity);
            totals.failed |= o.failed;
            totals.found |= o.found;
            if let Some(sum) = &o.sum {
                totals.sum.add(sum);
            }
            match out.write_all(&o.stdout) {
                Ok(()) => true,
                Err(e) => {
                    write_error = Some(e);
                    false
                }
            }
        },
    );
    notes.sum_up(g.verbosity);
    let result = match write_error {
        Some(e) => Err(e),
        None => out.flush(),
    };
    match result {
        Ok(()) => Ok(totals),
        // A reader that stopped early (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            Ok(Totals { failed: false, found: true, sum: StatsSum::default() })
        }
        Err(e) => Err(e.into()),
    }
}

/// Runs one file; when a mapped file shrank under us, its output is thrown away and the file is
/// read again into memory, so that what is printed is a state the file really had.
fn run_file_safely<F>(path: &Path, strategy: ReadStrategy, json: bool, buf: &mut Vec<u8>, each: &F) -> Outcome
where
    F: Fn(&str, &[u8], bool) -> Outcome,
{
    let file = path.to_string_lossy().into_owned();
    let mut strategy = strategy;
    let mut note = None;
    loop {
        let map = match read_file_into(path, strategy, buf) {
            Ok((map, _)) => map,
            Err(e) => {
                let mut o = Outcome::new();
                o.fail(&file, json, None, None, format!("cannot read: {e}"));
                return o;
            }
        };
        let bytes: &[u8] = map.as_deref().unwrap_or(buf);
        let mut o = each(&file, bytes, json);
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

/// Loads a session for a per-file command, or records why it cannot be.
pub fn load<'b>(
    o: &mut Outcome,
    file: &str,
    bytes: &'b [u8],
    json: bool,
    local: &jiff::tz::TimeZone,
) -> Option<session_core::Session<'b>> {
    match session_scan::load_session(bytes, local) {
        Ok(s) => {
            for d in &s.diagnostics {
                o.note(file, d.line, d.offset, &d.message);
            }
            Some(s)
        }
        Err(e) => {
            let (line, offset) = e.place();
            o.fail(file, json, line, offset, e.reason());
            None
        }
    }
}

/// The lines Pi skips or fails on, counted over a run.
#[derive(Default)]
pub struct Notes {
    lines: usize,
    files: usize,
}

impl Notes {
    /// Takes one file's notes: each said with `--verbose`, else counted.
    pub fn take(&mut self, notes: &[String], verbosity: super::Verbosity) {
        if verbosity == super::Verbosity::Each {
            for note in notes {
                eprintln!("{note}");
            }
        }
        self.lines += notes.len();
        self.files += usize::from(!notes.is_empty());
    }

    /// One line summing the run's notes up, unless each was said or `--quiet` asks for silence.
    pub fn sum_up(&self, verbosity: super::Verbosity) {
        if verbosity == super::Verbosity::Summary && self.lines > 0 {
            let (lines, files) = (plural(self.lines, "line"), plural(self.files, "file"));
            eprintln!(
                "session-scan: {lines} in {files} skipped or set aside, as Pi skips them or fails on them (-v names each)"
            );
        }
    }
}

/// `1 line`, `2 lines`.
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") }
}
