//! Fuzz target: SessionInfo in both modes agrees apart from the texts.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let full = session_core::info::session_info(data, 0.0, true);
    let picker = session_core::info::session_info(data, 0.0, false);
    match (full, picker) {
        (Ok(mut a), Ok(b)) => {
            a.all_messages_text.clear();
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        (a, b) => panic!("{a:?} vs {b:?}"),
    }
});
