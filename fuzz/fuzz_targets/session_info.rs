//! Fuzz target: SessionInfo agrees in every texts mode apart from the texts, and the texts kept as
//! JSON decode to the decoded texts.
#![no_main]
use libfuzzer_sys::fuzz_target;
use session_core::info::{Texts, session_info_with};

fuzz_target!(|data: &[u8]| {
    let full = session_info_with(data, 0.0, Texts::Decoded, &jiff::tz::TimeZone::UTC);
    let json = session_info_with(data, 0.0, Texts::Json, &jiff::tz::TimeZone::UTC);
    let picker = session_info_with(data, 0.0, Texts::Skip, &jiff::tz::TimeZone::UTC);
    match (full, json, picker) {
        (Ok(mut a), Ok(mut j), Ok(b)) => {
            let mut decoded = Vec::new();
            session_core::json::unescape_into(&j.all_messages_json, &mut decoded);
            assert_eq!(decoded, a.all_messages_text);
            let mut rewritten = Vec::new();
            session_core::json::write_string_body(&a.all_messages_text, &mut rewritten);
            assert_eq!(rewritten, j.all_messages_json);
            a.all_messages_text.clear();
            j.all_messages_json.clear();
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
            assert_eq!(format!("{j:?}"), format!("{b:?}"));
        }
        (Err(a), Err(j), Err(b)) => {
            assert_eq!(a, b);
            assert_eq!(j, b);
        }
        (a, j, b) => panic!("{a:?} vs {j:?} vs {b:?}"),
    }
});
