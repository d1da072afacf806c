//! The line scan's speed on real bytes, on one core: each session's first MiB read into a buffer
//! (the kernel's copy, as a listing streams it), scanned once right after the read, then scanned
//! again from cache. Unlike a benchmark that repeats a few lines, no branch history is learned
//! from one pass to the next file: `scan_fresh DIR [PASSES]`.
use std::io::Read;

const WINDOW_DEFAULT: usize = 1 << 20;

fn scan(bytes: &[u8]) -> usize {
    let rule = session_core::lines::LineRule::Readline;
    let mut lines = session_core::lines::ScannedLines::new(bytes, rule, Default::default());
    let mut json = 0;
    while let Some((_, scan)) = lines.next() {
        json += usize::from(matches!(scan, Some(Ok(_))));
    }
    json
}

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "corpora/sample-16/sessions".into()));
    let passes: usize = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(3).max(2);
    let files = session_scan::expand_paths(&[dir]);
    let window =
        std::env::var("WINDOW_KIB").ok().and_then(|s| s.parse::<usize>().ok()).map_or(WINDOW_DEFAULT, |k| k << 10);
    let mut buf = vec![0u8; window];
    let (mut read, mut first, mut later, mut bytes, mut json) = (0f64, 0f64, 0f64, 0usize, 0usize);
    for path in &files {
        let Ok(mut file) = std::fs::File::open(path) else { continue };
        let t = std::time::Instant::now();
        let mut len = 0;
        while len < window {
            match file.read(&mut buf[len..]) {
                Ok(0) | Err(_) => break,
                Ok(k) => len += k,
            }
        }
        read += t.elapsed().as_secs_f64();
        // Whole lines only.
        let end = memchr::memrchr(b'\n', &buf[..len]).map_or(0, |e| e + 1);
        bytes += end;
        let t = std::time::Instant::now();
        json += scan(&buf[..end]);
        first += t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        for _ in 1..passes {
            json += scan(&buf[..end]);
        }
        later += t.elapsed().as_secs_f64() / (passes - 1) as f64;
    }
    let rate = |s: f64| bytes as f64 / s / 1e9;
    println!(
        "{} files, {:.0} MB: read {:.1} ms; first scan {:.1} ms ({:.2} GB/s); later scans {:.1} ms ({:.2} GB/s); {json} JSON lines",
        files.len(),
        bytes as f64 / 1e6,
        read * 1e3,
        first * 1e3,
        rate(first),
        later * 1e3,
        rate(later)
    );
}
