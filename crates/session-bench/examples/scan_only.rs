//! Runs one hot path over a folder many times, for profilers: `scan`, `load` or `context`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).map(String::as_str).unwrap_or("scan");
    let dir = std::path::PathBuf::from(args.get(2).map(String::as_str).unwrap_or("corpora/sample-16/sessions"));
    let files: Vec<Vec<u8>> = session_scan::expand_paths(&[dir]).iter().filter_map(|p| std::fs::read(p).ok()).collect();
    let bytes: usize = files.iter().map(Vec::len).sum();
    let reps = 5;
    let t = std::time::Instant::now();
    let mut n = 0usize;
    for _ in 0..reps {
        for f in &files {
            match what {
                "scan" => {
                    for l in session_core::lines::Lines::new(f, session_core::lines::LineRule::Newline) {
                        n += usize::from(session_core::json::scan_line(l.bytes).is_ok());
                    }
                }
                "load" => n += session_core::Session::load(f).map(|s| s.records.len()).unwrap_or(0),
                _ => n += session_core::Session::load(f).map_or(0, |s| session_bench::context_json_len(&s)),
            }
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!("{what}: {n} in {secs:.3}s, {:.2} GB/s", (bytes * reps) as f64 / secs / 1e9);
}
