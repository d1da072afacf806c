//! `list --cache`: a file of listed sessions kept between listings (only when asked for), so
//! that a picker's next listing reads only the session files that changed since the last one.
//!
//! An entry is used only when the file's device, inode, size, modification time and change time
//! are all as they were when it was read; any write to a file changes its change time. Files
//! changed within [`SETTLE_MS`] before the listing are read but not stored, so that a write in
//! the same clock tick as the stored times cannot go unseen. Only the picker's fields are kept
//! (no `allMessagesText`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_bytes::ByteBuf;
use session_core::info::{Omitted, SessionInfo};
use session_core::json::JsStr;
use session_core::property::PropertyValue;

use crate::list::Listed;

/// How a cache file starts: the format's name and version, then what the listing's outputs
/// depend on. A file with another version is rebuilt; a file without this name is not ours and
/// is never overwritten.
const MAGIC: &[u8] = b"session-scan list cache\n";
const FORMAT: &str = "format 2";
/// Raised whenever a change to the listing can change a `SessionInfo` for the same bytes, so that
/// entries made by an older build are read again.
const LISTING_SEMANTICS: u32 = 1;

/// Files changed this recently (ms before the listing started) are not stored.
pub const SETTLE_MS: f64 = 2_000.0;

/// What identifies a file's contents without reading them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileKey {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileKey {
    /// The key of a file's metadata; `None` where the platform lacks inodes and change times.
    pub fn of(meta: &std::fs::Metadata) -> Option<FileKey> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(FileKey {
                dev: meta.dev(),
                ino: meta.ino(),
                size: meta.size(),
                mtime: (meta.mtime(), meta.mtime_nsec()),
                ctime: (meta.ctime(), meta.ctime_nsec()),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }

    /// The modification time in ms, as `stats.mtimeMs` gives it.
    fn mtime_ms(&self) -> f64 {
        crate::read::unix_time_ms(self.mtime.0, self.mtime.1)
    }

    /// The change time in ms: the last write, even when the mtime was set back afterwards.
    fn ctime_ms(&self) -> f64 {
        crate::read::unix_time_ms(self.ctime.0, self.ctime.1)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
enum CachedField {
    Absent,
    Null,
    Str(ByteBuf),
    Raw(ByteBuf),
}

impl CachedField {
    fn of(f: &PropertyValue<'_>) -> CachedField {
        match f {
            PropertyValue::Absent => CachedField::Absent,
            PropertyValue::Null => CachedField::Null,
            PropertyValue::Str(s) => CachedField::Str(ByteBuf::from(s.as_bytes().to_vec())),
            PropertyValue::Raw(r) => CachedField::Raw(ByteBuf::from(r.to_vec())),
        }
    }

    fn field(self) -> PropertyValue<'static> {
        match self {
            CachedField::Absent => PropertyValue::Absent,
            CachedField::Null => PropertyValue::Null,
            CachedField::Str(s) => PropertyValue::Str(JsStr(s.into_vec().into())),
            CachedField::Raw(r) => PropertyValue::Raw(r.into_vec().into()),
        }
    }
}

/// A `SessionInfo` without its texts.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct CachedInfo {
    id: CachedField,
    cwd: ByteBuf,
    name: Option<ByteBuf>,
    parent_session: CachedField,
    created: f64,
    modified: f64,
    message_count: u64,
    first_message: ByteBuf,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
enum Outcome {
    Listed(CachedInfo),
    Omitted { line: Option<u64>, offset: Option<u64>, reason: String, hidden: bool },
}

/// One file's listing, as it was for one key.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    key: FileKey,
    outcome: Outcome,
}

impl Entry {
    fn of(key: FileKey, l: &Listed) -> Entry {
        let outcome = match &l.info {
            Ok(info) => Outcome::Listed(CachedInfo {
                id: CachedField::of(&info.id),
                cwd: ByteBuf::from(info.cwd.as_bytes().to_vec()),
                name: info.name.as_ref().map(|n| ByteBuf::from(n.as_bytes().to_vec())),
                parent_session: CachedField::of(&info.parent_session),
                created: info.created,
                modified: info.modified,
                message_count: info.message_count,
                first_message: ByteBuf::from(info.first_message.as_bytes().to_vec()),
            }),
            Err(o) => Outcome::Omitted { line: o.line, offset: o.offset, reason: o.reason.clone(), hidden: l.hidden },
        };
        Entry { key, outcome }
    }

    fn listed(&self, path: &Path, mtime: Option<f64>) -> Listed {
        let (info, hidden) = match self.outcome.clone() {
            Outcome::Listed(c) => (
                Ok(SessionInfo {
                    id: c.id.field(),
                    cwd: JsStr(c.cwd.into_vec().into()),
                    name: c.name.map(|n| JsStr(n.into_vec().into())),
                    parent_session: c.parent_session.field(),
                    created: c.created,
                    modified: c.modified,
                    message_count: c.message_count,
                    first_message: JsStr(c.first_message.into_vec().into()),
                    all_messages_text: Vec::new(),
                    all_messages_json: Vec::new(),
                    text_pieces: Vec::new(),
                }),
                false,
            ),
            Outcome::Omitted { line, offset, reason, hidden } => (Err(Omitted { line, offset, reason }), hidden),
        };
        Listed {
            path: path.to_path_buf(),
            info,
            hidden,
            mtime: mtime.or(Some(self.key.mtime_ms())),
            found: None,
            atomic: None,
        }
    }
}

/// The entries of a file, by path, one for each way of treating Atomic's internal sessions
/// (index: hidden or not), and whether this listing visited each.
#[derive(Default)]
struct Slots {
    entries: [Option<Entry>; 2],
    visited: [AtomicBool; 2],
}

/// A file read by a listing (path, hidden or not): its new entry, or `None` to drop it.
type Read = (Vec<u8>, bool, Option<Entry>);

/// What is written: the entries in path order.
#[derive(Serialize)]
struct StoredRef<'a> {
    format: &'a str,
    semantics: u32,
    entries: Vec<(&'a serde_bytes::Bytes, bool, &'a Entry)>,
}

#[derive(Deserialize)]
struct Stored {
    /// Checked before the rest is decoded (see [`decode`]).
    _format: String,
    semantics: u32,
    entries: Vec<(ByteBuf, bool, Entry)>,
}

/// The body of a cache file (after [`MAGIC`]): the entries, then their CRC-32 (little-endian),
/// so that a damaged file is rebuilt, never listed from.
fn encode(stored: &StoredRef<'_>) -> postcard::Result<Vec<u8>> {
    let mut body = postcard::to_stdvec(stored)?;
    let sum = crc32fast::hash(&body);
    body.extend_from_slice(&sum.to_le_bytes());
    Ok(body)
}

/// Why the entries of a cache file are not used.
enum Unusable {
    /// Written by a build with another format or listing semantics.
    OtherVersion,
    /// Not as [`ListCache::save`] writes it: why.
    Damaged(String),
}

/// The entries of a cache file's body (after [`MAGIC`]), checked: the format and semantics
/// this build writes, the checksum, nothing after it, and every raw id a JSON value that a
/// listing may print as it is.
fn decode(body: &[u8]) -> Result<Vec<(ByteBuf, bool, Entry)>, Unusable> {
    let damaged = |e: postcard::Error| Unusable::Damaged(e.to_string());
    // The format first, so that a file of another format is rebuilt quietly, whatever its layout.
    let (format, _) = postcard::take_from_bytes::<&str>(body).map_err(damaged)?;
    if format != FORMAT {
        return Err(Unusable::OtherVersion);
    }
    let (entries, sum) = body.split_at_checked(body.len().saturating_sub(4)).unwrap_or((body, &[]));
    if sum.len() != 4 || crc32fast::hash(entries).to_le_bytes() != sum {
        return Err(Unusable::Damaged("checksum mismatch".into()));
    }
    let (stored, rest) = postcard::take_from_bytes::<Stored>(entries).map_err(damaged)?;
    if !rest.is_empty() {
        return Err(Unusable::Damaged("bytes after the entries".into()));
    }
    if stored.semantics != LISTING_SEMANTICS {
        return Err(Unusable::OtherVersion);
    }
    let printable = |f: &CachedField| match f {
        CachedField::Raw(raw) => {
            !raw.is_empty()
                && !raw.contains(&b'\n')
                && !raw.contains(&b'\r')
                && session_core::json::scan_line(raw).is_ok()
        }
        _ => true,
    };
    let all_printable = stored.entries.iter().all(|(_, _, e)| match &e.outcome {
        Outcome::Listed(info) => printable(&info.id) && printable(&info.parent_session),
        Outcome::Omitted { .. } => true,
    });
    if !all_printable {
        return Err(Unusable::Damaged("an id that is not JSON".into()));
    }
    Ok(stored.entries)
}

/// Where a listing read every session file there is (for [`ListCache::save`]).
#[derive(Debug, Clone, Copy)]
pub enum ReadAll<'a> {
    /// A sessions root: its files one folder down.
    Store(&'a Path),
    /// A flat session folder: its files.
    Folder(&'a Path),
}

/// What [`ListCache::lookup`] found.
pub enum Lookup {
    /// The file is as it was: its listing.
    Hit(Box<Listed>),
    /// Read the file, then [`ListCache::store`] it with this key.
    Miss(Option<FileKey>),
}

/// The cache of one listing: the entries read from the file, and what this listing found.
pub struct ListCache {
    path: PathBuf,
    old: ahash::AHashMap<Vec<u8>, Slots>,
    /// Files read this time: the new entry, or `None` when the file is not to be kept.
    fresh: Mutex<Vec<Read>>,
    hits: AtomicU64,
    changed: AtomicBool,
    /// The listing's start, ms since the epoch.
    started_ms: f64,
    /// False when the file there is not a cache: it is left alone.
    writable: bool,
    notes: Vec<String>,
}

fn path_bytes(p: &Path) -> &[u8] {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        p.as_os_str().as_bytes()
    }
    #[cfg(not(unix))]
    {
        p.as_os_str().as_encoded_bytes()
    }
}

impl ListCache {
    /// The default cache file: `$XDG_CACHE_HOME/session-scan/list.cache`, else
    /// `~/.cache/session-scan/list.cache`.
    pub fn default_path() -> Option<PathBuf> {
        let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let base = nonempty("XDG_CACHE_HOME").or_else(|| nonempty("HOME").map(|h| h.join(".cache")))?;
        Some(base.join("session-scan").join("list.cache"))
    }

    /// Reads the cache at `path`. A missing file is an empty cache; an unreadable one, or one of
    /// another version, is empty and rebuilt; a file that is not a cache is left alone (see
    /// [`ListCache::notes`]).
    pub fn open(path: &Path) -> ListCache {
        let started_ms =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64() * 1e3);
        let mut cache = ListCache {
            path: path.to_path_buf(),
            old: ahash::AHashMap::new(),
            fresh: Mutex::new(Vec::new()),
            hits: AtomicU64::new(0),
            changed: AtomicBool::new(false),
            started_ms,
            writable: true,
            notes: Vec::new(),
        };
        let bytes = match crate::read::read_regular(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return cache,
            Err(e) => {
                cache.notes.push(format!("cache {}: cannot read ({e}); not used", path.display()));
                cache.writable = false;
                return cache;
            }
        };
        let Some(body) = bytes.strip_prefix(MAGIC) else {
            cache
                .notes
                .push(format!("{} is not a session-scan cache; it is neither read nor overwritten", path.display()));
            cache.writable = false;
            return cache;
        };
        match decode(body) {
            Ok(entries) => {
                cache.old.reserve(entries.len());
                for (path, hide_internal, entry) in entries {
                    cache.old.entry(path.into_vec()).or_default().entries[usize::from(hide_internal)] = Some(entry);
                }
            }
            // Another version: rebuilt without a word.
            Err(Unusable::OtherVersion) => cache.changed.store(true, Ordering::Relaxed),
            Err(Unusable::Damaged(why)) => {
                cache.notes.push(format!("cache {}: unreadable ({why}); rebuilt", path.display()));
                cache.changed.store(true, Ordering::Relaxed);
            }
        }
        cache
    }

    /// Warnings from [`ListCache::open`], for stderr.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Files listed from the cache so far.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Files the cache held when opened.
    pub fn len(&self) -> usize {
        self.old.values().map(|s| s.entries.iter().flatten().count()).sum()
    }

    /// Whether it held none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether it held `path` (listed with `hide_internal` as given) when opened.
    pub fn contains(&self, path: &Path, hide_internal: bool) -> bool {
        self.old.get(path_bytes(path)).is_some_and(|s| s.entries[usize::from(hide_internal)].is_some())
    }

    /// The listing of `path` if the file is as the cache has it. `mtime` is the candidate's
    /// mtime when discovery took one: it must agree, as it is the listing's fallback date.
    pub fn lookup(&self, path: &Path, hide_internal: bool, mtime: Option<f64>) -> Lookup {
        let Some(key) = std::fs::metadata(path).ok().as_ref().and_then(FileKey::of) else {
            return Lookup::Miss(None);
        };
        let slots = self.old.get(path_bytes(path));
        if let Some(slots) = slots {
            slots.visited[usize::from(hide_internal)].store(true, Ordering::Relaxed);
        }
        match slots.and_then(|s| s.entries[usize::from(hide_internal)].as_ref()) {
            Some(entry) if entry.key == key && mtime.is_none_or(|m| m == key.mtime_ms()) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Lookup::Hit(Box::new(entry.listed(path, mtime)))
            }
            _ => Lookup::Miss(Some(key)),
        }
    }

    /// Records the listing of a file read after a [`Lookup::Miss`] with `key`; `None` (a file that
    /// could not be read) is not kept, nor is a file changed just now.
    pub fn store(&self, path: &Path, hide_internal: bool, key: Option<FileKey>, listed: &Listed) {
        let settled = key.filter(|k| k.ctime_ms().max(k.mtime_ms()) < self.started_ms - SETTLE_MS);
        let had = self.contains(path, hide_internal);
        let entry = settled.map(|k| Entry::of(k, listed));
        if entry.is_some() || had {
            self.changed.store(true, Ordering::Relaxed);
        }
        let mut fresh = self.fresh.lock().unwrap_or_else(|p| p.into_inner());
        fresh.push((path_bytes(path).to_vec(), hide_internal, entry));
    }

    /// Writes the cache back when anything changed: the entries of this listing, and those of
    /// files it did not visit, except the files `read_all` says are gone (every file there was
    /// read, so an entry not visited is of a file deleted since). Written to a temporary file
    /// beside it, then renamed. Returns whether it wrote.
    pub fn save(&self, read_all: Option<ReadAll<'_>>) -> std::io::Result<bool> {
        let mut changed = self.changed.load(Ordering::Relaxed);
        let gone = |path: &[u8], slots: &Slots, hide: usize| {
            let Some(read_all) = read_all else { return false };
            let (root, nested) = match read_all {
                ReadAll::Store(root) => (path_bytes(root), true),
                ReadAll::Folder(dir) => (path_bytes(dir), false),
            };
            let Some(rest) = path.strip_prefix(root) else { return false };
            let rest = if root.ends_with(b"/") {
                rest
            } else if let Some(r) = rest.strip_prefix(b"/") {
                r
            } else {
                return false;
            };
            // A store's files are one folder down; a flat folder's are in it.
            let depth = rest.iter().filter(|&&c| c == b'/').count();
            let inside = if nested { depth == 1 } else { depth == 0 };
            inside && !slots.visited[hide].load(Ordering::Relaxed)
        };
        changed |= self.old.iter().any(|(p, s)| (0..2).any(|h| s.entries[h].is_some() && gone(p, s, h)));
        if !changed || !self.writable {
            return Ok(false);
        }
        let fresh = self.fresh.lock().unwrap_or_else(|p| p.into_inner());
        let replaced: ahash::AHashSet<(&[u8], bool)> = fresh.iter().map(|(p, h, _)| (p.as_slice(), *h)).collect();
        let mut list: Vec<(&serde_bytes::Bytes, bool, &Entry)> = Vec::with_capacity(self.old.len() + fresh.len());
        for (path, slots) in &self.old {
            for (h, entry) in slots.entries.iter().enumerate() {
                if let Some(entry) = entry
                    && !gone(path, slots, h)
                    && !replaced.contains(&(path.as_slice(), h == 1))
                {
                    list.push((serde_bytes::Bytes::new(path), h == 1, entry));
                }
            }
        }
        for (path, hide, entry) in fresh.iter() {
            if let Some(entry) = entry {
                list.push((serde_bytes::Bytes::new(path), *hide, entry));
            }
        }
        // Sorted, so that the same entries give the same file.
        list.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let stored = StoredRef { format: FORMAT, semantics: LISTING_SEMANTICS, entries: list };
        let mut bytes = MAGIC.to_vec();
        bytes.extend(encode(&stored).map_err(std::io::Error::other)?);
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let name = self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = self.path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        // Readable by its owner only: it holds the first message of every session.
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let _ = std::fs::remove_file(&tmp);
        std::io::Write::write_all(&mut options.open(&tmp)?, &bytes)?;
        std::fs::rename(&tmp, &self.path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(size: u64) -> FileKey {
        FileKey { dev: 1, ino: 2, size, mtime: (1_700_000_000, 5), ctime: (1_700_000_000, 7) }
    }

    #[test]
    fn entries_keep_every_field_through_the_file() {
        let info = SessionInfo {
            id: PropertyValue::Raw(b"12.50".to_vec().into()),
            cwd: JsStr(b"/w/\xed\xa0\x80x".to_vec().into()),
            name: Some(JsStr(b"named".to_vec().into())),
            parent_session: PropertyValue::Null,
            created: f64::NAN,
            modified: 1_767_701_806_075.0,
            message_count: 42,
            first_message: JsStr(b"hello \xf0\x9f\x9a\x80".to_vec().into()),
            all_messages_text: Vec::new(),
            all_messages_json: Vec::new(),
            text_pieces: Vec::new(),
        };
        let listed = Listed {
            path: "/s/a.jsonl".into(),
            info: Ok(info.clone()),
            hidden: false,
            mtime: Some(1.0),
            found: None,
            atomic: None,
        };
        let omitted = Listed {
            path: "/s/b.jsonl".into(),
            info: Err(Omitted { line: Some(3), offset: Some(120), reason: "bad header".into() }),
            hidden: true,
            mtime: None,
            found: None,
            atomic: None,
        };
        let (a, b) = (Entry::of(key(10), &listed), Entry::of(key(20), &omitted));
        let stored = StoredRef {
            format: FORMAT,
            semantics: LISTING_SEMANTICS,
            entries: vec![
                (serde_bytes::Bytes::new(b"/s/a.jsonl"), false, &a),
                (serde_bytes::Bytes::new(b"/s/b.jsonl"), true, &b),
            ],
        };
        let bytes = encode(&stored).expect("encodes");
        let back = decode(&bytes).ok().expect("decodes");
        let a = back[0].2.listed(Path::new("/s/a.jsonl"), None);
        let got = a.info.expect("listed");
        assert_eq!(got.id, info.id);
        assert_eq!(got.cwd, info.cwd);
        assert_eq!(got.name, info.name);
        assert_eq!(got.parent_session, PropertyValue::Null);
        assert!(got.created.is_nan());
        assert_eq!(got.modified, info.modified);
        assert_eq!(got.message_count, 42);
        assert_eq!(got.first_message, info.first_message);
        assert_eq!(a.mtime, Some(key(10).mtime_ms()));
        let b = back[1].2.listed(Path::new("/s/b.jsonl"), Some(9.0));
        assert!(b.hidden);
        assert_eq!(b.mtime, Some(9.0));
        let o = b.info.expect_err("omitted");
        assert_eq!((o.line, o.offset, o.reason.as_str()), (Some(3), Some(120), "bad header"));
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("session-scan-cache-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    fn listed(path: &str, id: PropertyValue<'static>) -> Listed {
        let info = SessionInfo {
            id,
            cwd: JsStr(b"/w".to_vec().into()),
            name: None,
            parent_session: PropertyValue::Absent,
            created: 1.0,
            modified: 2.0,
            message_count: 3,
            first_message: JsStr(b"hi".to_vec().into()),
            all_messages_text: Vec::new(),
            all_messages_json: Vec::new(),
            text_pieces: Vec::new(),
        };
        Listed { path: path.into(), info: Ok(info), hidden: false, mtime: None, found: None, atomic: None }
    }

    /// A cache file of three entries, as `save` writes it.
    fn saved_cache(dir: &Path) -> (PathBuf, Vec<u8>) {
        let file = dir.join("list.cache");
        let _ = std::fs::remove_file(&file);
        let cache = ListCache::open(&file);
        for (k, id) in [
            PropertyValue::Str(JsStr(b"a".to_vec().into())),
            PropertyValue::Raw(b"12.5".to_vec().into()),
            PropertyValue::Null,
        ]
        .into_iter()
        .enumerate()
        {
            let path = format!("/s/{k}.jsonl");
            cache.store(Path::new(&path), false, Some(key(k as u64)), &listed(&path, id));
        }
        assert!(cache.save(None).expect("saves"));
        assert_eq!(ListCache::open(&file).len(), 3);
        let bytes = std::fs::read(&file).expect("read");
        (file, bytes)
    }

    #[test]
    fn a_damaged_file_is_never_listed_from() {
        let dir = temp_dir("damaged");
        let (file, bytes) = saved_cache(&dir);
        let unused = |damaged: &[u8], what: &str| {
            std::fs::write(&file, damaged).expect("write");
            let cache = ListCache::open(&file);
            assert!(cache.is_empty(), "{what}: {} entries", cache.len());
            assert!(cache.changed.load(Ordering::Relaxed), "{what}: not rebuilt");
            cache
        };
        // Every truncation past the magic line, and every byte changed in three ways.
        for len in MAGIC.len()..bytes.len() {
            let cache = unused(&bytes[..len], &format!("cut at {len}"));
            assert!(cache.writable);
        }
        for at in MAGIC.len()..bytes.len() {
            for flip in [0x01, 0x80, 0xFF] {
                let mut damaged = bytes.clone();
                damaged[at] ^= flip;
                unused(&damaged, &format!("byte {at} ^ {flip:#x}"));
            }
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(unused(&longer, "a byte added").notes()[0].contains("checksum mismatch"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_raw_id_that_is_not_json_is_refused_and_an_old_format_rebuilt_quietly() {
        let entry = |raw: &[u8]| Entry::of(key(1), &listed("/s/a.jsonl", PropertyValue::Raw(raw.to_vec().into())));
        let encode = |format: &str, entry: &Entry| {
            let stored = StoredRef {
                format,
                semantics: LISTING_SEMANTICS,
                entries: vec![(serde_bytes::Bytes::new(b"/s/a.jsonl"), false, entry)],
            };
            encode(&stored).expect("encodes")
        };
        assert!(decode(&encode(FORMAT, &entry(b"[1,{\"a\":true}]"))).is_ok());
        for raw in [&b"1,\"x\":2"[..], b"", b"1\n", b"{"] {
            match decode(&encode(FORMAT, &entry(raw))) {
                Err(Unusable::Damaged(why)) => assert_eq!(why, "an id that is not JSON"),
                _ => panic!("{:?} was accepted", String::from_utf8_lossy(raw)),
            }
        }
        // Format 1 had no checksum: it is of another version, not damaged.
        let one = entry(b"1");
        let stored = StoredRef {
            format: "format 1",
            semantics: 1,
            entries: vec![(serde_bytes::Bytes::new(b"/s/a"), false, &one)],
        };
        let old = postcard::to_stdvec(&stored).expect("encodes");
        assert!(matches!(decode(&old), Err(Unusable::OtherVersion)));
        let dir = temp_dir("old");
        let file = dir.join("list.cache");
        std::fs::write(&file, [MAGIC, &old].concat()).expect("write");
        let cache = ListCache::open(&file);
        assert!(cache.is_empty() && cache.notes().is_empty() && cache.changed.load(Ordering::Relaxed));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_truncated_file_is_rebuilt_and_a_foreign_file_left_alone() {
        let dir = temp_dir("unit");
        let truncated = dir.join("t.cache");
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&[9, b'f', b'o']);
        std::fs::write(&truncated, &bytes).expect("write");
        let cache = ListCache::open(&truncated);
        assert!(cache.is_empty());
        assert!(cache.notes()[0].contains("unreadable"), "{:?}", cache.notes());
        assert!(cache.save(None).expect("saves"), "a broken cache is written afresh");
        assert!(ListCache::open(&truncated).notes().is_empty());

        let foreign = dir.join("notes.txt");
        std::fs::write(&foreign, b"my notes\n").expect("write");
        let cache = ListCache::open(&foreign);
        assert!(cache.notes()[0].contains("not a session-scan cache"));
        cache.changed.store(true, Ordering::Relaxed);
        assert!(!cache.save(None).expect("no error"));
        assert_eq!(std::fs::read(&foreign).expect("read"), b"my notes\n");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
