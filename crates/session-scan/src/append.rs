//! Appending to a session file as Pi 1.6's `SessionManager` does when it has the file open
//! (`appendSessionInfo`, `appendLabelChange`): one new entry, a child of the leaf, written with one
//! `write` of the whole line in append mode, so that a crash can only cut that line (which Pi's
//! loader skips). The file is locked against our other writers while it is read and written (Pi
//! itself takes no lock); a failed write is cut back off; files Pi would rewrite when it opens them
//! (versions 1 and 2, an empty file) are refused and left as they are.

use std::io::{Read, Seek, Write};
use std::path::Path;

pub use session_core::append::Change;

/// What was appended (or, for a dry run, would be).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    /// The new entry's id.
    pub id: String,
    /// The bytes written after the file's end: a line break where the file lacked its last one,
    /// then the entry's line.
    pub bytes: Vec<u8>,
}

/// How to append.
#[derive(Debug, Clone, Copy, Default)]
pub struct AppendOptions {
    /// Build the line, write nothing.
    pub dry_run: bool,
    /// Sync the file to disk after the write (Pi does not).
    pub sync: bool,
    /// Rewrite a version 1 or 2 session first, as Pi's migration would (atomically), instead of
    /// refusing it.
    pub migrate: bool,
}

/// Rewrites `path` as Pi's migration would when it is a version 1 or 2 session and `opts` asks
/// for it (never on a dry run).
fn migrate_if_asked(path: &Path, opts: AppendOptions) -> anyhow::Result<()> {
    if opts.migrate && !opts.dry_run {
        crate::manager::Opener::default().migrate(true).open(path, None, None).map_err(anyhow::Error::new)?;
    }
    Ok(())
}

/// Where the time and the new ids come from: the clock and random UUIDs, or fixed ones for tests.
pub struct Sources<'s> {
    /// The time of the new entry, as `toISOString` writes it.
    pub now: &'s mut dyn FnMut() -> String,
    /// A candidate id: eight hex characters.
    pub short_id: &'s mut dyn FnMut() -> String,
    /// The id when a hundred candidates were taken: a whole UUID.
    pub long_id: &'s mut dyn FnMut() -> String,
}

/// The session in `bytes` (of `path`), or why nothing is `done` to it: a version 1 or 2 session
/// is refused, since writing to it as Pi does means opening it as Pi does (which rewrites it).
fn loaded<'b>(path: &Path, bytes: &'b [u8], done: &str) -> anyhow::Result<session_core::Session<'b>> {
    let name = path.display().to_string();
    let session = crate::load_session(bytes, &crate::UTC).map_err(|e| {
        let (line, offset) = e.place();
        anyhow::anyhow!(crate::render::error_text(&name, line, offset, &format!("{}: nothing {done}", e.reason())))
    })?;
    if let Some(version) = session.migrated_from {
        anyhow::bail!(
            "{name}: a version {version} session, which Pi rewrites whole when it opens it: nothing {done} (--migrate rewrites it first, as Pi would)"
        );
    }
    Ok(session)
}

/// Appends `change` to the session at `path`, with the clock and random ids.
pub fn append(path: &Path, change: &Change, opts: AppendOptions) -> anyhow::Result<Appended> {
    use session_core::state::Sources as _;
    let system = std::cell::RefCell::new(crate::manager::SystemSources);
    let mut now = || session_core::state::iso_time(system.borrow_mut().now_ms());
    let mut short = || system.borrow_mut().random_uuid()[..8].to_owned();
    let mut long = || system.borrow_mut().random_uuid();
    append_with(path, change, opts, Sources { now: &mut now, short_id: &mut short, long_id: &mut long })
}

/// [`append`] with the time and ids from `sources`.
pub fn append_with(
    path: &Path,
    change: &Change,
    opts: AppendOptions,
    sources: Sources<'_>,
) -> anyhow::Result<Appended> {
    migrate_if_asked(path, opts)?;
    let name = path.display();
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .append(!opts.dry_run)
        .open(path)
        .map_err(|e| anyhow::anyhow!("{name}: cannot open: {e}"))?;
    if !opts.dry_run {
        // Another writer of ours gets a second to finish its line.
        let mut tries = 0;
        while let Err(e) = file.try_lock() {
            tries += 1;
            if tries == 40 {
                anyhow::bail!("{name}: another session-scan is writing to it ({e})");
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(|e| anyhow::anyhow!("{name}: cannot read: {e}"))?;
    let session = loaded(path, &bytes, "appended")?;
    let id = session_core::append::new_entry_id(&session, sources.short_id, sources.long_id);
    let line = session_core::append::change_line(&session, change, &id, &(sources.now)())
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    let mut out = session_core::append::repair_before_append(&bytes).to_vec();
    out.extend_from_slice(&line);
    if opts.dry_run {
        return Ok(Appended { id, bytes: out });
    }
    let length = bytes.len() as u64;
    let written = file.write_all(&out).and_then(|()| if opts.sync { file.sync_data() } else { Ok(()) });
    if let Err(e) = written {
        // What reached the file is cut back off: the file stays as it was.
        let _ = file.set_len(length).and_then(|()| file.seek(std::io::SeekFrom::End(0)).map(|_| ()));
        anyhow::bail!("{name}: cannot write: {e} (the file is as it was)");
    }
    Ok(Appended { id, bytes: out })
}

/// A session made by [`fork`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forked {
    /// The new file (not written on a dry run).
    pub path: std::path::PathBuf,
    /// Its bytes on a dry run (a written one is not gathered in memory).
    pub bytes: Vec<u8>,
}

/// Pi's `/fork` (`createBranchedSession`): a new session in the same folder holding the branch
/// that ends at `leaf` (default: the leaf), its header naming `path` as its parent. The new file is
/// created exclusively (an existing file is never overwritten); the lines Pi would write unchanged
/// are written as they are read, the others printed again; a failed write removes it. A branch
/// without a user or assistant message is refused: Pi writes such a session only once a message is
/// added.
pub fn fork(path: &Path, leaf: Option<&str>, opts: AppendOptions) -> anyhow::Result<Forked> {
    fork_with(path, leaf, opts, &mut crate::manager::SystemSources)
}

/// [`fork`] with the time and ids from `sources`. The pieces are made first as if every line of
/// the branch were what printing it gives (Pi's own lines are); the file is written while the
/// lines are checked, and written again in the rare case that one is not.
pub fn fork_with(
    path: &Path,
    leaf: Option<&str>,
    opts: AppendOptions,
    sources: &mut dyn session_core::state::Sources,
) -> anyhow::Result<Forked> {
    migrate_if_asked(path, opts)?;
    let name = path.display();
    let (bytes, _) =
        crate::read_file(path, crate::ReadStrategy::Auto).map_err(|e| anyhow::anyhow!("{name}: cannot read: {e}"))?;
    let fork = branched(path, &bytes, leaf, sources)?;
    let folder = path.parent().unwrap_or(Path::new("."));
    let target = folder.join(&fork.made.file_name);
    if opts.dry_run {
        let unproven = unproven_lines(&fork.made.pieces, &fork.session);
        let again;
        let pieces = if unproven.is_empty() {
            &fork.made.pieces
        } else {
            again = fork.again(&|i| unproven.binary_search(&i).is_err())?;
            &again.pieces
        };
        let mut out = Vec::new();
        write_parts(&parts_of(pieces, &fork.session, &bytes), &bytes, &mut out)?;
        return Ok(Forked { path: target, bytes: out });
    }
    let parts = parts_of(&fork.made.pieces, &fork.session, &bytes);
    crate::manager::create_new_with(&target, opts.sync, |file| {
        // Both on the pool: the write takes one worker, the check the others, then that one too.
        let (written, unproven) =
            rayon::join(|| write_parts(&parts, &bytes, file), || unproven_lines(&fork.made.pieces, &fork.session));
        written?;
        if unproven.is_empty() {
            return Ok(());
        }
        // A line that printing would change: the file is written again with it printed.
        let made = fork.again(&|i| unproven.binary_search(&i).is_err()).map_err(std::io::Error::other)?;
        file.set_len(0)?;
        write_parts(&parts_of(&made.pieces, &fork.session, &bytes), &bytes, file)
    })?;
    Ok(Forked { path: target, bytes: Vec::new() })
}

/// A session loaded for a fork, and the fork's pieces made as if every line of the branch were
/// what printing gives.
struct Fork<'a> {
    path: &'a Path,
    session: session_core::Session<'a>,
    made: session_core::branched::BranchedPieces,
    leaf: Option<session_core::PropertyValue<'static>>,
    cwd: String,
    parent: String,
    session_id: String,
    timestamp: String,
    /// The ids the labels took, taken again by [`Fork::again`].
    label_ids: Vec<String>,
}

/// Loads the session in `bytes` (of `path`) and makes the pieces of its fork at `leaf`; the new
/// session's id, its time and the labels' ids come from `sources`.
fn branched<'a>(
    path: &'a Path,
    bytes: &'a [u8],
    leaf: Option<&str>,
    sources: &mut dyn session_core::state::Sources,
) -> anyhow::Result<Fork<'a>> {
    let session = loaded(path, bytes, "forked")?;
    // `SessionManager.open`: the header's cwd, resolved (an empty or missing one is the current folder).
    let header_cwd = session.header.get("cwd").and_then(|c| c.as_str()).map(|c| c.to_str_lossy().into_owned());
    let mut fork = Fork {
        path,
        session,
        made: session_core::branched::BranchedPieces::default(),
        leaf: leaf.map(|l| session_core::PropertyValue::Str(session_core::json::JsStr::owned(l.to_owned()))),
        cwd: crate::store::resolve_path(header_cwd.as_deref().unwrap_or("")),
        parent: crate::store::resolve_path(&path.to_string_lossy()),
        session_id: sources.session_id(),
        timestamp: session_core::state::iso_time(sources.now_ms()),
        label_ids: Vec::new(),
    };
    let label_ids = std::cell::RefCell::new(Vec::new());
    let sources = std::cell::RefCell::new(sources);
    let draw = |whole: bool| {
        let uuid = sources.borrow_mut().random_uuid();
        let id = if whole { uuid } else { uuid.chars().take(8).collect() };
        label_ids.borrow_mut().push(id.clone());
        id
    };
    fork.made = fork.pieces(&|_| true, &mut || draw(false), &mut || draw(true))?;
    fork.label_ids = label_ids.into_inner();
    if !fork.made.has_conversation {
        anyhow::bail!(
            "{}: the branch holds no user or assistant message; Pi writes such a session only once one is added: nothing forked",
            path.display()
        );
    }
    Ok(fork)
}

impl Fork<'_> {
    fn pieces(
        &self,
        stringified: &(dyn Fn(usize) -> bool + Sync),
        short_id: &mut dyn FnMut() -> String,
        long_id: &mut dyn FnMut() -> String,
    ) -> anyhow::Result<session_core::branched::BranchedPieces> {
        let from = session_core::branched::BranchedFrom {
            leaf: self.leaf.as_ref(),
            session_id: &self.session_id,
            timestamp: &self.timestamp,
            cwd: &self.cwd,
            parent_session: Some(&self.parent),
            workflow: None,
        };
        session_core::branched::branched_pieces(&self.session, from, stringified, short_id, long_id)
            .map_err(|e| anyhow::anyhow!("{}: {e}", self.path.display()))
    }

    /// The pieces again with only the lines `stringified` names copied; the labels take the ids
    /// they took the first time (how many there are does not depend on which lines are copied).
    fn again(
        &self,
        stringified: &(dyn Fn(usize) -> bool + Sync),
    ) -> anyhow::Result<session_core::branched::BranchedPieces> {
        let ids = std::cell::RefCell::new(self.label_ids.iter().cloned());
        let ran_out = std::cell::Cell::new(false);
        let next = || {
            ids.borrow_mut().next().unwrap_or_else(|| {
                ran_out.set(true);
                String::new()
            })
        };
        let made = self.pieces(stringified, &mut || next(), &mut || next())?;
        if ran_out.get() {
            anyhow::bail!("{}: the fork's labels changed between two makings of it", self.path.display());
        }
        Ok(made)
    }
}

/// The lines of `pieces` copied as they are that are not proven to be what printing gives, in
/// order (checked on the pool).
fn unproven_lines(pieces: &[session_core::branched::Piece], session: &session_core::Session<'_>) -> Vec<usize> {
    use rayon::prelude::*;
    let mut unproven: Vec<usize> = pieces
        .par_iter()
        .filter_map(|p| match p {
            session_core::branched::Piece::Record(i)
                if !session_core::json::canonical::is_stringified(session.records[*i].line) =>
            {
                Some(*i)
            }
            _ => None,
        })
        .collect();
    unproven.sort_unstable();
    unproven
}

/// The parts of a new file: runs of records copied as they are become byte ranges of the old
/// file (each line with its break).
fn parts_of<'p>(
    pieces: &'p [session_core::branched::Piece],
    session: &'p session_core::Session<'p>,
    bytes: &[u8],
) -> Vec<Part<'p>> {
    let mut parts: Vec<Part<'_>> = Vec::new();
    for piece in pieces {
        match piece {
            session_core::branched::Piece::Bytes(b) => parts.push(Part::Bytes(b)),
            session_core::branched::Piece::Record(i) => {
                let e = &session.records[*i];
                let start = e.offset as usize;
                let end = start + e.line.len();
                if bytes.get(end) != Some(&b'\n') {
                    parts.push(Part::Bytes(e.line));
                    parts.push(Part::Bytes(b"\n"));
                    continue;
                }
                match parts.last_mut() {
                    Some(Part::Range(r)) if r.end == start => r.end = end + 1,
                    _ => parts.push(Part::Range(start..end + 1)),
                }
            }
        }
    }
    parts
}

/// A part of a new file: bytes made here, or a range of the old file.
enum Part<'b> {
    Bytes(&'b [u8]),
    Range(std::ops::Range<usize>),
}

/// Writes `parts` to `out`, ranges from `source` (the old file's bytes, which the scan has just
/// read: writing them from memory is quicker here than the kernel's file-to-file copy).
fn write_parts(parts: &[Part<'_>], source: &[u8], out: &mut impl Write) -> std::io::Result<()> {
    for part in parts {
        match part {
            Part::Bytes(b) => out.write_all(b)?,
            Part::Range(r) => out.write_all(&source[r.clone()])?,
        }
    }
    Ok(())
}

/// Pi's `forkFrom` (`pi --fork`): the whole session copied into `target_dir` (the target cwd's
/// folder of the store) under a new header for `target_cwd`, naming `path` as its parent. Created
/// exclusively and written whole; nothing is written to the old file (Pi's loader adds a missing
/// last line break to it).
pub fn fork_to(path: &Path, target_cwd: &str, target_dir: &Path, opts: AppendOptions) -> anyhow::Result<Forked> {
    let mut sources = crate::manager::SystemSources;
    let cwd = crate::store::resolve_path(target_cwd);
    let options = session_core::state::NewSession::default();
    let (target, made) = crate::manager::forked_copy(path, &cwd, target_dir, &options, &mut sources)?;
    if opts.dry_run {
        return Ok(Forked { path: target, bytes: made });
    }
    std::fs::create_dir_all(target_dir).map_err(|e| anyhow::anyhow!("{}: cannot create: {e}", target_dir.display()))?;
    crate::manager::create_new(&target, &made, &mut crate::manager::RealDisk, opts.sync)?;
    Ok(Forked { path: target, bytes: made })
}
