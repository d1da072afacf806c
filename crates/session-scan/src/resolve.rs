//! Which session file Pi 1.6 opens for `pi -c` (`continueRecent`) and for `pi --session ARG` or
//! `--fork ARG` (`resolveSessionPath`, format.md §1), found without opening anything for
//! writing: Pi's `getDefaultSessionDir` creates the folder it looks in; this does not.

use crate::store;
use std::io::Read;
use std::path::{Path, PathBuf};

use session_core::property::PropertyValue;

use crate::list::{self, Listed, Scope};

/// How much of a file header discovery reads (`MAX_SESSION_HEADER_SCAN_BYTES`).
pub const HEADER_SCAN_BYTES: u64 = 1 << 20;

/// A session header as discovery finds it: a `session` record with a string `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// `id`, decoded (lone surrogates and bytes that are not UTF-8 as U+FFFD).
    pub id: String,
    /// `cwd` when it is a string.
    pub cwd: Option<String>,
}

/// Why discovery takes a file for no session, beyond its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotASession {
    /// Its first parsed record is not a header, or no record parses, or no header starts within
    /// the first MiB (discovery reads no further).
    NoHeader,
    /// It cannot be read: a folder, or gone.
    Unreadable(String),
    /// Not a regular file (a FIFO, a device): Pi's `openSync` would wait on it for a writer; it is
    /// passed over here.
    NotRegular,
}

/// `readSessionHeaderForDiscovery`: the first record of `path` that parses (blank and malformed
/// lines, and lines that parse to `null`, `false`, `0` or `""`, are passed over), if it is a
/// header; lines end at `\n` only, and a header that does not end within the first MiB is not
/// found, unless the file ends exactly there.
pub fn discovery_header(path: &Path) -> Result<Header, NotASession> {
    let (file, _) = crate::read::open_regular(path).map_err(|e| {
        if e.to_string() == crate::read::NOT_REGULAR {
            NotASession::NotRegular
        } else {
            NotASession::Unreadable(e.to_string())
        }
    })?;
    // Read a little at a time, as Pi does (4 KiB): the header is nearly always the first line.
    let mut file = file.take(HEADER_SCAN_BYTES + 1);
    let (mut bytes, mut chunk) = (Vec::new(), [0u8; 8192]);
    // Where the current line starts, and how far it has been searched for its end.
    let (mut line_start, mut searched) = (0, 0);
    loop {
        let n = file.read(&mut chunk).map_err(|e| NotASession::Unreadable(e.to_string()))?;
        bytes.extend_from_slice(&chunk[..n]);
        // Only lines that end within the scan count.
        let scanned = bytes.len().min(HEADER_SCAN_BYTES as usize);
        while let Some(end) = memchr::memchr(b'\n', &bytes[searched..scanned]) {
            let line_end = searched + end;
            if let Some(found) = header_candidate(&bytes[line_start..line_end]) {
                return found.ok_or(NotASession::NoHeader);
            }
            line_start = line_end + 1;
            searched = line_start;
        }
        searched = scanned;
        if bytes.len() as u64 > HEADER_SCAN_BYTES {
            // Past the scan and no header yet: Pi gives up (`SessionHeaderScanLimitError`).
            return Err(NotASession::NoHeader);
        }
        if n == 0 {
            // The file ends within the scan: its last piece is a line too.
            return header_candidate(&bytes[line_start..]).flatten().ok_or(NotASession::NoHeader);
        }
    }
}

/// `parseSessionHeaderCandidate`: `None` to go on to the next line; else the header, or `None`
/// inside for a record that is not one.
fn header_candidate(line: &[u8]) -> Option<Option<Header>> {
    if session_core::text::js_trim(line).is_empty() {
        return None;
    }
    let scanned = session_core::json::scan_line(line).ok()?;
    if session_core::session::top_is_falsy(line, &scanned) {
        return None;
    }
    if scanned.top.is_some() {
        // An array, a string, a number or `true`: a record, not a header.
        return Some(None);
    }
    let text = |field: PropertyValue<'_>| match field {
        PropertyValue::Str(s) => Some(s.to_str_lossy().into_owned()),
        _ => None,
    };
    let [kind, id, cwd] = if scanned.escaped_keys {
        // A key written with escapes is found by its decoded name, from a full parse.
        let arena = bumpalo::Bump::new();
        let value = session_core::json::parse_value(line, &arena).ok()?;
        ["type", "id", "cwd"].map(|key| text(PropertyValue::from_value(value.get(key))))
    } else {
        ["type", "id", "cwd"].map(|key| text(PropertyValue::from_span(line, scanned.field(line, key))))
    };
    Some(match (kind.as_deref(), id) {
        (Some("session"), Some(id)) => Some(Header { id, cwd }),
        _ => None,
    })
}

/// `sessionCwdMatches`: a header `cwd` that is a string passing [`list::header_cwd_matches`].
fn cwd_matches(cwd: Option<&str>, resolved_cwd: &str) -> bool {
    cwd.is_some_and(|c| list::header_cwd_matches(c, resolved_cwd))
}

/// What `findMostRecentSession` finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recent {
    /// The newest file (by mtime) whose header discovery finds (and whose cwd matches, when
    /// filtering).
    Found(PathBuf),
    /// None: Pi starts a new session.
    None,
    /// A `*.jsonl` name there could not be `stat`ed (a dangling link, a race): Pi's discovery
    /// then gives up on the whole folder and starts a new session.
    GivenUp(PathBuf),
}

/// `findMostRecentSession(dir, cwd)`: the `*.jsonl` files of `dir` newest first by mtime (ties
/// in name order, as Node lists names), the first whose header discovery finds and, when
/// `cwd_filter` is given, whose cwd resolves to it. `passed_over` hears of each file passed
/// over that Pi would not pass over the same way (a FIFO it would wait on).
pub fn most_recent(dir: &Path, cwd_filter: Option<&str>, passed_over: &mut dyn FnMut(&Path, &NotASession)) -> Recent {
    let mut files = Vec::new();
    for name in list::jsonl_names(dir) {
        let path = dir.join(name);
        match std::fs::metadata(&path) {
            Ok(meta) => files.push((crate::read::mtime_ms(&meta), path)),
            Err(_) => return Recent::GivenUp(path),
        }
    }
    // Stable: equal mtimes keep name order.
    files.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
    for (_, path) in files {
        match discovery_header(&path) {
            Ok(header) if cwd_filter.is_none_or(|c| cwd_matches(header.cwd.as_deref(), c)) => {
                return Recent::Found(path);
            }
            Ok(_) => {}
            Err(why) => passed_over(&path, &why),
        }
    }
    Recent::None
}

/// `SessionManager.findById(cwd, id, dir)`: the first `*.jsonl` file of `dir` in name order whose
/// discovered header has exactly this `id` (and a matching cwd, when filtering).
pub fn find_by_id(dir: &Path, id: &str, cwd_filter: Option<&str>) -> Option<PathBuf> {
    list::jsonl_names(dir).into_iter().map(|name| dir.join(name)).find(|path| {
        discovery_header(path).is_ok_and(|h| h.id == id && cwd_filter.is_none_or(|c| cwd_matches(h.cwd.as_deref(), c)))
    })
}

/// Where Pi looks, as `pi` run in a folder sets it up.
#[derive(Debug, Clone)]
pub struct Places {
    /// The cwd, resolved (`process.cwd()`, or the folder Pi is taken to run in).
    pub cwd: String,
    /// The cwd's own folder (`getDefaultSessionDir`), or the session-dir override.
    pub cwd_dir: PathBuf,
    /// `Some(cwd)` when `cwd_dir`'s sessions are filtered by their header's cwd (an override that
    /// is not the cwd's own folder).
    pub filter: Option<String>,
    /// What `listAll(sessionDir)` lists: the override folder, else the whole sessions root.
    pub all: Scope,
}

impl Places {
    /// The places for `cwd` (already resolved), the sessions root `root`, and Pi's session-dir
    /// override if any (`--session-dir`, the environment or the settings).
    pub fn new(cwd: String, root: &Path, session_dir: Option<PathBuf>) -> Places {
        let default_dir = root.join(store::encode_cwd(&cwd));
        match session_dir {
            Some(dir) => {
                // `pathsEqual`: both resolved.
                let key = |p: &Path| store::resolve_path(&p.to_string_lossy());
                let filter = (key(&dir) != key(&default_dir)).then(|| cwd.clone());
                Places { cwd, cwd_dir: dir.clone(), filter, all: Scope::Dir { dir, filter: None } }
            }
            None => Places { cwd, cwd_dir: default_dir, filter: None, all: Scope::All { root: root.to_path_buf() } },
        }
    }

    /// The places for `pi` run in `cwd` (default: here), with `--session-dir` `dir`, else Pi's own
    /// override from the environment or the settings, in Pi's default store (Atomic's, with its
    /// variables and settings, for `atomic`).
    pub fn for_args(cwd: Option<&str>, dir: Option<PathBuf>, atomic: bool) -> Places {
        let cwd = store::resolve_path(cwd.unwrap_or("."));
        let session_dir = dir.or_else(|| store::session_dir_override(atomic, Path::new(&cwd)));
        Places::new(cwd, &store::default_root(atomic), session_dir)
    }

    /// The cwd's folder as `list(cwd, sessionDir)` lists it.
    pub fn cwd_scope(&self) -> Scope {
        Scope::Dir { dir: self.cwd_dir.clone(), filter: self.filter.clone() }
    }
}

/// What `resolveSessionPath` gives (its `type`s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// The argument names a file (it holds `/` or `\`, or ends in `.jsonl`): resolved against the
    /// cwd, not checked.
    Path(PathBuf),
    /// A session of the cwd's folder: its exact id, else the newest whose id starts with the
    /// argument.
    Local(PathBuf),
    /// A session elsewhere in the store (Pi asks whether to fork it into the cwd).
    Global {
        /// The file.
        path: PathBuf,
        /// Its header's cwd.
        cwd: String,
    },
    /// Nothing matches.
    NotFound,
}

/// `resolveSessionPath(arg, cwd, sessionDir)`. `non_string_id` hears of each listed session whose
/// id is not a string and that the prefix search reaches: Pi's `id.startsWith` throws there and
/// `pi` stops with a TypeError; here it is passed over.
pub fn resolve_session(arg: &str, places: &Places, non_string_id: &mut dyn FnMut(&Listed)) -> Resolved {
    if arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl") {
        return Resolved::Path(PathBuf::from(store::resolve_path_from(arg, &places.cwd)));
    }
    if let Some(path) = find_by_id(&places.cwd_dir, arg, places.filter.as_deref()) {
        return Resolved::Local(path);
    }
    let mut prefix_match = |listed: &[Listed]| {
        listed
            .iter()
            .find(|l| match l.info.as_ref().map(|i| &i.id) {
                Ok(PropertyValue::Str(id)) => id.as_bytes().starts_with(arg.as_bytes()),
                Ok(_) => {
                    non_string_id(l);
                    false
                }
                Err(_) => false,
            })
            .cloned()
    };
    if let Some(l) = prefix_match(&list::listing(&places.cwd_scope())) {
        return Resolved::Local(l.path);
    }
    let all = list::listing(&places.all);
    let exact = all.iter().find(
        |l| matches!(l.info.as_ref().map(|i| &i.id), Ok(PropertyValue::Str(id)) if id.as_bytes() == arg.as_bytes()),
    );
    match exact.cloned().or_else(|| prefix_match(&all)) {
        Some(l) => {
            let cwd = l.info.as_ref().map(|i| i.cwd.to_str_lossy().into_owned()).unwrap_or_default();
            Resolved::Global { path: l.path, cwd }
        }
        None => Resolved::NotFound,
    }
}
