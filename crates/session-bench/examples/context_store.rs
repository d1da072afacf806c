//! The context of every session under a folder, in process, as the reference's own benchmark
//! measures it (`open()` plus `buildSessionContext()`, no output): each file is read, loaded and
//! its Pi-dialect context rebuilt, on all cores. Prints the best of three passes.
use rayon::prelude::*;

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "corpora/sample-16/sessions".into()));
    let files = session_scan::expand_paths(&[dir]);
    let mut best = f64::INFINITY;
    let mut messages = 0usize;
    for _ in 0..3 {
        let t = std::time::Instant::now();
        messages = files
            .par_iter()
            .map_init(Vec::new, |buf, p| {
                let map = match session_scan::read_file_into(p, session_scan::ReadStrategy::Auto, buf) {
                    Ok((map, _)) => map,
                    Err(_) => return 0,
                };
                let bytes: &[u8] = map.as_deref().unwrap_or(buf);
                let Ok(session) = session_scan::load_session(bytes, &session_scan::UTC) else { return 0 };
                let arena = bumpalo::Bump::new();
                let ctx = session_core::context::build_context(
                    &session,
                    &session_core::context::LeafChoice::Session,
                    session_core::context::Dialect::Pi,
                    &arena,
                );
                ctx.messages.len()
            })
            .sum();
        best = best.min(t.elapsed().as_secs_f64() * 1000.0);
    }
    println!("{} files, {messages} context messages in {best:.1} ms", files.len());
}
