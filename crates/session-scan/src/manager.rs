//! Pi 1.6's `SessionManager` on files: create, open, continue, fork, append, branch, as Pi does
//! them and with the bytes Pi writes ([`session_core::state`] builds them), made safe where Pi is
//! not:
//!
//! - each append is one `write` of its whole line in append mode, so a crash can cut only that
//!   line, which Pi's loader skips; a failed write is cut back off and the append forgotten;
//! - a new file is created exclusively and removed if its write fails; a whole-file rewrite (a
//!   migration, Atomic's internal marker) goes to a temporary file, synced, renamed over;
//! - the file is locked against our other writers while a manager has it (Pi takes no lock);
//! - version 1 and 2 files are rewritten only when migration is asked for;
//! - nothing is written on open (Pi adds a missing last line break there: we add it with the
//!   first append), and no folder is made before the first write.

use std::fs::File;
use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};

use session_core::json::Value;
use session_core::record::Workflow;
use session_core::state::{BranchSummary, Compaction, NewSession, Pending, SessionState, Sources, StateError, Write};

/// Why an operation failed. Files are left as they were.
#[derive(Debug)]
pub enum ManagerError {
    /// Pi's own refusal (an unknown entry, a bad context edit, …).
    Refused(StateError),
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        doing: &'static str,
        /// Why it failed.
        source: std::io::Error,
    },
    /// Another writer of ours has the file.
    Locked(PathBuf),
    /// The file is not a session Pi can open.
    NotASession {
        /// The file.
        path: PathBuf,
        /// The line that shows it, when one does.
        line: Option<u64>,
        /// That line's byte offset.
        offset: Option<u64>,
        /// Why.
        reason: String,
    },
    /// A version 1 or 2 session, which is rewritten only when migration is asked for.
    NeedsMigration {
        /// The file.
        path: PathBuf,
        /// Its version.
        version: u8,
    },
}

impl std::fmt::Display for ManagerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ManagerError::Refused(e) => write!(f, "{e}"),
            ManagerError::Io { path, doing, source } => {
                write!(f, "{}: cannot {doing}: {source} (the file is as it was)", path.display())
            }
            ManagerError::Locked(path) => write!(f, "{}: another session-scan is writing to it", path.display()),
            ManagerError::NotASession { path, line, offset, reason } => {
                let why = format!("not a session Pi can open: {reason}; the file is left as it is");
                f.write_str(&crate::render::error_text(&path.display().to_string(), *line, *offset, &why))
            }
            ManagerError::NeedsMigration { path, version } => write!(
                f,
                "{}: a version {version} session, which Pi rewrites whole when it opens it; ask for migration to rewrite it",
                path.display()
            ),
        }
    }
}

impl std::error::Error for ManagerError {}

impl From<StateError> for ManagerError {
    fn from(e: StateError) -> Self {
        ManagerError::Refused(e)
    }
}

type Result<T> = std::result::Result<T, ManagerError>;

fn io<'p>(path: &'p Path, doing: &'static str) -> impl FnOnce(std::io::Error) -> ManagerError + 'p {
    move |source| ManagerError::Io { path: path.to_owned(), doing, source }
}

/// Where bytes reach the disk: every write of the manager goes through it, so tests can make
/// the disk fail.
pub trait Disk: Send {
    /// Writes all of `bytes` at `file`'s position.
    fn write(&mut self, file: &mut File, bytes: &[u8]) -> std::io::Result<()>;
}

/// The real disk.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealDisk;

impl Disk for RealDisk {
    fn write(&mut self, file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
        file.write_all(bytes)
    }
}

/// The clock and random UUIDs (v4 for entry ids, v7 for session ids, as Pi draws them).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemSources;

impl Sources for SystemSources {
    fn now_ms(&mut self) -> i64 {
        jiff::Timestamp::now().as_millisecond()
    }
    fn random_uuid(&mut self) -> String {
        uuid::Uuid::new_v4().to_string()
    }
    fn session_id(&mut self) -> String {
        uuid::Uuid::now_v7().to_string()
    }
}

/// How a manager writes: where time, ids and the disk come from, whether each write is synced,
/// whether old sessions are migrated.
pub struct Opener {
    sources: Box<dyn Sources + Send>,
    disk: Box<dyn Disk>,
    sync: bool,
    migrate: bool,
    held_below: u64,
}

impl Default for Opener {
    fn default() -> Self {
        Opener {
            sources: Box::new(SystemSources),
            disk: Box::new(RealDisk),
            sync: false,
            migrate: false,
            held_below: HELD_BELOW,
        }
    }
}

impl Opener {
    /// Time and ids from `sources` (tests give fixed ones).
    pub fn sources(mut self, sources: impl Sources + Send + 'static) -> Self {
        self.sources = Box::new(sources);
        self
    }

    /// Writes through `disk`.
    pub fn disk(mut self, disk: impl Disk + 'static) -> Self {
        self.disk = Box::new(disk);
        self
    }

    /// Syncs the file to disk after each write (Pi does not).
    pub fn sync(mut self, sync: bool) -> Self {
        self.sync = sync;
        self
    }

    /// Files opened from `bytes` on are indexed, not kept in memory ([`HELD_BELOW`] unless
    /// given): appends need only the index, and readers read the file again.
    pub fn held_below(mut self, bytes: u64) -> Self {
        self.held_below = bytes;
        self
    }

    /// Opening a version 1 or 2 session rewrites it as Pi's migration would (atomically);
    /// otherwise it is refused.
    pub fn migrate(mut self, migrate: bool) -> Self {
        self.migrate = migrate;
        self
    }

    fn manager(self, state: SessionState, file: Option<PathBuf>, dir: PathBuf, handle: Option<File>) -> SessionManager {
        SessionManager { state, file, dir, handle, opener: self }
    }

    /// `SessionManager.create(cwd, dir)`: a new session in `dir` (default: `cwd`'s folder of the
    /// store), written once it holds a user or assistant message.
    pub fn create(mut self, cwd: &str, dir: Option<&Path>, options: &NewSession) -> Result<SessionManager> {
        let cwd = crate::store::resolve_path(cwd);
        let dir = dir.map_or_else(|| default_dir(&cwd), Path::to_owned);
        let state = SessionState::new(&cwd, true, options, &mut *self.sources)?;
        let file = dir.join(state.file_name());
        Ok(self.manager(state, Some(file), dir, None))
    }

    /// `SessionManager.open(path, dir, cwdOverride)`: the cwd is the override, else the header's,
    /// else the process's; a missing file becomes a new session at that path; an empty file is
    /// given a header; anything else that is not a session is refused and left alone.
    pub fn open(mut self, path: &Path, dir: Option<&Path>, cwd_override: Option<&str>) -> Result<SessionManager> {
        let path = PathBuf::from(crate::store::resolve_path(&path.to_string_lossy()));
        let header_cwd = || crate::resolve::discovery_header(&path).ok().and_then(|h| h.cwd);
        let cwd = cwd_override.map(str::to_owned).or_else(header_cwd).unwrap_or_default();
        let cwd = crate::store::resolve_path(&cwd);
        let dir = dir.map_or_else(|| path.parent().unwrap_or(Path::new("/")).to_owned(), Path::to_owned);
        let (state, handle) = self.load_file(&path, &cwd, true)?;
        Ok(self.manager(state, Some(path), dir, handle))
    }

    /// `SessionManager.continueRecent(cwd, dir)`: the newest session of `dir` (default: `cwd`'s
    /// folder; an other folder counts only sessions of `cwd`), else a new one.
    pub fn continue_recent(mut self, cwd: &str, dir: Option<&Path>) -> Result<SessionManager> {
        let cwd = crate::store::resolve_path(cwd);
        let own = default_dir(&cwd);
        let filter = dir.is_some_and(|d| d != own);
        let dir = dir.map_or(own, Path::to_owned);
        match crate::resolve::most_recent(&dir, filter.then_some(cwd.as_str()), &mut |_, _| {}) {
            crate::resolve::Recent::Found(path) => {
                let (state, handle) = self.load_file(&path, &cwd, true)?;
                Ok(self.manager(state, Some(path), dir, handle))
            }
            _ => {
                let state = SessionState::new(&cwd, true, &NewSession::default(), &mut *self.sources)?;
                let file = dir.join(state.file_name());
                Ok(self.manager(state, Some(file), dir, None))
            }
        }
    }

    /// `SessionManager.inMemory(cwd)`: a session never written.
    pub fn in_memory(mut self, cwd: &str, options: &NewSession) -> Result<SessionManager> {
        let cwd = crate::store::resolve_path(cwd);
        let state = SessionState::new(&cwd, false, options, &mut *self.sources)?;
        Ok(self.manager(state, None, PathBuf::new(), None))
    }

    /// `SessionManager.forkFrom(source, targetCwd, dir)` (`pi --fork`): every record of `source`
    /// copied under a new header for `target_cwd` into `dir` (default: its folder of the store),
    /// then opened.
    pub fn fork_from(
        mut self,
        source: &Path,
        target_cwd: &str,
        dir: Option<&Path>,
        options: &NewSession,
    ) -> Result<SessionManager> {
        let target_cwd = crate::store::resolve_path(target_cwd);
        let dir = dir.map_or_else(|| default_dir(&target_cwd), Path::to_owned);
        let (target, made) = forked_copy(source, &target_cwd, &dir, options, &mut *self.sources)?;
        std::fs::create_dir_all(&dir).map_err(io(&dir, "create the folder"))?;
        drop(create_new(&target, &made, &mut *self.disk, self.sync)?);
        let (state, handle) = self.load_file(&target, &target_cwd, true)?;
        Ok(self.manager(state, Some(target), dir, handle))
    }

    /// `_setSessionFile(path)`: the session in `path` (a new one when there is no such file), and
    /// the file, open and locked, when it exists.
    fn load_file(&mut self, path: &Path, cwd: &str, persist: bool) -> Result<(SessionState, Option<File>)> {
        if !path.exists() {
            let state = SessionState::new(cwd, persist, &NewSession::default(), &mut *self.sources)?;
            return Ok((state, None));
        }
        let mut handle = open_locked(path)?;
        let len = handle.metadata().map_err(io(path, "read"))?.len();
        if len >= self.held_below && len > 0 && !self.migrate {
            // A large file is indexed from a map and not kept: appending needs only the index;
            // a reader reads the bytes again when it needs them.
            let (bytes, _) = crate::read_file(path, crate::ReadStrategy::Mmap).map_err(io(path, "read"))?;
            let session = crate::load_session(&bytes, &crate::UTC).map_err(|e| not_a_session(path, &e))?;
            if let Some(version) = session.migrated_from {
                return Err(ManagerError::NeedsMigration { path: path.to_owned(), version });
            }
            let state = SessionState::loaded(&session, cwd);
            let ends_with_newline = bytes.last() == Some(&b'\n');
            let len = bytes.len();
            drop(session);
            drop(bytes);
            let mut state = state.without_bytes(len, ends_with_newline);
            state.set_persisted(persist);
            return Ok((state, Some(handle)));
        }
        let mut bytes = Vec::new();
        handle.read_to_end(&mut bytes).map_err(io(path, "read"))?;
        if bytes.is_empty() {
            // An empty file is given a header.
            let mut state = SessionState::new(cwd, persist, &NewSession::default(), &mut *self.sources)?;
            if persist {
                if let Err(e) = self.disk.write(&mut handle, state.bytes()?) {
                    let _ = handle.set_len(0);
                    return Err(ManagerError::Io { path: path.to_owned(), doing: "write", source: e });
                }
                state.set_flushed();
            }
            return Ok((state, Some(handle)));
        }
        let session = crate::load_session(&bytes, &crate::UTC).map_err(|e| not_a_session(path, &e))?;
        let (state, handle) = match session.migrated_from {
            Some(version) if !self.migrate => {
                return Err(ManagerError::NeedsMigration { path: path.to_owned(), version });
            }
            Some(_) => {
                let migrated = session_core::state::migrated_bytes(&session, &mut *self.sources)?;
                drop(session);
                drop(handle);
                replace_file(path, &migrated, &mut *self.disk)?;
                let handle = open_locked(path)?;
                let session = crate::load_session(&migrated, &crate::UTC).map_err(|e| not_a_session(path, &e))?;
                let state = SessionState::loaded(&session, cwd);
                drop(session);
                (state.with_bytes(migrated), handle)
            }
            None => {
                let state = SessionState::loaded(&session, cwd);
                drop(session);
                (state.with_bytes(bytes), handle)
            }
        };
        let mut state = state;
        state.set_persisted(persist);
        Ok((state, Some(handle)))
    }
}

/// Files smaller than this are kept in memory when opened; larger ones are indexed only.
pub const HELD_BELOW: u64 = crate::PARALLEL_SCAN_THRESHOLD as u64;

/// `forkFrom`'s new file (not written): its path in `dir` and its bytes, every record of `source`
/// (read as it is, not migrated) under a new header for `target_cwd` (resolved) naming `source` as
/// its parent.
pub(crate) fn forked_copy(
    source: &Path,
    target_cwd: &str,
    dir: &Path,
    options: &NewSession,
    sources: &mut dyn Sources,
) -> Result<(PathBuf, Vec<u8>)> {
    let source = PathBuf::from(crate::store::resolve_path(&source.to_string_lossy()));
    let bytes = std::fs::read(&source).map_err(io(&source, "read"))?;
    let session = crate::load_session(&bytes, &crate::UTC).map_err(|e| not_a_session(&source, &e))?;
    if let Some(id) = &options.id
        && !session_core::state::is_valid_session_id(id)
    {
        return Err(StateError::BadSessionId(id.clone()).into());
    }
    let session_id = options.id.clone().unwrap_or_else(|| sources.session_id());
    let timestamp = session_core::state::iso_time(sources.now_ms());
    let parent = source.to_string_lossy().into_owned();
    let header = session_core::record::Header {
        id: &session_id,
        timestamp: &timestamp,
        cwd: target_cwd,
        parent_session: Some(&parent),
        workflow: None,
    };
    let made = session_core::branched::copied_session(&session, &header).map_err(|e| ManagerError::NotASession {
        path: source.clone(),
        line: None,
        offset: None,
        reason: e.to_string(),
    })?;
    Ok((dir.join(session_core::state::file_name(&timestamp, &session_id)), made))
}

/// `getDefaultSessionDir(cwd)`: the cwd's folder of the default store.
pub fn default_dir(resolved_cwd: &str) -> PathBuf {
    crate::store::default_root(false).join(crate::store::encode_cwd(resolved_cwd))
}

fn not_a_session(path: &Path, e: &session_core::LoadError) -> ManagerError {
    let (line, offset) = e.place();
    ManagerError::NotASession { path: path.to_owned(), line, offset, reason: e.reason() }
}

/// Opens `path` to append to it, locked against our other writers.
fn open_locked(path: &Path) -> Result<File> {
    let file = std::fs::OpenOptions::new().read(true).append(true).open(path).map_err(io(path, "open"))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(ManagerError::Locked(path.to_owned())),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(ManagerError::Io { path: path.to_owned(), doing: "lock", source: e })
        }
    }
}

/// Creates `path` exclusively and writes `bytes`; a failed write removes it.
pub(crate) fn create_new(path: &Path, bytes: &[u8], disk: &mut dyn Disk, sync: bool) -> Result<File> {
    create_new_with(path, sync, |file| disk.write(file, bytes))
}

/// Creates `path` exclusively and has `write` fill it; a failed write removes it. With `sync`,
/// the file and then its folder's new name are synced.
pub(crate) fn create_new_with(
    path: &Path,
    sync: bool,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<File> {
    let mut file =
        std::fs::OpenOptions::new().read(true).append(true).create_new(true).open(path).map_err(io(path, "create"))?;
    let _ = file.try_lock();
    let written = write(&mut file).and_then(|()| if sync { file.sync_all() } else { Ok(()) });
    if let Err(e) = written {
        drop(file);
        let _ = std::fs::remove_file(path);
        return Err(ManagerError::Io { path: path.to_owned(), doing: "write", source: e });
    }
    if sync {
        sync_folder(path);
    }
    Ok(file)
}

/// Makes a rename or a new name in `path`'s folder durable.
fn sync_folder(path: &Path) {
    if let Some(dir) = path.parent()
        && let Ok(d) = File::open(dir)
    {
        let _ = d.sync_all();
    }
}

/// Replaces `path` with `bytes`: a temporary file beside it, written, synced, renamed over (a
/// crash leaves the old file or the new one).
fn replace_file(path: &Path, bytes: &[u8], disk: &mut dyn Disk) -> Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(io(&tmp, "create"))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = file.set_permissions(meta.permissions());
    }
    let written = disk.write(&mut file, bytes).and_then(|()| file.sync_all());
    drop(file);
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(ManagerError::Io { path: path.to_owned(), doing: "rewrite", source: e });
    }
    sync_folder(path);
    Ok(())
}

/// Pi 1.6's `SessionManager`: a session in memory and, unless it is held in memory only, its
/// file.
pub struct SessionManager {
    state: SessionState,
    file: Option<PathBuf>,
    dir: PathBuf,
    /// The file, open in append mode and locked, once it exists.
    handle: Option<File>,
    opener: Opener,
}

impl SessionManager {
    /// [`Opener::create`] with the clock and random ids.
    pub fn create(cwd: &str, dir: Option<&Path>) -> Result<SessionManager> {
        Opener::default().create(cwd, dir, &NewSession::default())
    }

    /// [`Opener::open`] with the clock and random ids.
    pub fn open(path: &Path) -> Result<SessionManager> {
        Opener::default().open(path, None, None)
    }

    /// [`Opener::continue_recent`] with the clock and random ids.
    pub fn continue_recent(cwd: &str, dir: Option<&Path>) -> Result<SessionManager> {
        Opener::default().continue_recent(cwd, dir)
    }

    /// [`Opener::in_memory`] with the clock and random ids.
    pub fn in_memory(cwd: &str) -> Result<SessionManager> {
        Opener::default().in_memory(cwd, &NewSession::default())
    }

    /// [`Opener::fork_from`] with the clock and random ids.
    pub fn fork_from(source: &Path, target_cwd: &str, dir: Option<&Path>) -> Result<SessionManager> {
        Opener::default().fork_from(source, target_cwd, dir, &NewSession::default())
    }

    /// What is held in memory: the records, the leaf, and the readers (`session()` for the
    /// tree, branches, labels and name; `leaf_choice()` for the context).
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// `getSessionFile()`.
    pub fn session_file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// `getSessionDir()`.
    pub fn session_dir(&self) -> &Path {
        &self.dir
    }

    /// `getSessionId()`.
    pub fn session_id(&self) -> &str {
        self.state.session_id()
    }

    /// `getSessionName()`.
    pub fn name(&mut self) -> Result<Option<String>> {
        Ok(self.session()?.name().map(|n| n.to_str_lossy().into_owned()))
    }

    /// `newSession(options)`: a new session in the session folder. Returns its file.
    pub fn new_session(&mut self, options: &NewSession) -> Result<Option<PathBuf>> {
        let name = self.state.new_session(options, &mut *self.opener.sources)?;
        self.handle = None;
        // In memory the file stays what it was (Pi returns it all the same).
        if self.state.is_persisted() {
            self.file = Some(self.dir.join(name));
        }
        Ok(self.file.clone())
    }

    /// `setSessionFile(path)`: continues the session in `path` (see [`Opener::open`]); the cwd
    /// stays this manager's.
    pub fn set_session_file(&mut self, path: &Path) -> Result<()> {
        let path = PathBuf::from(crate::store::resolve_path(&path.to_string_lossy()));
        let cwd = self.state.cwd().to_owned();
        let persist = self.state.is_persisted();
        // The file is let go first: the same file may be opened again.
        let held = self.handle.take().is_some();
        let (state, handle) = match self.opener.load_file(&path, &cwd, persist) {
            Ok(loaded) => loaded,
            Err(e) => {
                // Still this manager's file: it is taken back.
                self.handle = self.file.as_deref().filter(|_| held).and_then(|old| open_locked(old).ok());
                return Err(e);
            }
        };
        self.state = state;
        self.file = Some(path);
        self.handle = handle;
        Ok(())
    }

    /// Reads the part of the file the session was opened with, when it is not held (a large
    /// file is indexed at open, not kept).
    fn hold(&mut self) -> Result<()> {
        let unheld = self.state.unheld();
        if unheld == 0 {
            return Ok(());
        }
        let path = self.file.clone().unwrap_or_default();
        let mut prefix = vec![0; unheld];
        let read = match &self.handle {
            Some(h) => std::os::unix::fs::FileExt::read_exact_at(h, &mut prefix, 0),
            None => File::open(&path).and_then(|f| std::os::unix::fs::FileExt::read_exact_at(&f, &mut prefix, 0)),
        };
        read.map_err(io(&path, "read"))?;
        Ok(self.state.hold(prefix)?)
    }

    /// The session's records read as a session (the tree, branches, labels, name, context).
    pub fn session(&mut self) -> Result<session_core::Session<'_>> {
        self.hold()?;
        Ok(self.state.session()?)
    }

    /// Writes what an operation writes.
    fn perform(&mut self, write: &Write) -> Result<()> {
        match write {
            Write::Nothing => Ok(()),
            Write::Append(bytes) => {
                let path = self.file.clone().unwrap_or_default();
                let Some(handle) = self.handle.as_mut() else {
                    return Err(ManagerError::Io {
                        path,
                        doing: "append",
                        source: std::io::Error::other("the file is not open"),
                    });
                };
                let length = handle.metadata().map_err(io(&path, "append"))?.len();
                let written = self
                    .opener
                    .disk
                    .write(handle, bytes)
                    .and_then(|()| if self.opener.sync { handle.sync_data() } else { Ok(()) });
                if let Err(e) = written {
                    // What reached the file is cut back off.
                    let _ = handle.set_len(length);
                    return Err(ManagerError::Io { path, doing: "append", source: e });
                }
                Ok(())
            }
            Write::Create(bytes) => {
                let path = self.file.clone().unwrap_or_default();
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(io(dir, "create the folder"))?;
                }
                self.handle = Some(create_new(&path, bytes, &mut *self.opener.disk, self.opener.sync)?);
                Ok(())
            }
            Write::Replace(bytes) => {
                let path = self.file.clone().unwrap_or_default();
                replace_file(&path, bytes, &mut *self.opener.disk)?;
                self.handle = Some(open_locked(&path)?);
                Ok(())
            }
        }
    }

    /// Writes a prepared append, then takes it in; a failed write leaves memory as it was.
    fn finish(&mut self, pending: Pending) -> Result<String> {
        match self.perform(&pending.write) {
            Ok(()) => {
                let id = pending.id.clone();
                self.state.commit(pending);
                Ok(id)
            }
            Err(e) => {
                self.state.abandon(pending);
                Err(e)
            }
        }
    }

    /// `appendMessage(message)`: any role. Returns the new entry's id.
    pub fn append_message(&mut self, message: &Value<'_>) -> Result<String> {
        let p = self.state.message(message, &mut *self.opener.sources);
        self.finish(p)
    }

    /// `appendThinkingLevelChange(level)`.
    pub fn append_thinking_level_change(&mut self, level: &str) -> Result<String> {
        let p = self.state.thinking_level_change(level, &mut *self.opener.sources);
        self.finish(p)
    }

    /// `appendModelChange(provider, modelId)`.
    pub fn append_model_change(&mut self, provider: &str, model_id: &str) -> Result<String> {
        let p = self.state.model_change(provider, model_id, &mut *self.opener.sources);
        self.finish(p)
    }

    /// `appendUsage(kind, provider, model, usage, note)`.
    pub fn append_usage(
        &mut self,
        kind: &str,
        provider: &str,
        model: &str,
        usage: &Value<'_>,
        note: Option<&str>,
    ) -> Result<String> {
        let p = self.state.usage(kind, provider, model, usage, note, &mut *self.opener.sources);
        self.finish(p)
    }

    /// `appendCompaction(...)`, with the replayed system prompt as `systemMessage`.
    pub fn append_compaction(&mut self, c: &Compaction<'_>) -> Result<String> {
        self.hold()?;
        let p = self.state.compaction(c, &mut *self.opener.sources)?;
        self.finish(p)
    }

    /// `appendCustomEntry(customType, data)`.
    pub fn append_custom(&mut self, custom_type: &str, data: Option<&Value<'_>>) -> Result<String> {
        let p = self.state.custom(custom_type, data, &mut *self.opener.sources);
        self.finish(p)
    }

    /// `appendCustomMessageEntry(customType, content, display, details)`.
    pub fn append_custom_message(
        &mut self,
        custom_type: &str,
        content: &Value<'_>,
        display: bool,
        details: Option<&Value<'_>>,
    ) -> Result<String> {
        let p = self.state.custom_message(custom_type, content, display, details, &mut *self.opener.sources);
        self.finish(p)
    }

    /// `appendSessionInfo(name)`.
    pub fn append_session_info(&mut self, name: &str) -> Result<String> {
        let p = self.state.session_info(name, &mut *self.opener.sources);
        self.finish(p)
    }

    /// `appendLabelChange(targetId, label)`: `None` clears.
    pub fn append_label_change(&mut self, target: &str, label: Option<&str>) -> Result<String> {
        let p = self.state.label(target, label, &mut *self.opener.sources)?;
        self.finish(p)
    }

    /// `appendContextEdit(targetId, replacement)`.
    pub fn append_context_edit(&mut self, target: &str, replacement: &Value<'_>) -> Result<String> {
        let p = self.state.context_edit(target, replacement, &mut *self.opener.sources)?;
        self.finish(p)
    }

    /// `branch(id)`.
    pub fn branch(&mut self, id: &str) -> Result<()> {
        Ok(self.state.branch(id)?)
    }

    /// `resetLeaf()`.
    pub fn reset_leaf(&mut self) {
        self.state.reset_leaf();
    }

    /// `branchWithSummary(fromId, summary, details, fromHook, usage)`.
    pub fn branch_with_summary(&mut self, from: Option<&str>, s: &BranchSummary<'_>) -> Result<String> {
        let p = self.state.branch_with_summary(from, s, &mut *self.opener.sources)?;
        self.finish(p)
    }

    /// `createBranchedSession(leafId)`: continues in a new session holding one branch; returns
    /// its file (written now when the branch holds a conversation), or `None` in memory.
    pub fn create_branched_session(&mut self, leaf: Option<&str>) -> Result<Option<PathBuf>> {
        self.hold()?;
        let parent = self.file.as_ref().map(|f| f.to_string_lossy().into_owned());
        let made = self.state.branched(leaf, parent.as_deref(), &mut *self.opener.sources)?;
        if !self.state.is_persisted() {
            self.state.take_branched(made);
            return Ok(None);
        }
        let target = self.dir.join(&made.file_name);
        let handle = if made.has_conversation {
            std::fs::create_dir_all(&self.dir).map_err(io(&self.dir, "create the folder"))?;
            Some(create_new(&target, &made.bytes, &mut *self.opener.disk, self.opener.sync)?)
        } else {
            None
        };
        self.state.take_branched(made);
        self.handle = handle;
        self.file = Some(target.clone());
        Ok(Some(target))
    }

    /// Atomic's `markSessionInternal(workflow)`: `false` when the header already has a valid
    /// marker (it is never overwritten).
    pub fn mark_session_internal(&mut self, workflow: &Workflow) -> Result<bool> {
        self.hold()?;
        let before = self.state.clone();
        match self.state.mark_internal(workflow)? {
            None => Ok(false),
            Some(write) => match self.perform(&write) {
                Ok(()) => Ok(true),
                Err(e) => {
                    self.state = before;
                    Err(e)
                }
            },
        }
    }
}
