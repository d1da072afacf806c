//! Getting a file's bytes: buffered reads for small files, a memory map for large ones.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// How to get a file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadStrategy {
    /// Read smaller files, map larger ones (in a pass over lines: files from
    /// [`parallel_lines_from`], and the rest of a streamed file from a line of `MAP_LINES_FROM`
    /// bytes; [`WHOLE_FILE_MMAP_THRESHOLD`] for a file read whole): the default. A map that
    /// shrinks under us is detected (`Mapped::truncated`) and the file read again.
    #[default]
    Auto,
    /// Map whenever it is worth it at all: in a pass over lines, files from [`MMAP_THRESHOLD`].
    Mmap,
    /// Always read into memory (`--no-mmap`).
    Buffered,
}

/// Files at least this large are mapped under [`ReadStrategy::Mmap`] in a pass over their lines
/// ([`fold_lines`]); [`ReadStrategy::Auto`] streams every file under [`parallel_lines_from`], as
/// the bytes the kernel copies into the buffer are in the core's cache when they are scanned, and
/// a map's are not (see ARCHITECTURE.md).
pub const MMAP_THRESHOLD: u64 = 4 << 20;

/// Files at least this large are mapped under [`ReadStrategy::Auto`] when they are read whole
/// ([`read_file_into`]). A whole file is copied into a buffer too large to stay in the core's
/// cache, and that copy costs more than a map: `context --json` on the bench store 1.08x faster
/// mapping from 1 MiB than from 4 MiB, and 1.34x from 128 KiB; but loading and rebuilding in
/// process (no output) was 10% slower from 128 KiB and the same from 1 MiB.
pub const WHOLE_FILE_MMAP_THRESHOLD: u64 = 1 << 20;

/// A file's bytes, owned or mapped.
pub enum FileBytes {
    /// Read into memory.
    Owned(Vec<u8>),
    /// Mapped read-only.
    Mapped(crate::mmap::Mapped),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Owned(v) => v,
            FileBytes::Mapped(m) => m,
        }
    }
}

/// The bytes of a file and its modification time in ms since the epoch.
pub fn read_file(path: &Path, strategy: ReadStrategy) -> std::io::Result<(FileBytes, f64)> {
    let mut buf = Vec::new();
    let (map, mtime) = read_file_into(path, strategy, &mut buf)?;
    Ok((map.map_or(FileBytes::Owned(buf), FileBytes::Mapped), mtime))
}

/// Like [`read_file`], but reads into `buf` (reused across files by one worker, which saves
/// the page faults of a fresh allocation) unless the file is mapped, in which case the map is
/// returned and `buf` is left empty.
pub fn read_file_into(
    path: &Path,
    strategy: ReadStrategy,
    buf: &mut Vec<u8>,
) -> std::io::Result<(Option<crate::mmap::Mapped>, f64)> {
    buf.clear();
    let (mut file, meta) = open_regular(path)?;
    let mtime = mtime_ms(&meta);
    let map = match strategy {
        ReadStrategy::Mmap => true,
        ReadStrategy::Buffered => false,
        ReadStrategy::Auto => meta.len() >= WHOLE_FILE_MMAP_THRESHOLD,
    };
    if map
        && meta.len() > 0
        && let Ok(m) = crate::mmap::map(&file)
    {
        return Ok((Some(m), mtime));
    }
    buf.reserve(meta.len() as usize + 1);
    // The bytes up to the first cache line boundary in one read, so that the rest, which is
    // nearly all of it, goes to an aligned destination ([`read_start`]).
    let lead = read_start(buf, 0);
    if lead > 0 {
        (&mut file).take(lead as u64).read_to_end(buf)?;
    }
    file.read_to_end(buf)?;
    Ok((None, mtime))
}

/// A Unix time given as seconds and nanoseconds, in ms with fractions (as `stats.mtimeMs`).
pub(crate) fn unix_time_ms(secs: i64, nsecs: i64) -> f64 {
    secs as f64 * 1e3 + nsecs as f64 / 1e6
}

/// A file's `stats.mtimeMs` as Node computes it: seconds × 1000 plus nanoseconds / 10⁶, in doubles
/// (`NaN` where the system keeps no mtime). Sorting compares these; `modified` rounds them.
pub fn mtime_ms(meta: &std::fs::Metadata) -> f64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        unix_time_ms(meta.mtime(), meta.mtime_nsec())
    }
    #[cfg(not(unix))]
    match meta.modified().map(|t| t.duration_since(std::time::UNIX_EPOCH)) {
        Ok(Ok(d)) => d.as_secs() as f64 * 1e3 + f64::from(d.subsec_nanos()) / 1e6,
        Ok(Err(e)) => -(e.duration().as_secs() as f64 * 1e3 + f64::from(e.duration().subsec_nanos()) / 1e6),
        Err(_) => f64::NAN,
    }
}

/// The error [`open_regular`] gives for a FIFO, a socket or a device.
pub const NOT_REGULAR: &str = "not a regular file";

/// Opens a file for reading, refusing anything but a regular file. The open does not block, so
/// a FIFO or a device named `*.jsonl` is reported instead of waiting forever for a writer.
pub fn open_regular(path: &Path) -> std::io::Result<(File, std::fs::Metadata)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(std::io::Error::other("is a directory"));
    }
    if !meta.is_file() {
        return Err(std::io::Error::other(NOT_REGULAR));
    }
    Ok((file, meta))
}

/// Reads the whole of a regular file: a FIFO or a device at `path` is refused, as by
/// [`open_regular`], instead of waiting for a writer or reading without end.
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let (mut file, meta) = open_regular(path)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Expands the arguments: files as given, directories recursively to their `*.jsonl` files in
/// byte order of their paths.
pub fn expand_paths(args: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for arg in args {
        if arg.is_dir() {
            let mut found = Vec::new();
            walk(arg, &mut found, 0);
            found.sort_by(|a, b| a.as_os_str().as_encoded_bytes().cmp(b.as_os_str().as_encoded_bytes()));
            out.extend(found);
        } else {
            out.push(arg.clone());
        }
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>, depth: usize) {
    // Symlink loops end here; real stores are two levels deep.
    if depth > 32 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for entry in rd.flatten() {
        let path = entry.path();
        // The listing gives each entry's type: only a symlink needs a `stat` to say what it
        // points to (a `stat` for every file, on one core before the first read: usage daily
        // over the bench store 1.030x faster without).
        let is_dir = match entry.file_type() {
            Ok(t) if t.is_symlink() => path.is_dir(),
            Ok(t) => t.is_dir(),
            Err(_) => path.is_dir(),
        };
        if is_dir {
            walk(&path, out, depth + 1);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
}

mod parallel;
mod stream;
pub use parallel::*;
pub use stream::*;

#[cfg(test)]
mod tests;
