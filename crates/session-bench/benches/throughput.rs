//! Wall-time throughput of the hot paths over the committed sample corpus, beside the ceiling
//! (memchr line counting) and the naive baseline (serde_json per line).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use session_bench::*;

fn paths(c: &mut Criterion) {
    let files = corpus("sample-16");
    let mut g = c.benchmark_group("sample-16");
    g.throughput(Throughput::Bytes(total_bytes(&files)));
    g.sample_size(20);
    g.bench_function("memchr-lines (ceiling)", |b| b.iter(|| memchr_lines(&files)));
    g.bench_function("serde_json-per-line (naive)", |b| b.iter(|| serde_json_per_line(&files)));
    g.bench_function("line split", |b| b.iter(|| split_lines(&files)));
    g.bench_function("load (index)", |b| b.iter(|| load_all(&files)));
    g.bench_function("full-parse", |b| b.iter(|| full_parse_all(&files)));
    g.bench_function("totals", |b| b.iter(|| totals_all(&files)));
    g.bench_function("session-info", |b| b.iter(|| infos_all(&files)));
    g.bench_function("context", |b| b.iter(|| contexts_all(&files)));
    g.bench_function("session-info-picker", |b| b.iter(|| picker_infos_all(&files)));
    g.bench_function("usage-events", |b| b.iter(|| usage_events_all(&files)));
    g.bench_function("search", |b| b.iter(|| search_all(&files)));
    g.finish();
}

/// One 100 MB session: context rebuild (scanned on all threads, as the CLI does) beside the
/// memchr line count of the same bytes.
fn big_session(c: &mut Criterion) {
    let bytes = synthetic_session(100 << 20, 8 << 20);
    let mut g = c.benchmark_group("session-100MB");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.sample_size(10);
    g.bench_function("memchr-lines (ceiling)", |b| b.iter(|| session_core::lines::count_lines(&bytes)));
    g.bench_function("context", |b| {
        b.iter(|| session_scan::load_session(&bytes, &session_scan::UTC).map_or(0, |s| context_json_len(&s)))
    });
    // Listing it from disk: mapped, its lines scanned on all cores (`read::fold_lines`).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-session-100MB");
    std::fs::create_dir_all(&dir).expect("bench folder");
    let path = dir.join("session.jsonl");
    std::fs::write(&path, &bytes).expect("bench session");
    let candidate = session_scan::list::Candidate { path, mtime: None };
    g.bench_function("list (file, picker fields)", |b| {
        b.iter(|| {
            let how = session_scan::list::Reading::new(session_scan::list::Texts::Skip, false);
            session_scan::list::read_infos(std::slice::from_ref(&candidate), how).len()
        })
    });
    g.finish();
}

/// Whole-store passes as the CLI runs them (discovery, reads, all cores).
fn store(c: &mut Criterion) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/sample-16/sessions");
    let files = corpus("sample-16");
    let mut g = c.benchmark_group("store-sample-16");
    g.throughput(Throughput::Bytes(total_bytes(&files)));
    g.sample_size(20);
    let scope = session_scan::list::Scope::All { root: root.clone() };
    g.bench_function("list (full SessionInfo)", |b| {
        b.iter(|| {
            session_scan::list::read_infos(
                &session_scan::list::discover(&scope),
                session_scan::list::Reading::new(session_scan::list::Texts::Json, false),
            )
            .len()
        })
    });
    let picker = session_scan::list::Reading::new(session_scan::list::Texts::Skip, false);
    g.bench_function("list (picker fields)", |b| b.iter(|| session_scan::list::read_store(&root, picker).len()));
    // A picker's next listing with `--cache`: the cache file made once, then opened and used
    // each time, as the CLI does (no file changed, so it is not written again).
    let cache_file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-sample-16.cache");
    let _ = std::fs::remove_file(&cache_file);
    let warm = session_scan::cache::ListCache::open(&cache_file);
    session_scan::list::read_store(&root, picker.with_cache(&warm));
    warm.save(Some(session_scan::cache::ReadAll::Store(&root))).expect("cache written");
    g.bench_function("list (picker fields, warm cache)", |b| {
        b.iter(|| {
            let cache = session_scan::cache::ListCache::open(&cache_file);
            let n = session_scan::list::read_store(&root, picker.with_cache(&cache)).len();
            assert_eq!(cache.hits() as usize, n, "every file from the cache");
            n
        })
    });
    let paths = session_scan::expand_paths(std::slice::from_ref(&root));
    let opts = session_scan::usage::Options::default();
    g.bench_function("usage daily report", |b| {
        b.iter(|| session_scan::usage::build(&paths, &opts, &|| {}).totals.events)
    });
    g.finish();
}

criterion_group!(benches, paths, big_session, store);
criterion_main!(benches);
