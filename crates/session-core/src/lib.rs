//! Pi session files: bytes to entries, with no I/O.
//!
//! `session-core` turns the bytes of one session file into Pi's view of it: lines
//! ([`lines`]), lazily read entries and the loader's rules ([`session`]), the tree, leaf, labels
//! and name, session totals ([`stats`]) and the picker's `SessionInfo` ([`info`]). It does no
//! I/O and holds no `unsafe` code.
#![forbid(unsafe_code)]

pub mod append;
pub mod branched;
pub mod context;
pub mod entry_texts;
pub mod files;
pub mod info;
pub mod jsdate;
pub mod json;
pub mod jssort;
pub mod lines;
pub mod property;
pub mod record;
pub mod search;
pub mod session;
pub mod state;
pub mod stats;
pub mod text;
pub mod threaded;
pub mod tools;
pub mod usage;

pub use property::PropertyValue;
pub use session::{Entry, LoadError, Session};
