//! Usage and cost reports over whole stores: periods, projects, models and sessions, with usage
//! copied into forks and clones counted once (see `session_core::usage`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use session_core::lines::LineRule;
use session_core::stats::UsageTotals;
use session_core::usage::{Counting, FileUsage, Source, UsageBuilder};

/// How rows are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Group {
    /// Hours of the clock.
    ///
    /// Hour of the clock in the chosen time zone, with its offset (`YYYY-MM-DDTHH:00+HH:MM`): the
    /// hour repeated when clocks go back is two rows.
    Hourly,
    /// Calendar day in the chosen time zone (`YYYY-MM-DD`).
    Daily,
    /// ISO week, named by its Monday (`YYYY-MM-DD`).
    Weekly,
    /// Calendar month (`YYYY-MM`).
    Monthly,
    /// One row per session file.
    Session,
    /// One row per project (the header's `cwd`).
    Project,
    /// One row per `provider/model` key.
    Model,
}

impl Group {
    /// The report's name.
    pub fn name(self) -> &'static str {
        match self {
            Group::Hourly => "hourly",
            Group::Daily => "daily",
            Group::Weekly => "weekly",
            Group::Monthly => "monthly",
            Group::Session => "session",
            Group::Project => "project",
            Group::Model => "model",
        }
    }
}

/// Report options.
#[derive(Debug, Clone)]
pub struct Options {
    /// Row grouping.
    pub group: Group,
    /// Sub-rows by model inside each group.
    pub breakdown: bool,
    /// Sub-rows by source.
    pub by_source: bool,
    /// First day included (in `tz`).
    pub since: Option<jiff::civil::Date>,
    /// Last day included (in `tz`).
    pub until: Option<jiff::civil::Date>,
    /// Time zone for days, weeks and months.
    pub tz: jiff::tz::TimeZone,
    /// Only sessions whose header `cwd` contains this text (copies are still found across every
    /// session: usage a session of another project spent first is not counted here).
    pub project: Option<String>,
    /// Which usages count: Pi's, or with Atomic's session summaries too (`--atomic`).
    pub counting: Counting,
    /// How files are read (buffered or mapped).
    pub strategy: crate::ReadStrategy,
    /// The zone a time without an offset is read in (Node reads them in the machine's).
    pub local_zone: jiff::tz::TimeZone,
}

impl Default for Options {
    /// Daily rows in UTC, nothing filtered, Pi's sources, times without an offset read in UTC.
    fn default() -> Options {
        Options {
            group: Group::Daily,
            breakdown: false,
            by_source: false,
            since: None,
            until: None,
            tz: jiff::tz::TimeZone::UTC,
            project: None,
            counting: Counting::Pi,
            strategy: crate::ReadStrategy::Auto,
            local_zone: jiff::tz::TimeZone::UTC,
        }
    }
}

impl Options {
    /// Whether a session of `cwd` is reported.
    fn reports(&self, cwd: &str) -> bool {
        self.project.as_deref().is_none_or(|p| cwd.contains(p))
    }
}

/// Summed amounts of one row.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Amounts {
    /// Token and cost sums.
    pub usage: UsageTotals,
    /// Usage events counted.
    pub events: u64,
}

impl Amounts {
    fn add(&mut self, u: &UsageTotals) {
        self.usage += *u;
        self.events += 1;
    }
    fn merge(&mut self, o: &Amounts) {
        self.usage += o.usage;
        self.events += o.events;
    }
}

/// A row key: the group, then the optional model and source.
pub type RowKey = (String, Option<String>, Option<Source>);

/// Activity across the store (unique messages).
#[derive(Debug, Clone, Default)]
pub struct Activity {
    /// Sessions read.
    pub sessions: u64,
    /// Days with at least one message, in the report's zone.
    pub active_days: u64,
    /// Messages by role.
    pub messages: BTreeMap<String, u64>,
    /// Tool calls by tool name.
    pub tool_calls: BTreeMap<String, u64>,
    /// Tool results with `isError`.
    pub tool_errors: u64,
    /// Those results by their `toolName`.
    pub tool_errors_by_tool: BTreeMap<String, u64>,
}

/// A session row's extras (`usage session`): its own totals agree with `session-scan stats`;
/// `copied` is what an earlier session of its family already counted.
#[derive(Debug, Clone, Default)]
pub struct SessionExtra {
    /// The file.
    pub path: String,
    /// The header's cwd.
    pub cwd: String,
    /// The parent session, when a fork or clone.
    pub parent: Option<String>,
    /// Amounts also found in an earlier session.
    pub copied: Amounts,
}

/// The report.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Rows by key.
    pub rows: BTreeMap<RowKey, Amounts>,
    /// Session extras, for `usage session`.
    pub sessions: HashMap<String, SessionExtra>,
    /// Everything counted once.
    pub totals: Amounts,
    /// Copies found in forks and clones and not counted again.
    pub duplicates: Amounts,
    /// Activity.
    pub activity: Activity,
    /// Files that could not be read, with why.
    pub errors: Vec<(PathBuf, FileError)>,
    /// The lines Pi skips or fails on, by file (`path:line: byte N: message`).
    pub notes: Vec<Vec<String>>,
}

/// Why a file was not counted, and where in it when that is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    /// The line of the record that made the file no session.
    pub line: Option<u64>,
    /// Its byte offset.
    pub offset: Option<u64>,
    /// Why, without the place.
    pub message: String,
}

impl FileError {
    fn unplaced(message: String) -> Self {
        FileError { line: None, offset: None, message }
    }
}

impl From<session_core::LoadError> for FileError {
    fn from(e: session_core::LoadError) -> Self {
        let (line, offset) = e.place();
        FileError { line, offset, message: e.reason() }
    }
}

/// The header of a file: enough to know its family (`parentSession`). Reads the first line only
/// (4 KiB at a time, through `buf`), skipping blank lines as the loader does.
fn header_parent(path: &Path, buf: &mut Vec<u8>) -> Option<String> {
    let mut found = None;
    crate::read::for_each_line_chunked(path, session_core::lines::LineRule::Newline, buf, 4096, |line| {
        if session_core::lines::is_blank(line.bytes) {
            return true;
        }
        let b = line.bytes;
        found = match session_core::json::scan_line(b) {
            Ok(sc) if !sc.escaped_keys => {
                session_core::property::PropertyValue::from_span(b, sc.field(b, "parentSession"))
                    .as_str()
                    .map(|p| p.to_str_lossy().into_owned())
            }
            Ok(_) => {
                let arena = bumpalo::Bump::new();
                session_core::json::parse_value(b, &arena).ok().and_then(|v| {
                    v.get("parentSession").and_then(|p| p.as_str()).map(|p| p.to_str_lossy().into_owned())
                })
            }
            Err(_) => None,
        };
        false
    })
    .ok()?;
    found
}

fn basename(p: &str) -> String {
    p.rsplit(['/', '\\']).next().unwrap_or(p).to_string()
}

#[derive(Default)]
struct Partial {
    rows: BTreeMap<RowKey, Amounts>,
    duplicates: Amounts,
    family: Vec<(PathBuf, FileUsage)>,
    sessions: HashMap<String, SessionExtra>,
    activity: Activity,
    days: HashSet<jiff::civil::Date>,
    errors: Vec<(PathBuf, FileError)>,
    notes: Vec<Vec<String>>,
}

impl Partial {
    fn merge(mut self, o: Partial) -> Partial {
        for (k, v) in o.rows {
            self.rows.entry(k).or_default().merge(&v);
        }
        self.family.extend(o.family);
        self.duplicates.merge(&o.duplicates);
        self.sessions.extend(o.sessions);
        self.activity.sessions += o.activity.sessions;
        for (k, v) in o.activity.messages {
            *self.activity.messages.entry(k).or_default() += v;
        }
        for (k, v) in o.activity.tool_calls {
            *self.activity.tool_calls.entry(k).or_default() += v;
        }
        self.activity.tool_errors += o.activity.tool_errors;
        for (k, v) in o.activity.tool_errors_by_tool {
            *self.activity.tool_errors_by_tool.entry(k).or_default() += v;
        }
        self.days.extend(o.days);
        self.errors.extend(o.errors);
        self.notes.extend(o.notes);
        self
    }
}

/// Reads `files` in parallel and builds the report; `progress` is told of each file read.
pub fn build(files: &[PathBuf], opts: &Options, progress: &(dyn Fn() + Sync)) -> Report {
    let in_family = in_family(files);
    // Files go in fixed runs, each read in order, and the runs are merged in order: sums of
    // costs (floating point) then do not depend on how the runs were shared among threads.
    let parallel_from = crate::read::parallel_lines_from(files.len());
    let runs: Vec<Partial> = files
        .par_chunks(FILES_PER_RUN)
        .zip(in_family.par_chunks(FILES_PER_RUN))
        .map(|(paths, family)| {
            crate::read::with_thread_buffer(|buf| {
                let mut acc = Partial::default();
                for (path, &family) in paths.iter().zip(family) {
                    progress();
                    read_file(opts, path, family, parallel_from, buf, &mut acc);
                }
                acc
            })
        })
        .collect();
    let mut partial = runs.into_iter().fold(Partial::default(), Partial::merge);
    // Family members oldest first: the first copy of a usage is the one counted.
    let mut family = std::mem::take(&mut partial.family);
    family.sort_by(|a, b| a.1.created_ms.total_cmp(&b.1.created_ms).then_with(|| a.0.cmp(&b.0)));
    let mut seen: HashSet<u64> = HashSet::new();
    for (path, usage) in &family {
        count(opts, path, usage, Some(&mut seen), &mut partial);
    }
    let mut report = Report {
        rows: partial.rows,
        sessions: partial.sessions,
        errors: partial.errors,
        notes: partial.notes,
        duplicates: partial.duplicates,
        ..Report::default()
    };
    report.activity = partial.activity;
    report.activity.active_days = partial.days.len() as u64;
    for (k, v) in &report.rows {
        if k.1.is_none() && k.2.is_none() {
            report.totals.merge(v);
        }
    }
    if opts.group == Group::Session {
        // Session rows show each session's own totals; the total counts copies once.
        report.totals.usage -= report.duplicates.usage;
        report.totals.events -= report.duplicates.events;
    }
    report
}

/// Which files belong to a family, where copies of usage are looked for: files that name a parent
/// session, and the files they name (by file name). Reads each header line, on all cores.
pub fn in_family(files: &[PathBuf]) -> Vec<bool> {
    let parents: Vec<Option<String>> =
        files.par_iter().map(|p| crate::read::with_thread_buffer(|buf| header_parent(p, buf))).collect();
    let named: HashSet<String> = parents.iter().flatten().map(|p| basename(p)).collect();
    files
        .iter()
        .zip(&parents)
        .map(|(f, p)| {
            p.is_some() || named.contains(&f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())
        })
        .collect()
}

/// Files read one after the other by a worker; runs are merged in file order.
const FILES_PER_RUN: usize = 16;

/// Reads one file's usage into `acc` (as `read::fold_lines` reads it: large files mapped and
/// scanned on all cores, mid-sized ones mapped, others streamed through `buf`); a family member is
/// kept for the counting of copies.
fn read_file(opts: &Options, path: &Path, family: bool, parallel_from: u64, buf: &mut Vec<u8>, acc: &mut Partial) {
    let scan = session_core::json::ScanOptions { blocks: true };
    let read = crate::read::fold_lines(
        path,
        crate::read::Pass { strategy: opts.strategy, parallel_from },
        LineRule::Newline,
        buf,
        scan,
        || UsageBuilder::new(opts.counting).with_local_zone(opts.local_zone.clone()),
        |b, line, s| b.line_scanned(line, s),
    );
    let usage = match read {
        Err(e) => {
            acc.errors.push((path.to_path_buf(), FileError::unplaced(format!("cannot read: {e}"))));
            return;
        }
        Ok((_, 0, _)) => Err(session_core::LoadError::Empty),
        Ok((builder, _, _)) => builder.finish(),
    };
    let usage = match usage {
        Ok(u) => u,
        Err(e) => {
            acc.errors.push((path.to_path_buf(), e.into()));
            return;
        }
    };
    if !usage.diagnostics.is_empty() {
        let file = path.to_string_lossy();
        acc.notes.push(
            usage.diagnostics.iter().map(|d| format!("{file}:{}: byte {}: {}", d.line, d.offset, d.message)).collect(),
        );
    }
    acc.activity.sessions += u64::from(opts.reports(&usage.cwd));
    if family {
        acc.family.push((path.to_path_buf(), usage));
    } else {
        count(opts, path, &usage, None, acc);
    }
}

fn day(opts: &Options, ms: f64) -> Option<jiff::civil::Date> {
    if !ms.is_finite() {
        return None;
    }
    let ts = jiff::Timestamp::from_millisecond(ms as i64).ok()?;
    Some(opts.tz.to_datetime(ts).date())
}

/// [`day`] for times that mostly fall on the same day as the one before: the last day's
/// bounds in the zone are kept, with its name, so that most times need neither a zone lookup
/// nor formatting.
#[derive(Default)]
struct Days {
    /// The last day, its first millisecond, the first of the next day, and its name.
    last: Option<(jiff::civil::Date, i64, i64, String)>,
}

impl Days {
    /// The day of `ms` in the report's zone.
    fn of(&mut self, opts: &Options, ms: f64) -> Option<jiff::civil::Date> {
        if let Some((d, start, end, _)) = &self.last
            && ms.fract() == 0.0
            && (*start as f64) <= ms
            && ms < *end as f64
        {
            return Some(*d);
        }
        let d = day(opts, ms)?;
        let first_ms = |d: jiff::civil::Date| {
            let midnight = d.to_datetime(jiff::civil::Time::midnight());
            opts.tz.to_ambiguous_timestamp(midnight).compatible().ok().map(|t| t.as_millisecond())
        };
        // Only a plain day is kept: 24 hours, one offset at both ends (no transition near
        // midnight that could give part of it another date).
        let offset = |ms: i64| jiff::Timestamp::from_millisecond(ms).ok().map(|t| opts.tz.to_offset(t));
        self.last = match (first_ms(d), d.tomorrow().ok().and_then(first_ms)) {
            (Some(start), Some(end)) if end - start == 86_400_000 && offset(start) == offset(end - 1) => {
                Some((d, start, end, d.to_string()))
            }
            _ => None,
        };
        Some(d)
    }

    /// Writes `d` as `YYYY-MM-DD`, kept for the last day.
    fn write_name(&self, d: jiff::civil::Date, out: &mut String) {
        match &self.last {
            Some((last, _, _, name)) if *last == d => out.push_str(name),
            _ => {
                let _ = write!(out, "{d}");
            }
        }
    }
}

/// Names the hour of a time in the report's zone, keeping the last hour's bounds and name (most
/// times of a session fall in the hour of the one before).
#[derive(Default)]
struct Hours {
    /// The last hour's first millisecond, the first after it, and its name.
    last: Option<(i64, i64, String)>,
}

impl Hours {
    /// Writes the hour of `ms` (a finite time that [`day`] placed) as `YYYY-MM-DDTHH:00+HH:MM`.
    fn write_name(&mut self, opts: &Options, ms: f64, out: &mut String) {
        if let Some((start, end, name)) = &self.last
            && ms.fract() == 0.0
            && (*start as f64) <= ms
            && ms < *end as f64
        {
            out.push_str(name);
            return;
        }
        // As `day` takes it.
        let ms = ms as i64;
        let Ok(ts) = jiff::Timestamp::from_millisecond(ms) else {
            out.push_str("unknown");
            return;
        };
        let offset = opts.tz.to_offset(ts);
        let local = offset.to_datetime(ts);
        let name = format!(
            "{}T{:02}:00{}{:02}:{:02}",
            local.date(),
            local.hour(),
            if offset.seconds() < 0 { '-' } else { '+' },
            offset.seconds().unsigned_abs() / 3600,
            offset.seconds().unsigned_abs() / 60 % 60
        );
        out.push_str(&name);
        // The hour's bounds at this offset; kept only when the offset holds to its end.
        let into_hour =
            i64::from(local.minute()) * 60_000 + i64::from(local.second()) * 1000 + i64::from(local.millisecond());
        let start = ms - into_hour;
        let end = start + 3_600_000;
        let same_offset = |at: i64| jiff::Timestamp::from_millisecond(at).is_ok_and(|t| opts.tz.to_offset(t) == offset);
        self.last = (same_offset(start) && same_offset(end - 1)).then_some((start, end, name));
    }
}

fn in_range(opts: &Options, d: Option<jiff::civil::Date>) -> bool {
    match d {
        Some(d) => opts.since.is_none_or(|s| d >= s) && opts.until.is_none_or(|u| d <= u),
        None => opts.since.is_none() && opts.until.is_none(),
    }
}

/// Adds one file's usage to `acc`; with `seen`, usage already counted is recorded as a copy.
fn count(opts: &Options, path: &Path, usage: &FileUsage, mut seen: Option<&mut HashSet<u64>>, acc: &mut Partial) {
    // What an earlier session of the family already counted.
    let mut copied = Amounts::default();
    let reported = opts.reports(&usage.cwd);
    let mut days = Days::default();
    let mut hours = Hours::default();
    let (mut key, mut group_key): (RowKey, RowKey) = Default::default();
    for e in &usage.events {
        let d = days.of(opts, e.time_ms);
        if !in_range(opts, d) {
            continue;
        }
        let copy = seen.as_deref_mut().is_some_and(|s| !s.insert(e.identity));
        if !reported {
            continue;
        }
        if copy {
            copied.add(&e.amounts);
            if opts.group != Group::Session {
                continue;
            }
        }
        // The row's key, written into reused strings: most rows exist already.
        let group = &mut key.0;
        group.clear();
        match (opts.group, d) {
            (Group::Hourly | Group::Daily | Group::Weekly | Group::Monthly, None) => group.push_str("unknown"),
            (Group::Hourly, Some(_)) => hours.write_name(opts, e.time_ms, group),
            (Group::Daily, Some(d)) => days.write_name(d, group),
            (Group::Weekly, Some(d)) => {
                let back = i64::from(d.weekday().to_monday_zero_offset());
                let monday = d.checked_sub(jiff::Span::new().days(back)).unwrap_or(d);
                let _ = write!(group, "{monday}");
            }
            (Group::Monthly, Some(d)) => {
                let _ = write!(group, "{:04}-{:02}", d.year(), d.month());
            }
            (Group::Session, _) => group.push_str(&usage.session_id),
            (Group::Project, _) => group.push_str(&usage.cwd),
            (Group::Model, _) => group.push_str(&e.model),
        }
        key.1 = match (opts.breakdown && opts.group != Group::Model, key.1.take()) {
            (false, _) => None,
            (true, Some(mut model)) => {
                model.clear();
                model.push_str(&e.model);
                Some(model)
            }
            (true, None) => Some(e.model.to_string()),
        };
        key.2 = opts.by_source.then_some(e.source);
        add_row(&mut acc.rows, &key, &e.amounts);
        if key.1.is_some() || key.2.is_some() {
            group_key.0.clear();
            group_key.0.push_str(&key.0);
            add_row(&mut acc.rows, &group_key, &e.amounts);
        }
    }
    let mut last_day = None;
    let mut failed_tools = usage.failed_tools.iter().peekable();
    for (k, m) in usage.messages.iter().enumerate() {
        let failed_tool = failed_tools.next_if(|(at, _)| *at == k).map(|(_, tool)| tool);
        let d = days.of(opts, m.time_ms);
        if !in_range(opts, d) {
            continue;
        }
        if seen.as_deref_mut().is_some_and(|s| !s.insert(m.identity)) || !reported {
            continue;
        }
        bump(&mut acc.activity.messages, if m.role.is_empty() { "(none)" } else { &m.role });
        for t in &m.tool_calls {
            bump(&mut acc.activity.tool_calls, t);
        }
        acc.activity.tool_errors += u64::from(m.tool_error);
        if let Some(tool) = failed_tool {
            bump(&mut acc.activity.tool_errors_by_tool, tool);
        }
        if let Some(d) = d
            && last_day != Some(d)
        {
            acc.days.insert(d);
            last_day = Some(d);
        }
    }
    if !reported {
        return;
    }
    acc.duplicates.merge(&copied);
    if opts.group == Group::Session {
        let extra = SessionExtra {
            path: path.to_string_lossy().into_owned(),
            cwd: usage.cwd.clone(),
            parent: usage.parent_session.clone(),
            copied,
        };
        acc.sessions.insert(usage.session_id.clone(), extra);
    }
}

/// Applies `f` to the value under `key`, made with its default first if missing: the key is
/// allocated only then (most keys are there already).
fn update<Q, V>(map: &mut BTreeMap<Q::Owned, V>, key: &Q, f: impl FnOnce(&mut V))
where
    Q: Ord + ToOwned + ?Sized,
    Q::Owned: Ord + std::borrow::Borrow<Q>,
    V: Default,
{
    match map.get_mut(key) {
        Some(v) => f(v),
        None => f(map.entry(key.to_owned()).or_default()),
    }
}

/// Adds amounts to a row.
fn add_row(rows: &mut BTreeMap<RowKey, Amounts>, key: &RowKey, amounts: &UsageTotals) {
    update(rows, key, |row| row.add(amounts));
}

/// Adds one to a counter.
fn bump(counts: &mut BTreeMap<String, u64>, key: &str) {
    update(counts, key, |n| *n += 1);
}

/// Money as integer micro-dollars (rounded).
pub fn micros(cost: f64) -> i64 {
    (cost * 1e6).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Days kept from one time to the next give the day a zone lookup gives, through daylight
    /// saving changes (at 02:00, at midnight, by half an hour) and at non-whole milliseconds.
    #[test]
    fn kept_days_are_the_days_of_their_times() {
        let start = jiff::Timestamp::from_second(1_772_000_000).unwrap().as_millisecond(); // 2026-02-25
        for zone in
            ["UTC", "America/New_York", "America/Havana", "America/Santiago", "Australia/Lord_Howe", "Asia/Kolkata"]
        {
            let opts = Options { tz: jiff::tz::TimeZone::get(zone).unwrap(), ..Options::default() };
            let mut days = Days::default();
            let mut checked = 0;
            // Every 7 minutes for 300 days (both yearly changes of each zone), some times not whole.
            for k in 0..(300 * 24 * 60 / 7) {
                let ms = (start + k * 7 * 60_000) as f64 + if k % 5 == 0 { 0.5 } else { 0.0 };
                let expected = day(&opts, ms);
                let kept = days.of(&opts, ms);
                assert_eq!(kept, expected, "{zone} {ms}");
                let d = kept.unwrap();
                let mut name = String::new();
                days.write_name(d, &mut name);
                assert_eq!(name, d.to_string());
                checked += 1;
            }
            assert!(checked > 60_000);
            assert_eq!(days.of(&opts, f64::NAN), None);
        }
    }
}
