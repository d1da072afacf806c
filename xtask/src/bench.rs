//! `cargo xtask bench` (instruction counts against a baseline) and `cargo xtask bench-reference`
//! (whole-process times of Pi 1.6 and ccusage beside ours, on one generated store).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::root;

/// The runner must match the `iai-callgrind` library version in `session-bench`.
const IAI_VERSION: &str = "0.16.1";
/// A rise in instructions above this percentage fails `--compare`.
pub const REGRESSION_THRESHOLD_PCT: f64 = 3.0;

pub(crate) fn run(cmd: &mut Command) -> anyhow::Result<String> {
    let out = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    if !out.status.success() {
        bail!("{cmd:?} failed:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Installs the pinned runner under `target/` (a quick no-op once it is there); returns its
/// `bin` folder.
fn iai_runner() -> anyhow::Result<PathBuf> {
    let prefix = root().join("target/iai-runner");
    run(Command::new("cargo")
        .args(["install", "--quiet", "--locked", "iai-callgrind-runner", "--version", IAI_VERSION, "--root"])
        .arg(&prefix))?;
    Ok(prefix.join("bin"))
}

/// Runs the instruction-count suite; returns instructions by benchmark.
fn instructions() -> anyhow::Result<BTreeMap<String, u64>> {
    let bin = iai_runner()?;
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = run(Command::new("cargo")
        .args(["bench", "--quiet", "-p", "session-bench", "--bench", "instructions"])
        .current_dir(root())
        .env("PATH", path)
        .env("IAI_CALLGRIND_COLOR", "never"))?;
    let mut counts = BTreeMap::new();
    let mut current = None;
    for line in out.lines() {
        if !line.starts_with(' ') && line.contains("::") {
            current = Some(line.split_whitespace().next().unwrap_or(line).to_string());
        } else if let (Some(name), Some(rest)) = (&current, line.trim().strip_prefix("Instructions:")) {
            let n: u64 = rest.trim().split('|').next().unwrap_or("").trim().parse().context("instruction count")?;
            counts.insert(name.clone(), n);
        }
    }
    if counts.is_empty() {
        bail!("no instruction counts in the benchmark output:\n{out}");
    }
    Ok(counts)
}

/// A baseline's file: committed with the code, so that a comparison is always against what the
/// repository holds, never against a copy left under `target/` by an earlier run.
fn baseline_path(name: &str) -> PathBuf {
    root().join(format!("crates/session-bench/baselines/{name}.json"))
}

fn to_json(counts: &BTreeMap<String, u64>) -> String {
    let rows: Vec<String> = counts.iter().map(|(k, v)| format!("  {k:?}: {v}")).collect();
    format!("{{\n{}\n}}\n", rows.join(",\n"))
}

fn from_json(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.trim().trim_end_matches(',').split_once(": ")?;
            Some((k.trim_matches('"').to_string(), v.parse().ok()?))
        })
        .collect()
}

/// `cargo xtask bench [--save NAME] [--compare NAME] [--wall]`.
pub fn bench(save: Option<String>, compare: Option<String>, wall: bool) -> anyhow::Result<()> {
    let counts = instructions()?;
    let dir = root().join("target/xtask-bench");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("last.json"), to_json(&counts))?;
    if let Some(name) = &save {
        let committed = baseline_path(name);
        if let Some(parent) = committed.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&committed, to_json(&counts))?;
        println!("saved baseline {name} ({})", committed.display());
    }
    let mut failed = Vec::new();
    match &compare {
        Some(name) => {
            let text = std::fs::read_to_string(baseline_path(name))
                .with_context(|| format!("no baseline {name}: run `cargo xtask bench --save {name}`"))?;
            let base = from_json(&text);
            println!("{:<48} {:>14} {:>14} {:>9}", "benchmark (instructions)", name, "now", "change");
            for (k, now) in &counts {
                match base.get(k) {
                    Some(&b) => {
                        let pct = (*now as f64 - b as f64) / b as f64 * 100.0;
                        let mark = if pct > REGRESSION_THRESHOLD_PCT { "  REGRESSION" } else { "" };
                        println!("{k:<48} {b:>14} {now:>14} {pct:>+8.2}%{mark}");
                        if pct > REGRESSION_THRESHOLD_PCT {
                            failed.push(k.clone());
                        }
                    }
                    None => println!("{k:<48} {:>14} {now:>14} {:>9}", "-", "new"),
                }
            }
        }
        None => {
            for (k, v) in &counts {
                println!("{k:<48} {v:>14} instructions");
            }
        }
    }
    if wall {
        let mut args = vec!["bench", "-p", "session-bench", "--bench", "throughput", "--"];
        if let Some(n) = &save {
            args.extend(["--save-baseline", n]);
        }
        if let Some(n) = &compare {
            args.extend(["--baseline", n]);
        }
        let status = Command::new("cargo").args(&args).current_dir(root()).status()?;
        if !status.success() {
            bail!("criterion benchmarks failed");
        }
    }
    if !failed.is_empty() {
        bail!("instruction counts rose more than {REGRESSION_THRESHOLD_PCT}% in: {}", failed.join(", "));
    }
    Ok(())
}

fn best_of(n: usize, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..n {
        let t = std::time::Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(best)
}

/// Pi 1.6.0's package folder and ccusage's binary, installed with npm under `target/reference`
/// the first time.
pub(crate) fn reference_packages(target: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let npm_dir = target.join("reference");
    let pi = npm_dir.join("node_modules/@earendil-works/pi-coding-agent");
    let ccusage = npm_dir.join("node_modules/.bin/ccusage");
    if !pi.exists() || !ccusage.exists() {
        std::fs::create_dir_all(&npm_dir)?;
        eprintln!("installing Pi 1.6.0 and ccusage 20.0.24 with npm into {}", npm_dir.display());
        run(Command::new("npm").args(["install", "--no-save", "--prefix"]).arg(&npm_dir).args([
            "@earendil-works/pi-coding-agent@1.6.0",
            "ccusage@20.0.24",
            "@ccusage/ccusage-linux-x64@20.0.24",
        ]))?;
    }
    Ok((pi, ccusage))
}

/// `cargo xtask bench-reference [--corpus DIR]`: times Pi 1.6 (Node) and ccusage beside our
/// binary on one store, and prints the ratios.
/// The benchmark store, `target/bench-corpus-360MB-seed7` (`cargo xtask corpus --size 360MB --seed 7`),
/// generated when it is not there.
pub fn bench_store(target: &Path) -> anyhow::Result<PathBuf> {
    let c = target.join("bench-corpus-360MB-seed7");
    if !c.exists() {
        let spec =
            crate::corpus::CorpusSpec { size: 360_000_000, seed: 7, out: c.clone(), outliers: 0, median: 105_000 };
        crate::corpus::generate(&spec)?;
    }
    Ok(c)
}

pub fn bench_reference(corpus: Option<PathBuf>, session: Option<PathBuf>) -> anyhow::Result<()> {
    let target = root().join("target");
    let corpus = match corpus {
        Some(c) => c,
        None => bench_store(&target)?,
    };
    // Absolute: the reference reaches the store through a symlink made in a temporary folder.
    let corpus = std::fs::canonicalize(&corpus).with_context(|| format!("corpus {}", corpus.display()))?;
    let (pi, ccusage) = reference_packages(&target)?;
    run(Command::new("cargo").args(["build", "--release", "-p", "session-scan"]).current_dir(root()))?;
    run(Command::new("cargo")
        .args(["build", "--release", "-p", "session-bench", "--example", "context_store", "--example", "count_lines"])
        .current_dir(root()))?;
    // An example's own timing (in process, like the reference's), from its last line: "... in N ms".
    let example_ms = |name: &str| -> anyhow::Result<f64> {
        let out = run(Command::new(target.join("release/examples").join(name)).arg(&corpus))?;
        let ms = out.rsplit(" in ").next().and_then(|r| r.split_whitespace().next()).context("example output")?;
        Ok(ms.parse()?)
    };
    let ours = target.join("release/session-scan");
    let script = root().join("xtask/reference/time-pi.mjs");
    let node_ms = |mode: &str| -> anyhow::Result<f64> {
        let out = run(Command::new("node").arg(&script).arg(&pi).arg(&corpus).arg(mode).arg(SEARCH_QUERY))?;
        let number = |key: &str| out.split(key).nth(1).and_then(|r| r.split([',', '}']).next()).map(str::trim);
        let ms = number("\"ms\":").context("time-pi output")?;
        if mode != "search" && number("\"count\":") == Some("0") {
            bail!("the reference found nothing to {mode} in {}", corpus.display());
        }
        Ok(ms.parse()?)
    };
    let quiet = |args: &[&str]| -> anyhow::Result<()> {
        // Output to /dev/null, as a user's redirect would: capturing 100 MB in a pipe is not ours.
        let out = Command::new(&ours).args(args).arg(&corpus).stdout(std::process::Stdio::null()).output()?;
        if out.status.code().is_some_and(|c| c > 1) {
            bail!("session-scan {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(())
    };
    let bytes: u64 = session_scan::expand_paths(std::slice::from_ref(&corpus))
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    println!("corpus {} ({:.0} MB)", corpus.display(), bytes as f64 / 1e6);
    let pi_list = node_ms("list")?;
    // The picker's search: Pi lists the store, then filters it (`filterAndSortSessions`).
    let pi_search = node_ms("search")?;
    let pi_context = node_ms("context")?;
    let cc = best_of(3, || {
        run(Command::new(&ccusage)
            .args(["pi", "daily", "--json", "--offline", "--timezone", "UTC", "--pi-path"])
            .arg(&corpus))
        .map(|_| ())
    })?;
    let list = best_of(3, || quiet(&["list", "--json"]))?;
    let picker = best_of(3, || quiet(&["list", "--json", "--fields", PICKER_FIELDS]))?;
    // A picker's next listing with `--cache-file`: the cache filled by one listing first.
    let cache_file = target.join("bench-list.cache");
    let _ = std::fs::remove_file(&cache_file);
    let cache_file = cache_file.to_str().context("a cache path in UTF-8")?;
    let cached_args = ["list", "--json", "--fields", PICKER_FIELDS, "--cache-file", cache_file];
    quiet(&cached_args)?;
    let picker_cached = best_of(3, || quiet(&cached_args))?;
    let search = best_of(3, || quiet(&["search", SEARCH_QUERY, "--json", "--fields", PICKER_FIELDS]))?;
    let context = best_of(3, || quiet(&["context", "--json"]))?;
    let usage = best_of(3, || quiet(&["usage", "daily", "--json", "--timezone", "UTC"]))?;
    let context_in_process = example_ms("context_store")?;
    let floor = (0..3).map(|_| example_ms("count_lines")).collect::<anyhow::Result<Vec<f64>>>()?;
    let floor = floor.into_iter().fold(f64::INFINITY, f64::min);
    // The same pass timed as a whole process, as our own times are (start and exit included).
    let floor_process =
        best_of(3, || run(Command::new(target.join("release/examples/count_lines")).arg(&corpus)).map(|_| ()))?;
    println!("{:<34} {:>12} {:>12} {:>8}", "task", "reference ms", "ours ms", "ratio");
    for (task, reference, ours_ms) in [
        ("list, full (Pi listAll)", pi_list, list),
        ("list, picker fields (Pi listAll)", pi_list, picker),
        ("list, picker, warm --cache", pi_list, picker_cached),
        ("search, phrase (Pi listAll+filter)", pi_search, search),
        ("context, every file (Pi open+build)", pi_context, context),
        ("context, in process, no output", pi_context, context_in_process),
        ("usage daily (ccusage pi daily)", cc, usage),
    ] {
        println!("{task:<34} {reference:>12.0} {ours_ms:>12.0} {:>7.1}x", reference / ours_ms);
    }
    println!("(Pi times are in-process, best of 3; ccusage and ours are whole processes, best of 3, except the");
    println!(" in-process context row: read, load and rebuild every file with no output, as Pi's own measure)");
    println!("memchr floor (read every file, count line starts, all cores): {floor:.0} ms");
    for (task, ours_ms) in [("list, full", list), ("list, picker fields", picker), ("usage daily", usage)] {
        println!("{task:<34} {:>5.2}x the floor, {:>4.0}% of its speed", ours_ms / floor, 100.0 * floor / ours_ms);
    }
    println!("the floor as a whole process (as ours are timed): {floor_process:.0} ms");
    println!(
        "{:<34} {:>5.2}x that, usage daily {:>4.0}% of its speed",
        "list, picker fields",
        picker / floor_process,
        100.0 * floor_process / usage
    );
    picker_beside_floor(&target, &ours, &corpus)?;
    single_session(&target, &ours, session)
}

/// A query for the picker's search: a phrase, which every session's text is normalised for.
const SEARCH_QUERY: &str = "\"leaf parser compile\"";

/// The picker fields: what a session picker shows, without `allMessagesText`.
const PICKER_FIELDS: &str = "path,id,cwd,name,created,modified,messageCount,firstMessage";

/// How long `cmd` takes as a whole process, its output to `/dev/null`; an error if it ends by a
/// signal or with an exit code above `highest_ok`.
fn process_ms(cmd: &mut Command, highest_ok: i32) -> anyhow::Result<f64> {
    let t = std::time::Instant::now();
    let status = cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).status()?;
    if status.code().is_none_or(|c| c > highest_ok) {
        bail!("{cmd:?} failed");
    }
    Ok(t.elapsed().as_secs_f64() * 1000.0)
}

/// The picker listing and the floor (`examples/count_lines`) as whole processes, run in turn
/// `PICKER_ROUNDS` times (which goes first alternates), output to `/dev/null`: their medians and
/// minimums, and the ratios of those. A best of three for each, timed apart, moves the ratio
/// between 1.49 and 2.04 over six runs on a VM; taking turns puts both under the same load.
fn picker_beside_floor(
    target: &std::path::Path,
    ours: &std::path::Path,
    corpus: &std::path::Path,
) -> anyhow::Result<()> {
    const PICKER_ROUNDS: usize = 21;
    let mut picker_cmd = Command::new(ours);
    picker_cmd.args(["list", "--json", "--fields", PICKER_FIELDS]).arg(corpus);
    let mut floor_cmd = Command::new(target.join("release/examples/count_lines"));
    floor_cmd.arg(corpus);
    // Exit code 1 is a listing that left a session out (and said why): the run counts. Each run's
    // CPU time is what the children's total grew by while it ran.
    let (mut picker_cpu, mut floor_cpu) = (Some(0.0), Some(0.0));
    let time = |cmd: &mut Command, cpu: &mut Option<f64>| -> anyhow::Result<f64> {
        let before = children_cpu_ms();
        let ms = process_ms(cmd, 1)?;
        *cpu = match (*cpu, before, children_cpu_ms()) {
            (Some(sum), Some(before), Some(after)) => Some(sum + after - before),
            _ => None,
        };
        Ok(ms)
    };
    let (mut picker, mut floor) = (Vec::new(), Vec::new());
    for round in 0..PICKER_ROUNDS {
        if round % 2 == 0 {
            picker.push(time(&mut picker_cmd, &mut picker_cpu)?);
            floor.push(time(&mut floor_cmd, &mut floor_cpu)?);
        } else {
            floor.push(time(&mut floor_cmd, &mut floor_cpu)?);
            picker.push(time(&mut picker_cmd, &mut picker_cpu)?);
        }
    }
    for v in [&mut picker, &mut floor] {
        v.sort_by(f64::total_cmp);
    }
    let (median, min) = (|v: &[f64]| v[v.len() / 2], |v: &[f64]| v[0]);
    println!(
        "picker and floor in turn, {PICKER_ROUNDS} runs each: picker median {:.1} ms (min {:.1}), floor median {:.1} ms (min {:.1}): {:.2}x by medians, {:.2}x by minimums",
        median(&picker),
        min(&picker),
        median(&floor),
        min(&floor),
        median(&picker) / median(&floor),
        min(&picker) / min(&floor)
    );
    if let (Some(picker_cpu), Some(floor_cpu)) = (picker_cpu, floor_cpu) {
        let runs = PICKER_ROUNDS as f64;
        println!(
            "CPU time (user and system, all threads) per run, mean of the same runs: picker {:.0} ms, floor {:.0} ms: {:.2}x",
            picker_cpu / runs,
            floor_cpu / runs,
            picker_cpu / floor_cpu
        );
    }
    Ok(())
}

/// The CPU time (user and system) of this process's children that have ended, in ms, from
/// `/proc/self/stat` (`cutime` and `cstime`, in ticks of 10 ms: Linux's `USER_HZ` of 100); `None`
/// where that cannot be read. A run's share is what the total grew by while it ran: each reading
/// is cut to the tick, so a run's figure is within 10 ms, and those errors largely cancel in a sum.
fn children_cpu_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at the third, `state`.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |field: usize| fields.get(field - 3)?.parse::<f64>().ok();
    Some((ticks(16)? + ticks(17)?) * 10.0)
}

/// One session of 100 MB or more (`FILE`, else a generated one): `context --json` beside reading
/// and counting its lines with `memchr` (`examples/count_lines`), whole processes, 15
/// interleaved runs, medians.
fn single_session(target: &std::path::Path, ours: &std::path::Path, session: Option<PathBuf>) -> anyhow::Result<()> {
    let file = match session {
        Some(f) => f,
        None => {
            let dir = target.join("bench-session-107MB-seed5");
            if !dir.exists() {
                let spec =
                    crate::corpus::CorpusSpec { size: 1, seed: 5, out: dir.clone(), outliers: 1, median: 105_000 };
                crate::corpus::generate(&spec)?;
            }
            // The generator adds a small session beside the large one: the large one alone is timed.
            session_scan::expand_paths(std::slice::from_ref(&dir))
                .into_iter()
                .max_by_key(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
                .context("no session generated")?
        }
    };
    let size = std::fs::metadata(&file)?.len();
    // `count_lines` reads a folder: one holding this file alone.
    let alone = target.join("bench-single-session");
    let _ = std::fs::remove_dir_all(&alone);
    std::fs::create_dir_all(&alone)?;
    if std::fs::hard_link(&file, alone.join("session.jsonl")).is_err() {
        std::fs::copy(&file, alone.join("session.jsonl"))?;
    }
    let time = |cmd: &mut Command| process_ms(cmd, 0);
    let (mut context, mut count) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        count.push(time(Command::new(target.join("release/examples/count_lines")).arg(&alone))?);
        context.push(time(Command::new(ours).args(["context", "--json"]).arg(&file))?);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (context, count) = (median(&mut context), median(&mut count));
    println!(
        "one {:.0} MB session: context --json {context:.1} ms, memchr line count {count:.1} ms: {:.0}% of its speed",
        size as f64 / 1e6,
        100.0 * count / context
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comparison_reads_the_committed_baseline() {
        let main = baseline_path("main");
        assert!(main.starts_with(root().join("crates/session-bench/baselines")), "{}", main.display());
        assert!(!from_json(&std::fs::read_to_string(&main).unwrap()).is_empty(), "the committed baseline has counts");
    }
}
