//! Fuzz target: line splitting under both rules agrees with a naive split.
#![no_main]
use libfuzzer_sys::fuzz_target;
use session_core::lines::{LineRule, Lines};

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
});
