//! Helpers shared by the integration tests.

/// A small deterministic generator (xorshift64) for drawn inputs.
pub fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}
