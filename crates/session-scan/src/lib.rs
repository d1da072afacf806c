//! Files and folders of Pi sessions: reading them (buffered or mapped), running `session-core`
//! over many in parallel, and shaping the results as the reference's JSON records.

pub mod manifest;
mod mmap;
pub mod read;
pub mod report;

pub use read::{FileBytes, ReadStrategy, expand_paths, read_file, read_file_into};
