//! `session-scan dataset`: the sessions as Parquet tables for SQL engines (DuckDB, Polars, Spark).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use session_core::usage::Counting;
use session_scan::dataset::{Options, Partition};

/// `session-scan dataset`.
#[derive(clap::Args)]
pub struct DatasetArgs {
    /// The folder to write the tables into (new, empty, or written by this command before).
    #[arg(value_name = "OUT_DIR")]
    out: PathBuf,
    /// Sessions: files, folders, ids or id prefixes.
    ///
    /// Session files, folders of them, or session ids or id prefixes (default: Pi's whole store).
    #[arg(value_name = "SESSION")]
    sessions: Vec<String>,
    /// Put each message's text in messages.text.
    #[arg(long)]
    text: bool,
    /// With --text: hide keys, tokens, passwords and home folders, as export --redact does.
    #[arg(long, requires = "text")]
    redact: bool,
    /// Folders by the month each session began (UTC): month=YYYY-MM.
    #[arg(long, value_enum, default_value_t = Partition::None, value_name = "BY", hide_possible_values = true)]
    partition: Partition,
    /// Write under source=NAME/, so that several machines' datasets make one.
    #[arg(long, value_name = "NAME", value_parser = source_name)]
    source: Option<String>,
    /// Without a path, the Atomic fork's store; its session summaries' usage counts.
    #[arg(long)]
    atomic: bool,
}

/// A source name that is one folder name.
fn source_name(s: &str) -> Result<String, String> {
    if s.is_empty() || s.contains(['/', '\\', '=']) || s == "." || s == ".." {
        return Err(format!("{s:?}: a source is one folder name, without '/', '\\' or '='"));
    }
    Ok(s.to_owned())
}

/// Runs it: exit 1 when a session could not be read (the others are written).
pub fn run(a: &DatasetArgs, g: &super::Globals) -> anyhow::Result<bool> {
    let roots = super::sessions::paths(&a.sessions, a.atomic, super::sessions::WhenNone::Store)?;
    let files = session_scan::expand_paths(&roots);
    let opts = Options {
        text: a.text,
        redact: a.redact,
        source: a.source.clone(),
        partition: a.partition,
        strategy: g.strategy,
        local_zone: g.local_zone.clone(),
        counting: if a.atomic { Counting::WithAtomicSummaries } else { Counting::Pi },
    };
    let done = AtomicUsize::new(0);
    let finished = std::sync::atomic::AtomicBool::new(false);
    let summary = std::thread::scope(|s| {
        let bar = s.spawn(|| super::usage::progress_bar(files.len(), &done, &finished));
        let r = session_scan::dataset::write(&files, &a.out, &opts, &|| {
            done.fetch_add(1, Ordering::Relaxed);
        });
        finished.store(true, Ordering::Relaxed);
        let _ = bar.join();
        r
    })?;
    for why in &summary.errors {
        eprintln!("{why}");
    }
    let mut notes = super::per_file::Notes::default();
    for file_notes in &summary.notes {
        notes.take(file_notes, g.verbosity);
    }
    notes.sum_up(g.verbosity);
    if summary.unchanged {
        eprintln!(
            "session-scan: {} sessions, none changed since the dataset in {} was written: nothing to do",
            summary.files,
            a.out.display()
        );
        return Ok(false);
    }
    let rows: Vec<String> = summary
        .rows
        .iter()
        .map(|(table, n)| format!("{table} {}", session_scan::table::thousands(*n as f64)))
        .collect();
    let kept = summary.files - summary.rewritten;
    let kept = if kept > 0 { format!("; {kept} unchanged, their files kept") } else { String::new() };
    eprintln!(
        "session-scan: {} sessions into {} ({} Parquet files written: {}{kept})",
        summary.files - summary.errors.len(),
        a.out.display(),
        summary.parquet_files,
        rows.join(", ")
    );
    Ok(!summary.errors.is_empty())
}
