//! `cargo xtask bench-writer [--session FILE]`: the writer beside Pi 1.6's on one session of
//! 100 MB or more (a generated one of 107 MB unless FILE is given): opening it for appending and
//! one append, in process (`examples/writer_timing` beside `reference/writer-timing.mjs`), and
//! `session-scan fork` beside reading and counting the file's lines (`examples/count_lines`) and
//! beside `cp` (the same bytes written, nothing read for them) and `examples/count_then_write`
//! (the lines counted, then the bytes written: the least a fork of a branched session does),
//! whole processes, 9 interleaved runs, medians.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use crate::bench::run;
use crate::root;

/// The generated session of 107 MB (`cargo xtask corpus` with one outlier, seed 5).
pub fn big_session(target: &Path) -> anyhow::Result<PathBuf> {
    let dir = target.join("bench-session-107MB-seed5");
    if !dir.exists() {
        let spec = crate::corpus::CorpusSpec { size: 1, seed: 5, out: dir.clone(), outliers: 1, median: 105_000 };
        crate::corpus::generate(&spec)?;
    }
    // The generator adds a small session beside the large one: the large one alone is timed.
    session_scan::expand_paths(std::slice::from_ref(&dir))
        .into_iter()
        .max_by_key(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .context("no session generated")
}

fn field(json: &str, key: &str) -> anyhow::Result<f64> {
    let v: serde_json::Value = serde_json::from_str(json.trim()).with_context(|| format!("timing output {json}"))?;
    v[key].as_f64().with_context(|| format!("{key} in {json}"))
}

pub fn bench_writer(session: Option<PathBuf>) -> anyhow::Result<()> {
    let target = root().join("target");
    let file = match session {
        Some(f) => f,
        None => big_session(&target)?,
    };
    let size = std::fs::metadata(&file)?.len();
    let recorder = crate::differential::install_recorder(&target)?;
    run(Command::new("cargo").args(["build", "--release", "-p", "session-scan"]).current_dir(root()))?;
    run(Command::new("cargo")
        .args([
            "build",
            "--release",
            "-p",
            "session-bench",
            "--example",
            "writer_timing",
            "--example",
            "count_lines",
            "--example",
            "count_then_write",
        ])
        .current_dir(root()))?;
    let appends = "1000";
    let pi = run(Command::new("node").arg(recorder.join("writer-timing.mjs")).arg(&file).arg(appends))?;
    let ours = run(Command::new(target.join("release/examples/writer_timing")).arg(&file).arg(appends))?;
    let (pi_open, our_open) = (field(&pi, "openMs")?, field(&ours, "openMs")?);
    let (pi_append, our_append) = (field(&pi, "appendUs")?, field(&ours, "appendUs")?);
    println!("one {:.0} MB session, {} entries:", size as f64 / 1e6, field(&ours, "entries")?);
    println!("  open for appending: Pi {pi_open:.1} ms, ours {our_open:.1} ms: {:.1}x", pi_open / our_open);
    println!(
        "  one append (median of {appends}): Pi {pi_append:.1} us, ours {our_append:.1} us: {:.2}x",
        pi_append / our_append
    );

    // `fork` writes its copy beside the session: a folder holding the session alone, emptied of
    // each copy after its run, is what both read.
    let alone = target.join("bench-writer-fork");
    let _ = std::fs::remove_dir_all(&alone);
    std::fs::create_dir_all(&alone)?;
    let session = alone.join("session.jsonl");
    if std::fs::hard_link(&file, &session).is_err() {
        std::fs::copy(&file, &session)?;
    }
    let ours_bin = target.join("release/session-scan");
    let (mut fork, mut count, mut copy, mut floor) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let copied = alone.join("copy.jsonl");
    for _ in 0..9 {
        // Writing the same bytes without reading them for anything: `cp`.
        let t = std::time::Instant::now();
        run(Command::new("cp").arg(&session).arg(&copied))?;
        copy.push(t.elapsed().as_secs_f64() * 1000.0);
        std::fs::remove_file(&copied)?;
        // The least a fork of a branched session does: count the lines, then write the bytes.
        let t = std::time::Instant::now();
        run(Command::new(target.join("release/examples/count_then_write")).arg(&session).arg(&copied))?;
        floor.push(t.elapsed().as_secs_f64() * 1000.0);
        std::fs::remove_file(&copied)?;
        let t = std::time::Instant::now();
        run(Command::new(target.join("release/examples/count_lines")).arg(&alone))?;
        count.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = std::time::Instant::now();
        let made = run(Command::new(&ours_bin).arg("fork").arg(&session))?;
        fork.push(t.elapsed().as_secs_f64() * 1000.0);
        std::fs::remove_file(made.trim()).with_context(|| format!("the fork's copy {}", made.trim()))?;
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (fork, count, copy, floor) = (median(&mut fork), median(&mut count), median(&mut copy), median(&mut floor));
    println!(
        "  session-scan fork: {fork:.1} ms; memchr line count {count:.1} ms: {:.0}% of its speed; cp {copy:.1} ms: {:.0}% of its speed",
        100.0 * count / fork,
        100.0 * copy / fork
    );
    // What writing the bytes costs here, whatever is done to choose them, beside the count.
    println!(
        "  cp itself: {:.0}% of the line count's speed; counting the lines then writing the bytes (examples/count_then_write): {floor:.1} ms, {:.0}% of it",
        100.0 * count / copy,
        100.0 * count / floor
    );
    std::fs::remove_dir_all(&alone)?;
    Ok(())
}
