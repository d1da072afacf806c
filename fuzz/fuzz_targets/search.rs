//! Fuzz target: the picker search on any query and any session file. The first line is the
//! query, the rest the file. Nothing panics; the messages' places rebuild the whole text; a hit
//! of a one-word query or a pattern is always a match.
#![no_main]
use libfuzzer_sys::fuzz_target;
use session_core::info::{Texts, session_info_with};
use session_core::search::{Query, Searched};

fuzz_target!(|data: &[u8]| {
    let cut = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let query = String::from_utf8_lossy(&data[..cut]);
    let file = data.get(cut + 1..).unwrap_or_default();
    let Ok(info) = session_info_with(file, 0.0, Texts::DecodedWithPieces, &jiff::tz::TimeZone::UTC) else { return };
    let text = &info.all_messages_text;
    let pieces: Vec<&[u8]> = info.text_pieces.iter().map(|p| &text[p.range.clone()]).collect();
    assert_eq!(&pieces.join(&b' '), text);
    let Ok(Some(q)) = Query::parse(&query) else { return };
    let id = info.id.to_js_string();
    let searched = Searched { name: info.name.as_ref().map(|n| n.as_bytes()), id: &id, cwd: info.cwd.as_bytes(), text };
    let score = q.score(&searched);
    let hits = q.hits(text, &info.text_pieces, 4);
    assert!(hits.len() <= 4);
    let single = matches!(&q, Query::Regex(_)) || matches!(&q, Query::Tokens(t) if t.len() == 1);
    if single && !hits.is_empty() {
        assert!(score.is_some(), "{query:?}: a hit without a match");
    }
});
