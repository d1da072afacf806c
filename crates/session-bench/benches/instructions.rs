//! Instruction counts (iai-callgrind, runner pinned to the library's 0.16.1) of the hot paths on
//! the small edge corpus: a regression gate that machine noise does not move.

#![allow(missing_docs)] // the iai-callgrind macros generate undocumented items

use std::hint::black_box;

use iai_callgrind::{library_benchmark, library_benchmark_group, main};
use session_bench::*;

#[library_benchmark]
#[bench::edge(args = ("edge"), setup = corpus)]
fn load(files: Vec<(std::path::PathBuf, Vec<u8>)>) -> usize {
    black_box(load_all(&files))
}

#[library_benchmark]
#[bench::edge(args = ("edge"), setup = corpus)]
fn totals(files: Vec<(std::path::PathBuf, Vec<u8>)>) -> f64 {
    black_box(totals_all(&files))
}

#[library_benchmark]
#[bench::edge(args = ("edge"), setup = corpus)]
fn session_info(files: Vec<(std::path::PathBuf, Vec<u8>)>) -> u64 {
    black_box(infos_all(&files))
}

#[library_benchmark]
#[bench::edge(args = ("edge"), setup = corpus)]
fn picker_info(files: Vec<(std::path::PathBuf, Vec<u8>)>) -> u64 {
    black_box(picker_infos_all(&files))
}

#[library_benchmark]
#[bench::edge(args = ("edge"), setup = corpus)]
fn context(files: Vec<(std::path::PathBuf, Vec<u8>)>) -> usize {
    black_box(contexts_all(&files))
}

#[library_benchmark]
#[bench::edge(args = ("edge"), setup = corpus)]
fn usage_events(files: Vec<(std::path::PathBuf, Vec<u8>)>) -> usize {
    black_box(usage_events_all(&files))
}

/// The first 40 sessions of the sample corpus: the edge corpus has almost no message text.
fn sample_head(name: &str) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    corpus(name).into_iter().take(40).collect()
}

#[library_benchmark]
#[bench::sample(args = ("sample-16"), setup = sample_head)]
fn search(files: Vec<(std::path::PathBuf, Vec<u8>)>) -> usize {
    black_box(search_all(&files))
}

library_benchmark_group!(
    name = hot_paths;
    benchmarks = load, totals, session_info, picker_info, context, usage_events, search
);
main!(library_benchmark_groups = hot_paths);
