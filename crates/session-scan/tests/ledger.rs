//! Usage held to the money actually spent: `corpora/ledger` was written by Pi 1.6's own
//! `SessionManager`, forks and branched sessions included, with a ledger of every spend made
//! through its API (never the entries a fork or a branched session copies). The reports must give
//! the ledger's events, tokens and cost for every day, each session's own spend, and its totals.

#![allow(clippy::unwrap_used)] // test inputs are committed; a panic is a failed test

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/ledger")
}

/// One spend of the ledger.
struct Spend {
    session: String,
    day: String,
    tokens: u64,
    cost: f64,
}

fn ledger() -> Vec<Spend> {
    let text = std::fs::read_to_string(corpus().join("ledger.jsonl")).unwrap();
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            Spend {
                session: v["session"].as_str().unwrap().to_owned(),
                day: v["timestamp"].as_str().unwrap()[..10].to_owned(),
                tokens: v["tokens"].as_u64().unwrap(),
                cost: v["cost"].as_f64().unwrap(),
            }
        })
        .collect()
}

fn usage(report: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_session-scan"))
        .args(["-q", "--utc", "usage", report, "--json"])
        .arg(corpus().join("sessions"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Two sums of the same amounts, added in another order, agree to well under a micro-dollar.
fn same_cost(a: f64, b: f64) -> bool {
    (a - b).abs() < 5e-7
}

#[test]
fn every_day_has_the_ledgers_events_tokens_and_cost() {
    let spends = ledger();
    let mut days: BTreeMap<String, (u64, u64, f64)> = BTreeMap::new();
    for s in &spends {
        let d = days.entry(s.day.clone()).or_default();
        d.0 += 1;
        d.1 += s.tokens;
        d.2 += s.cost;
    }
    let report = usage("daily");
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), days.len(), "the same days");
    for row in rows {
        let day = row["period"].as_str().unwrap();
        let (events, tokens, cost) = days[day];
        assert_eq!(row["events"].as_u64(), Some(events), "{day}: events");
        assert_eq!(row["totalTokens"].as_u64(), Some(tokens), "{day}: tokens");
        assert!(same_cost(row["cost"].as_f64().unwrap(), cost), "{day}: cost {} against {cost}", row["cost"]);
    }
    let totals = &report["totals"];
    assert_eq!(totals["events"].as_u64(), Some(spends.len() as u64));
    assert_eq!(totals["totalTokens"].as_u64(), Some(spends.iter().map(|s| s.tokens).sum()));
    assert!(same_cost(totals["cost"].as_f64().unwrap(), spends.iter().map(|s| s.cost).sum()));
    // The corpus holds copies, so the test can tell counting them from not.
    assert!(report["duplicates"]["events"].as_u64().unwrap() > 50, "{}", report["duplicates"]);
}

#[test]
fn every_session_shows_its_own_spend_beside_what_it_copied() {
    let mut own: BTreeMap<String, (u64, f64, u64)> = BTreeMap::new();
    for s in ledger() {
        let o = own.entry(s.session).or_default();
        o.0 += s.tokens;
        o.1 += s.cost;
        o.2 += 1;
    }
    let report = usage("session");
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 240);
    let mut copying = 0;
    for row in rows {
        let id = row["session"].as_str().unwrap();
        let copied = &row["copied"];
        let tokens = row["totalTokens"].as_u64().unwrap() - copied["totalTokens"].as_u64().unwrap_or(0);
        let cost = row["cost"].as_f64().unwrap() - copied["cost"].as_f64().unwrap_or(0.0);
        let events = row["events"].as_u64().unwrap() - copied["events"].as_u64().unwrap_or(0);
        let (want_tokens, want_cost, want_events) = own.get(id).copied().unwrap_or_default();
        assert_eq!(events, want_events, "{id}: own spends");
        assert_eq!(tokens, want_tokens, "{id}: own tokens");
        assert!(same_cost(cost, want_cost), "{id}: own cost {cost} against {want_cost}");
        copying += usize::from(copied["events"].as_u64().unwrap_or(0) > 0);
    }
    assert!(copying >= 5, "sessions with copies: {copying}");
}
