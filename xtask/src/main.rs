//! Project chores, run as `cargo xtask <task>`:
//! - `manifest [--check]`: write or check `corpora/manifest.json`;
//! - `corpus --size 1GiB --seed N --out DIR [--outliers K] [--median SIZE]`: generate a realistic store;
//! - `bench [--save NAME] [--compare NAME] [--wall]`: instruction counts against a baseline;
//! - `bench-reference [--corpus DIR] [--session FILE]`: Pi 1.6 and ccusage timed beside us, and one large
//!   session beside the memchr line count of its bytes;
//! - `bench-writer [--session FILE]`: opening a 107 MB session for appending, one append and `fork`,
//!   beside Pi 1.6 and the memchr line count.
//! - `bench-dataset [--corpus DIR]`: `session-scan dataset` on the benchmark store beside DuckDB's query
//!   over the raw JSONL, the same query over the Parquet, and an unchanged second export (needs `duckdb`
//!   for `python3`);
//! - `stress [--dir DIR]`: hostile inputs too large to commit, with time and peak memory;
//! - `memcheck`: peak memory of listing and usage, bounded whatever the file sizes (run by CI);
//! - `adversarial`: rewrite the small hostile corpus in `corpora/adversarial/`;
//! - `recorder`: install Pi 1.6 and the recorder of `reference/` under `target/recorder` (needs `npm`)
//!   and print its folder, the argument every `corpora/*/record.*` script takes;
//! - `dates`: rewrite `corpora/dates/`, date strings and Node's `Date.parse` of each (needs `node`);
//! - `differential [--seeds A-B] [--files N] [--shape listing|tree|threads|resolve] [--trees [--reference DIR]]`:
//!   random hostile stores listed by Pi 1.6 and by us, compared; with `--trees`, their trees, totals,
//!   contexts and picker searches too; `--shape threads`: stores of forks, threaded by Pi's picker and
//!   by `list --threaded`; `--shape resolve`: `pi -c` and `pi --session` lookups against `resolve`
//!   (needs `python3`, `node` and `npm`).

mod adversarial;
mod bench;
mod corpus;
mod dataset_bench;
mod dates;
mod differential;
mod stress;
mod writer_bench;

use std::path::PathBuf;

use anyhow::{Context, bail};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().map(PathBuf::from).unwrap_or_default()
}

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

const USAGE: &str = "usage: cargo xtask manifest [--check] | corpus --size 1GiB --seed N --out DIR [--outliers K] \
                     [--median SIZE] | bench [--save NAME] [--compare NAME] [--wall] | bench-reference [--corpus DIR] \
                     [--session FILE] | bench-writer [--session FILE] | bench-dataset [--corpus DIR] | differential [--seeds A-B] [--files N] [--shape listing|tree|threads|resolve] \
                     [--trees [--reference DIR]] | stress [--dir DIR] | memcheck | adversarial | recorder | dates | help";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "help") || args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return Ok(());
    }
    match args.first().map(String::as_str) {
        Some("manifest") => manifest(args.iter().any(|a| a == "--check")),
        Some("corpus") => {
            let spec = corpus::CorpusSpec {
                size: corpus::parse_size(&flag(&args, "--size").unwrap_or_else(|| "1GiB".into()))?,
                seed: flag(&args, "--seed").map_or(Ok(1), |s| s.parse()).context("--seed")?,
                out: PathBuf::from(flag(&args, "--out").context("--out DIR is required")?),
                outliers: flag(&args, "--outliers").map_or(Ok(0), |s| s.parse()).context("--outliers")?,
                median: flag(&args, "--median").map_or(Ok(105_000), |s| corpus::parse_size(&s))?,
            };
            let t = std::time::Instant::now();
            let (files, bytes) = corpus::generate(&spec)?;
            println!(
                "wrote {files} sessions, {bytes} bytes to {} in {:.1} s",
                spec.out.display(),
                t.elapsed().as_secs_f64()
            );
            Ok(())
        }
        Some("bench") => {
            bench::bench(flag(&args, "--save"), flag(&args, "--compare"), args.iter().any(|a| a == "--wall"))
        }
        Some("memcheck") => stress::memcheck(),
        Some("stress") => stress::stress(flag(&args, "--dir").map(PathBuf::from)),
        Some("adversarial") => {
            let out = root().join("corpora").join("adversarial");
            adversarial::write(&out)?;
            println!("wrote {}", out.display());
            Ok(())
        }
        Some("dates") => {
            let out = root().join("corpora").join("dates");
            let n = dates::write(&out)?;
            println!("wrote {n} date strings to {}", out.display());
            Ok(())
        }
        Some("differential") => {
            let seeds = flag(&args, "--seeds").unwrap_or_else(|| "1001-1005".into());
            let (first, last) = seeds.split_once('-').unwrap_or((&seeds, &seeds));
            let (first, last) = (first.parse::<u64>().context("--seeds")?, last.parse::<u64>().context("--seeds")?);
            let files = flag(&args, "--files").map_or(Ok(400), |s| s.parse()).context("--files")?;
            let trees = args.iter().any(|a| a == "--trees").then(|| flag(&args, "--reference").map(PathBuf::from));
            let shape = flag(&args, "--shape").unwrap_or_else(|| "listing".into());
            if !["listing", "tree", "threads", "resolve"].contains(&shape.as_str()) {
                bail!("--shape: listing, tree, threads or resolve");
            }
            differential::differential(first..=last, files, &shape, trees)
        }
        Some("bench-writer") => writer_bench::bench_writer(flag(&args, "--session").map(PathBuf::from)),
        Some("bench-dataset") => dataset_bench::bench_dataset(flag(&args, "--corpus").map(PathBuf::from)),
        Some("recorder") => {
            println!("{}", differential::install_recorder(&root().join("target"))?.display());
            Ok(())
        }
        Some("bench-reference") => bench::bench_reference(
            flag(&args, "--corpus").map(PathBuf::from),
            flag(&args, "--session").map(PathBuf::from),
        ),
        _ => {
            eprintln!("{USAGE}");
            bail!("unknown task")
        }
    }
}

fn manifest(check: bool) -> anyhow::Result<()> {
    let corpora = root().join("corpora");
    let text = session_scan::manifest::render_manifest(&corpora)? + "\n";
    let path = corpora.join("manifest.json");
    if check {
        let committed = std::fs::read_to_string(&path).context("reading corpora/manifest.json")?;
        if committed != text {
            bail!("corpora/manifest.json is out of date: run `cargo xtask manifest`");
        }
        println!("corpora/manifest.json is up to date");
    } else {
        std::fs::write(&path, text)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
