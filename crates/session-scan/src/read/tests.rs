//! Tests of reading: strategies, streaming at every chunk size, parallel rounds, and files that
//! change while they are read.

use super::*;
use session_core::json::ScanOptions;
use session_core::lines::LineRule;

/// `stream_chunk`'s rule on the two machines it was measured on, and at its edges.
#[test]
fn the_stream_chunk_follows_the_l2_each_cpu_has() {
    assert_eq!(chunk_for_l2_share(None), 64 << 10);
    // A Zen 4 core's 1 MiB (where 64 KiB was measured best), alone or shared by two SMT threads.
    assert_eq!(chunk_for_l2_share(Some(1 << 20)), 64 << 10);
    assert_eq!(chunk_for_l2_share(Some(512 << 10)), 64 << 10);
    assert_eq!(chunk_for_l2_share(Some((2 << 20) - 1)), 64 << 10);
    // The Intel Xeon VM: 2 MiB, one CPU.
    assert_eq!(chunk_for_l2_share(Some(2 << 20)), 512 << 10);
    assert_eq!(chunk_for_l2_share(Some(16 << 20)), 1 << 20);
}

#[test]
fn cache_sizes_and_cpu_lists_read_as_sysfs_writes_them() {
    assert_eq!(cache_size_bytes("2048K\n"), Some(2 << 20));
    assert_eq!(cache_size_bytes("1M"), Some(1 << 20));
    assert_eq!(cache_size_bytes("512"), Some(512));
    assert_eq!(cache_size_bytes("K"), None);
    assert_eq!(cache_size_bytes(""), None);
    assert_eq!(cpu_list_len("0\n"), Some(1));
    assert_eq!(cpu_list_len("0-1"), Some(2));
    assert_eq!(cpu_list_len("0,64"), Some(2));
    assert_eq!(cpu_list_len("0-3,8-11"), Some(8));
    assert_eq!(cpu_list_len("3-1"), None);
    assert_eq!(cpu_list_len("x"), None);
}

/// A line carried over keeps its bytes, and the read after it starts on a cache line, from
/// any buffer and any line length (growing the buffer when the line does not fit with the
/// room to align it).
#[test]
fn carried_bytes_end_where_an_aligned_read_starts() {
    for size in [0usize, 1, 40, 64, 200, 4096] {
        for keep in [0usize, 1, 17, 63, 64, 100] {
            let keep = keep.min(size);
            let mut buf: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let expected = buf[size - keep..].to_vec();
            let at = carry(&mut buf, size - keep..size);
            assert_eq!(&buf[at..at + keep], &expected[..], "size {size}, keep {keep}");
            assert_eq!((buf.as_ptr() as usize + at + keep) % CACHE_LINE, 0, "size {size}, keep {keep}");
            assert!(buf.len() >= at + keep);
        }
    }
}

/// Folders are walked through real folders and symlinks to folders; `*.jsonl` entries that
/// are files, symlinks to files or dangling symlinks are kept; a folder named `*.jsonl` is
/// walked, not kept. The types come from the listing, with a `stat` for symlinks only.
#[cfg(unix)]
#[test]
fn expanding_a_folder_follows_symlinks_and_keeps_session_names() {
    let dir = std::env::temp_dir().join(format!("session-scan-expand-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a/x.jsonl")).unwrap();
    std::fs::create_dir_all(dir.join("b")).unwrap();
    for f in ["a/one.jsonl", "a/x.jsonl/inner.jsonl", "a/notes.txt", "b/two.jsonl", "top.jsonl"] {
        std::fs::write(dir.join(f), "{}\n").unwrap();
    }
    std::os::unix::fs::symlink("b", dir.join("c")).unwrap();
    std::os::unix::fs::symlink("b/two.jsonl", dir.join("link.jsonl")).unwrap();
    std::os::unix::fs::symlink("missing", dir.join("dangling.jsonl")).unwrap();
    let found: Vec<String> = expand_paths(std::slice::from_ref(&dir))
        .iter()
        .map(|p| p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned())
        .collect();
    let expected = [
        "a/one.jsonl",
        "a/x.jsonl/inner.jsonl",
        "b/two.jsonl",
        "c/two.jsonl",
        "dangling.jsonl",
        "link.jsonl",
        "top.jsonl",
    ];
    assert_eq!(found, expected);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What a pass hands over for one line, comparable across passes.
fn describe(line: session_core::lines::Line<'_>, scan: session_core::json::LineScan<'_>) -> String {
    let outcome = match scan {
        None => "blank".to_string(),
        Some(Ok(s)) => format!("fields {}", s.fields.len()),
        Some(Err(e)) => format!("error at {}", e.offset),
    };
    format!("{} @{} len {} {} {outcome}", line.number, line.offset, line.bytes.len(), line.terminated)
}

/// What the stream hands over for each line of the file at `path`.
fn streamed(path: &Path, rule: LineRule, options: ScanOptions) -> Vec<String> {
    let mut lines = Vec::new();
    let opened = open_regular(path).unwrap();
    for_each_scanned_line_opened(opened, rule, &mut Vec::new(), options, |line, scan| {
        lines.push(describe(line, scan));
        true
    })
    .unwrap();
    lines
}

/// A file under the size for rounds is streamed, and from a line of [`MAP_LINES_FROM`] bytes
/// or more (in the middle, or last and unterminated) goes on from a map: it hands over the
/// lines the plain stream gives (numbers, offsets, terminators, scans), all of them or up to
/// where `step` stops, before, at and after the long line; under [`ReadStrategy::Mmap`] the
/// file is mapped whole and scanned on the calling thread, with the same lines.
#[test]
fn long_lines_of_a_stream_are_read_from_a_map_as_the_stream_reads_them() {
    for long_last in [false, true] {
        let mut bytes = Vec::new();
        let mut k = 0usize;
        while bytes.len() < MMAP_THRESHOLD as usize + (1 << 20) {
            let text = if k == 700 || k == 1800 {
                "z".repeat(MAP_LINES_FROM * 3 / 2 + 4321)
            } else {
                "y".repeat(k * 37 % 2000)
            };
            let line = match k % 5 {
                0 => format!(r#"{{"type":"message","id":"m{k}","message":{{"role":"user","content":"{text}"}}}}"#),
                1 => format!(r#"{{"type":"custom","data":"{text}""#),
                2 => String::new(),
                3 => format!(r#"{{"type":"message","message":{{"role":"assistant","usage":{{"input":{k}}}}}}}"#),
                _ => format!(r#"  {{"type":"label","label":"{text}"}}  "#),
            };
            bytes.extend_from_slice(line.as_bytes());
            bytes.extend_from_slice(if k.is_multiple_of(7) { b"\r\n" } else { b"\n" });
            k += 1;
        }
        if long_last {
            bytes.extend_from_slice(
                format!(r#"{{"type":"custom","data":"{}"}}"#, "w".repeat(MAP_LINES_FROM * 3 / 2)).as_bytes(),
            );
        } else {
            bytes.extend_from_slice(b"{\"type\":\"unterminated\"");
        }
        let path =
            std::env::temp_dir().join(format!("session-scan-long-lines-{}-{long_last}.jsonl", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        assert!((bytes.len() as u64) < PARALLEL_LINES_MIN);
        for rule in [LineRule::Newline, LineRule::Readline] {
            let options = ScanOptions::default();
            let streamed = streamed(&path, rule, options);
            assert!(streamed.len() > 1_900, "{}", streamed.len());
            for stop_after in [usize::MAX, 500, 701, 1234] {
                for strategy in [ReadStrategy::Auto, ReadStrategy::Mmap] {
                    let maps_before = LONG_LINE_MAPS.with(std::cell::Cell::get);
                    let mut passed = Vec::new();
                    let pass = {
                        for_each_scanned_line(
                            &path,
                            Pass { strategy, parallel_from: PARALLEL_LINES_MIN },
                            rule,
                            options,
                            &mut Vec::new(),
                            |_| usize::MAX,
                            |line, scan| {
                                passed.push(describe(line, scan));
                                passed.len() < stop_after
                            },
                        )
                    }
                    .unwrap();
                    assert!(matches!(pass, ScannedPass::Done(..)));
                    assert_eq!(passed, streamed[..stop_after.min(streamed.len())], "{rule:?} {strategy:?}");
                    // The stream went on from a map exactly when it reached the first long line.
                    let mapped = LONG_LINE_MAPS.with(std::cell::Cell::get) - maps_before;
                    let reached = stop_after > 700 && strategy == ReadStrategy::Auto;
                    assert_eq!(mapped, usize::from(reached), "{rule:?} {strategy:?} {stop_after}");
                }
            }
        }
        std::fs::remove_file(&path).unwrap();
    }
}

/// A file cut short by another writer while the stream reads a long line from its map is read
/// again from a fresh state: the pass's result is the plain stream's of the shorter file, not
/// a mix of what was handed over before and after the cut.
#[cfg(unix)]
#[test]
fn a_file_cut_while_a_long_line_is_read_from_its_map_is_read_again() {
    let mut bytes = Vec::new();
    for k in 0..400 {
        bytes.extend_from_slice(
            format!(
                r#"{{"type":"message","id":"m{k}","message":{{"role":"user","content":"{}"}}}}"#,
                "y".repeat(k % 700)
            )
            .as_bytes(),
        );
        bytes.push(b'\n');
    }
    let short_end = bytes.len();
    bytes.extend_from_slice(format!(r#"{{"type":"custom","data":"{}"}}"#, "z".repeat(MAP_LINES_FROM * 3)).as_bytes());
    bytes.push(b'\n');
    for k in 0..50 {
        bytes.extend_from_slice(format!(r#"{{"type":"label","label":"after {k}"}}"#).as_bytes());
        bytes.push(b'\n');
    }
    let path = std::env::temp_dir().join(format!("session-scan-cut-long-line-{}.jsonl", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let (mut cut, maps_before) = (false, LONG_LINE_MAPS.with(std::cell::Cell::get));
    let (lines, _, _) = {
        fold_lines(
            &path,
            Pass { strategy: ReadStrategy::Auto, parallel_from: PARALLEL_LINES_MIN },
            LineRule::Readline,
            &mut Vec::new(),
            ScanOptions::default(),
            Vec::new,
            |lines: &mut Vec<String>, line, scan| {
                if line.bytes.len() > MAP_LINES_FROM && !cut {
                    // Another writer cuts the file back to its short lines.
                    cut = true;
                    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(short_end as u64).unwrap();
                }
                lines.push(describe(line, scan));
                true
            },
        )
    }
    .unwrap();
    assert!(cut, "the long line was handed over");
    assert_eq!(LONG_LINE_MAPS.with(std::cell::Cell::get) - maps_before, 1, "it was read from the map");
    let expected = streamed(&path, LineRule::Readline, ScanOptions::default());
    assert_eq!(expected.len(), 400);
    assert_eq!(lines, expected);
    std::fs::remove_file(&path).unwrap();
}

/// A mapped file whose lines grow past the cut search's reach is handed over as the stream
/// gives it: the rounds before the long line, then the stream from its start, with the same
/// line numbers, offsets and scans (a wrong starting offset or line count fails it).
#[test]
fn long_lines_continue_in_the_stream_where_the_rounds_stop() {
    let mut bytes = Vec::new();
    let mut k = 0usize;
    while bytes.len() < PARALLEL_LINES_MIN as usize + (3 << 20) {
        // Short lines for the first 5 MiB, then some lines longer than the reach.
        let long = bytes.len() > 5 << 20 && k.is_multiple_of(9);
        let text = "x".repeat(if long { 9000 + k % 5000 } else { k % 300 });
        let line = match k % 4 {
            0 => format!(r#"{{"type":"message","id":"m{k}","message":{{"role":"user","content":"{text}"}}}}"#),
            1 => format!(r#"{{"type":"custom","data":"{text}""#),
            2 => String::new(),
            _ => format!(
                r#"{{"type":"message","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}]}}}}"#
            ),
        };
        bytes.extend_from_slice(line.as_bytes());
        bytes.extend_from_slice(if k.is_multiple_of(6) {
            b"\r\n"
        } else if k % 6 == 1 {
            b"\r"
        } else {
            b"\n"
        });
        k += 1;
    }
    let path = std::env::temp_dir().join(format!("session-scan-long-lines-{}.jsonl", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    for rule in [LineRule::Newline, LineRule::Readline] {
        let options = ScanOptions { blocks: true };
        let streamed = streamed(&path, rule, options);
        let mut passed = Vec::new();
        let pass = for_each_scanned_line(
            &path,
            Pass { strategy: ReadStrategy::Auto, parallel_from: PARALLEL_LINES_MIN },
            rule,
            options,
            &mut Vec::new(),
            |_| 4096,
            |line, scan| {
                passed.push(describe(line, scan));
                true
            },
        )
        .unwrap();
        assert!(matches!(pass, ScannedPass::Done(..)));
        assert!(streamed.len() > 20_000, "{}", streamed.len());
        assert_eq!(passed, streamed, "{rule:?}");
    }
    std::fs::remove_file(&path).unwrap();
}
