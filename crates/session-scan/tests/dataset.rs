//! `session-scan dataset`: the Parquet tables read back with the `parquet` crate and held to the
//! ledger of money really spent (`corpora/ledger`), and to `list`, `tree` and `tools` on the same
//! sessions; the folder rules (whole files, stale files removed, a folder that is not a dataset
//! refused and left as it was).

#![cfg(feature = "dataset")]
#![allow(clippy::unwrap_used)] // test inputs are committed; a panic is a failed test

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde_json::Value;

fn corpora() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("session-scan-dataset-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn scan(args: &[&str], paths: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_session-scan")).args(["-q", "--utc"]).args(args).args(paths).output().unwrap()
}

fn json(args: &[&str], path: &Path) -> Value {
    let out = scan(args, &[path]);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

type Row = BTreeMap<String, Field>;

/// Every row of every Parquet file under `folder` (recursively, in name order).
fn table(folder: &Path) -> Vec<Row> {
    let mut files = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut list: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        list.sort();
        for p in list {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "parquet") {
                out.push(p);
            }
        }
    }
    walk(folder, &mut files);
    let mut rows = Vec::new();
    for f in files {
        let reader = SerializedFileReader::new(std::fs::File::open(&f).unwrap()).unwrap();
        let kv = reader.metadata().file_metadata().key_value_metadata().unwrap();
        assert!(kv.iter().any(|k| k.key == "session_scan.schema_version" && k.value.as_deref() == Some("1")));
        for row in reader {
            rows.push(row.unwrap().get_column_iter().map(|(k, v)| (k.clone(), v.clone())).collect());
        }
    }
    rows
}

fn text(r: &Row, k: &str) -> String {
    match &r[k] {
        Field::Str(s) => s.clone(),
        Field::Null => String::new(),
        other => panic!("{k}: {other:?}"),
    }
}

fn long(r: &Row, k: &str) -> i64 {
    match &r[k] {
        Field::Long(n) => *n,
        other => panic!("{k}: {other:?}"),
    }
}

fn flag(r: &Row, k: &str) -> bool {
    match &r[k] {
        Field::Bool(b) => *b,
        other => panic!("{k}: {other:?}"),
    }
}

/// The UTC day of a timestamp column.
fn day(r: &Row, k: &str) -> String {
    match &r[k] {
        Field::TimestampMillis(ms) => jiff::Timestamp::from_millisecond(*ms).unwrap().strftime("%Y-%m-%d").to_string(),
        Field::Null => "unknown".into(),
        other => panic!("{k}: {other:?}"),
    }
}

/// Usage `WHERE NOT is_copy` is the money really spent: the ledger's events, tokens and cost for
/// every day, and `usage daily`'s figures to the micro-dollar; the copies are what forks copied.
#[test]
fn usage_without_copies_is_the_ledger_and_the_usage_report() {
    let out = scratch("ledger");
    let sessions = corpora().join("ledger/sessions");
    let written = scan(&["dataset", out.to_str().unwrap()], &[&sessions]);
    assert_eq!(written.status.code(), Some(0), "{}", String::from_utf8_lossy(&written.stderr));
    let usage = table(&out.join("usage"));
    let mut ours: BTreeMap<String, (u64, i64, f64)> = BTreeMap::new();
    for r in usage.iter().filter(|r| !flag(r, "is_copy")) {
        let d = ours.entry(day(r, "timestamp")).or_default();
        d.0 += 1;
        d.1 += long(r, "total_tokens");
        d.2 += match r["cost"] {
            Field::Double(c) => c,
            ref other => panic!("{other:?}"),
        };
        assert_eq!(
            long(r, "total_tokens"),
            ["input", "output", "cache_read", "cache_write"]
                .iter()
                .map(|k| long(r, &format!("{k}_tokens")))
                .sum::<i64>()
        );
        assert!(!text(r, "entry_id").is_empty(), "every usage names its entry");
    }
    let mut ledger: BTreeMap<String, (u64, i64, f64)> = BTreeMap::new();
    let spends = std::fs::read_to_string(corpora().join("ledger/ledger.jsonl")).unwrap();
    for l in spends.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        let d = ledger.entry(v["timestamp"].as_str().unwrap()[..10].to_owned()).or_default();
        d.0 += 1;
        d.1 += v["tokens"].as_i64().unwrap();
        d.2 += v["cost"].as_f64().unwrap();
    }
    assert_eq!(ours.keys().collect::<Vec<_>>(), ledger.keys().collect::<Vec<_>>());
    for (d, (events, tokens, cost)) in &ours {
        let l = &ledger[d];
        assert_eq!((events, tokens), (&l.0, &l.1), "{d}");
        assert!((cost - l.2).abs() < 5e-7, "{d}: {cost} against {}", l.2);
    }
    let report = json(&["usage", "daily", "--json"], &sessions);
    for row in report["rows"].as_array().unwrap() {
        let d = &ours[row["period"].as_str().unwrap()];
        assert_eq!(row["events"].as_u64().unwrap(), d.0);
        assert_eq!(row["costMicros"].as_i64().unwrap(), (d.2 * 1e6).round() as i64);
    }
    // The copies exist, and are the events the ledger does not hold.
    let copies = usage.iter().filter(|r| flag(r, "is_copy")).count();
    assert!(copies > 0);
    assert_eq!(usage.len() - copies, spends.lines().count());
    std::fs::remove_dir_all(&out).unwrap();
}

/// The other tables add up to the commands' figures: a row per listed session, an entry row per
/// tree node, tool calls per tool as `tools` counts them.
#[test]
fn tables_agree_with_list_tree_and_tools() {
    let out = scratch("counts");
    let sessions = corpora().join("sample-16/sessions");
    assert!(scan(&["dataset", out.to_str().unwrap()], &[&sessions]).status.success());
    let listed = json(&["list", "--json"], &sessions);
    let rows = table(&out.join("sessions"));
    assert_eq!(rows.len(), listed.as_array().unwrap().len());
    let by_id: BTreeMap<String, &Row> = rows.iter().map(|r| (text(r, "session_id"), r)).collect();
    for s in listed.as_array().unwrap() {
        let r = by_id[s["id"].as_str().unwrap()];
        assert_eq!(long(r, "message_count"), s["messageCount"].as_i64().unwrap());
        assert_eq!(text(r, "first_message"), s["firstMessage"].as_str().unwrap());
    }
    let entries = table(&out.join("entries"));
    let tree = scan(&["tree", "--json"], &[&sessions]);
    let nodes: usize = String::from_utf8(tree.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["nodes"].as_array().unwrap().len())
        .sum();
    assert_eq!(entries.len(), nodes);
    // The active branch: one leaf per session, which the sessions table names.
    for r in &rows {
        let id = text(r, "session_id");
        let leaf = text(r, "leaf_id");
        assert!(
            entries
                .iter()
                .any(|e| text(e, "session_id") == id && text(e, "entry_id") == leaf && flag(e, "on_active_branch"))
        );
    }
    let calls = table(&out.join("tool_calls"));
    let tools = json(&["tools", "--json"], &sessions);
    for t in tools["tools"].as_array().unwrap() {
        let name = t["tool"].as_str().unwrap();
        let ours = calls.iter().filter(|r| text(r, "tool") == name && !flag(r, "is_copy")).count() as u64;
        assert_eq!(ours, t["calls"].as_u64().unwrap(), "{name}");
    }
    assert_eq!(calls.iter().filter(|r| flag(r, "is_copy")).count() as u64, tools["copies"].as_u64().unwrap());
    let messages = table(&out.join("messages"));
    assert!(messages.iter().all(|r| matches!(r["text"], Field::Null)), "no text without --text");
    std::fs::remove_dir_all(&out).unwrap();
}

/// Partitions are Hive folders (`source=NAME/`, `month=YYYY-MM/`) holding the same rows; a second
/// run replaces the files and leaves none of the first; `--text --redact` redacts.
#[test]
fn partitions_reruns_and_texts() {
    let out = scratch("parts");
    let sessions = corpora().join("sample-16/sessions");
    let o = out.to_str().unwrap();
    assert!(scan(&["dataset", o, "--partition", "month", "--source", "laptop"], &[&sessions]).status.success());
    let months: Vec<String> = std::fs::read_dir(out.join("source=laptop/usage"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!months.is_empty() && months.iter().all(|m| m.starts_with("month=")), "{months:?}");
    let partitioned = table(&out.join("source=laptop/entries")).len();
    // The same folder again, unpartitioned: the month folders are gone.
    assert!(scan(&["dataset", o, "--source", "laptop", "--text"], &[&sessions]).status.success());
    assert!(
        std::fs::read_dir(out.join("source=laptop/usage")).unwrap().all(|e| !e.unwrap().file_type().unwrap().is_dir())
    );
    assert_eq!(table(&out.join("source=laptop/entries")).len(), partitioned);
    let leftovers: Vec<_> = walk_names(&out).into_iter().filter(|n| n.ends_with(".tmp")).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let messages = table(&out.join("source=laptop/messages"));
    assert!(messages.iter().any(|r| matches!(&r["text"], Field::Str(s) if !s.is_empty())));
    std::fs::remove_dir_all(&out).unwrap();
}

fn walk_names(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            out.extend(walk_names(&e.path()));
        } else {
            out.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    out
}

/// A folder that holds files and no dataset is refused (exit 2) and left as it was.
#[test]
fn a_folder_that_is_not_a_dataset_is_left_alone() {
    let out = scratch("foreign");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let sessions = corpora().join("ledger/sessions");
    let refused = scan(&["dataset", out.to_str().unwrap()], &[&sessions]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no dataset written by session-scan"));
    assert_eq!(walk_names(&out), ["notes.txt"]);
    std::fs::remove_dir_all(&out).unwrap();
}

/// A second run on unchanged sessions with the same options writes nothing; a changed session, or
/// other options, and the tables are written again.
#[test]
fn a_run_with_nothing_changed_writes_nothing() {
    let out = scratch("again");
    let store = scratch("again-store");
    std::fs::create_dir_all(&store).unwrap();
    let ledger = corpora().join("ledger/sessions");
    let folder = std::fs::read_dir(&ledger).unwrap().next().unwrap().unwrap().path();
    for f in std::fs::read_dir(&folder).unwrap().take(5) {
        let f = f.unwrap().path();
        std::fs::copy(&f, store.join(f.file_name().unwrap())).unwrap();
    }
    let o = out.to_str().unwrap();
    assert!(scan(&["dataset", o], &[&store]).status.success());
    let part = walk_files(&out.join("usage")).remove(0).0;
    let first = std::fs::metadata(&part).unwrap().modified().unwrap();
    let again = scan(&["dataset", o], &[&store]);
    assert!(again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("none changed"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(std::fs::metadata(&part).unwrap().modified().unwrap(), first);
    // One session grows by a line: everything is read again.
    let victim = std::fs::read_dir(&store).unwrap().next().unwrap().unwrap().path();
    let mut bytes = std::fs::read(&victim).unwrap();
    bytes.extend_from_slice(b"{\"broken\n");
    std::fs::write(&victim, bytes).unwrap();
    let changed = scan(&["dataset", o], &[&store]);
    assert!(changed.status.success());
    assert!(
        String::from_utf8_lossy(&changed.stderr).contains("5 sessions into"),
        "{}",
        String::from_utf8_lossy(&changed.stderr)
    );
    assert_eq!(table(&out.join("sessions")).len(), 5);
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::remove_dir_all(&store).unwrap();
}

/// After changes, only the groups of sessions whose rows change are written again (a folder's
/// sessions of one month): a grown session's group, and the groups whose copy marks a removed
/// parent flips; the others keep their files. The tables then equal a fresh export's.
#[test]
fn a_run_after_changes_writes_again_only_what_changed() {
    let store = scratch("partly-store");
    let ledger = corpora().join("ledger/sessions");
    for folder in std::fs::read_dir(&ledger).unwrap() {
        let folder = folder.unwrap().path();
        let to = store.join(folder.file_name().unwrap());
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(&folder).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
        }
    }
    let (out, fresh) = (scratch("partly"), scratch("partly-fresh"));
    assert!(scan(&["dataset", out.to_str().unwrap()], &[&store]).status.success());
    let before: Vec<(PathBuf, std::time::SystemTime)> = walk_files(&out);
    // A fork's parent goes away: the fork's usage is no longer a copy. Another session grows.
    let files: Vec<PathBuf> = walk_files(&store).into_iter().map(|(p, _)| p).collect();
    let parent_name = files
        .iter()
        .find_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
            header["parentSession"].as_str().map(|p| p.rsplit('/').next().unwrap().to_owned())
        })
        .unwrap();
    let parent = files.iter().find(|f| f.file_name().unwrap().to_string_lossy() == parent_name).unwrap();
    std::fs::remove_file(parent).unwrap();
    let grown = files.iter().find(|f| *f != parent).unwrap();
    let mut bytes = std::fs::read(grown).unwrap();
    bytes.extend_from_slice(b"{\"broken\n");
    std::fs::write(grown, bytes).unwrap();
    let again = scan(&["dataset", out.to_str().unwrap()], &[&store]);
    let said = String::from_utf8_lossy(&again.stderr).into_owned();
    assert!(again.status.success() && said.contains("unchanged, their files kept"), "{said}");
    let after = walk_files(&out);
    let kept = before.iter().filter(|(p, t)| after.iter().any(|(q, u)| q == p && u == t)).count();
    assert!(kept > 0 && kept < before.len(), "{kept} of {} files kept", before.len());
    // The same tables as a fresh export.
    assert!(scan(&["dataset", fresh.to_str().unwrap()], &[&store]).status.success());
    let key = |dir: &Path, table_name: &str, cols: &[&str]| {
        let mut rows: Vec<String> = table(&dir.join(table_name))
            .iter()
            .map(|r| cols.iter().map(|c| format!("{:?}", r[*c])).collect::<Vec<_>>().join("|"))
            .collect();
        rows.sort();
        rows
    };
    for (t, cols) in [
        ("usage", &["session_id", "entry_id", "is_copy", "cost_micros"][..]),
        ("tool_calls", &["session_id", "call_id", "is_copy"]),
        ("sessions", &["session_id", "skipped_lines", "message_count"]),
        ("entries", &["session_id", "entry_id", "on_active_branch"]),
    ] {
        let (ours, whole) = (key(&out, t, cols), key(&fresh, t, cols));
        let first = ours.iter().zip(&whole).position(|(a, b)| a != b);
        assert!(
            ours.len() == whole.len() && first.is_none(),
            "{t}: first difference {:?}",
            first.map(|k| (&ours[k], &whole[k]))
        );
    }
    // The removed parent's fork now counts its usage as its own.
    let copies = |dir: &Path| table(&dir.join("usage")).iter().filter(|r| flag(r, "is_copy")).count();
    assert_eq!(copies(&out), copies(&fresh));
    for d in [&out, &fresh, &store] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

fn walk_files(dir: &Path) -> Vec<(PathBuf, std::time::SystemTime)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk_files(&p));
        } else if p.extension().is_some_and(|x| x == "parquet" || x == "jsonl") {
            out.push((p.clone(), std::fs::metadata(&p).unwrap().modified().unwrap()));
        }
    }
    out.sort();
    out
}
