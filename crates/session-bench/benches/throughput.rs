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
    g.bench_function("load (index)", |b| b.iter(|| load_all(&files)));
    g.bench_function("full-parse", |b| b.iter(|| full_parse_all(&files)));
    g.bench_function("totals", |b| b.iter(|| totals_all(&files)));
    g.bench_function("session-info", |b| b.iter(|| infos_all(&files)));
    g.finish();
}

criterion_group!(benches, paths);
criterion_main!(benches);
