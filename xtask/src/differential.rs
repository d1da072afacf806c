//! `cargo xtask differential [--seeds A-B] [--files N] [--shape listing|tree|threads|resolve] [--trees [--reference DIR]]`: random hostile
//! stores, written by `corpora/hostile/gen.py` with other seeds, listed by Pi 1.6 (its npm package,
//! in Node) and by `session-scan`, and compared row by row and field by field. With `--trees`, each
//! store's trees, totals and contexts too: recorded by Pi 1.6 (the recorder of `reference/`, installed
//! under `target/recorder`, or `--reference DIR` where one is installed) through `corpora/hostile/record.sh`, and checked by the hostile
//! corpus's conformance tests run on that store; and Pi's picker search of the store's listing
//! (`corpora/search/record.mjs`), checked by the search tests. `--shape threads` writes stores of
//! forks with `corpora/threads/gen.py` instead, threaded by Pi's picker and by `list --threaded`;
//! `--shape resolve` asks Pi's `pi -c` and `pi --session` lookups and `session-scan resolve` the
//! same questions of hostile stores.
//! Needs `python3`, `node` and `npm`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::Value;

use crate::bench::{reference_packages, run};
use crate::root;

/// Every `SessionInfo` field but the texts: what a picker listing (and the cache) gives.
fn picker_fields() -> impl Iterator<Item = &'static str> {
    session_scan::render::INFO_FIELDS.into_iter().filter(|&f| f != "allMessagesText")
}

/// The cwd that `gen.py` gives most of its sessions (`list(cwd)` is compared for it).
const PROJECT_CWD: &str = "/home/u/proj";
/// The flat folder compared as `listAll(dir)`.
const FLAT_FOLDER: &str = "--tmp-x y--";

/// Runs the comparison for every seed in `seeds`, on stores of `gen.py`'s `shape` (`listing`, or
/// `tree`: sessions shaped to test trees and contexts); fails if any listing differs. `trees`: also
/// compare trees, totals and contexts, with the recorder in the folder given (installed under
/// `target/recorder` from `reference/` when none is).
pub fn differential(
    seeds: std::ops::RangeInclusive<u64>,
    files: usize,
    shape: &str,
    trees: Option<Option<PathBuf>>,
) -> anyhow::Result<()> {
    let target = root().join("target");
    if shape == "threads" || shape == "resolve" {
        let recorder = match trees {
            Some(Some(dir)) => std::fs::canonicalize(&dir).with_context(|| format!("--reference {}", dir.display()))?,
            _ => install_recorder(&target)?,
        };
        return if shape == "threads" { threads(seeds, files, &recorder) } else { resolve(seeds, files, &recorder) };
    }
    let (pi, _) = reference_packages(&target)?;
    run(Command::new("cargo").args(["build", "--release", "-p", "session-scan"]).current_dir(root()))?;
    let recorder = match trees {
        None => None,
        // Absolute: `record.sh` runs in each store's folder.
        Some(Some(dir)) => Some(std::fs::canonicalize(&dir).with_context(|| format!("--reference {}", dir.display()))?),
        Some(None) => Some(install_recorder(&target)?),
    };
    if recorder.is_some() {
        run(Command::new("cargo")
            .args(["test", "-q", "-p", "session-scan", "--test", "conformance", "--test", "search", "--no-run"])
            .current_dir(root()))?;
    }
    let ours = target.join("release/session-scan");
    let script = root().join("xtask/reference/list-pi.mjs");
    let mut failed = 0;
    for seed in seeds {
        let dir = target.join("differential").join(format!("seed-{seed}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let store = dir.join("sessions");
        run(Command::new("python3")
            .arg(root().join("corpora/hostile/gen.py"))
            .args([seed.to_string(), files.to_string()])
            .arg(&store)
            .arg(shape))?;
        set_tied_mtimes(&store)?;
        // The cache keeps no file changed in the last two seconds, and setting an mtime changes
        // the file's change time: wait, so that the warm pass lists from the cache.
        std::thread::sleep(std::time::Duration::from_millis(2_100));
        let pi_json = |args: &[&std::ffi::OsStr]| -> anyhow::Result<Value> {
            let out = run(Command::new("node").env("TZ", "UTC").arg(&script).arg(&pi).args(args))?;
            serde_json::from_str(&out).context("the reference's output")
        };
        // Our listing, and its `--stats` line (the last on stderr).
        let ours_with_stats = |args: &[&std::ffi::OsStr]| -> anyhow::Result<(Value, Value)> {
            let out = Command::new(&ours).env("TZ", "UTC").args(["list", "--json", "--stats"]).args(args).output()?;
            let stderr = String::from_utf8_lossy(&out.stderr);
            if out.status.code().is_none_or(|c| c > 1) {
                bail!("session-scan list {args:?}: {stderr}");
            }
            let stats: Value = serde_json::from_str(stderr.lines().last().unwrap_or_default())
                .with_context(|| format!("our --stats line: {stderr}"))?;
            Ok((serde_json::from_slice(&out.stdout).context("our output")?, stats["stats"].clone()))
        };
        let ours_json = |args: &[&std::ffi::OsStr]| ours_with_stats(args).map(|(rows, _)| rows);
        let cwd = session_scan::store::resolve_path(PROJECT_CWD);
        let cwd_dir = store.join(session_scan::store::encode_cwd(&cwd));
        let flat = store.join(FLAT_FOLDER);
        let cache = dir.join("list.cache");
        let fields = picker_fields().collect::<Vec<_>>().join(",");
        let os = |s: &str| std::ffi::OsString::from(s);
        let all = pi_json(&[&os("all"), store.as_os_str()])?;
        let mut checks: Vec<(&str, Value, Value)> = vec![
            ("listAll()", all.clone(), ours_json(&[store.as_os_str()])?),
            (
                "list(cwd)",
                pi_json(&[&os("cwd"), &os(PROJECT_CWD), cwd_dir.as_os_str()])?,
                ours_json(&[store.as_os_str(), &os("--cwd"), &os(PROJECT_CWD)])?,
            ),
            ("listAll(dir)", pi_json(&[&os("flat"), flat.as_os_str()])?, ours_json(&[&os("--dir"), flat.as_os_str()])?),
        ];
        let picked = picker_rows(&all);
        for pass in ["picker, no cache", "picker, cold cache", "picker, warm cache"] {
            let mut args = vec![store.as_os_str(), std::ffi::OsStr::new("--fields"), std::ffi::OsStr::new(&fields)];
            if pass != "picker, no cache" {
                args.extend([std::ffi::OsStr::new("--cache-file"), cache.as_os_str()]);
            }
            let (rows, stats) = ours_with_stats(&args)?;
            // The warm pass must list every file from the cache, or it compares nothing new.
            if pass == "picker, warm cache" && (stats["read"] != 0 || stats["fromCache"] != stats["found"]) {
                failed += 1;
                println!("seed {seed}: the warm pass read files: {stats}");
            }
            checks.push((pass, picked.clone(), rows));
        }
        let mut line = format!("seed {seed}:");
        for (what, reference, ours) in &checks {
            let rows = reference.as_array().map_or(0, Vec::len);
            match first_difference(reference, ours) {
                None => line.push_str(&format!(" {what} {rows} rows equal;")),
                Some(diff) => {
                    failed += 1;
                    line.push_str(&format!(" {what} DIFFERS ({diff});"));
                }
            }
        }
        println!("{}", line.trim_end_matches(';'));
        if let Some(recorder) = &recorder {
            match trees_totals_contexts(&dir, recorder) {
                Ok(counts) => println!("seed {seed}: {counts}"),
                Err(e) => {
                    failed += 1;
                    println!("seed {seed}: trees, totals or contexts DIFFER: {e:#}");
                }
            }
        }
    }
    if failed > 0 {
        bail!("{failed} comparisons with Pi 1.6 failed (stores kept under target/differential)");
    }
    Ok(())
}

/// `--shape threads`: for each seed, a store written by `corpora/threads/gen.py SEED FILES`, threaded
/// by Pi 1.6's picker (`corpora/threads/record.mjs`) and by `list --threaded` (the conformance test
/// run on it through `SESSION_SCAN_THREADS`), row by row and depth by depth.
fn threads(seeds: std::ops::RangeInclusive<u64>, files: usize, recorder: &Path) -> anyhow::Result<()> {
    let corpus = root().join("corpora/threads");
    let check =
        SeedCheck { name: "threads", test: "conformance", filter: "threaded_view", env: "SESSION_SCAN_THREADS" };
    check.run(seeds, |seed, dir| {
        run(Command::new("python3")
            .arg(corpus.join("gen.py"))
            .args([seed.to_string(), files.to_string()])
            .current_dir(dir))?;
        run(Command::new("node").arg(corpus.join("record.mjs")).arg(recorder).current_dir(dir)).map(|_| ())
    })
}

/// `--shape resolve`: for each seed, a hostile store (`corpora/hostile/gen.py SEED FILES`) and cases
/// drawn from its ids and cwds (`corpora/resolve/cases.py`), answered by Pi 1.6's `continueRecent` and
/// `resolveSessionPath` (`corpora/resolve/record.mjs`) and by `session-scan resolve` (the conformance
/// test run on it through `SESSION_SCAN_RESOLVE`).
fn resolve(seeds: std::ops::RangeInclusive<u64>, files: usize, recorder: &Path) -> anyhow::Result<()> {
    let corpus = root().join("corpora/resolve");
    let check = SeedCheck { name: "resolve", test: "resolve", filter: "matches_pi", env: "SESSION_SCAN_RESOLVE" };
    check.run(seeds, |seed, dir| {
        run(Command::new("python3")
            .arg(root().join("corpora/hostile/gen.py"))
            .args([seed.to_string(), files.to_string(), "sessions".into()])
            .current_dir(dir))?;
        run(Command::new("python3").arg(corpus.join("cases.py")).arg(seed.to_string()).current_dir(dir))?;
        run(Command::new("node").arg(corpus.join("record.mjs")).arg(recorder).current_dir(dir)).map(|_| ())
    })
}

/// A store per seed under `target/differential/NAME-seed-N`, written and recorded by the recorder,
/// then checked by one conformance test of `session-scan` pointed at it through `env`; the test
/// prints a line starting with `NAME ` that counts what it compared.
struct SeedCheck {
    name: &'static str,
    test: &'static str,
    filter: &'static str,
    env: &'static str,
}

impl SeedCheck {
    fn run(
        &self,
        seeds: std::ops::RangeInclusive<u64>,
        write: impl Fn(u64, &Path) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let SeedCheck { name, test, filter, env } = *self;
        run(Command::new("cargo")
            .args(["test", "-q", "-p", "session-scan", "--test", test, "--no-run"])
            .current_dir(root()))?;
        let mut failed = 0;
        for seed in seeds {
            let dir = root().join("target/differential").join(format!("{name}-seed-{seed}"));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir)?;
            write(seed, &dir)?;
            let out = Command::new("cargo")
                .args(["test", "-q", "-p", "session-scan", "--test", test, filter, "--", "--nocapture"])
                .env(env, &dir)
                .current_dir(root())
                .output()?;
            let printed = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let tag = format!("{name} ");
            match printed.lines().find_map(|l| Some(&l[l.find(&tag)?..])) {
                Some(counts) if out.status.success() => println!("seed {seed}: {counts}"),
                _ => {
                    failed += 1;
                    let why: Vec<&str> = stderr
                        .lines()
                        .filter(|l| ["panicked", "differs", "left", "right"].iter().any(|w| l.contains(w)))
                        .collect();
                    let why = if why.is_empty() { stderr.lines().rev().take(6).collect() } else { why };
                    println!("seed {seed}: {name} DIFFERS: {}", why.join(" | "));
                }
            }
        }
        if failed > 0 {
            bail!("{failed} {name} stores differ from Pi 1.6 (kept under target/differential)");
        }
        Ok(())
    }
}

/// Pi 1.6's trees, totals and contexts of `dir/sessions`, recorded by the recorder into
/// `dir/expected` as for the committed hostile corpus, then that corpus's conformance tests run on
/// `dir` (`SESSION_SCAN_HOSTILE`).
fn trees_totals_contexts(dir: &Path, recorder: &Path) -> anyhow::Result<String> {
    run(Command::new("sh").arg(root().join("corpora/hostile/record.sh")).arg(recorder).current_dir(dir))?;
    // Pi's picker search over Pi's own listing of the store (`expected/list.json`).
    let expected = dir.join("expected");
    run(Command::new("node")
        .arg("record.mjs")
        .arg(recorder)
        .arg(expected.join("list.json"))
        .arg(expected.join("search.json"))
        .current_dir(root().join("corpora/search")))?;
    let mut text = String::new();
    for (test, filter) in [("conformance", "hostile_corpus"), ("search", "hostile_corpus")] {
        let out = Command::new("cargo")
            .args(["test", "-q", "-p", "session-scan", "--test", test, filter, "--", "--nocapture"])
            .env("SESSION_SCAN_HOSTILE", dir)
            .current_dir(root())
            .output()?;
        let printed = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            let found = printed.lines().filter(|l| l.contains("differs") || l.contains("panicked")).take(4);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let why = stderr.lines().filter(|l| l.contains("panicked") || l.contains("left") || l.contains("right"));
            let mut lines: Vec<&str> = found.chain(why.take(6)).collect();
            if lines.is_empty() {
                // Not a difference the tests name (a build that failed, say): the end of what cargo said.
                let all: Vec<&str> = stderr.lines().collect();
                lines.extend(&all[all.len().saturating_sub(6)..]);
            }
            bail!("{}", lines.join("\n"));
        }
        text.push_str(&printed);
    }
    // The tests' counts: `hostile tree.jsonl: N equal, ...`.
    let counts = text.lines().filter_map(|l| Some(&l[l.find("hostile ")? + "hostile ".len()..])).collect::<Vec<_>>();
    Ok(counts.join("; "))
}

/// The recorder of `reference/` (`record.mjs`, `recording.mjs`, `writer-timing.mjs` and Pi 1.6 at the versions its lock file pins),
/// installed under `target/recorder` with `npm ci` unless it is there already and current.
pub fn install_recorder(target: &Path) -> anyhow::Result<PathBuf> {
    let source = root().join("reference");
    let recorder = target.join("recorder");
    let lock = std::fs::read(source.join("package-lock.json")).context("reference/package-lock.json")?;
    let installed = std::fs::read(recorder.join("package-lock.json")).ok();
    std::fs::create_dir_all(&recorder)?;
    for file in ["package.json", "package-lock.json", "record.mjs", "recording.mjs", "writer-timing.mjs"] {
        std::fs::copy(source.join(file), recorder.join(file)).with_context(|| format!("reference/{file}"))?;
    }
    if installed.as_deref() != Some(&lock[..]) || !recorder.join("node_modules/pi16").exists() {
        eprintln!("installing Pi 1.6 as reference/package-lock.json pins it into {}", recorder.display());
        run(Command::new("npm").args(["ci", "--ignore-scripts", "--silent"]).current_dir(&recorder))?;
    }
    Ok(recorder)
}

/// Each file's mtime as the hostile corpus's tests set them (`record.sh`): six values 1,000 s
/// apart, with sub-millisecond parts, so that `modified` ties and the mtime tie-breaks play.
fn set_tied_mtimes(store: &Path) -> anyhow::Result<()> {
    let mut files: Vec<PathBuf> = Vec::new();
    for folder in std::fs::read_dir(store)? {
        for file in std::fs::read_dir(folder?.path())? {
            files.push(file?.path());
        }
    }
    files.sort();
    for (k, path) in files.iter().enumerate() {
        let k = k as u64;
        let when =
            std::time::Duration::from_nanos((1_767_225_600 + 1_000 * (k % 6)) * 1_000_000_000 + 400_000 * (k % 3));
        std::fs::File::options().write(true).open(path)?.set_modified(std::time::UNIX_EPOCH + when)?;
    }
    Ok(())
}

/// The reference's rows with only the picker's fields.
fn picker_rows(all: &Value) -> Value {
    let rows = all.as_array().map(|rows| {
        rows.iter()
            .map(|row| {
                let kept = picker_fields().filter_map(|k| Some((k.to_string(), row.get(k)?.clone())));
                Value::Object(kept.collect())
            })
            .collect()
    });
    Value::Array(rows.unwrap_or_default())
}

/// Where two listings first differ: the row count, or a row's path and field with both values.
fn first_difference(reference: &Value, ours: &Value) -> Option<String> {
    let (Some(a), Some(b)) = (reference.as_array(), ours.as_array()) else {
        return Some("not both arrays".into());
    };
    if a.len() != b.len() {
        return Some(format!("{} rows against {}", a.len(), b.len()));
    }
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        if x == y {
            continue;
        }
        let keys = x.as_object().into_iter().chain(y.as_object()).flat_map(|o| o.keys());
        let field = keys.into_iter().find(|k| x.get(*k) != y.get(*k)).cloned().unwrap_or_default();
        let short =
            |v: Option<&Value>| v.map_or("absent".into(), |v| v.to_string().chars().take(80).collect::<String>());
        return Some(format!(
            "row {k} ({}): {field}: Pi {} against ours {}",
            x.get("path").and_then(Value::as_str).unwrap_or("?"),
            short(x.get(&field)),
            short(y.get(&field))
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_is_found_and_named() {
        let reference =
            serde_json::json!([{"path": "/s/a", "id": "a", "messageCount": 2}, {"path": "/s/b", "id": "b"}]);
        assert_eq!(first_difference(&reference, &reference.clone()), None);
        let mut ours = reference.clone();
        ours[1]["id"] = Value::from(5);
        assert_eq!(first_difference(&reference, &ours).as_deref(), Some(r#"row 1 (/s/b): id: Pi "b" against ours 5"#));
        ours[1] = serde_json::json!({"path": "/s/b", "id": "b", "name": "x"});
        assert_eq!(
            first_difference(&reference, &ours).as_deref(),
            Some(r#"row 1 (/s/b): name: Pi absent against ours "x""#)
        );
        let shorter = serde_json::json!([reference[0].clone()]);
        assert_eq!(first_difference(&reference, &shorter).as_deref(), Some("2 rows against 1"));
        let picked = picker_rows(&serde_json::json!([{"path": "/s/a", "allMessagesText": "t", "messageCount": 2}]));
        assert_eq!(picked, serde_json::json!([{"path": "/s/a", "messageCount": 2}]));
    }
}
