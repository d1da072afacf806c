//! The floor for whole-store passes: read every `*.jsonl` under a folder (all cores) and count
//! its line starts with `memchr`.
//!
//! Files under 64 MiB (`PARALLEL_LINES_MIN_AMONG_MANY`) are read in 64 KiB chunks into a reused
//! buffer per worker; larger ones are mapped. This is the fastest way to count a store's lines
//! measured here: reading files whole into a reused buffer is slower (38-53 against 33-37 ms on the
//! bench store), and so is mapping files from 4 MiB (39.6 against 36.5 ms: memchr over a map reads
//! the page cache from memory, while after the kernel's copy the bytes are in the core's cache).
//! One session of 107 MB alone counts faster mapped (17.3 against 19.1 ms).
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
