//! Fuzz target: loading, the tree, branches, totals (the file's and the branch's), the files
//! read and changed and the texts `grep` searches terminate without panicking.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = session_core::Session::load(data) {
        let tree = s.tree();
        assert!(tree.nodes.len() <= s.records.len());
        let b = s.branch(None);
        assert!(b.path.len() <= s.records.len());
        let _ = s.name();
        let _ = session_core::stats::session_totals(&s);
        let _ = session_core::stats::branch_totals(&s, &b.path);
        let (lists, _) = session_core::files::file_lists(&s);
        assert!(lists.read_files.iter().all(|p| !lists.modified_files.contains(p)));
        for call in session_core::tools::tool_calls(&s) {
            assert!(call.duration_ms().is_none_or(|d| d >= 0.0));
        }
        let arena = bumpalo::Bump::new();
        for (i, _) in s.entries() {
            let _ = s.children(&s.records[i].id);
            if let Ok(v) = s.records[i].value(&arena) {
                for piece in session_core::entry_texts::entry_texts(&v) {
                    assert!(piece.text.as_str().is_some());
                }
            }
        }
    }
    let _ = session_core::usage::file_usage(data);
    let _ = session_core::usage::file_usage_counting(
        data,
        session_core::usage::Counting::WithAtomicSummaries,
        &jiff::tz::TimeZone::UTC,
    );
});
