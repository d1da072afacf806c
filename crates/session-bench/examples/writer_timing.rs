//! The writer's costs on one session, in process: `writer_timing FILE APPENDS` opens a copy of
//! FILE for appending (`session_scan::manager::Opener::open`: read, index, leaf; best of 3), then
//! appends APPENDS user messages one by one, and prints JSON: `openMs`, `appendUs` (the median
//! append), `entries`.
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let file = std::path::PathBuf::from(args.get(1).ok_or("usage: writer_timing FILE APPENDS")?);
    let appends: usize = args.get(2).map_or(Ok(1000), |a| a.parse())?;
    let dir = std::env::temp_dir().join(format!("writer-timing-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let copy = dir.join("session.jsonl");
    std::fs::copy(&file, &copy)?;
    let mut open_ms = f64::INFINITY;
    let mut entries = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let m = session_scan::manager::SessionManager::open(&copy)?;
        open_ms = open_ms.min(t.elapsed().as_secs_f64() * 1000.0);
        entries = m.state().entry_count();
    }
    let mut m = session_scan::manager::SessionManager::open(&copy)?;
    let arena = bumpalo::Bump::new();
    let text = r#"{"role":"user","content":"one more question about the code","timestamp":1772400000000}"#;
    let message = session_core::json::parse_value(text.as_bytes(), &arena).map_err(|e| e.reason)?;
    let mut times = Vec::with_capacity(appends);
    for _ in 0..appends {
        let t = Instant::now();
        m.append_message(&message)?;
        times.push(t.elapsed().as_secs_f64() * 1e6);
    }
    drop(m);
    std::fs::remove_dir_all(&dir)?;
    times.sort_by(f64::total_cmp);
    let append_us = times.get(times.len() / 2).copied().unwrap_or(f64::NAN);
    println!(r#"{{"openMs":{open_ms:.1},"appendUs":{append_us:.1},"entries":{entries}}}"#);
    Ok(())
}
