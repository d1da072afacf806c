//! `cargo xtask bench-dataset [--corpus DIR]`: `session-scan dataset` on the benchmark store, timed
//! beside DuckDB's one query over the raw JSONL, with the same daily-cost query over both, and a
//! second export with nothing changed. Needs `python3` with the `duckdb` package.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::Context;

use crate::bench::run;
use crate::root;

/// DuckDB timing a query (best of 3, in ms) and printing its first row: `python3 -c TIMER DIR SQL`.
const TIMER: &str = r#"
import sys, time, duckdb
db = duckdb.connect()
db.execute(f"SET file_search_path = '{sys.argv[1]}'")
best, row = None, None
for _ in range(3):
    t = time.perf_counter()
    row = db.execute(sys.argv[2]).fetchall()
    ms = (time.perf_counter() - t) * 1000
    best = ms if best is None else min(best, ms)
print(f"{best:.0f} {len(row)} {sum(r[1] or 0 for r in row):.2f}")
"#;

/// Daily cost over the raw files as an analyst writes it without this tool: assistant usage only,
/// fork copies counted again.
const RAW: &str = "SELECT strftime(CAST(timestamp AS TIMESTAMP), '%Y-%m-%d') AS day, \
                   sum(message.usage.cost.total) AS cost \
                   FROM read_json('**/*.jsonl', format = 'newline_delimited', union_by_name = true, \
                   ignore_errors = true, maximum_object_size = 1073741824) \
                   WHERE type = 'message' AND message.role = 'assistant' GROUP BY day ORDER BY day";

/// The same over the dataset: every usage source, copies left out.
const PARQUET: &str = "SELECT strftime(timestamp AT TIME ZONE 'UTC', '%Y-%m-%d') AS day, sum(cost) AS cost \
                       FROM 'usage/**/*.parquet' WHERE NOT is_copy GROUP BY day ORDER BY day";

fn duckdb(dir: &Path, sql: &str) -> anyhow::Result<(f64, String)> {
    let out = run(Command::new("python3").args(["-c", TIMER]).arg(dir).arg(sql))?;
    let mut words = out.split_whitespace();
    let ms: f64 = words.next().context("duckdb timer")?.parse()?;
    Ok((ms, words.collect::<Vec<_>>().join(" ")))
}

/// Best of three runs of `session-scan` with `args`, in ms; `before` runs ahead of each.
fn best_of_3(binary: &Path, args: &[&str], before: &dyn Fn()) -> anyhow::Result<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        before();
        let t = Instant::now();
        run(Command::new(binary).args(args))?;
        best = best.min(t.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(best)
}

pub fn bench_dataset(corpus: Option<PathBuf>) -> anyhow::Result<()> {
    let target = root().join("target");
    let corpus = match corpus {
        Some(c) => c,
        None => crate::bench::bench_store(&target)?,
    };
    let corpus = std::fs::canonicalize(&corpus).with_context(|| format!("corpus {}", corpus.display()))?;
    run(Command::new("cargo").args(["build", "--release", "-p", "session-scan"]).current_dir(root()))?;
    let binary = target.join("release/session-scan");
    let out = target.join("bench-dataset");
    let (o, c) = (out.to_str().context("path")?, corpus.to_str().context("path")?);
    let fresh = || {
        let _ = std::fs::remove_dir_all(&out);
    };
    let export = best_of_3(&binary, &["-q", "dataset", o, c], &fresh)?;
    let again = best_of_3(&binary, &["-q", "dataset", o, c], &|| {})?;
    let (raw_ms, raw_result) = duckdb(&corpus, RAW)?;
    let (parquet_ms, parquet_result) = duckdb(&out, PARQUET)?;
    let bytes: u64 = walk_size(&corpus);
    println!("store: {} ({:.0} MB)", corpus.display(), bytes as f64 / 1e6);
    println!("| task | ms | |");
    println!("|---|---:|---|");
    println!("| DuckDB `read_json` daily cost over the raw JSONL | {raw_ms:.0} | days, dollars: {raw_result} |");
    println!(
        "| `session-scan dataset` (whole store, fresh) | {export:.0} | {:.1}x faster than the raw query |",
        raw_ms / export
    );
    println!(
        "| `session-scan dataset` again, nothing changed | {again:.0} | {:.1}% of the first |",
        again / export * 100.0
    );
    println!(
        "| DuckDB daily cost over the Parquet tables | {parquet_ms:.0} | {:.0}x faster than raw; days, dollars: {parquet_result} |",
        raw_ms / parquet_ms
    );
    Ok(())
}

fn walk_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|list| {
            list.flatten()
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() { walk_size(&p) } else { e.metadata().map_or(0, |m| m.len()) }
                })
                .sum()
        })
        .unwrap_or(0)
}
