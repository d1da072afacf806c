//! Fuzz target: the validating scan and the full parse agree on what is JSON, and a parsed
//! value written back parses to the same value.
#![no_main]
use libfuzzer_sys::fuzz_target;
use session_core::json::{parse_value, scan_line, to_json};

fuzz_target!(|data: &[u8]| {
    let scanned = scan_line(data);
    let arena = bumpalo::Bump::new();
    let parsed = parse_value(data, &arena);
    match (&scanned, &parsed) {
        (Ok(_), Ok(v)) => {
            let text = to_json(v);
            let again = parse_value(text.as_bytes(), &arena).expect("our own output parses");
            assert_eq!(to_json(&again), text);
        }
        (Err(_), Err(_)) => {}
        // Deeper than the full parse's bound: the scan may accept what the parse refuses.
        (Ok(_), Err(e)) => assert!(e.reason.contains("deep") || data.iter().filter(|&&b| b == b'[' || b == b'{').count() > 1000, "{e:?}"),
        (Err(e), Ok(_)) => panic!("scan refused what parse accepted: {e:?}"),
    }
});
