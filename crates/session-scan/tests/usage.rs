//! Usage analytics: per-session totals agree with Pi 1.6's `getSessionStats()`, and usage copied
//! into forks and clones is counted once.

#![allow(clippy::unwrap_used)] // test inputs are made here; a panic is a failed test

mod common;

use std::path::{Path, PathBuf};

use session_core::usage::{Counting, Source};
use session_scan::usage::{Group, Options, build};

fn corpora() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora")
}

fn opts(group: Group) -> Options {
    Options { group, ..Options::default() }
}

#[test]
fn session_rows_equal_pi_session_stats() {
    // format.md §10: every usage source, every branch; Pi's recorded totals are the reference.
    for corpus in ["sample-16", "real"] {
        let files = session_scan::expand_paths(&[corpora().join(corpus).join("sessions")]);
        let report = build(&files, &opts(Group::Session), &|| {});
        let golden = if corpus == "real" { "golden-stats.jsonl" } else { "stats.jsonl" };
        let text = std::fs::read_to_string(corpora().join(corpus).join("expected").join(golden)).unwrap();
        let mut checked = 0;
        for line in text.lines() {
            let g: serde_json::Value = serde_json::from_str(line).unwrap();
            let id = g["sessionId"].as_str().unwrap();
            let row = report.rows.iter().find(|(k, _)| k.0 == id && k.1.is_none() && k.2.is_none()).unwrap().1;
            let s = &g["stats"];
            assert_eq!(row.usage.cost, s["cost"].as_f64().unwrap(), "{id}");
            assert_eq!(row.usage.input, s["tokens"]["input"].as_f64().unwrap(), "{id}");
            assert_eq!(row.usage.output, s["tokens"]["output"].as_f64().unwrap(), "{id}");
            assert_eq!(row.usage.cache_read, s["tokens"]["cacheRead"].as_f64().unwrap(), "{id}");
            assert_eq!(row.usage.cache_write, s["tokens"]["cacheWrite"].as_f64().unwrap(), "{id}");
            checked += 1;
        }
        assert!(checked >= 2, "{corpus}");
    }
}

#[test]
fn every_grouping_counts_the_same_unique_total() {
    let files = session_scan::expand_paths(&[corpora().join("sample-16/sessions")]);
    let daily = build(&files, &opts(Group::Daily), &|| {});
    let sessions = build(&files, &opts(Group::Session), &|| {});
    for g in [Group::Hourly, Group::Weekly, Group::Monthly, Group::Project, Group::Model] {
        let r = build(&files, &opts(g), &|| {});
        assert!((r.totals.usage.cost - daily.totals.usage.cost).abs() < 1e-9, "{g:?}");
        assert_eq!(r.totals.events, daily.totals.events, "{g:?}");
    }
    // Session rows keep their own (Pi) totals; the total subtracts the copies.
    let all_rows: f64 = sessions.rows.iter().filter(|(k, _)| k.1.is_none()).map(|(_, a)| a.usage.cost).sum();
    assert!((all_rows - sessions.duplicates.usage.cost - daily.totals.usage.cost).abs() < 1e-9);
    assert!(daily.duplicates.events > 0, "the sample corpus has forks with copied usage");
}

const HEADER: &str = r#"{"type":"session","version":3,"id":"P","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

fn assistant(id: &str, parent: &str, ts: &str, cost: f64, input: u32) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"assistant","content":[{{"type":"text","text":"x"}}],"provider":"p","model":"m","usage":{{"input":{input},"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":{},"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":{cost}}}}},"stopReason":"stop","timestamp":1}}}}"#,
        input + 1
    )
}

#[test]
fn forks_and_clones_are_counted_once() {
    let dir = std::env::temp_dir().join(format!("session-scan-forks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("--w--")).unwrap();
    let a1 = assistant("a1", "null", "2026-01-01T00:00:01.000Z", 1.0, 100);
    let a2 = assistant("a2", "\"a1\"", "2026-01-01T00:00:02.000Z", 2.0, 200);
    // The parent: two paid turns, one on a branch later abandoned (still spent).
    let a3 = assistant("a3", "\"a1\"", "2026-01-01T00:00:03.000Z", 4.0, 400);
    std::fs::write(dir.join("--w--/parent.jsonl"), format!("{HEADER}\n{a1}\n{a2}\n{a3}\n")).unwrap();
    // A fork (forkFrom / createBranchedSession): the path copied with its ids, then a new turn.
    let fork_header = HEADER
        .replace(r#""id":"P""#, r#""id":"F""#)
        .replace(r#""cwd":"/w"}"#, r#""cwd":"/w","parentSession":"/home/u/.pi/agent/sessions/--w--/parent.jsonl"}"#);
    let f1 = assistant("f1", "\"a2\"", "2026-01-02T00:00:01.000Z", 8.0, 800);
    std::fs::write(dir.join("--w--/fork.jsonl"), format!("{fork_header}\n{a1}\n{a2}\n{f1}\n")).unwrap();
    // A clone whose ids were rewritten: same times and usage, found by content.
    let clone_header = fork_header.replace(r#""id":"F""#, r#""id":"C""#);
    let c1 = a1.replace(r#""id":"a1""#, r#""id":"c1""#);
    std::fs::write(dir.join("--w--/clone.jsonl"), format!("{clone_header}\n{c1}\n")).unwrap();
    let files = session_scan::expand_paths(std::slice::from_ref(&dir));
    let daily = build(&files, &opts(Group::Daily), &|| {});
    // Really spent: 1 + 2 + 4 (parent, both branches) + 8 (the fork's own turn).
    assert_eq!(daily.totals.usage.cost, 15.0);
    assert_eq!(daily.duplicates.usage.cost, 1.0 + 2.0 + 1.0);
    assert_eq!(daily.totals.events, 4);
    // Each session row still equals Pi's own session totals (`session-scan stats`).
    let sessions = build(&files, &opts(Group::Session), &|| {});
    for (id, path, cost) in [("P", "parent", 7.0), ("F", "fork", 11.0), ("C", "clone", 1.0)] {
        let row = sessions.rows.iter().find(|(k, _)| k.0 == id && k.1.is_none()).unwrap().1;
        assert_eq!(row.usage.cost, cost, "{id}");
        let bytes = std::fs::read(dir.join(format!("--w--/{path}.jsonl"))).unwrap();
        let stats = session_core::stats::session_totals(&session_core::Session::load(&bytes).unwrap());
        assert_eq!(stats.stats.usage.cost, cost, "{id}");
    }
    assert_eq!(sessions.totals.usage.cost, 15.0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Atomic's session summaries (format.md §8: `session_summary` with `usage?`) are summariser calls that
/// Atomic counts in its totals (format.md §10) and Pi 1.6 does not know: counted with
/// `Counting::WithAtomicSummaries` (`usage --atomic`), under their own source, and once when a
/// fork copies them; Pi's counting leaves them out, as Pi's session totals do.
#[test]
fn atomic_session_summaries_count_when_asked() {
    let dir = std::env::temp_dir().join(format!("session-scan-atomic-usage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("--w--")).unwrap();
    let usage = |cost: f64| {
        format!(r#"{{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{{"total":{cost}}}}}"#)
    };
    let a1 = assistant("a1", "null", "2026-01-01T00:00:01.000Z", 1.0, 100);
    let summary = format!(
        r#"{{"type":"session_summary","id":"s1","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","summary":"done","summarizedThroughId":"a1","usage":{}}}"#,
        usage(0.5)
    );
    // Written with an escaped key: read from its full value, with the same result.
    let escaped = format!(
        r#"{{"typ\u0065":"session_summary","id":"s2","parentId":"s1","timestamp":"2026-01-01T00:00:03.000Z","summary":"again","summarizedThroughId":"a1","usage":{}}}"#,
        usage(0.125)
    );
    let without_usage = r#"{"type":"session_summary","id":"s3","parentId":"s2","timestamp":"2026-01-01T00:00:04.000Z","summary":"x","summarizedThroughId":"a1"}"#;
    let branch = format!(
        r#"{{"type":"branch_summary","id":"b1","parentId":"s3","timestamp":"2026-01-01T00:00:05.000Z","fromId":"a1","summary":"b","usage":{}}}"#,
        usage(0.25)
    );
    let parent = format!("{HEADER}\n{a1}\n{summary}\n{escaped}\n{without_usage}\n{branch}\n");
    std::fs::write(dir.join("--w--/parent.jsonl"), &parent).unwrap();
    let fork_header = HEADER.replace(r#""id":"P""#, r#""id":"F""#).replace(
        r#""cwd":"/w"}"#,
        r#""cwd":"/w","parentSession":"/home/u/.atomic/agent/sessions/--w--/parent.jsonl"}"#,
    );
    std::fs::write(dir.join("--w--/fork.jsonl"), format!("{fork_header}\n{a1}\n{summary}\n")).unwrap();
    let files = session_scan::expand_paths(std::slice::from_ref(&dir));
    let atomic = Options { by_source: true, counting: Counting::WithAtomicSummaries, ..opts(Group::Daily) };
    let pi = Options { by_source: true, ..opts(Group::Daily) };
    let (with, without) = (build(&files, &atomic, &|| {}), build(&files, &pi, &|| {}));
    assert_eq!(with.totals.usage.cost, 1.0 + 0.5 + 0.125 + 0.25);
    assert_eq!(with.duplicates.usage.cost, 1.0 + 0.5);
    assert_eq!(without.totals.usage.cost, 1.0 + 0.25);
    let source_cost = |r: &session_scan::usage::Report, source: Source| {
        r.rows.iter().find(|(k, _)| k.2 == Some(source)).map(|(_, a)| (a.usage.cost, a.events))
    };
    assert_eq!(source_cost(&with, Source::SessionSummary), Some((0.625, 2)));
    assert_eq!(source_cost(&without, Source::SessionSummary), None);
    assert_eq!(source_cost(&with, Source::BranchSummary), Some((0.25, 1)));
    // Pi's counting is Pi's session totals.
    let stats = session_core::stats::session_totals(&session_core::Session::load(parent.as_bytes()).unwrap());
    assert_eq!(stats.stats.usage.cost, 1.25);
    let by_file =
        session_core::usage::file_usage_counting(parent.as_bytes(), Counting::WithAtomicSummaries, &session_scan::UTC)
            .unwrap();
    let sources: Vec<&str> = by_file.events.iter().map(|e| e.source.name()).collect();
    assert_eq!(sources, ["assistant", "session_summary", "session_summary", "branch_summary"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hours_are_named_by_the_zones_clock_and_offset() {
    let dir = std::env::temp_dir().join(format!("session-scan-hours-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("--w--")).unwrap();
    // Sydney's clocks went back from 03:00 +11:00 to 02:00 +10:00 on 2025-04-06 (15:00 UTC the day
    // before): 15:30 and 16:30 UTC are both 02:30 there, in two different hours.
    let times = [
        "2025-04-05T14:59:59.999Z",
        "2025-04-05T15:30:00.000Z",
        "2025-04-05T16:30:00.000Z",
        "2025-04-05T16:59:00.000Z",
    ];
    let mut text = format!("{HEADER}\n");
    let mut parent = "null".to_string();
    for (i, ts) in times.iter().enumerate() {
        text += &assistant(&format!("a{i}"), &parent, ts, (1 << i) as f64, 1);
        text.push('\n');
        parent = format!("\"a{i}\"");
    }
    std::fs::write(dir.join("--w--/s.jsonl"), text).unwrap();
    let files = session_scan::expand_paths(std::slice::from_ref(&dir));
    let rows = |zone: &str| {
        let tz = jiff::tz::TimeZone::get(zone).unwrap();
        let report = build(&files, &Options { tz, ..opts(Group::Hourly) }, &|| {});
        report.rows.iter().map(|(k, a)| (k.0.clone(), a.usage.cost)).collect::<Vec<_>>()
    };
    let named = |v: &[(&str, f64)]| v.iter().map(|(k, c)| (k.to_string(), *c)).collect::<Vec<_>>();
    assert_eq!(
        rows("Australia/Sydney"),
        named(&[
            ("2025-04-06T01:00+11:00", 1.0),
            ("2025-04-06T02:00+10:00", 4.0 + 8.0),
            ("2025-04-06T02:00+11:00", 2.0)
        ])
    );
    // Half-hour offsets: an hour of the clock starts at :30 UTC.
    assert_eq!(
        rows("Asia/Kolkata"),
        named(&[
            ("2025-04-05T20:00+05:30", 1.0),
            ("2025-04-05T21:00+05:30", 2.0),
            ("2025-04-05T22:00+05:30", 4.0 + 8.0)
        ])
    );
    assert_eq!(
        rows("UTC"),
        named(&[("2025-04-05T14:00+00:00", 1.0), ("2025-04-05T15:00+00:00", 2.0), ("2025-04-05T16:00+00:00", 12.0)])
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn activity_counts_agree_with_session_stats() {
    // Messages and tool calls per file, as getSessionStats counts them (format.md §10).
    for f in session_scan::expand_paths(&[corpora().join("sample-16/sessions"), corpora().join("real/sessions")]) {
        let bytes = std::fs::read(&f).unwrap();
        let u = session_core::usage::file_usage(&bytes).unwrap();
        let s = session_core::stats::session_totals(&session_core::Session::load(&bytes).unwrap()).stats;
        assert_eq!(u.messages.len() as u64, s.total_messages, "{}", f.display());
        let calls: usize = u.messages.iter().map(|m| m.tool_calls.len()).sum();
        assert_eq!(calls as u64, s.tool_calls, "{}", f.display());
        let users = u.messages.iter().filter(|m| m.role == "user").count() as u64;
        assert_eq!(users, s.user_messages, "{}", f.display());
    }
}

/// Each failed tool result (`isError: true`) is counted under its `toolName`, read as
/// `JSON.parse` reads the line: per file, and in a report of that file alone. Across the store
/// a result copied into a fork is counted once, and the per-tool counts add up to the errors.
#[test]
fn tool_errors_are_counted_by_tool() {
    let files = session_scan::expand_paths(&[corpora().join("sample-16/sessions"), corpora().join("real/sessions")]);
    let mut every_copy = std::collections::BTreeMap::<String, u64>::new();
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let mut failed = Vec::new();
        for line in bytes.split(|&b| b == b'\n') {
            let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else { continue };
            let m = &v["message"];
            if v["type"] == "message" && m["role"] == "toolResult" && m["isError"] == true {
                failed.push(m["toolName"].as_str().unwrap_or("").to_string());
            }
        }
        let u = session_core::usage::file_usage(&bytes).unwrap();
        let read: Vec<String> = u.failed_tools.iter().map(|(_, t)| t.clone()).collect();
        assert_eq!(read, failed, "{}", f.display());
        let errors: Vec<usize> = (0..u.messages.len()).filter(|&k| u.messages[k].tool_error).collect();
        assert_eq!(u.failed_tools.iter().map(|(k, _)| *k).collect::<Vec<_>>(), errors, "{}", f.display());
        let mut counts = std::collections::BTreeMap::<String, u64>::new();
        for tool in failed {
            *counts.entry(tool.clone()).or_default() += 1;
            *every_copy.entry(tool).or_default() += 1;
        }
        let alone = build(std::slice::from_ref(f), &opts(Group::Daily), &|| {});
        assert_eq!(alone.activity.tool_errors_by_tool, counts, "{}", f.display());
    }
    let report = build(&files, &opts(Group::Daily), &|| {});
    let by_tool = &report.activity.tool_errors_by_tool;
    assert_eq!(report.activity.tool_errors, by_tool.values().sum::<u64>());
    assert_eq!(by_tool.keys().collect::<Vec<_>>(), every_copy.keys().collect::<Vec<_>>());
    // sample-16 has forks: some errors are copies, counted once.
    assert!(by_tool.iter().all(|(tool, n)| *n <= every_copy[tool]), "{by_tool:?} {every_copy:?}");
    assert!(report.activity.tool_errors < every_copy.values().sum::<u64>(), "{by_tool:?}");
    assert!(by_tool.len() >= 2 && report.activity.tool_errors >= 100, "{by_tool:?}");
}

/// A session large enough to be read with its lines scanned in parallel counts what the library
/// counts on the whole file, and what `stats` counts.
#[test]
fn large_sessions_read_in_parallel_count_the_same() {
    let dir = std::env::temp_dir().join(format!("session-scan-large-usage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("--w--")).unwrap();
    let header = r#"{"type":"session","version":3,"id":"large","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let mut text = format!("{header}\n");
    let mut k = 0u32;
    while text.len() < (session_scan::read::PARALLEL_LINES_MIN as usize) * 2 {
        let parent = if k == 0 { "null".to_string() } else { format!("\"a{}\"", k - 1) };
        text.push_str(&assistant(&format!("a{k}"), &parent, "2026-01-02T10:00:00.000Z", 0.25, k % 97));
        text.push('\n');
        if k.is_multiple_of(7) {
            text.push_str(&format!(
                "{{\"type\":\"message\",\"id\":\"r{k}\",\"parentId\":\"a{k}\",\"message\":{{\"role\":\"toolResult\",\"content\":\"{}\"}}}}\n\n",
                "o".repeat(2000)
            ));
        }
        k += 1;
    }
    let path = dir.join("--w--").join("large.jsonl");
    std::fs::write(&path, &text).unwrap();
    let report = build(std::slice::from_ref(&path), &opts(Group::Session), &|| {});
    let row = report.rows.iter().find(|(key, _)| key.0 == "large" && key.1.is_none() && key.2.is_none()).unwrap().1;
    let whole = session_core::usage::file_usage(text.as_bytes()).unwrap();
    let cost: f64 = whole.events.iter().map(|e| e.amounts.cost).sum();
    let input: f64 = whole.events.iter().map(|e| e.amounts.input).sum();
    assert_eq!(row.events, whole.events.len() as u64);
    assert_eq!(row.usage.cost, cost);
    assert_eq!(row.usage.input, input);
    let stats = session_core::stats::session_totals(&session_core::Session::load(text.as_bytes()).unwrap());
    assert_eq!(row.usage.cost, stats.stats.usage.cost);
    assert_eq!(report.activity.messages.values().sum::<u64>(), stats.stats.total_messages);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The report does not depend on how the files were shared among threads: costs summed across
/// files are equal to the bit on one thread and on several (floating-point sums depend on their
/// order, so the files are merged in a fixed order).
#[test]
fn reports_are_the_same_on_any_number_of_threads() {
    let dir = std::env::temp_dir().join(format!("session-scan-usage-threads-{}", std::process::id()));
    let project = dir.join("--w--");
    std::fs::create_dir_all(&project).unwrap();
    let mut next = common::xorshift(0x9e37_79b9_7f4a_7c15);
    for f in 0..300 {
        let mut text = HEADER.replace("\"P\"", &format!("\"S{f}\""));
        let mut parent = "null".to_string();
        for k in 0..(1 + next() % 6) {
            let id = format!("a{k}");
            // Costs with many significant digits, all on one day.
            let cost = (next() % 1_000_000) as f64 / 7919.0;
            text.push('\n');
            text.push_str(&assistant(&id, &parent, "2026-01-02T03:04:05.000Z", cost, 10));
            parent = format!("\"{id}\"");
        }
        text.push('\n');
        std::fs::write(project.join(format!("s{f:03}.jsonl")), text).unwrap();
    }
    let files = session_scan::expand_paths(std::slice::from_ref(&dir));
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| build(&files, &opts(Group::Daily), &|| {}))
    };
    let one = on(1);
    assert_eq!(one.rows.len(), 1);
    for threads in [2, 3, 4, 7] {
        for _ in 0..3 {
            let many = on(threads);
            for ((k, a), (_, b)) in one.rows.iter().zip(&many.rows) {
                assert_eq!(a.usage.cost.to_bits(), b.usage.cost.to_bits(), "{k:?} on {threads} threads");
                assert_eq!(a.events, b.events);
            }
            assert_eq!(one.totals.usage.cost.to_bits(), many.totals.usage.cost.to_bits());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `stats`'s active branch: its totals are those Pi 1.6's `getSessionStats()` gives for a file that
/// holds only the branch's entries (computed here by `session_totals` on such a file), and a
/// session without other branches spent nothing on them.
#[test]
fn active_branch_totals_are_the_totals_of_a_file_of_that_branch() {
    let mut branched = 0;
    for corpus in ["sample-16", "real", "edge", "hostile"] {
        for f in session_scan::expand_paths(&[corpora().join(corpus).join("sessions")]) {
            let bytes = std::fs::read(&f).unwrap();
            let Ok(session) = session_core::Session::load(&bytes) else { continue };
            let path = session.branch(None).path;
            let branch = session_core::stats::branch_totals(&session, &path);
            let mut alone = session.records[0].line.to_vec();
            alone.push(b'\n');
            for &i in &path {
                alone.extend_from_slice(session.records[i].line);
                alone.push(b'\n');
            }
            let only = session_core::stats::session_totals(&session_core::Session::load(&alone).unwrap());
            // Debug forms, so that a NaN (a usage amount that is not a number) equals itself.
            let seen = |t: &session_core::stats::Totals| format!("{:?} {:?}", t.stats, t.breakdown);
            assert_eq!(seen(&branch), seen(&only), "{}", f.display());
            let all = session_core::stats::session_totals(&session);
            if path.len() + 1 == session.records.len() {
                assert_eq!(seen(&branch), seen(&all), "{}", f.display());
            } else if seen(&branch) != seen(&all) {
                branched += 1;
            }
        }
    }
    assert!(branched >= 20, "{branched} sessions spent on branches they left");
}

/// `stats --json` carries the branch's totals with its leaf and length; the text form says what
/// the branches left cost.
#[test]
fn stats_json_has_the_active_branch() {
    let f = corpora()
        .join("sample-16/sessions/--home-dev-src-pi-mono--/2025-01-23T18-36-38-672Z_01949473-b590-7099-acde-de82e88808c1.jsonl");
    let bytes = std::fs::read(&f).unwrap();
    let session = session_core::Session::load(&bytes).unwrap();
    let path = session.branch(None).path;
    let branch = session_core::stats::branch_totals(&session, &path);
    let all = session_core::stats::session_totals(&session);
    let scan = || {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_session-scan"));
        c.env("TZ", "UTC");
        c
    };
    let out = scan().args(["stats", "--json"]).arg(&f).output().unwrap();
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = &record["activeBranch"];
    assert_eq!(b["leafId"], "2e7a1160");
    assert_eq!(b["entries"].as_u64(), Some(path.len() as u64));
    assert_eq!(b["cost"].as_f64(), Some(branch.stats.usage.cost));
    assert_eq!(b["totalMessages"].as_u64(), Some(branch.stats.total_messages));
    assert!(branch.stats.usage.cost < all.stats.usage.cost);
    let text = String::from_utf8(scan().arg("stats").arg(&f).output().unwrap().stdout).unwrap();
    let left = all.stats.usage.cost - branch.stats.usage.cost;
    assert!(text.contains(&format!("(${left:.4} on branches left)")), "{text}");
}

/// `--project`: each project's report has the totals of its row in the project report, and its
/// activity counts only its sessions.
#[test]
fn a_project_report_is_its_row_of_the_project_report() {
    let files = session_scan::expand_paths(&[corpora().join("sample-16/sessions")]);
    let projects = build(&files, &opts(Group::Project), &|| {});
    let all = build(&files, &opts(Group::Daily), &|| {});
    let names: Vec<&String> = projects.rows.keys().filter(|k| k.1.is_none() && k.2.is_none()).map(|k| &k.0).collect();
    assert!(names.len() >= 4);
    let mut sessions = 0;
    for name in &names {
        // A name inside another project's would take that one's sessions too.
        if names.iter().any(|other| other != name && other.contains(name.as_str())) {
            continue;
        }
        let only = build(&files, &Options { project: Some(name.to_string()), ..opts(Group::Daily) }, &|| {});
        let row = projects.rows.iter().find(|(k, _)| &k.0 == *name && k.1.is_none()).unwrap().1;
        assert_eq!(only.totals.events, row.events, "{name}");
        assert_eq!(only.totals.usage.tokens(), row.usage.tokens(), "{name}");
        assert!((only.totals.usage.cost - row.usage.cost).abs() < 1e-9, "{name}");
        sessions += only.activity.sessions;
    }
    assert_eq!(sessions, all.activity.sessions, "every session is in one project");
    let none = build(&files, &Options { project: Some("/no/such/project".into()), ..opts(Group::Daily) }, &|| {});
    assert_eq!((none.rows.len(), none.totals.events, none.activity.sessions), (0, 0, 0));
}
