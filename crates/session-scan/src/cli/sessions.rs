//! The one rule by which every command takes its sessions: paths, ids or id prefixes, or nothing.

use std::path::PathBuf;

use session_scan::named;
use session_scan::resolve::Places;

/// What a command reads when no session is named.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum WhenNone {
    /// Pi's whole store (its session-dir override, if it has one).
    Store,
    /// The session `pi -c` would continue in this folder.
    Recent,
}

/// The files and folders the arguments name, or the default; an argument that names nothing,
/// or an ambiguous id prefix, is an error (exit 2).
pub fn paths(args: &[String], atomic: bool, when_none: WhenNone) -> anyhow::Result<Vec<PathBuf>> {
    if args.is_empty() && when_none == WhenNone::Store {
        return Ok(vec![session_scan::store::store_here(atomic)]);
    }
    let places = Places::for_args(None, None, atomic);
    if args.is_empty() {
        return Ok(vec![named::recent(&places)?]);
    }
    Ok(named::resolve_args(args, &places)?)
}
