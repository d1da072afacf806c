//! `session-scan tools`: every tool's calls, failures and durations across sessions.

use std::io::Write;

use session_core::json::{JsStr, Object, Value, write_json};
use session_scan::tools::{ToolFigures, ToolsReport};

#[derive(clap::Args)]
pub struct ToolsArgs {
    /// Sessions: files, folders, ids or id prefixes.
    ///
    /// Session files, folders of them, or session ids or id prefixes (default: Pi's whole store).
    #[arg(value_name = "SESSION")]
    sessions: Vec<String>,
    /// One JSON object.
    ///
    /// One JSON object: {"sessions","calls","copies","tools":[{"tool","calls","errors","unanswered",
    /// "sessions","durationMs":{"median","p95","max","total"}|null}]}.
    #[arg(long)]
    json: bool,
    /// Without a path, the Atomic fork's store.
    #[arg(long)]
    atomic: bool,
    /// Sessions and days: calls made on those days (the assistant message's time).
    #[command(flatten)]
    filter: super::filters::SessionFilter,
}

/// The tools, most called first (then by name).
fn ordered(report: &ToolsReport) -> Vec<(&String, &ToolFigures)> {
    let mut tools: Vec<(&String, &ToolFigures)> = report.tools.iter().collect();
    tools.sort_by(|a, b| b.1.calls.cmp(&a.1.calls).then_with(|| a.0.cmp(b.0)));
    tools
}

fn json(report: &ToolsReport) -> Value<'static> {
    let n = |x: f64| Value::Number(x);
    let mut tools = Vec::new();
    for (name, f) in ordered(report) {
        let mut o = Object::new();
        o.insert("tool", Value::String(JsStr::owned(name.clone())));
        o.insert("calls", n(f.calls as f64));
        o.insert("errors", n(f.errors as f64));
        o.insert("unanswered", n(f.unanswered as f64));
        o.insert("sessions", n(f.sessions as f64));
        let durations = match (f.duration_quantile(0.5), f.duration_quantile(0.95), f.duration_quantile(1.0)) {
            (Some(median), Some(p95), Some(max)) => {
                let mut d = Object::new();
                d.insert("median", n(median));
                d.insert("p95", n(p95));
                d.insert("max", n(max));
                d.insert("total", n(f.durations_ms.iter().sum()));
                Value::Object(d)
            }
            _ => Value::Null,
        };
        o.insert("durationMs", durations);
        tools.push(Value::Object(o));
    }
    let mut o = Object::new();
    o.insert("schemaVersion", n(1.0));
    o.insert("sessions", n(report.sessions as f64));
    o.insert("calls", n(report.tools.values().map(|f| f.calls).sum::<u64>() as f64));
    o.insert("copies", n(report.copies as f64));
    o.insert("tools", Value::Array(tools));
    Value::Object(o)
}

/// A duration for people: `850 ms`, `12.3 s`, `4.5 min`.
fn human(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else if ms < 60_000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        format!("{:.1} min", ms / 60_000.0)
    }
}

fn table(report: &ToolsReport, g: &super::Globals) -> String {
    use session_scan::table::{Column, RowStyle, Table, thousands};
    let mut t = Table::new(vec![
        Column::text("tool", 12),
        Column::number("calls"),
        Column::number("errors"),
        Column::number("error%").droppable(2),
        Column::number("unanswered").droppable(4),
        Column::number("sessions").droppable(3),
        Column::number("median"),
        Column::number("p95").droppable(1),
        Column::number("max").droppable(5),
    ]);
    let d = |f: &ToolFigures, q: f64| f.duration_quantile(q).map_or("-".to_string(), human);
    for (name, f) in ordered(report) {
        let shown = if name.is_empty() { "(unnamed)" } else { name.as_str() };
        t.row(
            vec![
                shown.to_string(),
                thousands(f.calls as f64),
                thousands(f.errors as f64),
                format!("{:.1}%", 100.0 * f.error_rate()),
                thousands(f.unanswered as f64),
                thousands(f.sessions as f64),
                d(f, 0.5),
                d(f, 0.95),
                d(f, 1.0),
            ],
            RowStyle::Plain,
        );
    }
    t.note(format!(
        "{} sessions, {} calls; {} calls copied into forks counted once. Durations: from the assistant's message to the result's entry.",
        thousands(report.sessions as f64),
        thousands(report.tools.values().map(|f| f.calls).sum::<u64>() as f64),
        thousands(report.copies as f64)
    ));
    t.render(session_scan::table::width(), g.color)
}

/// Runs it: `Ok(true)` when a file could not be read.
pub fn run(a: &ToolsArgs, g: &super::Globals) -> anyhow::Result<bool> {
    let roots = super::sessions::paths(&a.sessions, a.atomic, super::sessions::WhenNone::Store)?;
    let days = a.filter.days(g)?;
    let report = session_scan::tools::build(
        &session_scan::expand_paths(&roots),
        g.strategy,
        a.filter.project.as_deref(),
        &days,
        &g.local_zone,
    );
    for (_, why) in &report.errors {
        eprintln!("{why}");
    }
    let mut notes = super::per_file::Notes::default();
    for file_notes in &report.notes {
        notes.take(file_notes, g.verbosity);
    }
    notes.sum_up(g.verbosity);
    let text = if a.json {
        let mut buf = Vec::new();
        write_json(&json(&report), &mut buf);
        buf.push(b'\n');
        buf
    } else {
        table(&report, g).into_bytes()
    };
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(&text).and_then(|()| out.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(e.into());
    }
    Ok(!report.errors.is_empty())
}
