//! Listing session stores as Pi's `listAll()` and `list()` do (format.md §1, format.md §9): discovery, the order
//! with Pi 1.6's tie-breaks, and `SessionInfo` of every file in parallel.

use std::path::{Path, PathBuf};

use crate::store::resolve_path;

use rayon::prelude::*;
pub use session_core::info::Texts;
use session_core::info::{Omitted, SessionInfo};

/// What to list.
#[derive(Debug, Clone)]
pub enum Scope {
    /// `listAll()`: every `*.jsonl` one level down in `root/*/` (directories and symlinks).
    All {
        /// The sessions root.
        root: PathBuf,
    },
    /// Sessions named one by one (files, and the files under folders), ordered as `listAll` orders
    /// a store's.
    Files {
        /// The files.
        files: Vec<PathBuf>,
    },
    /// `list(cwd, dir)`: one flat directory; sessions whose resolved header `cwd` differs from
    /// `cwd` are left out when `filter` is set (a directory other than `cwd`'s default).
    Dir {
        /// The directory.
        dir: PathBuf,
        /// The cwd to keep, already resolved, when filtering.
        filter: Option<String>,
    },
}

/// One file to read, with what discovery learnt about it.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The path as it will be printed.
    pub path: PathBuf,
    /// Modification time in ms (with fractions), when `stat` worked.
    pub mtime: Option<f64>,
}

/// When discovery takes each candidate's mtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stat {
    /// Now, one file after another: for pruning by metadata (`--since`, `--limit`) and for
    /// passes that read the candidates in Pi's pre-sort order.
    Now,
    /// When each file is read (in parallel, from the open file); the caller restores Pi's
    /// pre-sort order afterwards with [`presort`]. Saves a path lookup per file on one core.
    Later,
}

/// Finds the candidate files in Pi's pre-sort order, their mtimes taken now.
pub fn discover(scope: &Scope) -> Vec<Candidate> {
    discover_with(scope, Stat::Now)
}

/// Finds the candidate files. With [`Stat::Now`] they come in Pi's pre-sort order; with
/// [`Stat::Later`], without mtimes, in an order that [`presort`] turns into it once the files
/// are read.
pub fn discover_with(scope: &Scope, stat: Stat) -> Vec<Candidate> {
    let candidate = |path: PathBuf| match stat {
        Stat::Now => candidate(path),
        Stat::Later => Candidate { path, mtime: None },
    };
    match scope {
        Scope::All { root } => {
            let dirs = session_dirs(root);
            let mut out: Vec<Candidate> =
                dirs.iter().flat_map(|d| jsonl_names(d).into_iter().map(move |n| d.join(n))).map(candidate).collect();
            if stat == Stat::Now {
                js_sort_newest_first(&mut out, |c| (c.mtime, &c.path));
            }
            out
        }
        Scope::Files { files } => {
            let mut out: Vec<Candidate> = files.iter().cloned().map(candidate).collect();
            if stat == Stat::Now {
                js_sort_newest_first(&mut out, |c| (c.mtime, &c.path));
            }
            out
        }
        Scope::Dir { dir, .. } => {
            let mut names = jsonl_names(dir);
            session_core::jssort::js_sort(&mut names, |a, b| f64::from(crate::collation::locale_compare(b, a) as i8));
            names.into_iter().map(|n| candidate(dir.join(n))).collect()
        }
    }
}

/// `listAll`'s pre-sort: mtime descending, ties by file name (`localeCompare`, descending);
/// stable, as JavaScript's sort is.
fn js_sort_newest_first<T>(items: &mut [T], key: impl Fn(&T) -> (Option<f64>, &Path)) {
    session_core::jssort::js_sort(items, |a, b| {
        let ((a_mtime, a_path), (b_mtime, b_path)) = (key(a), key(b));
        let by_time = b_mtime.unwrap_or(f64::NEG_INFINITY) - a_mtime.unwrap_or(f64::NEG_INFINITY);
        // `x || y`: NaN and 0 are falsy.
        if by_time != 0.0 && !by_time.is_nan() {
            by_time
        } else {
            f64::from(crate::collation::locale_compare(&basename(b_path), &basename(a_path)) as i8)
        }
    });
}

/// Puts sessions read from candidates found with [`Stat::Later`] (and kept in their order)
/// into Pi's pre-sort order, by the mtimes taken when they were read. A no-op for a flat
/// directory, whose order does not depend on mtimes.
pub fn presort(scope: &Scope, listed: &mut [Listed]) {
    if let Scope::All { .. } | Scope::Files { .. } = scope {
        js_sort_newest_first(listed, |l| (l.mtime, &l.path));
    }
}

fn candidate(path: PathBuf) -> Candidate {
    let mtime = std::fs::metadata(&path).ok().map(|m| crate::read::mtime_ms(&m)).filter(|t| !t.is_nan());
    Candidate { path, mtime }
}

fn basename(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Names ending in `.jsonl` (case-sensitive) in one directory, in byte order (as Node's
/// `readdirSync` gives them); none if it cannot be read.
pub fn jsonl_names(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    // As Node decodes names (invalid UTF-8 replaced); valid ones checked by the fast validator.
    let name = |e: std::fs::DirEntry| e.file_name().into_string().unwrap_or_else(|n| n.to_string_lossy().into_owned());
    let mut names: Vec<String> = rd.flatten().map(name).filter(|n| n.ends_with(".jsonl")).collect();
    names.sort();
    names
}

/// A listed session, or why it is left out.
#[derive(Clone)]
pub struct Listed {
    /// The file.
    pub path: PathBuf,
    /// Its info (owned), or the reason Pi leaves it out.
    pub info: Result<SessionInfo<'static>, Omitted>,
    /// Left out on purpose (an Atomic internal workflow session), not because of an error.
    pub hidden: bool,
    /// The file's mtime in ms: the candidate's, else as the file was read (or, when it could
    /// not be, as `stat` gives it); `None` when neither worked.
    pub mtime: Option<f64>,
    /// What `session-scan search` found in it (set by [`Reading::then`]); `None` without a search
    /// or when it does not match.
    pub found: Option<Found>,
    /// Atomic's own fields of the row, when Atomic's store is listed ([`Reading::atomic`]).
    pub atomic: Option<AtomicFields>,
}

/// The fields Atomic's `SessionInfo` has beyond Pi's (format.md §8).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AtomicFields {
    /// A `session_info` exists, even one that cleared the name.
    pub has_name: bool,
    /// The header's `workflow` as JSON text, when the header is a valid internal workflow marker.
    pub workflow: Option<String>,
    /// The latest `session_summary` that no later `branch_summary` retired, while it still
    /// describes the last user or assistant message (its `summarizedThroughId`).
    pub summary: Option<String>,
}

/// What Atomic's fields need from a session's records, read in file order.
#[derive(Default)]
struct AtomicTracker {
    header_seen: bool,
    has_name: bool,
    workflow: Option<String>,
    /// The latest session summary not yet retired: its text and `summarizedThroughId`.
    latest_summary: Option<(String, Option<String>)>,
    /// The id of the last user or assistant message entry.
    last_message_id: Option<String>,
}

impl AtomicTracker {
    /// Takes one line (every record of an Atomic listing is parsed whole: Atomic's own listing
    /// reads the whole file too).
    fn take(&mut self, bytes: &[u8]) {
        use session_core::json::Value;
        if session_core::lines::is_blank(bytes) {
            return;
        }
        let arena = bumpalo::Bump::new();
        let Ok(v) = session_core::json::parse_value(bytes, &arena) else { return };
        let text = |v: Option<&Value<'_>>| v.and_then(Value::as_str).map(|s| s.to_str_lossy().into_owned());
        let ty = text(v.get("type"));
        if !self.header_seen {
            if !matches!(v, Value::Null) {
                self.header_seen = true;
                if internal_workflow_header(bytes) == Some(true) {
                    self.workflow = v.get("workflow").map(session_core::json::to_json);
                }
            }
            return;
        }
        match ty.as_deref() {
            Some("session_info") => self.has_name = true,
            Some("session_summary") => {
                let summary = text(v.get("summary")).unwrap_or_default();
                self.latest_summary = Some((summary, text(v.get("summarizedThroughId"))));
            }
            Some("branch_summary") => self.latest_summary = None,
            Some("message") => {
                let role = text(v.get("message").and_then(|m| m.get("role")));
                if matches!(role.as_deref(), Some("user" | "assistant")) {
                    self.last_message_id = text(v.get("id"));
                }
            }
            _ => {}
        }
    }

    fn finish(self) -> AtomicFields {
        let summary = self
            .latest_summary
            .filter(|(_, through)| through.is_some() && *through == self.last_message_id)
            .map(|(summary, _)| summary);
        AtomicFields { has_name: self.has_name, workflow: self.workflow, summary }
    }
}

/// A session a search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Pi's score (lower is better).
    pub score: f64,
    /// The messages where the query is, for `--hits`.
    pub hits: Vec<session_core::search::Hit>,
}

/// What a listing pass keeps while it reads one file's lines in order.
struct Taker {
    builder: session_core::info::InfoBuilder,
    hide_internal: bool,
    first: bool,
    hidden: bool,
    atomic: Option<AtomicTracker>,
}

impl Taker {
    fn new(texts: Texts, hide_internal: bool, atomic: bool, local_zone: &jiff::tz::TimeZone) -> Taker {
        let builder = session_core::info::InfoBuilder::with_texts(texts).with_local_zone(local_zone.clone());
        Taker { builder, hide_internal, first: true, hidden: false, atomic: atomic.then(AtomicTracker::default) }
    }

    /// Takes the next line (scanned here when `scanned` is `None`); false to stop.
    fn take(&mut self, line: session_core::lines::Line<'_>, scanned: session_core::json::LineScan<'_>) -> bool {
        // Atomic hides a session whose first parsed record is a valid internal header (format.md §8.1: its
        // first-line check is only a pre-filter; a first line that fails to parse leaves the
        // decision to the next record that parses).
        if self.hide_internal
            && self.first
            && !session_core::lines::is_blank(line.bytes)
            && let Some(internal) = internal_workflow_header(line.bytes)
        {
            self.first = false;
            if internal {
                self.hidden = true;
                return false;
            }
        }
        if let Some(tracker) = &mut self.atomic {
            tracker.take(line.bytes);
        }
        self.builder.line_scanned(line, scanned)
    }

    fn finish(self, c: &Candidate, mtime: f64) -> Listed {
        let info = if self.hidden {
            Err(Omitted { line: None, offset: None, reason: "internal workflow session".into() })
        } else {
            // Pi's fallback is `stats.mtime`: `mtimeMs` rounded to whole milliseconds (in `finish`).
            self.builder.finish(c.mtime.unwrap_or(mtime))
        };
        let mtime = c.mtime.or(Some(mtime).filter(|m| !m.is_nan()));
        let atomic = self.atomic.map(AtomicTracker::finish);
        Listed { path: c.path.clone(), info, hidden: self.hidden, mtime, found: None, atomic }
    }
}

/// How a listing reads its files: which texts, whether Atomic's internal sessions are hidden, and
/// the cache to list unchanged files from (picker fields only).
#[derive(Clone, Copy)]
pub struct Reading<'c> {
    /// Which texts are kept.
    pub texts: Texts,
    /// Atomic's internal workflow sessions are left out.
    pub hide_internal: bool,
    /// Atomic's own fields are read ([`Listed::atomic`]).
    pub atomic: bool,
    /// How files are read (buffered or mapped).
    pub strategy: crate::ReadStrategy,
    /// Unchanged files are listed from it, and the others recorded in it. Used only with
    /// [`Texts::Skip`].
    pub cache: Option<&'c crate::cache::ListCache>,
    /// Done to each file's listing on the thread that read it (a search scores it there and lets
    /// its texts go, so that a store's texts are never all held at once).
    pub then: Option<&'c (dyn Fn(&mut Listed) + Sync)>,
    /// The zone a time without an offset is read in (UTC unless given).
    pub local_zone: &'c jiff::tz::TimeZone,
}

impl Reading<'static> {
    /// Every file read, with these texts.
    pub fn new(texts: Texts, hide_internal: bool) -> Self {
        Reading {
            texts,
            hide_internal,
            atomic: false,
            strategy: crate::ReadStrategy::Auto,
            cache: None,
            then: None,
            local_zone: &crate::UTC,
        }
    }
}

impl<'c> Reading<'c> {
    /// The same, listing unchanged files from `cache`.
    pub fn with_cache(self, cache: &'c crate::cache::ListCache) -> Reading<'c> {
        Reading { cache: Some(cache), ..self }
    }

    /// The same, with Atomic's own fields read.
    pub fn with_atomic_fields(self) -> Reading<'c> {
        Reading { atomic: true, ..self }
    }

    /// The same, with files read by `strategy`.
    pub fn with_strategy(self, strategy: crate::ReadStrategy) -> Reading<'c> {
        Reading { strategy, ..self }
    }

    /// The same, with times without an offset read in `zone` (Node reads them in the machine's).
    pub fn with_local_zone(self, zone: &'c jiff::tz::TimeZone) -> Reading<'c> {
        Reading { local_zone: zone, ..self }
    }

    /// The same, with `then` done to each listing as it is made.
    pub fn with_then(self, then: &'c (dyn Fn(&mut Listed) + Sync)) -> Reading<'c> {
        Reading { then: Some(then), ..self }
    }
}

fn read_one(c: &Candidate, how: Reading<'_>, parallel_from: u64, buf: &mut Vec<u8>) -> Listed {
    let mut listed = read_or_recall(c, how, parallel_from, buf);
    if let Some(then) = how.then {
        then(&mut listed);
    }
    listed
}

fn read_or_recall(c: &Candidate, how: Reading<'_>, parallel_from: u64, buf: &mut Vec<u8>) -> Listed {
    // The cache keeps Pi's fields only: Atomic's own are read every time.
    let cache = how.cache.filter(|_| how.texts == Texts::Skip && !how.atomic);
    let missed = match cache.map(|cache| cache.lookup(&c.path, how.hide_internal, c.mtime)) {
        Some(crate::cache::Lookup::Hit(listed)) => return *listed,
        Some(crate::cache::Lookup::Miss(key)) => Some(key),
        None => None,
    };
    let (listed, read) = read_uncached(c, how, parallel_from, buf);
    if let (Some(cache), Some(key)) = (cache, missed) {
        cache.store(&c.path, how.hide_internal, key.filter(|_| read), &listed);
    }
    listed
}

/// The file's listing, and whether it could be read.
fn read_uncached(c: &Candidate, how: Reading<'_>, parallel_from: u64, buf: &mut Vec<u8>) -> (Listed, bool) {
    let Reading { strategy, texts, hide_internal, atomic, local_zone, .. } = how;
    // Large files mapped, their lines scanned on all cores; mid-sized ones mapped and scanned here;
    // others streamed through the reused buffer (`read::fold_lines`).
    let read = crate::read::fold_lines(
        &c.path,
        crate::read::Pass { strategy, parallel_from },
        session_core::lines::LineRule::Readline,
        buf,
        // With texts, the scan records the text blocks, so that they need no second walk.
        session_core::json::ScanOptions { blocks: texts != Texts::Skip },
        || Taker::new(texts, hide_internal, atomic, local_zone),
        |taker, line, scanned| taker.take(line, scanned),
    );
    match read {
        Ok((taker, _, mtime)) => (taker.finish(c, mtime), true),
        Err(e) => (
            Listed {
                path: c.path.clone(),
                info: Err(Omitted { line: None, offset: None, reason: format!("cannot read: {e}") }),
                hidden: false,
                mtime: c.mtime.or_else(|| candidate(c.path.clone()).mtime),
                found: None,
                atomic: None,
            },
            false,
        ),
    }
}

/// Reads every candidate in parallel (one reused buffer per thread), keeping discovery order.
pub fn read_infos(candidates: &[Candidate], how: Reading<'_>) -> Vec<Listed> {
    read_with(candidates, how, crate::read::parallel_lines_from(candidates.len()))
}

fn read_with(candidates: &[Candidate], how: Reading<'_>, parallel_from: u64) -> Vec<Listed> {
    candidates.par_iter().map(|c| crate::read::with_thread_buffer(|buf| read_one(c, how, parallel_from, buf))).collect()
}

/// `listAll()`'s discovery and [`read_infos`] at once: each session folder's files are read as
/// soon as the folder is listed, while the next folders are listed (the whole store's picker
/// listing 1.038x faster than listing first). The result is what [`discover_with`] (with [`Stat::Later`])
/// and then [`read_infos`] give, in the same order; [`presort`] puts it in Pi's pre-sort order.
pub fn read_store(root: &Path, how: Reading<'_>) -> Vec<Listed> {
    let dirs = session_dirs(root);
    let batches: Vec<std::sync::OnceLock<Vec<Listed>>> = dirs.iter().map(|_| std::sync::OnceLock::new()).collect();
    rayon::scope(|s| {
        // How files are read depends on how many there are (`parallel_lines_from`): folders are
        // held back until that is settled, by enough files or by the last folder.
        let (mut held, mut files, mut parallel_from) = (Vec::new(), 0, None);
        for (k, (dir, slot)) in dirs.iter().zip(&batches).enumerate() {
            let candidates: Vec<Candidate> =
                jsonl_names(dir).into_iter().map(|n| Candidate { path: child(dir, &n), mtime: None }).collect();
            files += candidates.len();
            held.push((candidates, slot));
            let settled = crate::read::parallel_lines_from(files);
            if parallel_from.is_none()
                && (k + 1 == dirs.len() || settled == crate::read::parallel_lines_from(usize::MAX))
            {
                parallel_from = Some(settled);
            }
            let Some(parallel_from) = parallel_from else { continue };
            for (candidates, slot) in held.drain(..) {
                s.spawn(move |_| {
                    let _ = slot.set(read_with(&candidates, how, parallel_from));
                });
            }
        }
    });
    batches.into_iter().flat_map(|b| b.into_inner().unwrap_or_default()).collect()
}

/// `dir.join(name)` allocated once at its final size (`join` grew it twice: 3% of a small
/// session's listing, callgrind).
fn child(dir: &Path, name: &str) -> PathBuf {
    let mut path = PathBuf::with_capacity(dir.as_os_str().len() + 1 + name.len());
    path.push(dir);
    path.push(name);
    path
}

/// The session folders of a store (directories and symlinks one level down), in byte order;
/// none if the root cannot be read.
fn session_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = match std::fs::read_dir(root) {
        Ok(rd) => rd
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir() || t.is_symlink()))
            .map(|e| root.join(e.file_name()))
            .collect(),
        Err(_) => return Vec::new(),
    };
    // readdir order is the file system's; byte order makes ties reproducible.
    dirs.sort();
    dirs
}

/// How far past a file's mtime its `modified` is assumed to reach at most, when `--since` and
/// `--limit` prune by metadata. `modified` is the latest message time, the header time or the
/// mtime; Pi stamps messages with the time it writes them, so they do not postdate the file's
/// last write. A day of margin covers clock skew and hand-made files.
pub const MTIME_SLACK_MS: f64 = 24.0 * 3600.0 * 1000.0;

/// Drops the candidates whose mtime shows that `modified` cannot reach `since` (see
/// [`MTIME_SLACK_MS`]); a candidate without an mtime is kept.
pub fn prune_before(candidates: &mut Vec<Candidate>, since: f64) {
    candidates.retain(|c| c.mtime.is_none_or(|m| m + MTIME_SLACK_MS >= since));
}

/// Reads candidates (in Pi's pre-sort order: mtime descending for a store, names for a flat
/// folder) only until the `limit` newest sessions kept by `keep` are known: once `limit` kept
/// sessions are at least as new as the newest mtime among the candidates not read yet, plus
/// [`MTIME_SLACK_MS`], none of those can displace them (on a tie the earlier candidate wins, as in
/// Pi's stable sort); a candidate without an mtime is always read. Returns every file read, in
/// candidate order; the caller keeps, sorts and cuts as for a full listing.
pub fn read_newest(
    candidates: &[Candidate],
    limit: usize,
    how: Reading<'_>,
    keep: &(dyn Fn(&Listed) -> bool + Sync),
) -> Vec<Listed> {
    const BATCH: usize = 256;
    let mut read = Vec::new();
    if limit == 0 {
        return read;
    }
    // The newest mtime from each candidate on (none: a candidate without one is left).
    let mut newest_from = vec![None; candidates.len() + 1];
    newest_from[candidates.len()] = Some(f64::NEG_INFINITY);
    for (k, c) in candidates.iter().enumerate().rev() {
        newest_from[k] = c.mtime.zip(newest_from[k + 1]).map(|(m, rest)| m.max(rest));
    }
    let mut start = 0;
    while start < candidates.len() {
        let end = (start + BATCH.max(limit)).min(candidates.len());
        read.extend(read_infos(&candidates[start..end], how));
        start = end;
        let Some(unread_newest) = newest_from[start] else { continue };
        let mut newest: Vec<f64> =
            read.iter().filter(|l| keep(l)).filter_map(|l| l.info.as_ref().ok()).map(|i| i.modified).collect();
        if newest.len() < limit || newest.iter().any(|m| m.is_nan()) {
            continue;
        }
        newest.sort_by(|a, b| b.total_cmp(a));
        if newest[limit - 1] >= unread_newest + MTIME_SLACK_MS {
            break;
        }
    }
    read
}

/// Like [`read_infos`], but sends each result as soon as it is ready.
pub fn read_infos_streaming(candidates: &[Candidate], how: Reading<'_>, tx: std::sync::mpsc::Sender<Listed>) {
    let parallel_from = crate::read::parallel_lines_from(candidates.len());
    candidates.par_iter().for_each_init(
        || tx.clone(),
        |tx, c| {
            let listed = crate::read::with_thread_buffer(|buf| read_one(c, how, parallel_from, buf));
            // A closed receiver means the reader stopped (a closed pipe): nothing to do.
            let _ = tx.send(listed);
        },
    );
}

/// What `list(cwd, dir)` (a [`Scope::Dir`]) or `listAll()` returns: every session Pi lists there,
/// picker fields only, newest first.
pub fn listing(scope: &Scope) -> Vec<Listed> {
    let mut listed = read_infos(&discover(scope), Reading::new(Texts::Skip, false));
    let filter = match scope {
        Scope::Dir { filter, .. } => filter.as_deref(),
        Scope::All { .. } | Scope::Files { .. } => None,
    };
    listed.retain(|l| l.info.as_ref().is_ok_and(|info| filter.is_none_or(|c| cwd_matches(info, c))));
    sort_by_modified(&mut listed);
    listed
}

/// `sortSessionInfos`: newest `modified` first, stable, invalid dates as equal.
pub fn sort_by_modified(listed: &mut [Listed]) {
    session_core::jssort::js_sort(listed, |a, b| match (&a.info, &b.info) {
        (Ok(a), Ok(b)) => b.modified - a.modified,
        _ => 0.0,
    });
}

/// Whether a listed session passes `list()`'s cwd filter.
pub fn cwd_matches(info: &SessionInfo<'_>, resolved_cwd: &str) -> bool {
    header_cwd_matches(&info.cwd.to_str_lossy(), resolved_cwd)
}

/// `sessionCwdMatches` for a header `cwd` that is a string: not empty, and resolving to
/// `resolved_cwd`.
pub fn header_cwd_matches(cwd: &str, resolved_cwd: &str) -> bool {
    !cwd.is_empty() && resolve_path(cwd) == resolved_cwd
}

/// Whether a line is the header of one of Atomic's internal workflow sessions (format.md §8): a session
/// header with `internal === true` and a `workflow` whose `runId`, `stageId` and `stageName` are
/// non-empty strings after trimming. `None` when the line is not JSON.
pub fn internal_workflow_header(line: &[u8]) -> Option<bool> {
    use session_core::json::Value;
    let arena = bumpalo::Bump::new();
    let v = session_core::json::parse_value(line, &arena).ok()?;
    if v.get("type").and_then(Value::as_str).is_none_or(|t| *t != "session") {
        return Some(false);
    }
    let ok = |k: &str| {
        v.get("workflow")
            .and_then(|w| w.get(k))
            .and_then(Value::as_str)
            .is_some_and(|s| !session_core::text::js_trim(s.as_bytes()).is_empty())
    };
    Some(v.get("internal") == Some(&Value::Bool(true)) && ok("runId") && ok("stageId") && ok("stageName"))
}

/// Pi's picker key for a path (`getSessionPathKey`): the real path where there is one, else the
/// path as given; made absolute against the working folder, `.` and `..` taken away.
pub fn path_key(path: &Path) -> PathBuf {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let absolute = std::env::current_dir().map(|cwd| cwd.join(&real)).unwrap_or(real);
    let mut key = PathBuf::new();
    for part in absolute.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                key.pop();
            }
            other => key.push(other),
        }
    }
    key
}

/// `list --threaded`: the sessions of `listed` (in the listing's order) as Pi's picker threads them
/// without a search (`buildSessionTree`): forks under the session named by their header's
/// `parentSession`, each level newest subtree first. Returns the rows, each session's depth, and
/// the sessions Pi leaves out of that view (their parents form a loop). A `parentSession` that is
/// not a string (Pi's picker throws on one) is no parent.
pub fn threaded(listed: Vec<Listed>) -> (Vec<Listed>, Vec<usize>, Vec<Listed>) {
    let keys: Vec<(PathBuf, Option<PathBuf>, f64)> = listed
        .par_iter()
        .map(|l| {
            let (parent, modified) = match &l.info {
                Ok(info) => {
                    // As Node passes a string to the system: lone surrogates as U+FFFD.
                    let parent = info.parent_session.as_str().filter(|p| !p.is_empty());
                    let parent = parent.map(|p| path_key(Path::new(&*p.to_str_lossy())));
                    (parent, info.modified)
                }
                Err(_) => (None, f64::NAN),
            };
            (path_key(&l.path), parent, modified)
        })
        .collect();
    let session_core::threaded::Threads { rows, left_out } = session_core::threaded::threaded(&keys);
    let mut slots: Vec<Option<Listed>> = listed.into_iter().map(Some).collect();
    let mut placed: Vec<Option<usize>> = vec![None; slots.len()];
    let (mut ordered, mut depths) = (Vec::with_capacity(rows.len()), Vec::with_capacity(rows.len()));
    for row in &rows {
        match slots[row.session].take() {
            Some(l) => {
                placed[row.session] = Some(ordered.len());
                ordered.push(l);
            }
            // A session reached twice (its path listed twice): shown twice, as Pi does.
            None => {
                let again = placed[row.session].map(|at| ordered[at].clone());
                ordered.extend(again);
            }
        }
        depths.push(row.depth);
    }
    let hidden = left_out.into_iter().filter_map(|k| slots[k].take()).collect();
    (ordered, depths, hidden)
}

#[cfg(test)]
mod tests {
    #[test]
    fn locale_order_of_names() {
        use std::cmp::Ordering::*;
        let en = crate::collation::collator("en-US");
        assert_eq!(en.compare("B-2.jsonl", "b-1.jsonl"), Greater);
        assert_eq!(en.compare("a-3.jsonl", "a-2.jsonl"), Greater);
        assert_eq!(en.compare("b", "B"), Less);
        assert_eq!(en.compare("a_b", "a-b"), Less);
    }
}
