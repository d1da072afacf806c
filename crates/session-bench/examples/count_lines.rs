//! The floor for whole-store passes: read every `*.jsonl` under a folder (all cores) and count
//! its line starts with `memchr`.
//!
//! Files under 64 MiB (`PARALLEL_LINES_MIN_AMONG_MANY`) are read in 64 KiB chunks into a reused
//! buffer per worker; larger ones are mapped. Session 9 (Zen 4):
//! files read whole into a reused buffer took 38-53 ms against 33-37 ms in chunks. Session 16 (Zen
//! 5 VM), the bench store, 21 interleaved runs twice: 36.5 and 39.3 ms reading every file in
//! chunks against 39.6 and 43.6 ms when files of 4 MiB or more were mapped (memchr over a map reads
//! the page cache from memory; after the kernel's copy the bytes are in the core's cache). On one
//! session of 107 MB, the map is the faster (17.3 against 19.1 ms).
use std::io::Read;

use rayon::prelude::*;

const CHUNK: usize = 64 << 10;

fn count_file(path: &std::path::Path, buf: &mut Vec<u8>) -> usize {
    // One open per file: a large one is opened (and mapped) by `read_file_into`.
    let len = std::fs::metadata(path).map_or(0, |m| m.len());
    if len >= session_scan::read::PARALLEL_LINES_MIN_AMONG_MANY
        && let Ok((Some(map), _)) = session_scan::read_file_into(path, session_scan::ReadStrategy::Mmap, buf)
    {
        return session_core::lines::count_lines(&map);
    }
    let Ok(mut file) = std::fs::File::open(path) else { return 0 };
    buf.resize(CHUNK + 64, 0);
    // Reads go to a cache line's start, as the scans' own reads do (`session_scan::read`): the
    // kernel's copy runs at a third of its speed to some offsets on Zen 3.
    let at = session_scan::read::read_start(buf, 0);
    let chunk = &mut buf[at..at + CHUNK];
    let mut lines = 0;
    // A file that does not end with a newline has one more line.
    let mut last = b'\n';
    loop {
        match file.read(chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                lines += memchr::memchr_iter(b'\n', &chunk[..n]).count();
                last = chunk[n - 1];
            }
        }
    }
    lines + usize::from(last != b'\n')
}

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "corpora/sample-16/sessions".into()));
    let t = std::time::Instant::now();
    let files = session_scan::expand_paths(&[dir]);
    let lines: usize = files.par_iter().map_init(Vec::new, |buf, p| count_file(p, buf)).sum();
    println!("{} files, {lines} lines in {:.1} ms", files.len(), t.elapsed().as_secs_f64() * 1000.0);
}
