//! The `session-scan` binary end to end: exit codes, machine-readable errors, and files that
//! are not what their names say (FIFOs, unreadable files, dangling links, folders).

#![allow(clippy::unwrap_used)] // test inputs are made here; a panic is a failed test

mod common;

use common::binary::*;

use std::path::Path;
use std::process::Command;
use std::time::Duration;
#[test]
fn exit_codes_are_zero_one_and_two() {
    let dir = scratch("codes");
    let ok = good_file(&dir, "ok.jsonl");
    let bad = dir.join("bad.jsonl");
    std::fs::write(&bad, "not json\n").unwrap();
    assert_eq!(run(scan().arg("stats").arg(&ok)).status.code(), Some(0));
    assert_eq!(run(scan().arg("stats").arg(&ok).arg(&bad)).status.code(), Some(1));
    assert_eq!(run(scan().arg("stats").arg("--no-such-flag")).status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_folder_without_session_files_is_named_on_stderr() {
    let dir = scratch("empty-folder");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let full = dir.join("full");
    std::fs::create_dir_all(&full).unwrap();
    good_file(&full, "ok.jsonl");
    for command in ["tree", "stats", "context"] {
        let out = run(scan().arg(command).arg(&empty).arg(&full));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{command}: {stderr}");
        assert_eq!(stderr.trim(), format!("{}: no *.jsonl session files under this folder", empty.display()));
        assert!(String::from_utf8_lossy(&out.stdout).contains("ok.jsonl"), "{command}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn json_errors_name_the_file_line_and_byte_offset() {
    let dir = scratch("errors");
    let ok = good_file(&dir, "ok.jsonl");
    let bad = dir.join("bad.jsonl");
    // The first record is not a header: refused, at line 2, byte 5 (after the blank line).
    std::fs::write(&bad, format!("    \n{MESSAGE}\n")).unwrap();
    let out = run(scan().args(["tree", "--json"]).arg(&ok).arg(&bad));
    assert_eq!(out.status.code(), Some(1));
    let records = json_lines(&out.stdout);
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["file"], ok.to_string_lossy().as_ref());
    assert!(records[0].get("error").is_none());
    let err = &records[1];
    assert_eq!(err["file"], bad.to_string_lossy().as_ref());
    assert_eq!((err["error"]["line"].as_u64(), err["error"]["offset"].as_u64()), (Some(2), Some(5)), "{err}");
    let why = "not a valid pi session: the first parsed record is not a session header";
    assert_eq!(err["error"]["message"], why, "{err}");
    // The place is said once, before the reason.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim_end(), format!("{}:2: byte 5: {why}", bad.display()));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `usage` names a refused file's line and byte offset once, in text as the other commands do
/// and in JSON as fields, and counts the sessions it can read.
#[test]
fn usage_errors_name_the_file_line_and_byte_offset() {
    let dir = scratch("usage-errors");
    let bad = dir.join("bad.jsonl");
    std::fs::write(&bad, format!("    \n{MESSAGE}\n")).unwrap();
    let why = "not a valid pi session: the first parsed record is not a session header";
    good_file(&dir, "ok.jsonl");
    let out = run(scan().args(["usage", "daily"]).arg(&dir));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr).trim_end(), format!("{}:2: byte 5: {why}", bad.display()));
    let out = run(scan().args(["usage", "daily", "--json"]).arg(&dir));
    assert_eq!(out.status.code(), Some(1));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["file"], bad.to_string_lossy().as_ref());
    assert_eq!((err["error"]["line"].as_u64(), err["error"]["offset"].as_u64()), (Some(2), Some(5)), "{err}");
    assert_eq!(err["error"]["message"], why);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["activity"]["sessions"].as_u64(), Some(1), "{report}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_fifo_named_like_a_session_is_refused_without_waiting_for_a_writer() {
    let dir = scratch("fifo");
    let cwd = dir.join("--w--");
    std::fs::create_dir_all(&cwd).unwrap();
    good_file(&cwd, "ok.jsonl");
    let fifo = cwd.join("pipe.jsonl");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for args in [vec!["stats"], vec!["tree", "--json"], vec!["context", "--json"]] {
        let out = run(scan().args(&args).arg(&fifo));
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("not a regular file"), "{args:?}");
    }
    let out = run(scan().args(["list", "--json"]).arg(&dir));
    assert_eq!(out.status.code(), Some(1), "some files had errors");
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a regular file"));
    let out = run(scan().args(["usage", "session", "--json"]).arg(&dir));
    assert!(out.status.code().is_some(), "usage ended by a signal");
    // Nor is a FIFO read where a cache file or a settings file is looked for: the cache is left
    // alone (not replaced), the settings are as if absent.
    let cache_fifo = dir.join("list.cache");
    assert!(Command::new("mkfifo").arg(&cache_fifo).status().unwrap().success());
    let out = run(scan().args(["list", "--json", "--fields", "id,path", "--cache-file"]).args([&cache_fifo, &dir]));
    assert_eq!(out.status.code(), Some(1), "pipe.jsonl had an error");
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap().as_array().unwrap().len(), 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a regular file"), "{out:?}");
    assert!(!cache_fifo.metadata().unwrap().is_file(), "the FIFO was replaced");
    let (home, project) = (dir.join("home"), dir.join("project"));
    std::fs::create_dir_all(home.join(".pi/agent/sessions/--w--")).unwrap();
    good_file(&home.join(".pi/agent/sessions/--w--"), "home.jsonl");
    std::fs::create_dir_all(project.join(".pi")).unwrap();
    assert!(Command::new("mkfifo").arg(project.join(".pi/settings.json")).status().unwrap().success());
    assert!(Command::new("mkfifo").arg(home.join(".pi/agent/settings.json")).status().unwrap().success());
    let out = run(scan_at(&home, &project, &[]).args(["list", "--json"]));
    assert_eq!(listed_ids(&out).len(), 1, "{out:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unreadable_file_is_reported_and_the_others_are_listed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("unreadable");
    let cwd = dir.join("--w--");
    std::fs::create_dir_all(&cwd).unwrap();
    good_file(&cwd, "ok.jsonl");
    let locked = good_file(&cwd, "locked.jsonl");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    for d in [&dir, &cwd] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // Root reads any file, so as root the binary runs as `nobody`, from a copy that `nobody` can
    // reach whatever the permissions of the build folder.
    let mut cmd = if is_root() {
        let copy = dir.join("session-scan");
        std::fs::copy(env!("CARGO_BIN_EXE_session-scan"), &copy).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(copy);
        c
    } else {
        scan()
    };
    let out = run(cmd.args(["list", "--json"]).arg(&dir));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert!(stderr.contains("locked.jsonl") && stderr.contains("Permission denied"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn mapped_and_read_files_give_the_same_output() {
    let dir = scratch("mapped");
    // Over the 4 MiB threshold, so the default maps it and `--no-mmap` reads it.
    let mut text = format!("{HEADER}\n");
    let mut parent = "null".to_string();
    for i in 0..20_000 {
        text.push_str(&format!(
            r#"{{"type":"message","id":"m{i}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{}","timestamp":1767225601000}}}}"#,
            "x".repeat(200)
        ));
        text.push('\n');
        parent = format!("\"m{i}\"");
    }
    let big = dir.join("big.jsonl");
    std::fs::write(&big, text).unwrap();
    for cmd in ["tree", "stats", "context"] {
        let mapped = run(scan().args([cmd, "--json"]).arg(&big));
        let read = run(scan().args([cmd, "--json", "--no-mmap"]).arg(&big));
        assert_eq!(mapped.status.code(), Some(0), "{cmd}");
        assert_eq!(mapped.stdout, read.stdout, "{cmd}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_session_appended_to_while_it_is_read_gives_a_consistent_prefix() {
    use std::io::Write;
    let dir = scratch("appended");
    let cwd = dir.join("--w--");
    std::fs::create_dir_all(&cwd).unwrap();
    let path = cwd.join("live.jsonl");
    std::fs::write(&path, format!("{HEADER}\n")).unwrap();
    let writer = {
        let path = path.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
            let mut parent = "null".to_string();
            for k in 0..4000 {
                let line = format!(
                    r#"{{"type":"message","id":"m{k}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{}","timestamp":1767225601000}}}}"#,
                    "y".repeat(300)
                );
                // Two writes per line, so that readers also meet half-written lines.
                let (a, b) = line.as_bytes().split_at(line.len() / 2);
                f.write_all(a).unwrap();
                f.write_all(b).unwrap();
                f.write_all(b"\n").unwrap();
                parent = format!("\"m{k}\"");
                if k % 20 == 0 {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        })
    };
    let mut counts = Vec::new();
    while !writer.is_finished() || counts.len() < 3 {
        let out = run(scan().args(["list", "--json", "--fields", "messageCount"]).arg(&dir));
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        counts.push(rows[0]["messageCount"].as_u64().unwrap());
        let ctx = run(scan().args(["context", "--json"]).arg(&path));
        assert_eq!(ctx.status.code(), Some(0), "{}", String::from_utf8_lossy(&ctx.stderr));
        let rec: serde_json::Value = serde_json::from_slice(&ctx.stdout).unwrap();
        // Every message seen is whole and the chain from the leaf is unbroken.
        let messages = rec["context"]["messages"].as_array().unwrap();
        assert_eq!(messages.len(), rec["branch"].as_array().unwrap().len());
        assert!(messages.iter().all(|m| m["content"].as_str().is_some_and(|c| c.len() == 300)));
    }
    writer.join().unwrap();
    // Each listing saw a prefix: counts never go back, and the last one after the writer is whole.
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    assert!(counts.iter().any(|&c| c > 0 && c < 4000), "no listing ran while the file grew: {counts:?}");
    let out = run(scan().args(["list", "--json", "--fields", "messageCount"]).arg(&dir));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows[0]["messageCount"], 4000);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn limit_and_since_leave_files_that_cannot_qualify_unopened() {
    let dir = dated_store("prune", 600);
    let full = run(scan().args(["list", "--json"]).arg(&dir));
    // The broken file is read and reported when everything is listed.
    assert_eq!(full.status.code(), Some(1));
    let full: serde_json::Value = serde_json::from_slice(&full.stdout).unwrap();
    let full = full.as_array().unwrap();
    assert_eq!(full.len(), 600);
    // --limit: the same first rows, and the old broken file is never opened (exit 0).
    let limited = run(scan().args(["list", "--json", "--limit", "5"]).arg(&dir));
    assert_eq!(limited.status.code(), Some(0), "{}", String::from_utf8_lossy(&limited.stderr));
    let limited: serde_json::Value = serde_json::from_slice(&limited.stdout).unwrap();
    assert_eq!(limited.as_array().unwrap(), &full[..5]);
    // --limit 0: nothing, and nothing opened (the broken file would be reported).
    for format in ["--json", "--ndjson"] {
        let none = run(scan().args(["list", format, "--limit", "0"]).arg(&dir));
        assert_eq!(none.status.code(), Some(0), "{}", String::from_utf8_lossy(&none.stderr));
        let text = String::from_utf8(none.stdout).unwrap();
        assert_eq!(text, if format == "--json" { "[]\n" } else { "" });
    }
    // --ndjson --limit: the same newest rows in the same order, not the first ones read.
    for limit in ["1", "5", "300"] {
        let streamed = run(scan().args(["list", "--ndjson", "--limit", limit]).arg(&dir));
        assert_eq!(streamed.status.code(), Some(0), "{}", String::from_utf8_lossy(&streamed.stderr));
        assert_eq!(json_lines(&streamed.stdout), &full[..limit.parse().unwrap()], "--limit {limit}");
    }
    // --since: the rows modified on or after the date, and the broken file left unopened.
    let since = run(scan().args(["list", "--json", "--since", "2026-05-01"]).arg(&dir));
    assert_eq!(since.status.code(), Some(0), "{}", String::from_utf8_lossy(&since.stderr));
    let since: serde_json::Value = serde_json::from_slice(&since.stdout).unwrap();
    let expected: Vec<&serde_json::Value> =
        full.iter().filter(|r| r["modified"].as_str().unwrap() >= "2026-05-01T00:00:00.000Z").collect();
    assert_eq!(since.as_array().unwrap().iter().collect::<Vec<_>>(), expected);
    assert_eq!(expected.len(), 32);
    // --stats says what was opened: the 32 files of May, and the one of 2026-04-30 (written within
    // a day of the date, so it could still hold a message of May); none older.
    let since = run(scan().args(["list", "--json", "--stats", "--since", "2026-05-01"]).arg(&dir));
    assert_eq!(
        stats_of(&since),
        serde_json::json!({"found": 601, "pruned": 568, "read": 33, "fromCache": 0, "leftOut": 0, "hidden": 0, "shown": 32})
    );
    let limited = run(scan().args(["list", "--stats", "--limit", "5"]).arg(&dir));
    let line = String::from_utf8(limited.stderr).unwrap();
    assert!(
        line.starts_with("session-scan: list: 601 session files found, 0 not opened (--since), ")
            && line.contains(" 0 left out, 0 hidden, 5 shown, in "),
        "{line}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The default table fits `COLUMNS` in terminal columns, counting CJK and emoji as two columns
/// each, whatever the first messages and cwds hold (tabs and newlines included).
#[test]
fn the_table_fits_the_width_in_terminal_columns() {
    use unicode_width::UnicodeWidthStr;
    let dir = scratch("table");
    let texts = [
        "数据处理管道的重构：把所有的解析器换成流式读取，然后测量内存与速度".to_string(),
        "🚀🚀🚀 ship it 🚀🚀🚀 and then 🎉🎉🎉 celebrate with the whole team 🎉".to_string(),
        "line one\nline two\tand a tab, then café naïve résumé, well past any width ".repeat(3),
        "short".to_string(),
    ];
    for (k, text) in texts.iter().enumerate() {
        let cwd = format!("/home/ユーザー/プロジェクト/とても長いディレクトリの名前/{k}");
        let header = HEADER.replace(r#""cwd":"/w""#, &format!("\"cwd\":{}", serde_json::json!(cwd)));
        let message = MESSAGE.replace(r#""content":"hi""#, &format!("\"content\":{}", serde_json::json!(text)));
        std::fs::write(dir.join(format!("s{k}.jsonl")), format!("{header}\n{message}\n")).unwrap();
    }
    for width in [60usize, 80, 133, 200] {
        let out = run(scan().args(["list", "--dir"]).arg(&dir).env("COLUMNS", width.to_string()).env("NO_COLOR", "1"));
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // A header, the four rows and the count.
        assert_eq!(lines.len(), 6, "{text}");
        for line in &lines {
            assert!(line.width() <= width, "{} columns, more than {width}: {line:?}", line.width());
        }
        // From 80 columns the project is shown, and the rows (every cwd is long) fill the width
        // (one column short when a wide character would straddle the edge), its end (the project's
        // own name) kept; at 60 it leaves, before the first message is cut further.
        if width >= 80 {
            assert!(lines[0].contains("project"), "{text}");
            for line in &lines[1..5] {
                assert!(line.width() >= width - 1 || width == 200, "{} columns of {width}: {line:?}", line.width());
                assert!(line.contains("の名前/") || width < 133, "{line}");
            }
        } else {
            assert!(!lines[0].contains("project"), "{text}");
        }
        assert!(lines[1..5].iter().any(|l| l.contains('…')), "{text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A path that is not there is an error (exit 2) that names it, whether given as a session or
/// as a folder option; a file given to `list` is listed; a cwd without sessions (no folder of its
/// own under an existing root) lists nothing quietly.
#[test]
fn a_missing_path_is_an_error_and_a_file_is_listed() {
    let dir = scratch("missing");
    let file = good_file(&dir, "plain.jsonl");
    let missing = dir.join("not-there");
    for args in [
        vec!["list".into(), "--json".into(), missing.clone().into_os_string()],
        vec!["list".into(), "--json".into(), "--dir".into(), missing.clone().into_os_string()],
        vec!["list".into(), "--json".into(), "--root-dir".into(), missing.clone().into_os_string()],
    ] {
        let out = run(scan().args(&args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("not-there: no such file or folder"), "{args:?}: {stderr}");
    }
    let out = run(scan().args(["list", "--json"]).arg(&file));
    assert_eq!(out.status.code(), Some(0));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "the file's session");
    let out = run(scan().args(["list", "--json", "--cwd", "/no/sessions/here"]).arg(&dir));
    assert_eq!((out.status.code(), &out.stdout[..], &out.stderr[..]), (Some(0), &b"[]\n"[..], &b""[..]));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `usage` with `--since` after `--until` reports nothing, as the range holds no day, and says so.
#[test]
fn usage_with_since_after_until_says_the_range_is_empty() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/sample-16/sessions");
    let out =
        run(scan().args(["usage", "daily", "--json", "--since", "2025-02-01", "--until", "2025-01-01"]).arg(&corpus));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["rows"], serde_json::json!([]));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--since 2025-02-01 is after --until 2025-01-01"));
    // The same range the right way round has rows, and no such word.
    let out =
        run(scan().args(["usage", "daily", "--json", "--since", "2025-01-01", "--until", "2025-02-01"]).arg(&corpus));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!report["rows"].as_array().unwrap().is_empty());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("is after"));
}

/// `tree` draws as Pi's `/tree` does: a straight run stays in one column (the 1,000-entry real
/// session is one run, folded), only branch points indent, lines fit the width, and `--unfold`
/// draws every entry.
#[test]
fn the_tree_indents_only_at_branch_points_and_fits() {
    use unicode_width::UnicodeWidthStr;
    let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora");
    let real = corpora.join("real/sessions/before-compaction.jsonl");
    let out = run(scan().args(["tree", "-q"]).arg(&real).env("COLUMNS", "80"));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().count() < 20, "{text}");
    assert!(text.lines().all(|l| l.width() <= 80), "{text}");
    assert!(text.contains("┆ 996 more entries"), "{text}");
    // Unfolded: the file's line, then one line per entry, all in one column.
    let out = run(scan().args(["tree", "-q", "--unfold"]).arg(&real).env("COLUMNS", "80"));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1 + 1002, "{}", &text[..500]);
    assert!(text.lines().skip(1).all(|l| l.starts_with("* 0") && !l.contains('├')), "one column");
    // A branching session: a connector only under a node with several children, and each branch
    // then goes on in its own column.
    let branching = corpora.join(
        "sample-16/sessions/--Users-bob-work-api-server--/2025-01-12T06-58-57-143Z_0194594e-fff7-7099-acde-dd9516b14fbb.jsonl",
    );
    let json = run(scan().args(["tree", "--json", "-q"]).arg(&branching));
    let record: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let branch_points =
        record["nodes"].as_array().unwrap().iter().filter(|n| n["children"].as_array().unwrap().len() > 1).count();
    let forks: usize = record["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["children"].as_array().unwrap().len())
        .filter(|&c| c > 1)
        .sum();
    let out = run(scan().args(["tree", "-q", "--unfold"]).arg(&branching).env("COLUMNS", "200"));
    let text = String::from_utf8(out.stdout).unwrap();
    let connectors = text.lines().filter(|l| l.contains("├─ ") || l.contains("└─ ")).count();
    assert!(branch_points > 1);
    assert_eq!(connectors, forks, "one connector per branch: {text}");
    assert_eq!(text.lines().count(), 1 + record["nodes"].as_array().unwrap().len());
}

/// One table of exit codes, and one wording per problem, for every command: 0 done; 1 a session
/// could not be used (said with its place) or nothing was found; 2 a request that cannot be carried
/// out (an unknown option).
#[test]
fn every_command_answers_the_same_problem_the_same_way() {
    let dir = scratch("exits");
    let good = good_file(&dir, "good.jsonl");
    let binary = dir.join("binary.jsonl");
    std::fs::write(&binary, [0u8, 159, 146, 150, 1, 2, 3, b'\n', 0xff, 0xfe]).unwrap();
    let commands: &[&[&str]] = &[
        &["tree"],
        &["stats"],
        &["context"],
        &["files"],
        &["grep", "hi"],
        &["tools"],
        &["usage"],
        &["list"],
        &["search", "hi"],
        &["export"],
    ];
    for command in commands {
        let ok = run(scan().args(*command).arg(&good));
        assert_eq!(ok.status.code(), Some(0), "{command:?}: {}", String::from_utf8_lossy(&ok.stderr));
        let bad = run(scan().args(*command).arg(&binary));
        let stderr = String::from_utf8_lossy(&bad.stderr);
        assert_eq!(bad.status.code(), Some(1), "{command:?}: {stderr}");
        assert!(stderr.contains("binary.jsonl") && stderr.contains("no line parses as JSON"), "{command:?}: {stderr}");
        let wrong = run(scan().args(*command).arg("--no-such-option").arg(&good));
        assert_eq!(wrong.status.code(), Some(2), "{command:?}");
    }
    // Nothing found: exit 1 for the commands that look for something.
    for command in [&["grep", "nowhere-to-be-found"][..], &["search", "nowhere-to-be-found"]] {
        let none = run(scan().args(command).arg(&good));
        assert_eq!(none.status.code(), Some(1), "{command:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `-h` is short: one line per option, none wider than 100 columns, for every command; `--help`
/// has the details.
#[test]
fn short_help_has_one_line_per_option_within_100_columns() {
    use unicode_width::UnicodeWidthStr;
    let commands = [
        "",
        "tree",
        "stats",
        "context",
        "list",
        "search",
        "usage",
        "resolve",
        "export",
        "files",
        "grep",
        "tools",
        "completions",
    ];
    for command in commands {
        let mut cmd = scan();
        if !command.is_empty() {
            cmd.arg(command);
        }
        let short = run(cmd.arg("-h").env("COLUMNS", "200"));
        let text = String::from_utf8(short.stdout).unwrap();
        assert!(text.lines().all(|l| l.width() <= 100), "{command}: {text}");
        // A line that goes on an option's help starts far right: there is none.
        let continued = text.lines().filter(|l| l.starts_with(&" ".repeat(16)) && !l.trim_start().starts_with('-'));
        assert_eq!(continued.count(), 0, "{command}: {text}");
        // Rarely needed global options are in the long help only.
        assert!(!text.contains("--mmap") && !text.contains("--threads"), "{command}");
        let mut cmd = scan();
        if !command.is_empty() {
            cmd.arg(command);
        }
        let long = String::from_utf8(run(cmd.arg("--help")).stdout).unwrap();
        assert!(long.len() > text.len() && long.contains("--mmap"), "{command}");
    }
}

/// Times are shown in one zone, named in the table's header: the machine's, `--timezone` (an
/// IANA name or an offset) or `--utc`, in `list`, `usage`, `tree` and `export` alike; the days of
/// `--since` are that zone's days.
#[test]
fn times_are_shown_in_the_zone_asked_for() {
    let dir = scratch("zones");
    good_file(&dir, "a.jsonl");
    // The message was written at 2026-01-01T00:00:01Z.
    for (args, shown, header) in [
        (vec!["--utc"], "2026-01-01 00:00", "modified (UTC)"),
        (vec!["--timezone", "Asia/Kolkata"], "2026-01-01 05:30", "modified (Asia/Kolkata)"),
        (vec!["--timezone", "-05:00"], "2025-12-31 19:00", "modified (-05:00)"),
    ] {
        let out = run(scan().args(&args).arg("list").arg(&dir).env("COLUMNS", "120"));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(shown) && text.contains(header), "{args:?}: {text}");
        // tree and export show entry times to the second, and name the zone once.
        let zone = header.trim_start_matches("modified (").trim_end_matches(')');
        let tree = run(scan().args(&args).arg("tree").arg(dir.join("a.jsonl")));
        let tree = String::from_utf8(tree.stdout).unwrap();
        assert!(tree.lines().next().unwrap().ends_with(&format!(" (times in {zone})")), "{args:?}: {tree}");
        assert!(tree.contains(&format!(" user {shown}:01")), "{args:?}: {tree}");
        let export = run(scan().args(&args).arg("export").arg(dir.join("a.jsonl")));
        let export = String::from_utf8(export.stdout).unwrap();
        assert!(export.contains(&format!("### User · {shown}:01\n")), "{args:?}: {export}");
        assert!(export.contains(&format!("(times in {zone})\n")), "{args:?}: {export}");
        let usage = run(scan().args(&args).args(["usage", "daily", "--json"]).arg(&dir));
        let report: serde_json::Value = serde_json::from_slice(&usage.stdout).unwrap();
        assert_eq!(report["timezone"], header.trim_start_matches("modified (").trim_end_matches(')'), "{args:?}");
    }
    // A day of --since starts at that zone's midnight: 1 January in Kolkata began at 18:30 UTC.
    let listed = |zone: &str, since: &str| {
        let out = run(scan().args(["--timezone", zone, "list", "--json", "--since", since]).arg(&dir));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap().as_array().unwrap().len()
    };
    assert_eq!(listed("Asia/Kolkata", "2026-01-01"), 1);
    assert_eq!(listed("-05:00", "2026-01-01"), 0, "it was still 31 December there");
    assert_eq!(listed("UTC", "2026-01-01T00:00:02Z"), 0, "an instant is taken as it is");
    let bad = run(scan().args(["--timezone", "Mars/Olympus", "list"]).arg(&dir));
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no time zone is named \"Mars/Olympus\""));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Lines Pi skips: one line sums them up by default, `-v` names each with its place, `-q` says
/// nothing; the same for every command.
#[test]
fn skipped_lines_are_summed_up_named_with_v_and_silent_with_q() {
    let dir = scratch("skipped");
    let file = dir.join("s.jsonl");
    std::fs::write(&file, format!("{HEADER}\n{{not json\n{MESSAGE}\nnull\n")).unwrap();
    let commands: &[&[&str]] =
        &[&["tree"], &["stats"], &["context"], &["files"], &["grep", "hi"], &["tools"], &["usage"], &["export"]];
    for command in commands {
        let said = |flag: Option<&str>| {
            let mut cmd = scan();
            cmd.args(*command).arg(&file);
            if let Some(flag) = flag {
                cmd.arg(flag);
            }
            String::from_utf8(run(&mut cmd).stderr).unwrap()
        };
        assert_eq!(
            said(None),
            "session-scan: 2 lines in 1 file skipped or set aside, as Pi skips them or fails on them (-v names each)\n",
            "{command:?}"
        );
        let each = said(Some("-v"));
        assert!(each.contains("s.jsonl:2: byte ") && each.contains("malformed JSON"), "{command:?}: {each}");
        assert!(each.contains("s.jsonl:4: byte ") && each.contains("falsy JSON value"), "{command:?}: {each}");
        assert_eq!(said(Some("-q")), "", "{command:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every table fits 80 and 200 columns: the listing, usage (each report, with sub-rows), tools.
#[test]
fn every_table_fits_80_and_200_columns() {
    use unicode_width::UnicodeWidthStr;
    let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/sample-16/sessions");
    let tables: &[&[&str]] = &[
        &["list"],
        &["list", "--threaded"],
        &["search", "refactor", "--hits", "2"],
        &["usage", "daily"],
        &["usage", "session", "--breakdown"],
        &["usage", "model", "--by-source"],
        &["usage", "project"],
        &["tools"],
        &["grep", "-i", "fix", "-m", "1"],
    ];
    for width in [80usize, 200] {
        for args in tables {
            let out =
                run(scan().args(["-q", "--color", "never"]).args(*args).arg(&store).env("COLUMNS", width.to_string()));
            assert_eq!(out.status.code(), Some(0), "{args:?}");
            let text = String::from_utf8(out.stdout).unwrap();
            let widest = text.lines().map(UnicodeWidthStr::width).max().unwrap_or(0);
            assert!(widest <= width, "{args:?} at {width}: a line of {widest}\n{text}");
            if width == 200 && args[0] != "grep" {
                // A wide terminal is used: no column had to leave.
                assert!(text.lines().next().is_some_and(|h| !h.is_empty()), "{args:?}");
            }
        }
    }
}
