//! `session-scan dataset`: a store as Parquet tables (`sessions`, `entries`, `messages`, `usage`,
//! `tool_calls`) for SQL engines, with usage and tool calls copied by forks and clones marked by the
//! rules of `usage` and `tools`, so that `WHERE NOT is_copy` gives those reports' totals.
//!
//! Files are read in rounds on all cores and their rows written in file order; every Parquet file
//! is written under a temporary name and renamed into place only when all are whole, so a reader
//! never sees half a file and a run that stops leaves the previous dataset as it was.

pub mod rows;
pub mod table;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use session_core::usage::Counting;

use rows::{FileRows, RowOptions};
use table::{Column, TableWriter};

/// The tables, with their columns, in the order they are written.
pub const TABLES: [(&str, &[Column]); 5] = [
    ("sessions", rows::SESSIONS),
    ("entries", rows::ENTRIES),
    ("messages", rows::MESSAGES),
    ("usage", rows::USAGE),
    ("tool_calls", rows::TOOL_CALLS),
];

/// The file that marks a folder as a dataset this command wrote: only such a folder (or an
/// empty or new one) is written into, and only its tables' part files are replaced.
pub const MARKER: &str = "_session_scan_dataset";

/// How the tables are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Partition {
    /// One folder per table.
    None,
    /// Hive-style folders by the month each session was created in (UTC): `month=2025-01/`.
    Month,
}

/// What to write.
#[derive(Debug, Clone)]
pub struct Options {
    /// Message texts in `messages.text`.
    pub text: bool,
    /// Texts redacted as `export --redact` redacts them.
    pub redact: bool,
    /// The machine or store the sessions come from: a `source=NAME/` partition level.
    pub source: Option<String>,
    /// Folders by month.
    pub partition: Partition,
    /// How files are read.
    pub strategy: crate::ReadStrategy,
    /// Which usage counts (Atomic's session summaries, or Pi's).
    pub counting: Counting,
    /// The zone a time without an offset is read in (Node reads them in the machine's).
    pub local_zone: jiff::tz::TimeZone,
}

/// What a run wrote.
#[derive(Debug, Default)]
pub struct Summary {
    /// Session files read.
    pub files: usize,
    /// Nothing had changed since the last run with the same options: nothing was written.
    pub unchanged: bool,
    /// Rows written, by table.
    pub rows: BTreeMap<&'static str, u64>,
    /// Parquet files written.
    pub parquet_files: usize,
    /// Files that could not be read, with why (place included).
    pub errors: Vec<String>,
    /// Lines Pi skips, one list per file that has some.
    pub notes: Vec<Vec<String>>,
}

/// Bytes of session files read per round (at least one file): their rows are held until the
/// round is written.
const BYTES_PER_ROUND: u64 = 4 << 20;

/// Rows buffered for row groups, in all tables and partitions, past which every table writes
/// what it holds: memory stays bounded whatever the store's size.
const BUFFERED_BYTES: usize = 8 << 20;

/// The files in rounds of about [`BYTES_PER_ROUND`], in order: (index of the first, the files).
fn rounds(files: &[PathBuf]) -> Vec<(usize, &[PathBuf])> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, f) in files.iter().enumerate() {
        bytes += std::fs::metadata(f).map_or(0, |m| m.len());
        if bytes >= BYTES_PER_ROUND || i + 1 == files.len() {
            out.push((start, &files[start..=i]));
            (start, bytes) = (i + 1, 0);
        }
    }
    out
}

/// Usage events that are copies: (file index, event index), found as `usage` finds them (within
/// families, oldest session first, the first of equal usages counted).
fn usage_copies(files: &[PathBuf], opts: &Options) -> HashSet<(usize, usize)> {
    let (strategy, counting) = (opts.strategy, opts.counting);
    let family = crate::usage::in_family(files);
    let members: Vec<usize> = (0..files.len()).filter(|&i| family[i]).collect();
    let mut read: Vec<(usize, f64, Vec<u64>)> = members
        .par_iter()
        .filter_map(|&i| {
            let mut buf = Vec::new();
            let (map, _) = crate::read::read_file_into(&files[i], strategy, &mut buf).ok()?;
            let bytes: &[u8] = map.as_deref().unwrap_or(&buf);
            let usage = session_core::usage::file_usage_counting(bytes, counting, &opts.local_zone).ok()?;
            Some((i, usage.created_ms, usage.events.iter().map(|e| e.identity).collect()))
        })
        .collect();
    read.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| files[a.0].cmp(&files[b.0])));
    let mut seen = HashSet::new();
    let mut copies = HashSet::new();
    for (i, _, identities) in read {
        for (k, id) in identities.into_iter().enumerate() {
            if !seen.insert(id) {
                copies.insert((i, k));
            }
        }
    }
    copies
}

/// The writers of one partition, one per table.
struct PartitionWriters {
    writers: Vec<TableWriter>,
}

/// Checks that `out` may be written: new, empty, or a dataset this command wrote.
fn claim(out: &Path) -> anyhow::Result<()> {
    if out.exists() {
        if !out.is_dir() {
            anyhow::bail!("{}: not a folder", out.display());
        }
        let empty = std::fs::read_dir(out)?.next().is_none();
        if !empty && !out.join(MARKER).exists() {
            anyhow::bail!(
                "{}: this folder holds files and no dataset written by session-scan ({MARKER}): name a new or empty folder",
                out.display()
            );
        }
    }
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join(MARKER), format!("session-scan dataset, schema version {}\n", table::SCHEMA_VERSION))?;
    Ok(())
}

/// The file, beside a dataset's tables, that names what the last whole run read: a fingerprint of
/// its options and of every session file's path, size and modification time, then its part files.
const INPUTS: &str = "_session_scan_inputs";

/// The fingerprint of a run: its options, and each file's path, size and modification time.
fn fingerprint(files: &[PathBuf], opts: &Options) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (table::SCHEMA_VERSION, opts.text, opts.redact, opts.partition == Partition::Month, &opts.source).hash(&mut h);
    (opts.counting == Counting::Pi).hash(&mut h);
    for f in files {
        f.hash(&mut h);
        match std::fs::metadata(f) {
            Ok(m) => {
                m.len().hash(&mut h);
                m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).hash(&mut h);
            }
            Err(_) => u64::MAX.hash(&mut h),
        }
    }
    format!("{:016x}", h.finish())
}

/// Whether the dataset under `base` was written whole from these very inputs, all its part files
/// still there.
fn current(base: &Path, fingerprint: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(base.join(INPUTS)) else { return false };
    let mut lines = text.lines();
    lines.next() == Some(&format!("inputs {fingerprint}")[..]) && lines.all(|part| base.join(part).is_file())
}

/// Writes the tables of `files` under `out`; `progress` is told of each file read. When the last
/// run wrote them from the same files, unchanged, with the same options, nothing is written.
pub fn write(files: &[PathBuf], out: &Path, opts: &Options, progress: &(dyn Fn() + Sync)) -> anyhow::Result<Summary> {
    claim(out)?;
    let base = match &opts.source {
        Some(name) => out.join(format!("source={name}")),
        None => out.to_path_buf(),
    };
    let inputs = fingerprint(files, opts);
    if current(&base, &inputs) {
        return Ok(Summary { files: files.len(), unchanged: true, ..Summary::default() });
    }
    // Until this run is whole, the folder does not claim to hold any run's tables.
    let _ = std::fs::remove_file(base.join(INPUTS));
    let copies = usage_copies(files, opts);
    let redactor = opts.redact.then(crate::redact::Redactor::new);
    let row_options = RowOptions {
        text: opts.text,
        redactor: redactor.as_ref(),
        counting: opts.counting,
        local_zone: &opts.local_zone,
    };
    let mut partitions: HashMap<Option<String>, PartitionWriters> = HashMap::new();
    let mut calls_seen: ahash::AHashSet<String> = ahash::AHashSet::new();
    let mut summary = Summary { files: files.len(), ..Summary::default() };
    for (first, paths) in rounds(files) {
        let read: Vec<Result<FileRows, String>> = paths
            .par_iter()
            .map(|path| {
                progress();
                let name = path.to_string_lossy();
                crate::read::with_thread_buffer(|buf| {
                    let (map, mtime) = crate::read::read_file_into(path, opts.strategy, buf)
                        .map_err(|e| crate::render::error_text(&name, None, None, &format!("cannot read: {e}")))?;
                    let bytes: &[u8] = map.as_deref().unwrap_or(buf);
                    rows::file_rows(&name, bytes, mtime, row_options)
                })
            })
            .collect();
        for (k, rows) in read.into_iter().enumerate() {
            let file_index = first + k;
            let mut rows = match rows {
                Ok(rows) => rows,
                Err(why) => {
                    summary.errors.push(why);
                    continue;
                }
            };
            if !rows.notes.is_empty() {
                summary.notes.push(std::mem::take(&mut rows.notes));
            }
            let key = match opts.partition {
                Partition::None => None,
                Partition::Month => Some(rows.month.clone().unwrap_or_else(|| "unknown".to_owned())),
            };
            let part = match partitions.entry(key.clone()) {
                std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => {
                    let mut writers = Vec::new();
                    for (name, columns) in TABLES {
                        let mut folder = base.join(name);
                        if let Some(month) = &key {
                            folder = folder.join(format!("month={month}"));
                        }
                        writers.push(TableWriter::new(name, columns, folder)?);
                    }
                    v.insert(PartitionWriters { writers })
                }
            };
            let w = &mut part.writers;
            w[0].push(rows.session)?;
            for r in rows.entries {
                w[1].push(r)?;
            }
            for r in rows.messages {
                w[2].push(r)?;
            }
            for (n, mut r) in rows.usage.into_iter().enumerate() {
                r.cells[rows::USAGE_IS_COPY] = table::Cell::Bool(copies.contains(&(file_index, n)));
                w[3].push(r.cells)?;
            }
            for mut r in rows.tool_calls {
                // A call id met in an earlier file is a copy, as `tools` counts them.
                let copy = !r.call_id.is_empty() && !calls_seen.insert(r.call_id);
                r.cells[rows::CALL_IS_COPY] = table::Cell::Bool(copy);
                w[4].push(r.cells)?;
            }
            let buffered: usize = partitions.values().flat_map(|p| &p.writers).map(|w| w.buffered_bytes).sum();
            if buffered > BUFFERED_BYTES {
                for w in partitions.values_mut().flat_map(|p| &mut p.writers) {
                    w.flush()?;
                }
            }
        }
    }
    // Every table has its folder, even with no rows, so that engines find it.
    for (name, _) in TABLES {
        std::fs::create_dir_all(base.join(name))?;
    }
    let mut renames = Vec::new();
    for (_, part) in partitions {
        for writer in part.writers {
            let name = writer.name();
            *summary.rows.entry(name).or_default() += writer.row_count;
            renames.extend(writer.finish()?);
        }
    }
    for (name, _) in TABLES {
        summary.rows.entry(name).or_default();
    }
    // Whole files first, then into place; then what the previous run wrote and this one did not.
    let kept: HashSet<PathBuf> = renames.iter().map(|(_, to)| to.clone()).collect();
    for (from, to) in &renames {
        std::fs::rename(from, to)?;
    }
    summary.parquet_files = renames.len();
    for (name, _) in TABLES {
        remove_stale(&base.join(name), &kept)?;
    }
    if summary.errors.is_empty() {
        let mut text = format!("inputs {inputs}\n");
        for (_, to) in &renames {
            text.push_str(&format!("{}\n", to.strip_prefix(&base).unwrap_or(to).display()));
        }
        let temporary = base.join(format!(".{INPUTS}.tmp"));
        std::fs::write(&temporary, text)?;
        std::fs::rename(&temporary, base.join(INPUTS))?;
    }
    Ok(summary)
}

/// Removes the part files under `folder` that this run did not write (and folders left empty).
fn remove_stale(folder: &Path, kept: &HashSet<PathBuf>) -> anyhow::Result<()> {
    let Ok(list) = std::fs::read_dir(folder) else { return Ok(()) };
    for e in list.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type()?.is_dir() {
            remove_stale(&path, kept)?;
            if std::fs::read_dir(&path)?.next().is_none() {
                std::fs::remove_dir(&path)?;
            }
        } else if (name.starts_with("part-") && name.ends_with(".parquet") && !kept.contains(&path))
            || (name.starts_with(".part-") && name.ends_with(".tmp"))
        {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}
