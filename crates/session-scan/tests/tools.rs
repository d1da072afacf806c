//! `session-scan tools`: the calls, failures, unanswered calls and durations of every tool, held
//! to a second reading of the corpora (`serde_json`), fork copies counted once.

#![allow(clippy::unwrap_used)] // test inputs are made here; a panic is a failed test

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

fn corpora() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpora")
}

fn all_days() -> session_scan::days::DayRange {
    session_scan::days::DayRange::all()
}

#[derive(Debug, Default, PartialEq)]
struct Expected {
    calls: u64,
    errors: u64,
    unanswered: u64,
    sessions: u64,
    durations: Vec<f64>,
}

fn ms(v: &serde_json::Value) -> Option<f64> {
    v.as_str()?.parse::<jiff::Timestamp>().ok().map(|t| t.as_millisecond() as f64)
}

#[test]
fn figures_are_those_of_a_second_reading() {
    let files = session_scan::expand_paths(&[corpora().join("sample-16/sessions"), corpora().join("real/sessions")]);
    let mut want: BTreeMap<String, Expected> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    let mut copies = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<serde_json::Value> = text.lines().skip(1).filter_map(|l| serde_json::from_str(l).ok()).collect();
        let mut used = std::collections::HashSet::new();
        for (k, v) in lines.iter().enumerate() {
            let m = &v["message"];
            if v["type"] != "message" || m["role"] != "assistant" {
                continue;
            }
            for b in m["content"].as_array().into_iter().flatten().filter(|b| b["type"] == "toolCall") {
                let id = b["id"].as_str().unwrap_or("").to_string();
                if !id.is_empty() && !seen.insert(id.clone()) {
                    copies += 1;
                    continue;
                }
                let name = b["name"].as_str().unwrap_or("").to_string();
                let e = want.entry(name.clone()).or_default();
                e.calls += 1;
                if used.insert(name) {
                    e.sessions += 1;
                }
                // The first result after the call that names it, unless a later call of the same id
                // came first (ids are unique in these corpora).
                let result = lines[k + 1..].iter().find(|r| {
                    r["type"] == "message"
                        && r["message"]["role"] == "toolResult"
                        && r["message"]["toolCallId"] == id.as_str()
                });
                match result {
                    None => e.unanswered += 1,
                    Some(r) => {
                        e.errors += u64::from(r["message"]["isError"] == true);
                        if let (Some(start), Some(end)) = (ms(&v["timestamp"]), ms(&r["timestamp"]))
                            && end >= start
                        {
                            e.durations.push(end - start);
                        }
                    }
                }
            }
        }
    }
    let report =
        session_scan::tools::build(&files, session_scan::ReadStrategy::Auto, None, &all_days(), &session_scan::UTC);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.sessions, files.len() as u64);
    assert_eq!(report.copies, copies);
    assert!(copies > 0, "sample-16 has forks");
    let got: BTreeMap<String, Expected> = report
        .tools
        .iter()
        .map(|(name, f)| {
            let mut durations = f.durations_ms.clone();
            durations.sort_by(f64::total_cmp);
            let e = Expected {
                calls: f.calls,
                errors: f.errors,
                unanswered: f.unanswered,
                sessions: f.sessions,
                durations,
            };
            (name.clone(), e)
        })
        .collect();
    for e in want.values_mut() {
        e.durations.sort_by(f64::total_cmp);
    }
    assert_eq!(got, want);
    assert!(got.values().map(|e| e.errors).sum::<u64>() > 50 && got.values().any(|e| e.unanswered > 0));
}

/// `--project TEXT`: only the sessions whose header cwd contains it, each call counted in the
/// project of the session that made it first: projects that split the store add up to it.
#[test]
fn projects_that_split_the_store_add_up_to_it() {
    let files = session_scan::expand_paths(&[corpora().join("sample-16/sessions")]);
    let cwd_of = |f: &PathBuf| {
        let text = std::fs::read_to_string(f).unwrap();
        let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        header["cwd"].as_str().unwrap_or("").to_string()
    };
    let parts = ["/Users/", "/home/"];
    assert!(files.iter().all(|f| parts.iter().filter(|p| cwd_of(f).contains(*p)).count() == 1));
    let all =
        session_scan::tools::build(&files, session_scan::ReadStrategy::Auto, None, &all_days(), &session_scan::UTC);
    let split: Vec<_> = parts
        .iter()
        .map(|p| {
            session_scan::tools::build(
                &files,
                session_scan::ReadStrategy::Auto,
                Some(p),
                &all_days(),
                &session_scan::UTC,
            )
        })
        .collect();
    let calls = |r: &session_scan::tools::ToolsReport| r.tools.values().map(|f| f.calls).sum::<u64>();
    assert!(split.iter().all(|r| r.sessions > 0 && calls(r) > 0));
    assert_eq!(split.iter().map(|r| r.sessions).sum::<u64>(), all.sessions);
    assert_eq!(split.iter().map(calls).sum::<u64>(), calls(&all));
    assert_eq!(split.iter().map(|r| r.copies).sum::<u64>(), all.copies);
    for (name, f) in &all.tools {
        let errors: u64 = split.iter().map(|r| r.tools.get(name).map_or(0, |g| g.errors)).sum();
        assert_eq!(errors, f.errors, "{name}");
    }
    assert_eq!(
        session_scan::tools::build(
            &files,
            session_scan::ReadStrategy::Auto,
            Some("/nobody-has-this/"),
            &all_days(),
            &session_scan::UTC
        )
        .sessions,
        0
    );
}

/// `--since` and `--until`: days that split the store's calls add up to them all.
#[test]
fn days_that_split_the_store_add_up_to_it() {
    let files = session_scan::expand_paths(&[corpora().join("sample-16/sessions")]);
    let days = |since: Option<&str>, until: Option<&str>| {
        session_scan::days::DayRange::parse(since, until, &jiff::tz::TimeZone::get("Europe/Paris").unwrap()).unwrap()
    };
    let calls = |r: &session_scan::tools::ToolsReport| r.tools.values().map(|f| f.calls).sum::<u64>();
    let all = calls(&session_scan::tools::build(
        &files,
        session_scan::ReadStrategy::Auto,
        None,
        &all_days(),
        &session_scan::UTC,
    ));
    let before = calls(&session_scan::tools::build(
        &files,
        session_scan::ReadStrategy::Auto,
        None,
        &days(None, Some("2025-01-14")),
        &session_scan::UTC,
    ));
    let after = calls(&session_scan::tools::build(
        &files,
        session_scan::ReadStrategy::Auto,
        None,
        &days(Some("2025-01-15"), None),
        &session_scan::UTC,
    ));
    assert!(before > 0 && after > 0, "{before} {after}");
    assert_eq!(before + after, all);
    let one_day = calls(&session_scan::tools::build(
        &files,
        session_scan::ReadStrategy::Auto,
        None,
        &days(Some("2025-01-15"), Some("2025-01-15")),
        &session_scan::UTC,
    ));
    assert!(one_day > 0 && one_day < after);
}

/// The command's JSON: tools most called first, each with its durations' median, p95, max and
/// total; a store with no calls gives none.
#[test]
fn the_command_reports_every_tool() {
    let store = corpora().join("sample-16/sessions");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_session-scan"))
        .args(["tools", "--json"])
        .arg(&store)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools = report["tools"].as_array().unwrap();
    let calls: Vec<u64> = tools.iter().map(|t| t["calls"].as_u64().unwrap()).collect();
    assert!(calls.windows(2).all(|w| w[0] >= w[1]), "{calls:?}");
    assert_eq!(report["calls"].as_u64().unwrap(), calls.iter().sum::<u64>());
    let library = session_scan::tools::build(
        &session_scan::expand_paths(std::slice::from_ref(&store)),
        session_scan::ReadStrategy::Auto,
        None,
        &all_days(),
        &session_scan::UTC,
    );
    for t in tools {
        let f = &library.tools[t["tool"].as_str().unwrap()];
        let d = &t["durationMs"];
        assert_eq!(d["median"].as_f64(), f.duration_quantile(0.5));
        assert_eq!(d["max"].as_f64(), f.durations_ms.iter().copied().reduce(f64::max));
        assert!(d["p95"].as_f64().unwrap() >= d["median"].as_f64().unwrap());
    }
}
