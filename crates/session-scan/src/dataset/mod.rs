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
    /// Session files whose rows were written again (the others' part files were kept).
    pub rewritten: usize,
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
fn usage_copies(files: &[PathBuf], opts: &Options, known: &[Option<CopyKeys>]) -> HashSet<(usize, usize)> {
    let (strategy, counting) = (opts.strategy, opts.counting);
    let family = crate::usage::in_family(files);
    let members: Vec<usize> = (0..files.len()).filter(|&i| family[i]).collect();
    let mut read: Vec<(usize, f64, Vec<u64>)> = members
        .par_iter()
        .filter_map(|&i| {
            if let Some(k) = &known[i] {
                return Some((i, k.created_ms, k.identities.clone()));
            }
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

/// The file, beside a dataset's tables, that says what the last whole run read: a fingerprint of
/// its options, then for each group of sessions (one folder's sessions of one month, by file name)
/// a fingerprint of its files (paths, sizes, times), one of its rows' copy marks, its part files, and
/// what the copy rules need of its sessions (their time, usage identities and tool call ids).
const INPUTS: &str = "_session_scan_inputs";

fn hash_of(value: impl std::hash::Hash) -> u64 {
    ahash::RandomState::with_seeds(0x5e55_1011, 0xda7a, 0x5e7, 0x1ab1e).hash_one(value)
}

/// The options a dataset was written with.
fn options_key(opts: &Options) -> u64 {
    hash_of((
        table::SCHEMA_VERSION,
        opts.text,
        opts.redact,
        opts.partition == Partition::Month,
        &opts.source,
        opts.counting == Counting::Pi,
    ))
}

/// The group a session file belongs to: its folder, and the month its name starts with.
fn group_key(path: &Path) -> (String, String) {
    let folder = path.parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let b = name.as_bytes();
    let month =
        b.len() >= 7 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[5..7].iter().all(u8::is_ascii_digit);
    (folder, if month { name[..7].to_owned() } else { "other".into() })
}

/// What the copy rules need of one session: its time, its usage identities, its tool call ids
/// (hashed; `None` for an empty id, never a copy).
#[derive(Debug, Clone, Default)]
struct CopyKeys {
    created_ms: f64,
    identities: Vec<u64>,
    calls: Vec<Option<u64>>,
}

/// One group's record in [`INPUTS`].
#[derive(Debug, Clone, Default)]
struct GroupRecord {
    files: u64,
    marks: u64,
    parts: Vec<String>,
    keys: Vec<CopyKeys>,
}

/// The previous run's record, when it was written with the same options.
fn previous_run(base: &Path, options: u64) -> HashMap<String, GroupRecord> {
    let mut groups = HashMap::new();
    let Ok(text) = std::fs::read_to_string(base.join(INPUTS)) else { return groups };
    let mut lines = text.lines();
    if lines.next() != Some(&format!("options {options:016x}")[..]) {
        return groups;
    }
    let hex = |s: &str| u64::from_str_radix(s, 16).ok();
    let list = |s: &str| -> Option<Vec<Option<u64>>> {
        if s == "." {
            return Some(Vec::new());
        }
        s.split(',').map(|x| if x == "-" { Some(None) } else { hex(x).map(Some) }).collect()
    };
    let mut current: Option<(String, GroupRecord)> = None;
    for line in lines {
        let mut words = line.split(' ');
        match (words.next(), current.as_mut()) {
            (Some("group"), _) => {
                if let Some((id, g)) = current.take() {
                    groups.insert(id, g);
                }
                let (Some(id), Some(files), Some(marks)) =
                    (words.next(), words.next().and_then(hex), words.next().and_then(hex))
                else {
                    return HashMap::new();
                };
                current = Some((id.to_owned(), GroupRecord { files, marks, ..GroupRecord::default() }));
            }
            (Some("part"), Some((_, g))) => g.parts.push(line["part ".len()..].to_owned()),
            (Some("file"), Some((_, g))) => {
                let (Some(created), Some(ids), Some(calls)) =
                    (words.next().and_then(hex), words.next().and_then(list), words.next().and_then(list))
                else {
                    return HashMap::new();
                };
                let identities = ids.into_iter().flatten().collect();
                g.keys.push(CopyKeys { created_ms: f64::from_bits(created), identities, calls });
            }
            _ => return HashMap::new(),
        }
    }
    if let Some((id, g)) = current.take() {
        groups.insert(id, g);
    }
    groups
}

fn record_text(options: u64, groups: &[(String, GroupRecord)]) -> String {
    let list = |v: &mut dyn Iterator<Item = Option<u64>>| {
        let items: Vec<String> = v.map(|x| x.map_or_else(|| "-".to_owned(), |x| format!("{x:x}"))).collect();
        if items.is_empty() { ".".to_owned() } else { items.join(",") }
    };
    let mut text = format!("options {options:016x}\n");
    for (id, g) in groups {
        text.push_str(&format!("group {id} {:x} {:x}\n", g.files, g.marks));
        for p in &g.parts {
            text.push_str(&format!("part {p}\n"));
        }
        for k in &g.keys {
            let ids = list(&mut k.identities.iter().map(|&i| Some(i)));
            let calls = list(&mut k.calls.iter().copied());
            text.push_str(&format!("file {:x} {ids} {calls}\n", k.created_ms.to_bits()));
        }
    }
    text
}

/// The fingerprint of a group's files: paths, sizes, modification times.
fn files_key(files: &[PathBuf]) -> u64 {
    /// A file's size and modification time, when it can be read.
    type Stat = Option<(u64, Option<std::time::Duration>)>;
    let stats: Vec<(&PathBuf, Stat)> = files
        .iter()
        .map(|f| {
            let m = std::fs::metadata(f).ok();
            (f, m.map(|m| (m.len(), m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()))))
        })
        .collect();
    hash_of(stats)
}

/// Writes the tables of `files` under `out`; `progress` is told of each file read. A group of
/// sessions whose files and copy marks are as the last run left them keeps its part files; the
/// others are written again. With nothing changed, nothing is written.
pub fn write(files: &[PathBuf], out: &Path, opts: &Options, progress: &(dyn Fn() + Sync)) -> anyhow::Result<Summary> {
    claim(out)?;
    let base = match &opts.source {
        Some(name) => out.join(format!("source={name}")),
        None => out.to_path_buf(),
    };
    let options = options_key(opts);
    let mut previous = previous_run(&base, options);
    // Groups: runs of files of one folder and month (contiguous in file order).
    let mut groups: Vec<(String, std::ops::Range<usize>)> = Vec::new();
    let mut seen_ids: HashMap<String, usize> = HashMap::new();
    let mut last_key = None;
    for (i, f) in files.iter().enumerate() {
        let key = group_key(f);
        match groups.last_mut() {
            Some((_, range)) if last_key.as_ref() == Some(&key) => range.end = i + 1,
            _ => {
                let id = format!("{:016x}", hash_of(&key));
                let n = seen_ids.entry(id.clone()).or_default();
                *n += 1;
                let id = if *n == 1 { id } else { format!("{id}{n}") };
                groups.push((id, i..i + 1));
            }
        }
        last_key = Some(key);
    }
    let file_keys: Vec<u64> = groups.iter().map(|(_, r)| files_key(&files[r.clone()])).collect();
    // Sessions of unchanged groups take their copy keys from the record; the others are read.
    let mut keys: Vec<Option<CopyKeys>> = vec![None; files.len()];
    for ((id, range), &fk) in groups.iter().zip(&file_keys) {
        if let Some(g) = previous.get(id).filter(|g| g.files == fk && g.keys.len() == range.len()) {
            for (k, key) in range.clone().zip(&g.keys) {
                keys[k] = Some(key.clone());
            }
        }
    }
    if groups.iter().zip(&file_keys).all(|((id, _), fk)| previous.get(id).is_some_and(|g| g.files == *fk))
        && previous.len() == groups.len()
        && !groups.is_empty()
    {
        return Ok(Summary { files: files.len(), unchanged: true, ..Summary::default() });
    }
    // Until this run is whole, the folder does not claim to hold any run's tables.
    let _ = std::fs::remove_file(base.join(INPUTS));
    let copies = usage_copies(files, opts, &keys);
    let redactor = opts.redact.then(crate::redact::Redactor::new);
    let row_options = RowOptions {
        text: opts.text,
        redactor: redactor.as_ref(),
        counting: opts.counting,
        local_zone: &opts.local_zone,
    };
    let mut calls_seen: ahash::AHashSet<u64> = ahash::AHashSet::new();
    let mut summary = Summary { files: files.len(), ..Summary::default() };
    let mut renames = Vec::new();
    let mut kept_parts: Vec<PathBuf> = Vec::new();
    let mut record: Vec<(String, GroupRecord)> = Vec::new();
    let mut rewritten = 0usize;
    for ((id, range), &fk) in groups.iter().zip(&file_keys) {
        // An unchanged group keeps its files when its rows' copy marks are still the same.
        if let Some(g) = previous.remove(id).filter(|g| g.files == fk && g.keys.len() == range.len()) {
            let mut marks = Vec::new();
            let mut added = Vec::new();
            for (k, key) in range.clone().zip(&g.keys) {
                marks.extend((0..key.identities.len()).map(|n| copies.contains(&(k, n))));
                for c in &key.calls {
                    let copy = c.is_some_and(|c| {
                        let new = calls_seen.insert(c);
                        if new {
                            added.push(c);
                        }
                        !new
                    });
                    marks.push(copy);
                }
            }
            if hash_of(&marks) == g.marks {
                kept_parts.extend(g.parts.iter().map(|p| base.join(p)));
                record.push((id.clone(), g));
                continue;
            }
            // Written again below, where its calls are taken in again.
            for c in added {
                calls_seen.remove(&c);
            }
        }
        rewritten += range.len();
        let mut group = GroupRecord { files: fk, ..GroupRecord::default() };
        let mut marks: Vec<bool> = Vec::new();
        let mut writers: HashMap<Option<String>, PartitionWriters> = HashMap::new();
        for (first, paths) in rounds(&files[range.clone()]) {
            let first = range.start + first;
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
                        group.keys.push(CopyKeys::default());
                        continue;
                    }
                };
                if !rows.notes.is_empty() {
                    summary.notes.push(std::mem::take(&mut rows.notes));
                }
                let month = match opts.partition {
                    Partition::None => None,
                    Partition::Month => Some(rows.month.clone().unwrap_or_else(|| "unknown".to_owned())),
                };
                let part = match writers.entry(month.clone()) {
                    std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                    std::collections::hash_map::Entry::Vacant(v) => {
                        let mut list = Vec::new();
                        for (name, columns) in TABLES {
                            let mut folder = base.join(name);
                            if let Some(month) = &month {
                                folder = folder.join(format!("month={month}"));
                            }
                            list.push(TableWriter::new(name, columns, folder, id.clone(), 0)?);
                        }
                        v.insert(PartitionWriters { writers: list })
                    }
                };
                let w = &mut part.writers;
                let mut key = CopyKeys { created_ms: rows.created_ms, ..CopyKeys::default() };
                w[0].push(rows.session)?;
                for r in rows.entries {
                    w[1].push(r)?;
                }
                for r in rows.messages {
                    w[2].push(r)?;
                }
                for (n, mut r) in rows.usage.into_iter().enumerate() {
                    let copy = copies.contains(&(file_index, n));
                    marks.push(copy);
                    key.identities.push(r.identity);
                    r.cells[rows::USAGE_IS_COPY] = table::Cell::Bool(copy);
                    w[3].push(r.cells)?;
                }
                for mut r in rows.tool_calls {
                    // A call id met in an earlier file is a copy, as `tools` counts them.
                    let call = (!r.call_id.is_empty()).then(|| hash_of(&r.call_id));
                    let copy = call.is_some_and(|c| !calls_seen.insert(c));
                    marks.push(copy);
                    key.calls.push(call);
                    r.cells[rows::CALL_IS_COPY] = table::Cell::Bool(copy);
                    w[4].push(r.cells)?;
                }
                group.keys.push(key);
                let buffered: usize = writers.values().flat_map(|p| &p.writers).map(|w| w.buffered_bytes).sum();
                if buffered > BUFFERED_BYTES {
                    for w in writers.values_mut().flat_map(|p| &mut p.writers) {
                        w.flush()?;
                    }
                }
            }
        }
        // Per file, its usage marks then its call marks: the order an unchanged group checks them in.
        group.marks = hash_of(&marks);
        for (_, part) in writers {
            for writer in part.writers {
                *summary.rows.entry(writer.name()).or_default() += writer.row_count;
                let files = writer.finish()?;
                group.parts.extend(
                    files.iter().map(|(_, to)| to.strip_prefix(&base).unwrap_or(to).to_string_lossy().into_owned()),
                );
                renames.extend(files);
            }
        }
        record.push((id.clone(), group));
    }
    // Every table has its folder, even with no rows, so that engines find it.
    for (name, _) in TABLES {
        std::fs::create_dir_all(base.join(name))?;
        summary.rows.entry(name).or_default();
    }
    // Whole files first, then into place; then what the previous run wrote and this one kept not.
    let mut kept: HashSet<PathBuf> = renames.iter().map(|(_, to)| to.clone()).collect();
    kept.extend(kept_parts);
    for (from, to) in &renames {
        std::fs::rename(from, to)?;
    }
    summary.parquet_files = renames.len();
    summary.rewritten = rewritten;
    for (name, _) in TABLES {
        remove_stale(&base.join(name), &kept)?;
    }
    if summary.errors.is_empty() {
        let temporary = base.join(format!(".{INPUTS}.tmp"));
        std::fs::write(&temporary, record_text(options, &record))?;
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
