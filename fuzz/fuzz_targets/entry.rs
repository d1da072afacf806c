//! Fuzz target: the validating scan and the full parse agree on what is JSON and on the tool
//! calls of a message's content, and a parsed value written back parses to the same value.
#![no_main]
use libfuzzer_sys::fuzz_target;
use session_core::json::{Value, parse_value, scan::SpanKind, scan_line, scan_line_with_blocks, to_json};

fuzz_target!(|data: &[u8]| {
    let scanned = scan_line(data);
    let with_calls = scan_line_with_blocks(data);
    assert_eq!(scanned.is_ok(), with_calls.is_ok());
    let arena = bumpalo::Bump::new();
    let parsed = parse_value(data, &arena);
    match (&scanned, &parsed) {
        (Ok(_), Ok(v)) => {
            let sc = with_calls.as_ref().unwrap();
            let blocks = v.get("message").and_then(|m| m.get("content"));
            if let (Some(Value::Array(blocks)), false) = (blocks, sc.escaped_blocks) {
                let parsed: Vec<String> = blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str).is_some_and(|t| t.as_bytes() == b"toolCall"))
                    .map(|b| {
                        b.get("name").and_then(Value::as_str).map(|n| n.to_str_lossy().into_owned()).unwrap_or_default()
                    })
                    .collect();
                let scanned_names: Vec<String> = sc
                    .tool_calls
                    .iter()
                    .map(|n| match n {
                        Some(s @ session_core::json::Span { kind: SpanKind::Str { escaped }, .. }) => {
                            session_core::property::decode_string(&data[s.start as usize..s.end as usize], *escaped)
                                .to_str_lossy()
                                .into_owned()
                        }
                        _ => String::new(),
                    })
                    .collect();
                assert_eq!(scanned_names, parsed);
            }
            let text = to_json(v);
            let again = parse_value(text.as_bytes(), &arena).expect("our own output parses");
            assert_eq!(to_json(&again), text);
        }
        (Err(_), Err(_)) => {}
        // Deeper than the full parse's bound: the scan may accept what the parse refuses.
        (Ok(_), Err(e)) => assert!(
            e.reason.contains("deep") || data.iter().filter(|&&b| b == b'[' || b == b'{').count() > 1000,
            "{e:?}"
        ),
        (Err(e), Ok(_)) => panic!("scan refused what parse accepted: {e:?}"),
    }
});
