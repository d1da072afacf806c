//! The least a fork of a session with branches can do: read the file and count its lines on all
//! cores, which a fork needs before it knows the branch and so its first byte, then write every
//! byte to a new file (as a fork of a branch holding nearly all of them does). Nothing is parsed
//! or checked. `count_then_write SESSION NEW`; NEW is created, never overwritten.
use std::io::Write;

use rayon::prelude::*;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args_os().skip(1);
    let (Some(source), Some(target)) = (args.next(), args.next()) else {
        eprintln!("usage: count_then_write SESSION NEW");
        std::process::exit(2);
    };
    let (bytes, _) = session_scan::read_file(source.as_ref(), session_scan::ReadStrategy::Auto)?;
    let stretch = bytes.len().div_ceil(rayon::current_num_threads()).max(1);
    let lines: usize = bytes.par_chunks(stretch).map(|s| memchr::memchr_iter(b'\n', s).count()).sum();
    let mut out = std::fs::OpenOptions::new().write(true).create_new(true).open(&target)?;
    out.write_all(&bytes)?;
    println!("{lines} lines, {} bytes written", bytes.len());
    Ok(())
}
