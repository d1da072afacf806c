//! `session-scan stats`: each session's totals and cost breakdown.

use session_core::json::{Value, write_json};
use session_scan::render;

use super::per_file::{FileArgs, Outcome, load, run_files};
use super::sessions::{self, WhenNone};

/// Session files to read, and the output form.
#[derive(clap::Args)]
pub struct StatsArgs {
    /// Sessions: files, folders, ids or id prefixes.
    ///
    /// Session files, folders of them, or session ids or id prefixes (default: the session `pi -c`
    /// would continue here).
    #[arg(value_name = "SESSION")]
    sessions: Vec<String>,
    /// One JSON object per file per line.
    #[arg(long)]
    json: bool,
}

/// Runs it: `Ok(true)` when a file could not be read.
pub fn run(a: &StatsArgs, g: &super::Globals) -> anyhow::Result<bool> {
    let files = FileArgs { files: sessions::paths(&a.sessions, false, WhenNone::Recent)?, json: a.json };
    let totals = run_files(&files, g, |file, bytes, json| stats_of_file(file, bytes, json, &g.local_zone))?;
    // Several sessions in text: their total last.
    let t = &totals.sum;
    if !a.json && t.sessions > 1 {
        use session_scan::table::{dollars, thousands};
        let tokens = t.input + t.output + t.cache_read + t.cache_write;
        println!(
            "TOTAL of {} sessions (each as Pi counts it: a fork's copies of its parent's entries count \
             in both; `usage` counts them once)\n  messages {}, tool calls {}\n  tokens {} (input {}, output {}, \
             cache read {}, cache write {})\n  cost ${}",
            thousands(t.sessions as f64),
            thousands(t.messages as f64),
            thousands(t.tool_calls as f64),
            thousands(tokens),
            thousands(t.input),
            thousands(t.output),
            thousands(t.cache_read),
            thousands(t.cache_write),
            dollars(t.cost)
        );
    }
    Ok(totals.failed)
}

fn stats_of_file(file: &str, bytes: &[u8], json: bool, local: &jiff::tz::TimeZone) -> Outcome {
    let mut o = Outcome::new();
    let Some(session) = load(&mut o, file, bytes, json, local) else { return o };
    let totals = session_core::stats::session_totals(&session);
    let (st, u) = (&totals.stats, &totals.stats.usage);
    o.sum = Some(super::per_file::StatsSum {
        sessions: 1,
        messages: st.total_messages,
        tool_calls: st.tool_calls,
        input: u.input,
        output: u.output,
        cache_read: u.cache_read,
        cache_write: u.cache_write,
        cost: u.cost,
    });
    for d in &totals.diagnostics {
        o.note(file, d.line, d.offset, &d.message);
    }
    // Beyond Pi: what the active branch spent (the rest went to branches it left).
    let branch = session.branch(None);
    let branch_totals = session_core::stats::branch_totals(&session, &branch.path);
    if json {
        let mut record = render::stats_record(file, &session, &totals);
        if let Value::Object(r) = &mut record {
            r.insert("activeBranch", render::branch_record(&branch_totals, session.leaf_id(), branch.path.len()));
        }
        write_json(&record, &mut o.stdout);
        o.stdout.push(b'\n');
    } else {
        o.stdout.extend(render::stats_text(file, &session, &totals, Some(&branch_totals)).into_bytes());
    }
    o
}
