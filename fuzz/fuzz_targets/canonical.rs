//! Fuzz target: a line `is_stringified` proves is exactly what parsing and printing it again
//! gives; and what printing gives is proven, but for what the proof leaves to printing on
//! purpose (keys JavaScript orders first or treats apart, lone surrogates, deep nesting).
#![no_main]
use libfuzzer_sys::fuzz_target;
use session_core::json::canonical::is_stringified;
use session_core::json::{parse_value, write_json};

fuzz_target!(|data: &[u8]| {
    let arena = bumpalo::Bump::new();
    let parsed = parse_value(data, &arena);
    if is_stringified(data) {
        let value = parsed.as_ref().expect("a line proven stringified parses");
        let mut printed = Vec::new();
        write_json(value, &mut printed);
        assert_eq!(printed, data, "a line proven stringified prints otherwise");
    }
    if let Ok(value) = &parsed {
        let mut printed = Vec::new();
        write_json(value, &mut printed);
        let left_to_printing = printed
            .windows(3)
            .any(|w| w == b"\\ud" || (matches!(w[0], b'{' | b',') && w[1] == b'"' && w[2].is_ascii_digit()))
            || memchr::memmem::find(&printed, b"__proto__").is_some()
            || printed.iter().filter(|&&b| b == b'[' || b == b'{').count() > 200;
        if !left_to_printing {
            assert!(is_stringified(&printed), "a printed value is not proven: {}", String::from_utf8_lossy(&printed));
        }
    }
});
