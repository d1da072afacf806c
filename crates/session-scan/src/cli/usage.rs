//! `session-scan usage`: tokens and cost by day, week, month, session, project or model.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

use session_core::json::{JsStr, Object, Value, write_json};
use session_core::usage::Counting;
use session_scan::usage::{self, Amounts, Group, Options, Report, RowKey, micros};

/// The JSON schema's version: fields are only ever added.
const SCHEMA_VERSION: f64 = 1.0;

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OrderArg {
    Asc,
    Desc,
}

/// What rows are ordered by.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SortArg {
    /// The period, session id, project or model.
    Key,
    /// The group's cost.
    Cost,
    /// The group's tokens.
    Tokens,
}

#[derive(clap::Args)]
pub struct UsageArgs {
    /// The report (default: daily), then sessions.
    ///
    /// The report (hourly, daily, weekly, monthly, session, project or model; default: daily), then
    /// session files, folders of them, or session ids or id prefixes (default: Pi's whole store).
    #[arg(value_name = "REPORT|SESSION")]
    args: Vec<String>,
    /// Rows by provider/model inside each group.
    #[arg(long)]
    breakdown: bool,
    /// Rows by usage source.
    ///
    /// Rows by usage source (assistant, usage entries, tool results, summaries).
    #[arg(long)]
    by_source: bool,
    /// Sessions and days: usage of those days, in that zone's days, hours, weeks and months.
    #[command(flatten)]
    filter: super::filters::SessionFilter,
    /// Row order: asc or desc.
    #[arg(long, value_enum, default_value_t = OrderArg::Asc, hide_possible_values = true)]
    order: OrderArg,
    /// Order groups by: key, cost or tokens.
    ///
    /// Order groups by their key, cost or tokens (ties by key); sub-rows stay under their group.
    /// `--sort cost --order desc` puts the costliest first.
    #[arg(long, value_enum, default_value_t = SortArg::Key, hide_possible_values = true)]
    sort: SortArg,
    /// Only the first N groups.
    ///
    /// Only the first N groups, after ordering (the totals stay those of every row).
    #[arg(long, value_name = "N", value_parser = super::whole_number, allow_hyphen_values = true)]
    limit: Option<usize>,
    /// JSON with a schemaVersion (see README).
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// CSV.
    #[arg(long)]
    csv: bool,
    /// Atomic's store, its summaries' usage counted.
    ///
    /// The Atomic fork: its store (`~/.atomic/agent/sessions`, `ATOMIC_CODING_AGENT_DIR`,
    /// `ATOMIC_CODING_AGENT_SESSION_DIR`) by default, and the usage of its session summaries
    /// counted too, as Atomic counts it.
    #[arg(long)]
    atomic: bool,
}

pub fn run(a: &UsageArgs, g: &super::Globals) -> anyhow::Result<bool> {
    use clap::ValueEnum;
    let named_report = a.args.first().and_then(|first| Group::from_str(first, false).ok());
    let (group, sessions) = match named_report {
        Some(group) => (group, &a.args[1..]),
        None => (Group::Daily, &a.args[..]),
    };
    let days = a.filter.days(g)?;
    let tz_name = g.zone.label.clone();
    let opts = Options {
        strategy: g.strategy,
        local_zone: g.local_zone.clone(),
        group,
        breakdown: a.breakdown,
        by_source: a.by_source,
        since: days.since,
        until: days.until,
        tz: days.tz,
        project: a.filter.project.clone(),
        counting: if a.atomic { Counting::WithAtomicSummaries } else { Counting::Pi },
    };
    if let (Some(since), Some(until)) = (opts.since, opts.until)
        && since > until
    {
        eprintln!("session-scan: --since {since} is after --until {until}: no usage can fall between them");
    }
    let roots = super::sessions::paths(sessions, a.atomic, super::sessions::WhenNone::Store).map_err(|e| {
        if named_report.is_none()
            && e.downcast_ref::<session_scan::named::NameError>()
                .is_some_and(|e| matches!(e, session_scan::named::NameError::NoMatch(_)))
        {
            anyhow::anyhow!("{e}, and it is not a report (hourly, daily, weekly, monthly, session, project, model)")
        } else {
            e
        }
    })?;
    let files = session_scan::expand_paths(&roots);
    let done = AtomicUsize::new(0);
    let finished = std::sync::atomic::AtomicBool::new(false);
    let total = files.len();
    let report = std::thread::scope(|s| {
        let bar = s.spawn(|| progress_bar(total, &done, &finished));
        let r = usage::build(&files, &opts, &|| {
            done.fetch_add(1, Ordering::Relaxed);
        });
        finished.store(true, Ordering::Relaxed);
        let _ = bar.join();
        r
    });
    for (p, e) in &report.errors {
        let report_error = if a.json { session_scan::render::error_json } else { session_scan::render::error_text };
        eprintln!("{}", report_error(&p.to_string_lossy(), e.line, e.offset, &e.message));
    }
    let mut notes = super::per_file::Notes::default();
    for file_notes in &report.notes {
        notes.take(file_notes, g.verbosity);
    }
    notes.sum_up(g.verbosity);
    let mut keys: Vec<&RowKey> = report.rows.keys().collect();
    // Hours in time order (an hour repeated when clocks go back sorts by its offset), `unknown` last.
    let instant = |k: &RowKey| match group {
        Group::Hourly => k.0.parse::<jiff::Timestamp>().map_or(i64::MAX, |t| t.as_millisecond()),
        _ => 0,
    };
    let desc = a.order == OrderArg::Desc;
    // A group's own row (no model, no source) holds its totals.
    let group_total = |k: &RowKey| {
        let total = report.rows.get(&(k.0.clone(), None, None)).map(|r| r.usage);
        match a.sort {
            SortArg::Key => 0.0,
            SortArg::Cost => total.map_or(0.0, |u| u.cost),
            SortArg::Tokens => total.map_or(0.0, |u| u.tokens()),
        }
    };
    let totals: std::collections::HashMap<&str, f64> = keys.iter().map(|k| (k.0.as_str(), group_total(k))).collect();
    // Groups newest (or largest) first with `desc`; sub-rows stay under their group.
    keys.sort_by(|x, y| {
        let by_group = totals[x.0.as_str()]
            .total_cmp(&totals[y.0.as_str()])
            .then_with(|| instant(x).cmp(&instant(y)))
            .then_with(|| x.0.cmp(&y.0));
        if desc { by_group.reverse() } else { by_group }.then_with(|| (&x.1, &x.2).cmp(&(&y.1, &y.2)))
    });
    if let Some(limit) = a.limit {
        let mut groups = 0;
        keys.retain(|k| {
            groups += usize::from(k.1.is_none() && k.2.is_none());
            groups <= limit
        });
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let text = if a.json {
        let mut buf = Vec::new();
        write_json(&json_report(&report, &keys, group, &opts, &tz_name), &mut buf);
        buf.push(b'\n');
        buf
    } else if a.csv {
        csv(&report, &keys, group).into_bytes()
    } else {
        table(&report, &keys, group, g).into_bytes()
    };
    if let Err(e) = out.write_all(&text).and_then(|()| out.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(e.into());
    }
    Ok(!report.errors.is_empty())
}

/// A progress bar on stderr, only on a terminal and only once the scan has taken half a second.
pub(super) fn progress_bar(total: usize, done: &AtomicUsize, finished: &std::sync::atomic::AtomicBool) {
    if !std::io::stderr().is_terminal() {
        return;
    }
    let start = std::time::Instant::now();
    let mut bar: Option<indicatif::ProgressBar> = None;
    while !finished.load(Ordering::Relaxed) {
        std::thread::sleep(std::time::Duration::from_millis(50));
        if bar.is_none() && start.elapsed() > std::time::Duration::from_millis(500) {
            let b = indicatif::ProgressBar::new(total as u64);
            if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} sessions {elapsed}") {
                b.set_style(style);
            }
            bar = Some(b);
        }
        if let Some(b) = &bar {
            b.set_position(done.load(Ordering::Relaxed) as u64);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

fn group_field(group: Group) -> &'static str {
    match group {
        Group::Hourly | Group::Daily | Group::Weekly | Group::Monthly => "period",
        Group::Session => "session",
        Group::Project => "project",
        Group::Model => "model",
    }
}

fn amounts_json(o: &mut Object<'static>, a: &Amounts) {
    let u = &a.usage;
    o.insert("inputTokens", Value::Number(u.input));
    o.insert("outputTokens", Value::Number(u.output));
    o.insert("cacheReadTokens", Value::Number(u.cache_read));
    o.insert("cacheWriteTokens", Value::Number(u.cache_write));
    o.insert("totalTokens", Value::Number(u.tokens()));
    o.insert("cost", Value::Number(u.cost));
    o.insert("costMicros", Value::Number(micros(u.cost) as f64));
    o.insert("events", Value::Number(a.events as f64));
}

fn json_report(r: &Report, keys: &[&RowKey], group: Group, opts: &Options, tz: &str) -> Value<'static> {
    let s = |v: String| Value::String(JsStr::owned(v));
    let mut rows = Vec::new();
    for k in keys {
        let mut o = Object::new();
        o.insert(group_field(group), s(k.0.clone()));
        if let Some(m) = &k.1 {
            o.insert("model", s(m.clone()));
        }
        if let Some(src) = k.2 {
            o.insert("source", s(src.name().into()));
        }
        amounts_json(&mut o, &r.rows[*k]);
        if group == Group::Session
            && k.1.is_none()
            && k.2.is_none()
            && let Some(x) = r.sessions.get(&k.0)
        {
            o.insert("path", s(x.path.clone()));
            o.insert("project", s(x.cwd.clone()));
            o.insert("parentSession", x.parent.clone().map_or(Value::Null, s));
            let mut c = Object::new();
            amounts_json(&mut c, &x.copied);
            o.insert("copied", Value::Object(c));
        }
        rows.push(Value::Object(o));
    }
    let mut totals = Object::new();
    amounts_json(&mut totals, &r.totals);
    let mut dup = Object::new();
    amounts_json(&mut dup, &r.duplicates);
    let act = &r.activity;
    let counts = |m: &std::collections::BTreeMap<String, u64>| {
        let mut o = Object::new();
        for (k, v) in m {
            o.insert(JsStr::owned(k.clone()), Value::Number(*v as f64));
        }
        Value::Object(o)
    };
    let mut activity = Object::new();
    activity.insert("sessions", Value::Number(act.sessions as f64));
    activity.insert("activeDays", Value::Number(act.active_days as f64));
    activity.insert("messages", counts(&act.messages));
    activity.insert("toolCalls", counts(&act.tool_calls));
    activity.insert("toolErrors", Value::Number(act.tool_errors as f64));
    activity.insert("toolErrorsByTool", counts(&act.tool_errors_by_tool));
    let mut o = Object::new();
    o.insert("schemaVersion", Value::Number(SCHEMA_VERSION));
    o.insert("report", s(group.name().into()));
    o.insert("timezone", s(tz.to_string()));
    o.insert("since", opts.since.map_or(Value::Null, |d| s(d.to_string())));
    o.insert("until", opts.until.map_or(Value::Null, |d| s(d.to_string())));
    o.insert("project", opts.project.clone().map_or(Value::Null, s));
    o.insert("rows", Value::Array(rows));
    o.insert("totals", Value::Object(totals));
    o.insert("duplicates", Value::Object(dup));
    o.insert("activity", Value::Object(activity));
    Value::Object(o)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

fn csv(r: &Report, keys: &[&RowKey], group: Group) -> String {
    let mut out = format!(
        "{},model,source,inputTokens,outputTokens,cacheReadTokens,cacheWriteTokens,totalTokens,cost,costMicros,events\n",
        group_field(group)
    );
    let line = |g: &str, m: &str, src: &str, a: &Amounts| {
        let u = &a.usage;
        format!(
            "{},{},{},{},{},{},{},{},{},{},{}\n",
            csv_field(g),
            csv_field(m),
            src,
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            u.tokens(),
            u.cost,
            micros(u.cost),
            a.events
        )
    };
    for k in keys {
        out.push_str(&line(&k.0, k.1.as_deref().unwrap_or(""), k.2.map_or("", |s| s.name()), &r.rows[*k]));
    }
    out.push_str(&line("TOTAL", "", "", &r.totals));
    out
}

fn table(r: &Report, keys: &[&RowKey], group: Group, g: &super::Globals) -> String {
    use session_scan::table::{Column, RowStyle, Table, dollars, thousands};
    // Sessions by the short id every command takes.
    let mut ids: Vec<&str> = keys.iter().map(|k| k.0.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let short: std::collections::HashMap<&str, String> = match group {
        Group::Session => ids.iter().copied().zip(session_scan::named::short_ids(&ids, 8)).collect(),
        _ => Default::default(),
    };
    let label = |k: &RowKey| match (&k.1, k.2) {
        (None, None) => short.get(k.0.as_str()).cloned().unwrap_or_else(|| k.0.clone()),
        (m, s) => format!(
            "  └ {}{}",
            m.clone().unwrap_or_default(),
            s.map(|s| format!(" [{}]", s.name())).unwrap_or_default()
        ),
    };
    let key_header = match group {
        Group::Hourly | Group::Daily | Group::Weekly | Group::Monthly => {
            format!("{} ({})", group_field(group), g.zone.label)
        }
        _ => group_field(group).to_string(),
    };
    let mut t = Table::new(vec![
        Column::text(&key_header, 20),
        Column::number("input").droppable(1),
        Column::number("output").droppable(2),
        Column::number("cache read").droppable(3),
        Column::number("cache write").droppable(4),
        Column::number("total tokens"),
        Column::number("cost ($)"),
    ]);
    let cells = |name: String, a: &Amounts| {
        let u = &a.usage;
        vec![
            name,
            thousands(u.input),
            thousands(u.output),
            thousands(u.cache_read),
            thousands(u.cache_write),
            thousands(u.tokens()),
            dollars(u.cost),
        ]
    };
    for k in keys {
        let sub = k.1.is_some() || k.2.is_some();
        t.row(cells(label(k), &r.rows[*k]), if sub { RowStyle::Faint } else { RowStyle::Plain });
    }
    t.row(cells("TOTAL".into(), &r.totals), RowStyle::Strong);
    let act = &r.activity;
    let top = |counts: &std::collections::BTreeMap<String, u64>| -> String {
        let mut v: Vec<(&String, &u64)> = counts.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1));
        v.iter()
            .take(5)
            .map(|(k, n)| format!("{} {}", if k.is_empty() { "(unnamed)" } else { k }, thousands(**n as f64)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let n = |x: u64| thousands(x as f64);
    t.note(format!(
        "{} sessions, {} active days, {} messages ({} user, {} assistant), {} tool calls ({}), {} tool errors{}{}",
        n(act.sessions),
        n(act.active_days),
        n(act.messages.values().sum::<u64>()),
        n(act.messages.get("user").copied().unwrap_or(0)),
        n(act.messages.get("assistant").copied().unwrap_or(0)),
        n(act.tool_calls.values().sum::<u64>()),
        top(&act.tool_calls),
        n(act.tool_errors),
        if act.tool_errors > 0 { format!(" ({})", top(&act.tool_errors_by_tool)) } else { String::new() },
        if r.duplicates.events > 0 {
            format!(
                "; {} usage records copied into forks counted once (${})",
                n(r.duplicates.events),
                dollars(r.duplicates.usage.cost)
            )
        } else {
            String::new()
        }
    ));
    t.render(session_scan::table::width(), g.color)
}
