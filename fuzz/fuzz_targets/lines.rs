//! Fuzz target: line splitting under both rules agrees with a naive split, lines split and
//! scanned in one pass are the split lines with their scans, and the scan's shortcuts for Pi's
//! usual shapes give what the plain walk gives.
#![no_main]
use libfuzzer_sys::fuzz_target;
use session_core::json::{ScanOptions, scan_line_plain, scan_line_with};
use session_core::lines::{LineRule, Lines, ScannedLines, is_blank};

fuzz_target!(|data: &[u8]| {
    let lines: Vec<_> = Lines::new(data, LineRule::Newline).collect();
    let naive: Vec<&[u8]> = if data.is_empty() {
        Vec::new()
    } else {
        let mut v: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        if data.last() == Some(&b'\n') {
            v.pop();
        }
        v
    };
    assert_eq!(lines.iter().map(|l| l.bytes).collect::<Vec<_>>(), naive);
    let mut total = 0;
    for l in Lines::new(data, LineRule::Readline) {
        assert!(l.offset as usize >= total);
        total = l.offset as usize + l.bytes.len();
        assert!(!l.bytes.contains(&b'\n') && !l.bytes.contains(&b'\r'));
    }
    assert_eq!(session_core::lines::count_lines(data), lines.len());
    for rule in [LineRule::Newline, LineRule::Readline] {
        for blocks in [false, true] {
            let options = ScanOptions { blocks };
            let mut fused = ScannedLines::new(data, rule, options);
            for split in Lines::new(data, rule) {
                let (line, scanned) = fused.next().expect("as many lines");
                assert_eq!(line, split);
                let alone = (!is_blank(split.bytes)).then(|| scan_line_with(split.bytes, options));
                assert_eq!(format!("{:?}", scanned.map(|s| s.cloned())), format!("{alone:?}"));
                if let Some(alone) = alone {
                    let plain = scan_line_plain(split.bytes, options);
                    let shortcut = alone.map(|s| s.without_shortcut_marks());
                    assert_eq!(format!("{shortcut:?}"), format!("{plain:?}"));
                }
            }
            assert!(fused.next().is_none());
        }
    }
});
