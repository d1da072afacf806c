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

/// The time now as `Date.prototype.toISOString` writes it: `2026-01-05T14:03:07.123Z`.
pub fn iso_now() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// A random UUID (version 4), as `crypto.randomUUID()` gives.
pub fn random_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Appends `change` to the session at `path`, with the clock and random ids.
pub fn append(path: &Path, change: &Change, opts: AppendOptions) -> anyhow::Result<Appended> {
    let mut now = iso_now;
    let mut short = || random_uuid()[..8].to_owned();
    let mut long = random_uuid;
    append_with(path, change, opts, Sources { now: &mut now, short_id: &mut short, long_id: &mut long })
}

/// [`append`] with the time and ids from `sources`.
pub fn append_with(
    path: &Path,
    change: &Change,
    opts: AppendOptions,
    sources: Sources<'_>,
) -> anyhow::Result<Appended> {
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
    let session = session_core::Session::load(&bytes).map_err(|e| {
        let (line, offset) = e.place();
        anyhow::anyhow!(crate::render::error_text(
            &name.to_string(),
            line,
            offset,
            &format!("{}: nothing appended", e.reason())
        ))
    })?;
    if let Some(version) = session.migrated_from {
        anyhow::bail!(
            "{name}: a version {version} session, which Pi rewrites whole when it opens it: nothing appended (open it in Pi first)"
        );
    }
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
