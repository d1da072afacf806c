//! The `session-scan` binary on stores: listings by date and limit, usage reports, the
//! session-dir override, Atomic's store, local times, the listing cache and completions.

#![allow(clippy::unwrap_used)] // test inputs are made here; a panic is a failed test

mod common;

use common::binary::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// `usage hourly` lists hours in time order: the hour repeated when clocks go back is two rows,
/// the earlier one (the larger offset, in Sydney) first, whatever the names' byte order.
#[test]
fn usage_hours_are_in_time_order_across_a_clock_change() {
    let dir = scratch("usage-hours");
    let mut text = format!("{HEADER}\n");
    // 02:30 +11:00, then 02:30 +10:00, then 03:10 +10:00 (Sydney, 2025-04-06).
    for (i, ts) in
        ["2025-04-05T15:30:00.000Z", "2025-04-05T16:30:00.000Z", "2025-04-05T17:10:00.000Z"].iter().enumerate()
    {
        text += &format!(
            r#"{{"type":"message","id":"a{i}","parentId":null,"timestamp":"{ts}","message":{{"role":"assistant","content":[],"provider":"p","model":"m","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"total":{i}}}}},"stopReason":"stop","timestamp":1}}}}"#
        );
        text.push('\n');
    }
    std::fs::write(dir.join("s.jsonl"), text).unwrap();
    let periods = |order: &str| {
        let out = run(scan()
            .args(["usage", "hourly", "--json", "--timezone", "Australia/Sydney", "--order", order])
            .arg(&dir));
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["report"], "hourly");
        let rows = report["rows"].as_array().unwrap().clone();
        rows.iter()
            .map(|r| (r["period"].as_str().unwrap().to_string(), r["cost"].as_f64().unwrap()))
            .collect::<Vec<_>>()
    };
    let asc = vec![
        ("2025-04-06T02:00+11:00".to_string(), 0.0),
        ("2025-04-06T02:00+10:00".to_string(), 1.0),
        ("2025-04-06T03:00+10:00".to_string(), 2.0),
    ];
    assert_eq!(periods("asc"), asc);
    assert_eq!(periods("desc"), asc.into_iter().rev().collect::<Vec<_>>());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `usage --sort cost|tokens` orders groups by their own totals (`--order desc`: largest first),
/// `--limit N` keeps the first N groups with their sub-rows, and the totals stay those of all.
#[test]
fn usage_rows_sorted_by_cost_and_limited() {
    let store = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpora/sample-16/sessions");
    let report = |extra: &[&str]| -> serde_json::Value {
        let out = run(scan().args(["usage", "session", "--json", "--timezone", "UTC"]).arg(&store).args(extra));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let all = report(&[]);
    let mut by_cost: Vec<(f64, String)> = all["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["cost"].as_f64().unwrap(), r["session"].as_str().unwrap().to_string()))
        .collect();
    by_cost.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
    let top = report(&["--sort", "cost", "--order", "desc", "--limit", "5"]);
    let got: Vec<(f64, String)> = top["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["cost"].as_f64().unwrap(), r["session"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(got, by_cost[..5]);
    assert!(got[0].0 > got[4].0);
    assert_eq!(top["totals"], all["totals"]);
    // Sub-rows stay under their group; two groups kept, by tokens, smallest first.
    let models =
        run(scan().args(["usage", "model", "--json", "--by-source", "--sort", "tokens", "--limit", "2"]).arg(&store));
    let models: serde_json::Value = serde_json::from_slice(&models.stdout).unwrap();
    let rows = models["rows"].as_array().unwrap();
    let groups: Vec<&serde_json::Value> = rows.iter().filter(|r| r.get("source").is_none()).collect();
    assert_eq!(groups.len(), 2, "{rows:?}");
    let tokens = |r: &serde_json::Value| r["totalTokens"].as_f64().unwrap();
    let every = run(scan().args(["usage", "model", "--json"]).arg(&store));
    let every: serde_json::Value = serde_json::from_slice(&every.stdout).unwrap();
    let mut least: Vec<(f64, String)> = every["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (tokens(r), r["model"].as_str().unwrap().to_string()))
        .collect();
    least.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    let kept: Vec<(f64, String)> =
        groups.iter().map(|r| (tokens(r), r["model"].as_str().unwrap().to_string())).collect();
    assert_eq!(kept, least[..2]);
    let mut current = None;
    for r in rows {
        match r.get("source") {
            None => current = Some(r["model"].clone()),
            Some(_) => assert_eq!(Some(r["model"].clone()), current, "a sub-row under its group"),
        }
    }
}

/// `usage --atomic` reads Atomic's store (format.md §8: `~/.atomic/agent/sessions`, or its variables) and
/// counts its session summaries' usage (format.md §10, Atomic); without it, Pi's store and Pi's sources.
/// `files` and `export` take `--atomic` for the store too.
#[test]
fn usage_atomic_reads_atomics_store_and_summaries() {
    let base = scratch("usage-atomic");
    let home = base.join("home");
    let write = |dir: &Path, extra: &str| {
        std::fs::create_dir_all(dir).unwrap();
        let assistant = r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":2}},"timestamp":2}}"#;
        std::fs::write(dir.join("s.jsonl"), format!("{HEADER}\n{MESSAGE}\n{assistant}\n{extra}")).unwrap();
    };
    let summary = r#"{"type":"session_summary","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","summary":"s","summarizedThroughId":"b","usage":{"input":3,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.5}}}"#;
    write(&home.join(".atomic/agent/sessions/--w--"), &format!("{summary}\n"));
    let total = |vars: &[(&str, &Path)], extra: &[&str]| {
        let out = run(scan_at(&home, &base, vars).args(["usage", "daily", "--json", "--timezone", "UTC"]).args(extra));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (report["totals"]["cost"].as_f64().unwrap(), report["activity"]["sessions"].as_u64().unwrap())
    };
    assert_eq!(total(&[], &["--atomic"]), (2.5, 1));
    // Pi's store is empty; Atomic's store read as a root counts what Pi counts.
    assert_eq!(total(&[], &[]), (0.0, 0));
    let atomic_root = home.join(".atomic/agent/sessions");
    assert_eq!(total(&[], &[atomic_root.to_str().unwrap()]), (2.0, 1));
    // Atomic's own variable for its agent folder.
    let elsewhere = base.join("elsewhere");
    write(&elsewhere.join("sessions/--w--"), "");
    assert_eq!(total(&[("ATOMIC_CODING_AGENT_DIR", &elsewhere)], &["--atomic"]), (2.0, 1));
    // `files --atomic` reads the same store, and `export --atomic` looks ids up there.
    let files = run(scan_at(&home, &base, &[]).args(["files", "--json", "--atomic"]));
    let row: serde_json::Value = serde_json::from_slice(&files.stdout).unwrap();
    assert_eq!(row["file"], atomic_root.join("--w--/s.jsonl").to_str().unwrap(), "{row}");
    // Pi's store is not there: an error names it, and no session is listed.
    let pi_files = run(scan_at(&home, &base, &[]).args(["files", "--json"]));
    let pi_files = String::from_utf8(pi_files.stdout).unwrap();
    assert!(!pi_files.contains("sessionId") && pi_files.contains(".pi/agent/sessions"), "{pi_files}");
    let exported = run(scan_at(&home, &base, &[]).args(["export", "s", "--cwd", "/w", "--atomic"]));
    assert_eq!(exported.status.code(), Some(0), "{}", String::from_utf8_lossy(&exported.stderr));
    assert!(String::from_utf8(exported.stdout).unwrap().contains("<a id=\"entry-a\"></a>"));
    let not_found = run(scan_at(&home, &base, &[]).args(["export", "s", "--cwd", "/w"]));
    assert_ne!(not_found.status.code(), Some(0));
}

/// Pi's session-dir override (format.md §1: `PI_CODING_AGENT_SESSION_DIR`, then `sessionDir` in the project's
/// settings over the global ones; Atomic's variable with Pi's as an alias, format.md §8) names the flat
/// folder that `list` and `usage` read when no root is given: all of it, or with `--cwd` the
/// sessions of that cwd. A root or folder given on the command line comes first.
#[test]
fn the_session_dir_override_is_where_sessions_are_listed() {
    let base = scratch("override");
    let (home, project) = (base.join("home"), base.join("project"));
    let session = |dir: &Path, id: &str, cwd: &str| {
        std::fs::create_dir_all(dir).unwrap();
        let header = HEADER
            .replace(r#""id":"s""#, &format!("\"id\":\"{id}\""))
            .replace(r#""cwd":"/w""#, &format!("\"cwd\":\"{cwd}\""));
        std::fs::write(dir.join(format!("{id}.jsonl")), format!("{header}\n{MESSAGE}\n")).unwrap();
    };
    // The default store, one flat folder named by the environment, one by the global settings,
    // one by the project's, and Atomic's.
    session(&home.join(".pi/agent/sessions/--w--"), "default", "/w");
    let (by_env, by_global, by_project, atomic) =
        (base.join("by-env"), home.join("by-global"), base.join("by-project"), base.join("atomic-flat"));
    session(&by_env, "env-w", "/w");
    session(&by_env, "env-x", "/x");
    session(&by_global, "global", "/w");
    session(&by_project, "project", "/w");
    session(&atomic, "atomic", "/w");
    std::fs::create_dir_all(&project).unwrap();
    let list = |vars: &[(&str, &Path)], extra: &[&str]| {
        listed_ids(&run(scan_at(&home, &project, vars).args(["list", "--json"]).args(extra)))
    };
    assert_eq!(list(&[], &[]), ["default"]);
    let env: &[(&str, &Path)] = &[("PI_CODING_AGENT_SESSION_DIR", &by_env)];
    assert_eq!(list(env, &[]), ["env-w", "env-x"]);
    assert_eq!(list(env, &["--cwd", "/x"]), ["env-x"]);
    // A root on the command line is read as given.
    let default_root = home.join(".pi/agent/sessions");
    assert_eq!(list(env, &[default_root.to_str().unwrap()]), ["default"]);
    // Settings: the global file's `sessionDir` (`~` expanded), then the project's over it.
    std::fs::write(
        home.join(".pi/agent/settings.json"),
        "{\n  \"theme\": \"dark\",\n  \"sessionDir\": \"~/by-global\"\n}\n",
    )
    .unwrap();
    assert_eq!(list(&[], &[]), ["global"]);
    std::fs::create_dir_all(project.join(".pi")).unwrap();
    let project_settings = format!("{{\"sessionDir\":{}}}", serde_json::json!(by_project.to_str().unwrap()));
    std::fs::write(project.join(".pi/settings.json"), &project_settings).unwrap();
    assert_eq!(list(&[], &[]), ["project"]);
    // A project's empty or null `sessionDir` still replaces the global one: no override, the
    // default store. A project's settings without the key leave the global one in force.
    for cleared in [r#"{"sessionDir":""}"#, r#"{"sessionDir":null}"#] {
        std::fs::write(project.join(".pi/settings.json"), cleared).unwrap();
        assert_eq!(list(&[], &[]), ["default"], "{cleared}");
    }
    std::fs::write(project.join(".pi/settings.json"), r#"{"theme":"light"}"#).unwrap();
    assert_eq!(list(&[], &[]), ["global"]);
    std::fs::write(project.join(".pi/settings.json"), &project_settings).unwrap();
    // A relative folder is the project's (`--cwd`, else where we run), where Pi would run.
    std::fs::write(project.join(".pi/settings.json"), r#"{"sessionDir":"kept-here"}"#).unwrap();
    let project_cwd = project.to_str().unwrap();
    session(&project.join("kept-here"), "kept-here", project_cwd);
    assert_eq!(list(&[], &[]), ["kept-here"]);
    let from_home = run(scan_at(&home, &home, &[]).args(["list", "--json", "--cwd", project_cwd]));
    assert_eq!(listed_ids(&from_home), ["kept-here"]);
    std::fs::write(project.join(".pi/settings.json"), project_settings).unwrap();
    // The environment before any settings.
    assert_eq!(list(env, &[]), ["env-w", "env-x"]);
    // Atomic: its own variable, Pi's as an alias.
    let atomic_list =
        |vars: &[(&str, &Path)]| listed_ids(&run(scan_at(&home, &project, vars).args(["list", "--json", "--atomic"])));
    assert_eq!(
        atomic_list(&[("ATOMIC_CODING_AGENT_SESSION_DIR", &atomic), ("PI_CODING_AGENT_SESSION_DIR", &by_env)]),
        ["atomic"]
    );
    assert_eq!(atomic_list(&[("PI_CODING_AGENT_SESSION_DIR", &by_env)]), ["env-w", "env-x"]);
    // `usage` reads the same folder.
    let usage = run(scan_at(&home, &project, env).args(["usage", "session", "--json"]));
    let report: serde_json::Value = serde_json::from_slice(&usage.stdout).unwrap();
    assert_eq!(report["activity"]["sessions"], 2, "{report}");
    // So do `files` without a path, and `resolve` (`pi --session ID`) when it looks for an id.
    let files = run(scan_at(&home, &project, env).args(["files", "--json"]));
    let mut sessions: Vec<String> = String::from_utf8(files.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["sessionId"].as_str().unwrap().to_string())
        .collect();
    sessions.sort();
    assert_eq!(sessions, ["env-w", "env-x"]);
    let resolved = run(scan_at(&home, &project, env).args(["resolve", "env-x", "--cwd", "/x", "--json"]));
    let resolved: serde_json::Value = serde_json::from_slice(&resolved.stdout).unwrap();
    assert_eq!(resolved["type"], "local", "{resolved}");
    assert_eq!(resolved["path"], by_env.join("env-x.jsonl").to_str().unwrap(), "{resolved}");
    // A folder given with a cwd is filtered by it (1.6's list(cwd, dir)), unless it is that cwd's
    // default folder: there a session of another cwd stays.
    let default_w = default_root.join("--w--");
    session(&default_w, "stray", "/z");
    let dir_list = |dir: &Path| {
        listed_ids(&run(scan_at(&home, &project, &[]).args(["list", "--json", "--cwd", "/w", "--dir"]).arg(dir)))
    };
    assert_eq!(dir_list(&default_w), ["default", "stray"]);
    assert_eq!(dir_list(&by_env), ["env-w"]);
    std::fs::remove_dir_all(&base).unwrap();
}

/// `--limit` on a flat folder, whose files Pi orders by name rather than by mtime: the newest
/// sessions wherever their names put them (the early stop must weigh every file not yet read,
/// not only the next one).
#[test]
fn limit_on_a_flat_folder_finds_the_newest_whatever_their_names() {
    let dir = scratch("flat-limit");
    let day = 86_400_000u64;
    let newest = 1_780_272_000_000u64; // 2026-06-01T00:00:00Z
    let n = 700u64;
    for k in 0..n {
        // Names in an order unrelated to age: the newest sessions are scattered through it.
        let name = format!("s{:04}.jsonl", (k * 389) % n);
        let t = newest - k * day;
        let text = format!(
            "{HEADER}\n{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"day {k}\",\"timestamp\":{t}}}}}\n"
        );
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let mtime = std::time::UNIX_EPOCH + Duration::from_millis(t + 60_000);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(mtime).unwrap();
    }
    let full = run(scan().args(["list", "--json", "--dir"]).arg(&dir));
    let full: serde_json::Value = serde_json::from_slice(&full.stdout).unwrap();
    let full = full.as_array().unwrap();
    assert_eq!(full.len(), n as usize);
    for limit in [1usize, 5, 300] {
        let out = run(scan().args(["list", "--json", "--limit", &limit.to_string(), "--dir"]).arg(&dir));
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(rows.as_array().unwrap(), &full[..limit], "--limit {limit}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--atomic` hides Atomic's internal workflow sessions (format.md §8: `internal` exactly `true` and a
/// `workflow` whose `runId`, `stageId` and `stageName` are non-empty after trimming), also when
/// the file's first line does not parse and the header comes after it (format.md §8.1); malformed markers
/// stay visible; `--include-internal` shows them all; a hidden session is not reported.
#[test]
fn atomic_internal_workflow_sessions_are_hidden_unless_asked_for() {
    let root = scratch("atomic-internal");
    let dir = root.join("--w--");
    std::fs::create_dir_all(&dir).unwrap();
    let header = |id: &str, marker: &str| {
        format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"{marker}}}"#
        )
    };
    let workflow = r#","internal":true,"workflow":{"runId":"r1","stageId":"s1","stageName":"plan"}"#;
    let files = [
        ("plain", header("plain", "")),
        ("internal", header("internal", workflow)),
        ("after-garbage", format!("{{not json\n{}", header("after-garbage", workflow))),
        ("blank-run-id", header("blank-run-id", &workflow.replace(r#""r1""#, r#""  ""#))),
        ("internal-string", header("internal-string", &workflow.replace("true", r#""true""#))),
        ("no-stage-name", header("no-stage-name", &workflow.replace(r#","stageName":"plan""#, ""))),
    ];
    for (id, head) in &files {
        std::fs::write(dir.join(format!("{id}.jsonl")), format!("{head}\n{MESSAGE}\n")).unwrap();
    }
    let ids = |extra: &[&str]| {
        let out = run(scan().args(["list", "--json", "--atomic"]).args(extra).arg(&root));
        assert!(!String::from_utf8_lossy(&out.stderr).contains("internal"), "{}", String::from_utf8_lossy(&out.stderr));
        listed_ids(&out)
    };
    assert_eq!(ids(&[]), ["blank-run-id", "internal-string", "no-stage-name", "plain"]);
    assert_eq!(
        ids(&["--include-internal"]),
        ["after-garbage", "blank-run-id", "internal", "internal-string", "no-stage-name", "plain"]
    );
    // Pi (no --atomic) knows no such thing.
    assert_eq!(listed_ids(&run(scan().args(["list", "--json"]).arg(&root))).len(), 6);
    std::fs::remove_dir_all(&root).unwrap();
}

/// Without `HOME` (a service or cron job), the default store is under the user's home from the
/// password database, as Node's `os.homedir()` finds it, not a relative `.pi` in the working folder.
#[test]
fn without_home_the_default_store_is_still_under_the_users_home() {
    let dir = scratch("no-home");
    let stray = dir.join(".pi/agent/sessions/--w--");
    std::fs::create_dir_all(&stray).unwrap();
    good_file(&stray, "stray.jsonl");
    let mut cmd = scan_at(&dir, &dir, &[]);
    let out = run(cmd.env_remove("HOME").args(["list", "--json", "--fields", "path"]));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(!listed.contains("stray.jsonl"), "a relative .pi was read: {listed}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("session-scan: .pi"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Spec format.md §9: `created` is `new Date(header.timestamp)` and `modified` takes
/// `Date.parse(entry.timestamp)`, which read a time without an offset in the machine's zone.
/// The expected rows are Pi 1.6's (`list.mjs` run with each `TZ`): a summer-time gap takes the
/// offset before it, and `"0"` is the year 2000.
#[test]
fn times_without_an_offset_are_read_in_the_local_zone() {
    let root = scratch("local-zone");
    let dir = root.join("--w--");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("a.jsonl"),
        concat!(
            r#"{"type":"session","version":3,"id":"local","timestamp":"2026-01-05T10:00:00","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"Jan 5 2026 11:00","message":{"role":"user","content":"hi"}}"#,
            "\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("b.jsonl"),
        concat!(
            r#"{"type":"session","version":3,"id":"gap","timestamp":"Mar 8 2026 2:30","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"0","message":{"role":"user","content":"zero"}}"#,
            "\n"
        ),
    )
    .unwrap();
    let expected = [
        (
            "UTC",
            [
                "2026-01-05T10:00:00.000Z",
                "2026-01-05T11:00:00.000Z",
                "2026-03-08T02:30:00.000Z",
                "2000-01-01T00:00:00.000Z",
            ],
        ),
        (
            "America/New_York",
            [
                "2026-01-05T15:00:00.000Z",
                "2026-01-05T16:00:00.000Z",
                "2026-03-08T07:30:00.000Z",
                "2000-01-01T05:00:00.000Z",
            ],
        ),
        (
            "Asia/Kolkata",
            [
                "2026-01-05T04:30:00.000Z",
                "2026-01-05T05:30:00.000Z",
                "2026-03-07T21:00:00.000Z",
                "1999-12-31T18:30:00.000Z",
            ],
        ),
    ];
    for (zone, times) in expected {
        let out = run(scan().env("TZ", zone).args(["list", "--json"]).arg(&root));
        assert!(out.status.success(), "{zone}: {}", String::from_utf8_lossy(&out.stderr));
        let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
        let got: Vec<(&str, &str, &str)> = rows
            .iter()
            .map(|r| (r["id"].as_str().unwrap(), r["created"].as_str().unwrap(), r["modified"].as_str().unwrap()))
            .collect();
        assert_eq!(got, [("local", times[0], times[1]), ("gap", times[2], times[3])], "{zone}");
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// Where Pi 1.6 throws and we go on, stderr says so with the line and byte offset (found by
/// running random hostile sessions through Pi and us): a `session_info` name that is not a
/// string (`getSessionName()`: `entry.name?.trim is not a function`) and an assistant content
/// block that is `null` (`getSessionStats()`: `Cannot read properties of null (reading 'type')`).
#[test]
fn where_pi_throws_on_a_name_or_a_null_block_stderr_says_so() {
    let dir = scratch("throws-name-null-block");
    let file = dir.join("a.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[null,{"type":"toolCall","id":"t","name":"x","arguments":{}}],"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}},"provider":"p","model":"m"}}"#,
            "\n",
            r#"{"type":"session_info","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","name":5}"#,
            "\n"
        ),
    )
    .unwrap();
    // By default one line sums the notes up; -v names each; -q says nothing.
    let quiet = run(scan().args(["context", "--json", "-q"]).arg(&file));
    assert!(quiet.status.success() && quiet.stderr.is_empty(), "{}", String::from_utf8_lossy(&quiet.stderr));
    let summed = run(scan().args(["context", "--json"]).arg(&file));
    let stderr = String::from_utf8_lossy(&summed.stderr);
    assert_eq!(
        stderr,
        "session-scan: 1 line in 1 file skipped or set aside, as Pi skips them or fails on them (-v names each)\n"
    );
    let context = run(scan().args(["context", "--json", "-v"]).arg(&file));
    assert!(context.status.success());
    let record: serde_json::Value = serde_json::from_slice(&context.stdout).unwrap();
    assert_eq!(record["sessionName"], serde_json::Value::Null);
    let stderr = String::from_utf8_lossy(&context.stderr);
    assert!(stderr.contains(":3: byte 450: session name that is not a string"), "{stderr}");
    let stats = run(scan().args(["stats", "--json", "-v"]).arg(&file));
    assert!(stats.status.success());
    let record: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(record["stats"]["toolCalls"], 1);
    let stderr = String::from_utf8_lossy(&stats.stderr);
    assert!(stderr.contains(":2: byte 90: assistant content block that is null"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Spec format.md §9: with no message or header date, `modified` is `stats.mtime`, which Node makes by
/// rounding `mtimeMs` to the millisecond (`.7465` s is `.747`, `.7464` s is `.746`: Node 20 on
/// files touched so); sessions whose mtimes differ by less than a millisecond keep their order.
#[test]
fn the_mtime_fallback_rounds_to_the_millisecond_as_node_does() {
    let root = scratch("mtime-round");
    let dir = root.join("--w--");
    std::fs::create_dir_all(&dir).unwrap();
    let header = |id: &str| format!(r#"{{"type":"session","version":3,"id":"{id}","timestamp":5,"cwd":"/w"}}"#);
    for (id, nanos) in [("up", 746_500_000), ("down", 746_400_000)] {
        let path = dir.join(format!("{id}.jsonl"));
        std::fs::write(&path, header(id) + "\n").unwrap();
        let when = std::time::UNIX_EPOCH + std::time::Duration::new(1_767_225_600, nanos);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(when).unwrap();
    }
    let out = run(scan().args(["list", "--json"]).arg(&root));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let got: Vec<(&str, &str)> =
        rows.iter().map(|r| (r["id"].as_str().unwrap(), r["modified"].as_str().unwrap())).collect();
    assert_eq!(got, [("up", "2026-01-01T00:00:00.747Z"), ("down", "2026-01-01T00:00:00.746Z")]);
    std::fs::remove_dir_all(&root).unwrap();
}

/// The picker's fields, as a picker asks for them (no `allMessagesText`).
const PICKER_FIELDS: &str = "path,id,cwd,name,parentSessionPath,created,modified,messageCount,firstMessage";

/// `list --cache-file`: the listing is the same from a cold cache, a warm one and none, in every
/// output mode; a file appended to, rewritten with its size and mtime kept, or deleted is seen at
/// once; an unchanged store is listed without reading a file or writing the cache.
#[test]
fn a_cached_listing_is_the_listing_and_follows_every_change() {
    use session_scan::cache::{ListCache, SETTLE_MS};
    let made = std::time::Instant::now();
    let root = dated_store("cache", 40);
    let cache = root.with_extension("cache");
    let _ = std::fs::remove_file(&cache);
    let list = |extra: &[&str], cached: bool| {
        let mut c = scan();
        c.args(["list", "--fields", PICKER_FIELDS]).args(extra).arg(&root);
        if cached {
            c.arg("--cache-file").arg(&cache);
        }
        let out = run(&mut c);
        assert_eq!(out.status.code(), Some(1), "the broken file is reported: {}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("broken.jsonl"));
        out.stdout
    };
    let modes: [&[&str]; 4] = [&["--json"], &["--json", "--limit", "7"], &["--ndjson", "--limit", "3"], &[]];
    let expect_all = |why: &str| {
        for mode in modes {
            assert_eq!(list(mode, true), list(mode, false), "{why}: {mode:?}");
        }
    };
    // Files changed just now are read but not kept (checked when the machine was quick enough for
    // the listing to come well within the two seconds).
    assert_eq!(list(&["--json"], true), list(&["--json"], false));
    if made.elapsed() < Duration::from_millis(SETTLE_MS as u64 / 2) {
        assert!(ListCache::open(&cache).is_empty());
    }
    expect_all("fresh files");
    std::thread::sleep(Duration::from_millis(SETTLE_MS as u64 + 200));
    expect_all("cold cache");
    let held = ListCache::open(&cache);
    assert_eq!(held.len(), 41, "every session and the broken file");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&cache).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "it holds first messages: its owner's only");
    }
    let written = std::fs::metadata(&cache).unwrap().modified().unwrap();
    expect_all("warm cache");
    assert_eq!(std::fs::metadata(&cache).unwrap().modified().unwrap(), written, "nothing changed, nothing written");
    let stats = |extra: &[&str]| {
        let out = run(scan()
            .args(["list", "--json", "--stats", "--fields", PICKER_FIELDS])
            .args(extra)
            .arg(&root)
            .arg("--cache-file")
            .arg(&cache));
        stats_of(&out)
    };
    let all_cached = serde_json::json!({"found": 41, "pruned": 0, "read": 0, "fromCache": 41, "leftOut": 1, "hidden": 0, "shown": 40});
    assert_eq!(stats(&[]), all_cached, "an unchanged store is listed without reading a file");
    let streamed = run(scan()
        .args(["list", "--ndjson", "--stats", "--fields", PICKER_FIELDS])
        .arg(&root)
        .arg("--cache-file")
        .arg(&cache));
    assert_eq!(stats_of(&streamed), all_cached, "streamed");

    let session = root.join("--w--/s0003.jsonl");
    let text = std::fs::read_to_string(&session).unwrap();
    let mtime = std::fs::metadata(&session).unwrap().modified().unwrap();
    // Rewritten in place, the same size and the mtime set back: another first message.
    std::fs::write(&session, text.replace("day 3", "day X")).unwrap();
    std::fs::File::options().write(true).open(&session).unwrap().set_modified(mtime).unwrap();
    assert_eq!(stats(&[])["read"], 1, "the rewritten file is read again");
    assert!(String::from_utf8(list(&["--json"], true)).unwrap().contains("\"firstMessage\":\"day X\""));
    expect_all("rewritten");
    // Appended: one more message.
    std::fs::write(&session, format!("{text}{}\n", MESSAGE.replace(r#""id":"a""#, r#""id":"b""#))).unwrap();
    let count = |out: &[u8]| {
        let rows: serde_json::Value = serde_json::from_slice(out).unwrap();
        rows.as_array().unwrap().iter().map(|r| r["messageCount"].as_u64().unwrap()).sum::<u64>()
    };
    assert_eq!(count(&list(&["--json"], true)), 41);
    expect_all("appended");
    // Deleted: listed no more, and dropped from the cache by a whole listing.
    std::fs::remove_file(root.join("--w--/s0010.jsonl")).unwrap();
    expect_all("deleted");
    list(&["--json"], true);
    assert!(!ListCache::open(&cache).contains(&root.join("--w--/s0010.jsonl"), false));
    // A listing that reads only some files keeps the entries of the others; one of a flat folder
    // drops those of its files deleted since.
    std::fs::remove_file(root.join("--w--/s0020.jsonl")).unwrap();
    list(&["--json", "--limit", "2"], true);
    let held = ListCache::open(&cache);
    assert!(
        held.contains(&root.join("--w--/s0030.jsonl"), false) && held.contains(&root.join("--w--/s0020.jsonl"), false)
    );
    let folder = run(scan()
        .args(["list", "--json", "--fields", PICKER_FIELDS, "--dir"])
        .arg(root.join("--w--"))
        .arg("--cache-file")
        .arg(&cache));
    let uncached = run(scan().args(["list", "--json", "--fields", PICKER_FIELDS, "--dir"]).arg(root.join("--w--")));
    assert_eq!(folder.stdout, uncached.stdout);
    let held = ListCache::open(&cache);
    assert!(
        held.contains(&root.join("--w--/s0030.jsonl"), false) && !held.contains(&root.join("--w--/s0020.jsonl"), false)
    );
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::remove_file(&cache).unwrap();
}

/// A broken cache is rebuilt with a warning; a file there that is not a cache is neither read nor
/// overwritten; texts cannot be cached.
#[test]
fn a_cache_file_is_never_trusted_or_clobbered() {
    let dir = scratch("cache-files");
    let store = dir.join("store");
    std::fs::create_dir_all(store.join("--w--")).unwrap();
    good_file(&store.join("--w--"), "a.jsonl");
    let expected = run(scan().args(["list", "--json", "--fields", PICKER_FIELDS]).arg(&store)).stdout;
    let list_with = |cache: &Path| {
        run(scan().args(["list", "--json", "--fields", PICKER_FIELDS]).arg(&store).arg("--cache-file").arg(cache))
    };
    let broken = dir.join("broken.cache");
    std::fs::write(&broken, b"session-scan list cache\n\x05\xff\xff").unwrap();
    let out = list_with(&broken);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, expected);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unreadable"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read(&broken).unwrap().len() > 30, "rebuilt");
    let foreign = dir.join("notes.txt");
    std::fs::write(&foreign, b"keep me\n").unwrap();
    let out = list_with(&foreign);
    assert_eq!(out.stdout, expected);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a session-scan cache"));
    assert_eq!(std::fs::read(&foreign).unwrap(), b"keep me\n");
    let texts = run(scan().args(["list", "--json"]).arg(&store).arg("--cache-file").arg(dir.join("t.cache")));
    assert_eq!(texts.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&texts.stderr).contains("allMessagesText"));
    assert!(!dir.join("t.cache").exists());
    // The table shows no texts, so it can be cached whatever the fields.
    let table = |cached: bool| {
        let mut c = scan();
        c.env("COLUMNS", "100").arg("list").arg(&store);
        if cached {
            c.arg("--cache-file").arg(dir.join("t.cache"));
        }
        run(&mut c)
    };
    let cached = table(true);
    assert_eq!(cached.status.code(), Some(0), "{}", String::from_utf8_lossy(&cached.stderr));
    assert_eq!(cached.stdout, table(false).stdout);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `completions` writes a script that names every command and option, and bash reads it without
/// a syntax error.
#[test]
fn completion_scripts_name_every_command() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = run(scan().args(["completions", shell]));
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for word in ["tree", "stats", "context", "list", "search", "usage", "resolve", "export", "max-output-lines"] {
            assert!(script.contains(word), "{shell} script lacks {word}");
        }
    }
    let dir = scratch("completions");
    let script = dir.join("session-scan.bash");
    std::fs::write(&script, run(scan().args(["completions", "bash"])).stdout).unwrap();
    let checked = Command::new("bash").arg("-n").arg(&script).output().unwrap();
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}
