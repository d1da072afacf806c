//! The sessions a command line names, by one rule for every command: a path (a session file or a
//! folder of them), a session id or id prefix (found as `pi --session` finds it, and refused when
//! it could mean several sessions), or nothing (the whole store, or the session `pi -c` would
//! continue here).

use std::fmt;
use std::path::{Path, PathBuf};

use session_core::PropertyValue;

use crate::list::{self, Listed};
use crate::resolve::{self, Places, Recent};

/// At most this many candidates are named when an id prefix is ambiguous.
const CANDIDATES_SHOWN: usize = 10;

/// Why the sessions named could not be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    /// A path (it holds `/` or `\`, or ends in `.jsonl`) that is not there.
    Missing(String),
    /// No session has this id, or an id that starts with it.
    NoMatch(String),
    /// Several sessions have an id that starts with it.
    Ambiguous {
        /// The argument.
        arg: String,
        /// Their ids and files, newest first.
        candidates: Vec<(String, PathBuf)>,
    },
    /// Nothing was named, and the project has no session to continue.
    NoRecent {
        /// The project's session folder.
        dir: PathBuf,
    },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Missing(arg) => write!(f, "{arg}: no such file or folder"),
            NameError::NoMatch(arg) => write!(f, "{arg}: no session file, folder or session id matches"),
            NameError::Ambiguous { arg, candidates } => {
                write!(f, "{arg}: the id prefix is ambiguous; {} sessions match:", candidates.len())?;
                for (id, path) in candidates.iter().take(CANDIDATES_SHOWN) {
                    write!(f, "\n  {id}  {}", path.display())?;
                }
                if candidates.len() > CANDIDATES_SHOWN {
                    write!(f, "\n  and {} more", candidates.len() - CANDIDATES_SHOWN)?;
                }
                Ok(())
            }
            NameError::NoRecent { dir } => {
                write!(f, "no session of this project to read ({}): name a session file, folder or id", dir.display())
            }
        }
    }
}

impl std::error::Error for NameError {}

/// Whether an argument is written as a path, as Pi tells a path from an id: it holds `/` or `\`,
/// or ends in `.jsonl`.
pub fn written_as_path(arg: &str) -> bool {
    arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl")
}

/// The file or folder one argument names: itself when it exists; else, unless it is written as a
/// path, the one session whose id is it or starts with it, looked for in the project's sessions
/// first and then in the whole store, as `pi --session` looks (an exact id wins over prefixes).
pub fn resolve_arg(arg: &str, places: &Places) -> Result<PathBuf, NameError> {
    let path = Path::new(arg);
    if !arg.is_empty() && (path.exists() || path.is_symlink()) {
        return Ok(path.to_path_buf());
    }
    if written_as_path(arg) {
        return Err(NameError::Missing(arg.to_owned()));
    }
    if arg.is_empty() {
        return Err(NameError::NoMatch(arg.to_owned()));
    }
    if let Some(path) = resolve::find_by_id(&places.cwd_dir, arg, places.filter.as_deref()) {
        return Ok(path);
    }
    for scope in [places.cwd_scope(), places.all.clone()] {
        let listed = list::listing(&scope);
        if let Some(exact) = listed.iter().find(|l| id_of(l).is_some_and(|id| id == arg)) {
            return Ok(exact.path.clone());
        }
        let matches: Vec<(String, PathBuf)> = listed
            .iter()
            .filter_map(|l| id_of(l).filter(|id| id.starts_with(arg)).map(|id| (id, l.path.clone())))
            .collect();
        match matches.len() {
            0 => {}
            1 => return Ok(matches[0].1.clone()),
            _ => return Err(NameError::Ambiguous { arg: arg.to_owned(), candidates: matches }),
        }
    }
    Err(NameError::NoMatch(arg.to_owned()))
}

/// A listed session's id, when it is a string.
fn id_of(l: &Listed) -> Option<String> {
    match l.info.as_ref().ok().map(|i| &i.id) {
        Some(PropertyValue::Str(id)) => Some(id.to_str_lossy().into_owned()),
        _ => None,
    }
}

/// The files and folders every argument names, in their order; the first argument that names
/// nothing is the error.
pub fn resolve_args(args: &[String], places: &Places) -> Result<Vec<PathBuf>, NameError> {
    args.iter().map(|a| resolve_arg(a, places)).collect()
}

/// The session `pi -c` would continue in the places' project: the default of the commands that
/// read one session.
pub fn recent(places: &Places) -> Result<PathBuf, NameError> {
    match resolve::most_recent(&places.cwd_dir, places.filter.as_deref(), &mut |_, _| {}) {
        Recent::Found(path) => Ok(path),
        Recent::None | Recent::GivenUp(_) => Err(NameError::NoRecent { dir: places.cwd_dir.clone() }),
    }
}

/// The shortest prefix of each id that no other id of `ids` starts with, and at least `min`
/// characters long (the whole id when it is shorter, or when another id equals it).
pub fn short_ids(ids: &[&str], min: usize) -> Vec<String> {
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_by(|&a, &b| ids[a].cmp(ids[b]));
    let common = |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let mut out = vec![String::new(); ids.len()];
    for (k, &i) in order.iter().enumerate() {
        let id = ids[i];
        let before = k.checked_sub(1).map_or(0, |j| common(id, ids[order[j]]));
        let after = order.get(k + 1).map_or(0, |&j| common(id, ids[j]));
        let len = (before.max(after) + 1).max(min);
        out[i] = id.chars().take(len).collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids_are_unique_prefixes_of_at_least_the_minimum() {
        let ids = ["0194a1c1-2e97", "0194a1c1-2e98", "0194b000-0000", "abc"];
        let short = short_ids(&ids, 8);
        assert_eq!(short, ["0194a1c1-2e97", "0194a1c1-2e98", "0194b000", "abc"]);
        for (k, s) in short.iter().enumerate() {
            let starting = ids.iter().filter(|id| id.starts_with(s.as_str())).count();
            assert_eq!(starting, 1, "{s} names one id");
            assert!(ids[k].starts_with(s.as_str()));
        }
        assert_eq!(short_ids(&["0194a1c1aaaa"], 8), ["0194a1c1"]);
    }

    #[test]
    fn paths_are_told_from_ids_as_pi_tells_them() {
        assert!(written_as_path("a/b"));
        assert!(written_as_path("x.jsonl"));
        assert!(!written_as_path("0194a1c1"));
    }
}
