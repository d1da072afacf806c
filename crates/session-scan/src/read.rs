//! Getting a file's bytes: buffered reads for small files, a memory map for large ones.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// How to get a file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadStrategy {
    /// Read files below [`MMAP_THRESHOLD`], map larger ones.
    #[default]
    Auto,
    /// Always map.
    Mmap,
    /// Always read into memory.
    Buffered,
}

/// Files at least this large are mapped under [`ReadStrategy::Auto`]. Below it, a read into a
/// buffer is cheaper than setting up and tearing down a map (see ARCHITECTURE.md).
pub const MMAP_THRESHOLD: u64 = 4 << 20;

/// A file's bytes, owned or mapped.
pub enum FileBytes {
    /// Read into memory.
    Owned(Vec<u8>),
    /// Mapped read-only.
    Mapped(memmap2::Mmap),
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
) -> std::io::Result<(Option<memmap2::Mmap>, f64)> {
    buf.clear();
    let mut file = File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(std::io::Error::other("is a directory"));
    }
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(f64::NAN, |d| d.as_millis() as f64);
    let map = match strategy {
        ReadStrategy::Mmap => true,
        ReadStrategy::Buffered => false,
        ReadStrategy::Auto => meta.len() >= MMAP_THRESHOLD,
    };
    if map
        && meta.len() > 0
        && let Ok(m) = crate::mmap::map(&file)
    {
        return Ok((Some(m), mtime));
    }
    buf.reserve(meta.len() as usize + 1);
    file.read_to_end(buf)?;
    Ok((None, mtime))
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
        if path.is_dir() {
            walk(&path, out, depth + 1);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
}
