//! The floor for whole-store passes: read every `*.jsonl` under a folder (reused buffer per
//! worker, all cores) and count its line starts with `memchr`.
use rayon::prelude::*;

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "corpora/sample-16/sessions".into()));
    let t = std::time::Instant::now();
    let files = session_scan::expand_paths(&[dir]);
    let lines: usize = files
        .par_iter()
        .map_init(Vec::new, |buf, p| match session_scan::read_file_into(p, session_scan::ReadStrategy::Auto, buf) {
            Ok((Some(map), _)) => session_core::lines::count_lines(&map),
            Ok((None, _)) => session_core::lines::count_lines(buf),
            Err(_) => 0,
        })
        .sum();
    println!("{} files, {lines} lines in {:.1} ms", files.len(), t.elapsed().as_secs_f64() * 1000.0);
}
