//! Helpers shared by the integration tests.

#[allow(dead_code)] // only the binary's tests run it
pub mod binary;
pub mod records;

/// A small deterministic generator (xorshift64) for drawn inputs.
#[allow(dead_code)] // not every test crate draws inputs
pub fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// Parses golden text with the project's own JS-semantics parser, which (unlike serde_json)
/// keeps lone surrogates.
#[allow(dead_code)] // not every test crate reads goldens
pub fn parse(text: &str) -> session_core::json::Value<'static> {
    let arena = bumpalo::Bump::new();
    session_core::json::parse_value(text.as_bytes(), &arena).expect("golden parses").into_owned()
}

/// The committed corpora.
#[allow(dead_code)] // not every test crate reads them
pub fn corpora() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora")
}
