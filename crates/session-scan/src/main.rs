//! `session-scan`: trees, totals, context, listing, search, usage, lookups, exports, file lists,
//! text search and tool figures of Pi session files. The commands live in `cli/`.

#![deny(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
