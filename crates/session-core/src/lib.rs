//! Pi session files: bytes to entries, with no I/O.
#![forbid(unsafe_code)]

pub mod json;
pub mod lines;
pub mod text;
