//! Getting a file's bytes: buffered reads for small files, a memory map for large ones.

use session_core::json::ScanOptions;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// How to get a file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadStrategy {
    /// Read smaller files, map larger ones (in a pass over lines: files from
    /// [`parallel_lines_from`], and the rest of a streamed file from a line of `MAP_LINES_FROM`
    /// bytes; [`WHOLE_FILE_MMAP_THRESHOLD`] for a file read whole): the default. A map that
    /// shrinks under us is detected ([`crate::mmap::Mapped::truncated`]) and the file read again.
    #[default]
    Auto,
    /// Map whenever it is worth it at all: in a pass over lines, files from [`MMAP_THRESHOLD`].
    Mmap,
    /// Always read into memory (`--no-mmap`).
    Buffered,
}

static DEFAULT: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Sets the strategy the commands use (the CLI's `--no-mmap` picks [`ReadStrategy::Buffered`]).
pub fn set_default_strategy(s: ReadStrategy) {
    let v = match s {
        ReadStrategy::Auto => 0,
        ReadStrategy::Buffered => 1,
        ReadStrategy::Mmap => 2,
    };
    DEFAULT.store(v, std::sync::atomic::Ordering::Relaxed);
}

/// The strategy the commands use.
pub fn default_strategy() -> ReadStrategy {
    match DEFAULT.load(std::sync::atomic::Ordering::Relaxed) {
        1 => ReadStrategy::Buffered,
        2 => ReadStrategy::Mmap,
        _ => ReadStrategy::Auto,
    }
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

/// Streams the lines of a file through `buf` (reused across files by one worker) under `rule`,
/// calling `f` for each with absolute offsets and line numbers; `f` returns false to stop.
/// Memory is the buffer: one chunk plus the longest line. Returns the file's size and mtime (ms).
pub fn for_each_line(
    path: &Path,
    rule: session_core::lines::LineRule,
    buf: &mut Vec<u8>,
    f: impl FnMut(session_core::lines::Line<'_>) -> bool,
) -> std::io::Result<(u64, f64)> {
    for_each_line_chunked(path, rule, buf, stream_chunk(), f)
}

thread_local! {
    /// One read buffer per thread, kept from file to file.
    static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's read buffer, kept from file to file for as long as the thread
/// lives. A rayon `map_init` state is made again for every piece of work a thread takes, so a
/// buffer kept there was allocated, faulted in and zeroed afresh many times per pass (19 MB
/// zeroed in one listing of the bench store); this one is grown once per thread. A nested call
/// (a thread that takes other work while reading a file in rounds) gets a buffer of its own.
pub fn with_thread_buffer<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    BUFFER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => f(&mut buf),
        Err(_) => f(&mut Vec::new()),
    })
}

/// How much a stream reads at a time, by the L2 cache each CPU has to itself ([`l2_share`]): a
/// quarter of it, up to 1 MiB, when it is 2 MiB or more, else 64 KiB. A chunk must still be in
/// L2 when its lines are scanned, and each read is a system call.
/// Measured on the bench store's picker listing: on a Zen 4 VM (1 MiB of L2 per core, session 9)
/// 64 KiB chunks were 1.050x faster than 1 MiB ones, 128 KiB 1.035x and 256 KiB 1.025x; on an Intel
/// Xeon VM (2 MiB, session 21) 1 MiB chunks took 0.92-0.95x the CPU time of 64 KiB ones, less of
/// it both in the process (user time 110 against 124 ms a run) and in the kernel (the full
/// listing 0.92x, `usage` 0.98x), and 512 KiB the same as 1 MiB.
fn stream_chunk() -> u64 {
    static CHUNK: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *CHUNK.get_or_init(|| chunk_for_l2_share(l2_share()))
}

/// [`stream_chunk`]'s rule, by the L2 bytes each CPU has to itself (when known).
fn chunk_for_l2_share(l2_share: Option<u64>) -> u64 {
    const SMALL: u64 = 64 << 10;
    match l2_share {
        Some(bytes) if bytes >= 2 << 20 => (bytes / 4).min(1 << 20),
        _ => SMALL,
    }
}

/// The L2 cache bytes each CPU has to itself: CPU 0's level-2 data or unified cache, divided by
/// the CPUs that share it (Linux's `/sys/devices/system/cpu`); `None` where that is not known.
fn l2_share() -> Option<u64> {
    let cpu0 = Path::new("/sys/devices/system/cpu/cpu0/cache");
    (0..8).find_map(|index| {
        let dir = cpu0.join(format!("index{index}"));
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
        if read("level")?.trim() != "2" || read("type")?.trim() == "Instruction" {
            return None;
        }
        let size = cache_size_bytes(&read("size")?)?;
        let sharing = cpu_list_len(&read("shared_cpu_list")?)?;
        Some(size / sharing.max(1))
    })
}

/// A cache size as sysfs writes it (`2048K`, `1M`, `512`): bytes.
fn cache_size_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, scale) = match text.as_bytes().last()? {
        b'K' => (&text[..text.len() - 1], 1 << 10),
        b'M' => (&text[..text.len() - 1], 1 << 20),
        b'G' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

/// How many CPUs a list as sysfs writes it holds (`0`, `0-1`, `0,64`, `0-3,8-11`).
fn cpu_list_len(text: &str) -> Option<u64> {
    text.trim().split(',').try_fold(0u64, |n, range| {
        let (first, last) = range.split_once('-').unwrap_or((range, range));
        let (first, last) = (first.parse::<u64>().ok()?, last.parse::<u64>().ok()?);
        Some(n + last.checked_sub(first)? + 1)
    })
}

/// The longest line a stream holds in memory; longer ones are skipped (as Pi would skip a line it
/// cannot parse), so that memory stays bounded whatever a file holds.
pub const MAX_STREAMED_LINE: usize = (1 << 30) + (64 << 10);

/// A reused buffer that grew past this for one long line is given back once the file is read.
const MAX_KEPT_BUFFER: usize = 64 << 20;

/// [`for_each_line`] reading `chunk` bytes at a time (tests use tiny chunks).
pub fn for_each_line_chunked(
    path: &Path,
    rule: session_core::lines::LineRule,
    buf: &mut Vec<u8>,
    chunk: u64,
    mut f: impl FnMut(session_core::lines::Line<'_>) -> bool,
) -> std::io::Result<(u64, f64)> {
    let opened = open_regular(path)?;
    let streamed = stream_opened(opened, rule, buf, chunk, None, StreamStart::default(), |line, _| f(line))?;
    Ok(streamed.done())
}

/// An open file and its metadata ([`open_regular`]).
type Opened = (File, std::fs::Metadata);

/// [`for_each_line`] on a file already opened, each line with its scan (made in the same pass
/// as the split, [`session_core::lines::ScannedLines`]).
fn for_each_scanned_line_opened(
    opened: Opened,
    rule: session_core::lines::LineRule,
    buf: &mut Vec<u8>,
    options: ScanOptions,
    f: impl FnMut(session_core::lines::Line<'_>, session_core::json::LineScan<'_>) -> bool,
) -> std::io::Result<(u64, f64)> {
    let streamed = stream_opened(opened, rule, buf, stream_chunk(), Some(options), StreamStart::default(), f)?;
    Ok(streamed.done())
}

/// Where a stream starts: the file's position (already sought to) and the lines before it; and
/// whether a line of [`MAP_LINES_FROM`] bytes or more is read from a map of the file (set only by
/// a scanned pass under [`ReadStrategy::Auto`], which decides the strategy once per file).
#[derive(Debug, Clone, Copy, Default)]
struct StreamStart {
    offset: u64,
    lines_before: u64,
    map_long_lines: bool,
}

/// How a stream ended.
enum Streamed {
    /// Every line was handed over (or `f` stopped): the file's size and mtime (ms).
    Done(u64, f64),
    /// The file shrank while a long line was read from its map: what was handed over may hold
    /// zeros the file never had, and the pass starts over from a fresh state, without maps.
    Restart,
}

impl Streamed {
    /// The size and mtime of a stream that maps no lines (and so never restarts).
    fn done(self) -> (u64, f64) {
        match self {
            Streamed::Done(size, mtime) => (size, mtime),
            Streamed::Restart => (0, f64::NAN),
        }
    }
}

/// When a streamed line has reached this length in the buffer without its terminator, the file
/// from that line on is read from a map instead (when the scan is asked for and the read strategy
/// is [`ReadStrategy::Auto`]): past the size of the core's cache, copying a line into the buffer
/// gains nothing and costs the copy, and a file with one such line (an image) tends to have more.
/// Ten files of 30 MB holding 10 MB lines listed in 19.2 ms mapped against 32.7 ms streamed
/// (session 16), which kept every file of 4 MiB or more mapped until this switch (session 17:
/// 36.4 ms with the switch against 34.9 ms with those files mapped whole, 15 interleaved runs).
const MAP_LINES_FROM: usize = 1 << 20;

#[cfg(test)]
thread_local! {
    /// How many streams on this thread went on from a map at a long line.
    static LONG_LINE_MAPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Streams lines to `f`, scanned with `scan` when it is given (else with no scan).
fn stream_opened(
    opened: Opened,
    rule: session_core::lines::LineRule,
    buf: &mut Vec<u8>,
    chunk: u64,
    scan: Option<ScanOptions>,
    start: StreamStart,
    f: impl FnMut(session_core::lines::Line<'_>, session_core::json::LineScan<'_>) -> bool,
) -> std::io::Result<Streamed> {
    let result = stream_lines(opened, rule, buf, chunk, scan, start, f);
    if buf.capacity() > MAX_KEPT_BUFFER {
        *buf = Vec::new();
    }
    result
}

fn stream_lines(
    (mut file, meta): Opened,
    rule: session_core::lines::LineRule,
    buf: &mut Vec<u8>,
    chunk: u64,
    scan: Option<ScanOptions>,
    start: StreamStart,
    mut f: impl FnMut(session_core::lines::Line<'_>, session_core::json::LineScan<'_>) -> bool,
) -> std::io::Result<Streamed> {
    use session_core::lines::{LineRule, Lines, ScannedLines};
    let chunk = usize::try_from(chunk.max(1)).unwrap_or(usize::MAX);
    let mtime = mtime_ms(&meta);
    // `buf[head..head + len]` holds the bytes not yet handed over; the rest of `buf` is room
    // already made. `head` puts each read's destination on a cache line ([`read_start`]).
    let mut head = read_start(buf, 0);
    let mut len = 0usize;
    let (mut base, mut lines_before, mut eof) = (start.offset, start.lines_before, false);
    // Bytes of `buf` already searched for a terminator (so a long line is searched once).
    let mut searched = 0usize;
    loop {
        if !eof {
            let (n, at_end) = fill(&mut file, buf, head + len, chunk)?;
            len += n;
            eof = at_end;
        }
        // Cut after the last terminator; a CR at the very end may be the first half of CRLF.
        let cut = if eof {
            len
        } else {
            let held = &buf[head..head + len];
            let end = if rule == LineRule::Readline && held.last() == Some(&b'\r') { len - 1 } else { len };
            let from = searched.min(end);
            let found = match rule {
                LineRule::Newline => memchr::memrchr(b'\n', &held[from..end]),
                LineRule::Readline => memchr::memrchr2(b'\n', b'\r', &held[from..end]),
            };
            searched = end;
            found.map_or(0, |p| from + p + 1)
        };
        if cut == 0
            && start.map_long_lines
            && len >= MAP_LINES_FROM
            && let Some(options) = scan
            && let Ok(map) = crate::mmap::map(&file)
        {
            // The rest of the file from the map: a file with one such line tends to have more
            // (images), and each would be mapped again.
            #[cfg(test)]
            LONG_LINE_MAPS.with(|n| n.set(n.get() + 1));
            let start = StreamStart { offset: base, lines_before, map_long_lines: false };
            scan_map_from(&map, start, rule, options, &mut f);
            if map.truncated() {
                return Ok(Streamed::Restart);
            }
            return Ok(Streamed::Done(meta.len(), mtime));
        }
        if cut == 0 && len > MAX_STREAMED_LINE {
            // Too long to hold: skip to the next terminator, counting it as one unparsable line.
            lines_before += 1;
            base += len as u64;
            searched = 0;
            head = read_start(buf, 0);
            loop {
                let (n, at_end) = fill(&mut file, buf, head, chunk)?;
                let read = &buf[head..head + n];
                let next = match rule {
                    LineRule::Newline => memchr::memchr(b'\n', read),
                    LineRule::Readline => memchr::memchr2(b'\n', b'\r', read),
                };
                if let Some(p) = next {
                    let p = if read[p] == b'\r' && read.get(p + 1) == Some(&b'\n') { p + 2 } else { p + 1 };
                    len = n - p;
                    head = carry(buf, head + p..head + n);
                    base += p as u64;
                    eof = at_end;
                    break;
                }
                base += n as u64;
                if at_end {
                    return Ok(Streamed::Done(meta.len(), mtime));
                }
            }
            continue;
        }
        if cut > 0 {
            let mut last = 0;
            let mut hand_over = |mut line: session_core::lines::Line<'_>, scanned: session_core::json::LineScan<'_>| {
                last = line.number;
                line.offset += base;
                line.number += lines_before;
                f(line, scanned)
            };
            let complete = &buf[head..head + cut];
            let stopped = match scan {
                None => !Lines::new(complete, rule).all(|line| hand_over(line, None)),
                Some(options) => {
                    let mut lines = ScannedLines::new(complete, rule, options);
                    let mut stopped = false;
                    while let Some((line, scanned)) = lines.next() {
                        if !hand_over(line, scanned) {
                            stopped = true;
                            break;
                        }
                    }
                    stopped
                }
            };
            if stopped {
                return Ok(Streamed::Done(meta.len(), mtime));
            }
            lines_before += last;
            head = carry(buf, head + cut..head + len);
            len -= cut;
            base += cut as u64;
            searched = searched.saturating_sub(cut);
        }
        if eof {
            return Ok(Streamed::Done(meta.len(), mtime));
        }
    }
}

/// Where to keep `kept` bytes at the start of `buf` so that the next read, after them, writes
/// from a 64-byte boundary (when `buf` is not moved by growing in between). The kernel's copy to
/// a destination 1 to 31 bytes past a cache line's start ran at a third of its speed on Zen 3
/// (system time of reading the bench store's files in 64 KiB reads: 180-230 ms at those offsets,
/// 60-80 ms at 0 and at 32-63); a buffer that the allocator maps for itself starts 16 bytes past a
/// page, and a line carried over ends anywhere.
pub fn read_start(buf: &[u8], kept: usize) -> usize {
    (CACHE_LINE - (buf.as_ptr() as usize).wrapping_add(kept) % CACHE_LINE) % CACHE_LINE
}

const CACHE_LINE: usize = 64;

/// Moves the bytes of `buf[range]` to the start of `buf` as [`read_start`] places them; returns
/// where they start now.
fn carry(buf: &mut Vec<u8>, range: std::ops::Range<usize>) -> usize {
    if buf.len() < range.len() + CACHE_LINE {
        buf.resize(range.len() + CACHE_LINE, 0);
    }
    let at = read_start(buf, range.len());
    buf.copy_within(range, at);
    at
}

/// Reads up to `limit` bytes of `file` into `buf` after its first `at` bytes, and says whether
/// the file ended. Where `buf` already has the room (a reused buffer, after its first files), one
/// read fills it as far as the file goes; `Take::read_to_end`, used alone before, began every
/// chunk with small reads and doubled them (14 reads for a 112 KB file). Where it has not, and
/// the bytes kept are less than a chunk, the room is added zeroed (each byte of a worker's buffer
/// is zeroed once: the listing of the bench store used to zero 25 MB after short last reads).
/// Where the bytes kept are more (a long line being gathered), the room is made by that
/// `read_to_end` (no zeroing of a buffer growing for a long line), and whatever is left of it
/// zeroed once.
fn fill(file: &mut File, buf: &mut Vec<u8>, at: usize, limit: usize) -> std::io::Result<(usize, bool)> {
    if buf.len() < at {
        // Only before a stream's first read, into a buffer not grown yet.
        buf.resize(at, 0);
    }
    if buf.len() < at + limit && at <= limit {
        buf.resize(at + limit, 0);
    }
    if buf.len() < at + limit {
        buf.truncate(at);
        let got = file.take(limit as u64).read_to_end(buf)?;
        buf.resize(at + limit, 0);
        return Ok((got, got < limit));
    }
    let mut got = 0;
    while got < limit {
        match file.read(&mut buf[at + got..at + limit]) {
            Ok(0) => return Ok((got, true)),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((got, false))
}

/// Files of this size or more are mapped for a pass over their lines (when the read strategy
/// allows), and their lines are scanned in parallel, a group at a time, then handed over in
/// order: one large session uses all cores. Pages already read are given back, so memory stays
/// at one group.
pub const PARALLEL_LINES_MIN: u64 = 8 << 20;

/// In a pass over many files ([`parallel_lines_from`]), only files of this size or more have
/// their lines scanned on all cores; smaller ones are streamed, one core each, as the other files
/// keep the other cores busy.
pub const PARALLEL_LINES_MIN_AMONG_MANY: u64 = 64 << 20;

/// A pass over at least this many files per thread counts as one over many files.
const MANY_FILES_PER_THREAD: usize = 4;

/// From what size a file's lines are scanned on all cores, in a pass over `files` files: from
/// [`PARALLEL_LINES_MIN`] when the files are too few to keep every core busy by themselves, else
/// from [`PARALLEL_LINES_MIN_AMONG_MANY`]. Among many files the mapped rounds of a mid-sized file
/// cost more than they give: listing the bench store (949 files, four of 11-30 MB), picker fields,
/// 101.9 against 110.0 ms and 93.1 against 99.4 ms (31 interleaved runs each way round); alone,
/// those four files list in 13.5 ms in rounds and 16.5 ms streamed, and one of 30 MB in 9.2 and
/// 11.7 ms.
pub fn parallel_lines_from(files: usize) -> u64 {
    if files >= rayon::current_num_threads().max(1) * MANY_FILES_PER_THREAD {
        PARALLEL_LINES_MIN_AMONG_MANY
    } else {
        PARALLEL_LINES_MIN
    }
}

/// In a file of more than [`LONG_LINES_FROM`] bytes, a round's cut searches this far for the next
/// line start. A line that runs on further sends the rest of the file to the stream, whose line
/// limit bounds memory: a mapped file's pages count as resident while a line is searched, and a
/// line can be as long as the file.
const LONG_LINE: usize = 64 << 20;

/// Files up to this size are read in rounds to their end, whatever their lines (the pages of
/// one line are then at most this much).
const LONG_LINES_FROM: u64 = 1 << 30;

/// A round scans this many bytes of a mapped file, in pieces on all cores.
const ROUND_BYTES: usize = 4 << 20;

/// Pieces per round, per thread.
const PIECES_PER_THREAD: usize = 2;

/// A piece holds at most this many lines' scans (168 bytes each and their lists, about 500 for a
/// message line), so that memory stays bounded when lines are tiny; a piece that reaches it ends
/// the round early.
const PIECE_LINES: usize = 2048;

/// What [`for_each_scanned_line`] did.
enum ScannedPass {
    /// Every line was handed over (or `step` stopped): the file's size and mtime (ms).
    Done(u64, f64),
    /// The file is outside the size range, could not be mapped, or shrank while mapped: stream
    /// it (already open) with a fresh state.
    Stream(Opened),
}

/// One line of a piece: the line (numbered from 1 within the piece), whether it is blank or
/// JSON, and its scan.
type PieceLine<'a> =
    (session_core::lines::Line<'a>, Option<Result<(), session_core::json::ScanError>>, session_core::json::Scanned);

/// The lines of one piece, split and scanned by one worker; kept from round to round, so that
/// their storage is reused.
#[derive(Default)]
struct Piece<'a> {
    lines: Vec<PieceLine<'a>>,
    /// How many of `lines` this round filled.
    filled: usize,
    /// Where the piece's last line ended (terminator included), relative to its start.
    end: usize,
    /// The piece stopped at [`PIECE_LINES`] before its end.
    cut_short: bool,
}

impl<'a> Piece<'a> {
    /// Splits and scans `bytes` (a stretch that starts at a line start), at most
    /// [`PIECE_LINES`] lines.
    fn scan(&mut self, bytes: &'a [u8], rule: session_core::lines::LineRule, options: ScanOptions) {
        let mut lines = session_core::lines::ScannedLines::new(bytes, rule, options);
        self.filled = 0;
        self.end = 0;
        while self.filled < PIECE_LINES {
            if self.filled == self.lines.len() {
                let empty = session_core::lines::Line { bytes: &[], offset: 0, number: 0, terminated: false };
                self.lines.push((empty, None, session_core::json::Scanned::default()));
            }
            let slot = &mut self.lines[self.filled];
            let Some((line, outcome)) = lines.next_into(&mut slot.2) else { break };
            (slot.0, slot.1) = (line, outcome);
            self.filled += 1;
            self.end = lines.position();
        }
        self.cut_short = self.end < bytes.len();
    }
}

/// The first line start at or after `at` in `bytes` (after a `\n`, which ends a line under
/// either rule), else the end; `None` when none is within `limit` bytes and the end is further.
fn line_start_within(bytes: &[u8], at: usize, limit: usize) -> Option<usize> {
    if at == 0 || at >= bytes.len() {
        return Some(at.min(bytes.len()));
    }
    let window_end = at.saturating_add(limit).min(bytes.len());
    match memchr::memchr(b'\n', &bytes[at - 1..window_end]) {
        Some(p) => Some(at + p),
        None if window_end == bytes.len() => Some(bytes.len()),
        None => None,
    }
}

/// Opens a file and calls `step` with each line under `rule` and its scan, in order, until
/// `step` returns false. A file under `parallel_from` bytes is streamed through `buf`, a line of
/// [`MAP_LINES_FROM`] bytes or more read from a map (under [`ReadStrategy::Mmap`], one of
/// [`MMAP_THRESHOLD`] or more is mapped and scanned on this thread, [`scan_mapped_here`]; under
/// [`ReadStrategy::Buffered`] every one goes back to the caller's stream). A larger file is
/// mapped and goes in rounds: each round's bytes are cut into pieces at line starts, and the
/// pieces are split into lines and scanned on all cores, then handed over in order. From a line
/// longer than `long_line(size)` on, the rest of the file is streamed through `buf`.
fn for_each_scanned_line(
    path: &Path,
    rule: session_core::lines::LineRule,
    options: ScanOptions,
    buf: &mut Vec<u8>,
    parallel_from: u64,
    long_line: impl Fn(u64) -> usize,
    mut step: impl FnMut(session_core::lines::Line<'_>, session_core::json::LineScan<'_>) -> bool,
) -> std::io::Result<ScannedPass> {
    use rayon::prelude::*;
    let (mut file, meta) = open_regular(path)?;
    match default_strategy() {
        ReadStrategy::Buffered => return Ok(ScannedPass::Stream((file, meta))),
        ReadStrategy::Mmap if meta.len() < MMAP_THRESHOLD => return Ok(ScannedPass::Stream((file, meta))),
        ReadStrategy::Mmap if meta.len() < parallel_from => {
            return scan_mapped_here(path, (file, meta), rule, options, step);
        }
        ReadStrategy::Auto if meta.len() < parallel_from => {
            // Copied through the buffer, whose bytes the scan then finds in the core's cache:
            // from a map it would read them from memory (see ARCHITECTURE.md, "read").
            let start = StreamStart { map_long_lines: true, ..StreamStart::default() };
            return match stream_opened((file, meta), rule, buf, stream_chunk(), Some(options), start, step)? {
                Streamed::Done(size, mtime) => Ok(ScannedPass::Done(size, mtime)),
                Streamed::Restart => open_regular(path).map(ScannedPass::Stream),
            };
        }
        _ => {}
    }
    let Ok(map) = crate::mmap::map(&file) else { return Ok(ScannedPass::Stream((file, meta))) };
    let (mtime, meta_len) = (mtime_ms(&meta), meta.len());
    let long_line = long_line(meta_len);
    let bytes: &[u8] = &map;
    let pieces = rayon::current_num_threads().max(1) * PIECES_PER_THREAD;
    let (mut pos, mut lines_before, mut released) = (0usize, 0u64, 0usize);
    // Shrinks when lines are so short that pieces end early, so that rounds stay parallel.
    let mut piece_bytes = ROUND_BYTES / pieces;
    let mut scanned: Vec<Piece<'_>> = Vec::new();
    'rounds: while pos < bytes.len() {
        let mut starts = vec![pos];
        for k in 1..=pieces {
            let from = pos.saturating_add(piece_bytes * k).max(*starts.last().unwrap_or(&pos));
            let Some(next) = line_start_within(bytes, from, long_line) else { break };
            starts.push(next);
        }
        starts.dedup();
        if starts.len() == 1 {
            // A line of more than `long_line` bytes from here: the rest goes to the stream.
            let truncated = map.truncated();
            drop(map);
            if truncated {
                return open_regular(path).map(ScannedPass::Stream);
            }
            use std::io::{Seek, SeekFrom};
            file.seek(SeekFrom::Start(pos as u64))?;
            let start = StreamStart { offset: pos as u64, lines_before, map_long_lines: false };
            stream_opened((file, meta), rule, buf, stream_chunk(), Some(options), start, step)?;
            return Ok(ScannedPass::Done(meta_len, mtime));
        }
        if scanned.len() < starts.len() - 1 {
            scanned.resize_with(starts.len() - 1, Piece::default);
        }
        scanned.par_iter_mut().zip(starts.par_windows(2)).for_each(|(piece, w)| {
            piece.scan(&bytes[w[0]..w[1]], rule, options);
        });
        let mut cut_short = false;
        for (piece, start) in scanned.iter().zip(&starts).take(starts.len() - 1) {
            for (line, outcome, scan) in &piece.lines[..piece.filled] {
                let mut line = *line;
                line.offset += *start as u64;
                line.number += lines_before;
                if !step(line, outcome.map(|o| o.map(|()| scan))) {
                    break 'rounds;
                }
            }
            lines_before += piece.filled as u64;
            pos = start + piece.end;
            if piece.cut_short {
                // The rest of this piece, and the pieces after it, go to the next round.
                cut_short = true;
                piece_bytes = (piece.end * 3 / 4).max(1);
                break;
            }
        }
        if !cut_short {
            piece_bytes = (piece_bytes + piece_bytes / 8 + 1).min(ROUND_BYTES / pieces);
        }
        map.release(released..pos);
        released = pos;
    }
    finish_mapped(map, path, &meta)
}

/// The end of a pass over a mapped file: done, or, when the file shrank while mapped (the bytes
/// read may hold zeros it never had), opened again for the stream.
fn finish_mapped(map: crate::mmap::Mapped, path: &Path, meta: &std::fs::Metadata) -> std::io::Result<ScannedPass> {
    if map.truncated() {
        drop(map);
        return open_regular(path).map(ScannedPass::Stream);
    }
    Ok(ScannedPass::Done(meta.len(), mtime_ms(meta)))
}

/// While a file is scanned on one core from its map, the pages read are given back each time the
/// scan has passed this many bytes more.
const RELEASE_EVERY: usize = 4 << 20;

/// [`for_each_scanned_line`] for a file too small to be worth rounds on all cores, but large
/// enough to map: the map is split and scanned in one pass on this thread (no copy into a
/// buffer), with pages given back as the scan moves on.
fn scan_mapped_here(
    path: &Path,
    (file, meta): Opened,
    rule: session_core::lines::LineRule,
    options: ScanOptions,
    step: impl FnMut(session_core::lines::Line<'_>, session_core::json::LineScan<'_>) -> bool,
) -> std::io::Result<ScannedPass> {
    let Ok(map) = crate::mmap::map(&file) else { return Ok(ScannedPass::Stream((file, meta))) };
    scan_map_from(&map, StreamStart::default(), rule, options, step);
    finish_mapped(map, path, &meta)
}

/// Splits and scans the lines of `map` from `start` on this thread, handing each to `step` (with
/// offsets in the file, and numbers after `start.lines_before`) until it returns false; the pages
/// read are given back every [`RELEASE_EVERY`] bytes. The caller checks the map for truncation.
fn scan_map_from(
    map: &crate::mmap::Mapped,
    start: StreamStart,
    rule: session_core::lines::LineRule,
    options: ScanOptions,
    mut step: impl FnMut(session_core::lines::Line<'_>, session_core::json::LineScan<'_>) -> bool,
) {
    let from = usize::try_from(start.offset).unwrap_or(usize::MAX).min(map.len());
    let mut lines = session_core::lines::ScannedLines::new(&map[from..], rule, options);
    let mut released = from;
    while let Some((mut line, scanned)) = lines.next() {
        line.offset += from as u64;
        line.number += start.lines_before;
        let at = line.offset as usize;
        if !step(line, scanned) {
            break;
        }
        if at - released >= RELEASE_EVERY {
            map.release(released..at);
            released = at;
        }
    }
    // Its scan goes back to the thread (`ScannedLines`' drop) before the map is given up.
}

/// One pass over a file's lines with a state made by `init` and fed by `step` (false to stop):
/// [`for_each_scanned_line`] (rounds on all cores when the file has `parallel_from` bytes or
/// more, see [`parallel_lines_from`]; else the stream through `buf`, which goes on from a map at
/// a long line), or, when a mapped file shrank (or under [`ReadStrategy::Buffered`]), the plain
/// stream from a fresh state. Returns the state, the file's size and its mtime (ms). Every line
/// but a blank one comes with its scan, made with `options`.
pub fn fold_lines<S>(
    path: &Path,
    rule: session_core::lines::LineRule,
    buf: &mut Vec<u8>,
    options: ScanOptions,
    parallel_from: u64,
    init: impl Fn() -> S,
    mut step: impl FnMut(&mut S, session_core::lines::Line<'_>, session_core::json::LineScan<'_>) -> bool,
) -> std::io::Result<(S, u64, f64)> {
    let mut state = init();
    let reach = |size: u64| if size <= LONG_LINES_FROM { usize::MAX } else { LONG_LINE };
    let pass = for_each_scanned_line(path, rule, options, buf, parallel_from, reach, |line, scanned| {
        step(&mut state, line, scanned)
    })?;
    match pass {
        ScannedPass::Done(size, mtime) => Ok((state, size, mtime)),
        ScannedPass::Stream(opened) => {
            let mut state = init();
            let (size, mtime) = for_each_scanned_line_opened(opened, rule, buf, options, |line, scanned| {
                step(&mut state, line, scanned)
            })?;
            Ok((state, size, mtime))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use session_core::lines::LineRule;

    /// `stream_chunk`'s rule on the two machines it was measured on, and at its edges.
    #[test]
    fn the_stream_chunk_follows_the_l2_each_cpu_has() {
        assert_eq!(chunk_for_l2_share(None), 64 << 10);
        // A Zen 4 core's 1 MiB (where 64 KiB was measured best), alone or shared by two SMT threads.
        assert_eq!(chunk_for_l2_share(Some(1 << 20)), 64 << 10);
        assert_eq!(chunk_for_l2_share(Some(512 << 10)), 64 << 10);
        assert_eq!(chunk_for_l2_share(Some((2 << 20) - 1)), 64 << 10);
        // The Intel Xeon VM: 2 MiB, one CPU.
        assert_eq!(chunk_for_l2_share(Some(2 << 20)), 512 << 10);
        assert_eq!(chunk_for_l2_share(Some(16 << 20)), 1 << 20);
    }

    #[test]
    fn cache_sizes_and_cpu_lists_read_as_sysfs_writes_them() {
        assert_eq!(cache_size_bytes("2048K\n"), Some(2 << 20));
        assert_eq!(cache_size_bytes("1M"), Some(1 << 20));
        assert_eq!(cache_size_bytes("512"), Some(512));
        assert_eq!(cache_size_bytes("K"), None);
        assert_eq!(cache_size_bytes(""), None);
        assert_eq!(cpu_list_len("0\n"), Some(1));
        assert_eq!(cpu_list_len("0-1"), Some(2));
        assert_eq!(cpu_list_len("0,64"), Some(2));
        assert_eq!(cpu_list_len("0-3,8-11"), Some(8));
        assert_eq!(cpu_list_len("3-1"), None);
        assert_eq!(cpu_list_len("x"), None);
    }

    /// A line carried over keeps its bytes, and the read after it starts on a cache line, from
    /// any buffer and any line length (growing the buffer when the line does not fit with the
    /// room to align it).
    #[test]
    fn carried_bytes_end_where_an_aligned_read_starts() {
        for size in [0usize, 1, 40, 64, 200, 4096] {
            for keep in [0usize, 1, 17, 63, 64, 100] {
                let keep = keep.min(size);
                let mut buf: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
                let expected = buf[size - keep..].to_vec();
                let at = carry(&mut buf, size - keep..size);
                assert_eq!(&buf[at..at + keep], &expected[..], "size {size}, keep {keep}");
                assert_eq!((buf.as_ptr() as usize + at + keep) % CACHE_LINE, 0, "size {size}, keep {keep}");
                assert!(buf.len() >= at + keep);
            }
        }
    }

    /// Folders are walked through real folders and symlinks to folders; `*.jsonl` entries that
    /// are files, symlinks to files or dangling symlinks are kept; a folder named `*.jsonl` is
    /// walked, not kept. The types come from the listing, with a `stat` for symlinks only.
    #[cfg(unix)]
    #[test]
    fn expanding_a_folder_follows_symlinks_and_keeps_session_names() {
        let dir = std::env::temp_dir().join(format!("session-scan-expand-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("a/x.jsonl")).unwrap();
        std::fs::create_dir_all(dir.join("b")).unwrap();
        for f in ["a/one.jsonl", "a/x.jsonl/inner.jsonl", "a/notes.txt", "b/two.jsonl", "top.jsonl"] {
            std::fs::write(dir.join(f), "{}\n").unwrap();
        }
        std::os::unix::fs::symlink("b", dir.join("c")).unwrap();
        std::os::unix::fs::symlink("b/two.jsonl", dir.join("link.jsonl")).unwrap();
        std::os::unix::fs::symlink("missing", dir.join("dangling.jsonl")).unwrap();
        let found: Vec<String> = expand_paths(std::slice::from_ref(&dir))
            .iter()
            .map(|p| p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned())
            .collect();
        let expected = [
            "a/one.jsonl",
            "a/x.jsonl/inner.jsonl",
            "b/two.jsonl",
            "c/two.jsonl",
            "dangling.jsonl",
            "link.jsonl",
            "top.jsonl",
        ];
        assert_eq!(found, expected);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// What a pass hands over for one line, comparable across passes.
    fn describe(line: session_core::lines::Line<'_>, scan: session_core::json::LineScan<'_>) -> String {
        let outcome = match scan {
            None => "blank".to_string(),
            Some(Ok(s)) => format!("fields {}", s.fields.len()),
            Some(Err(e)) => format!("error at {}", e.offset),
        };
        format!("{} @{} len {} {} {outcome}", line.number, line.offset, line.bytes.len(), line.terminated)
    }

    /// What the stream hands over for each line of the file at `path`.
    fn streamed(path: &Path, rule: LineRule, options: ScanOptions) -> Vec<String> {
        let mut lines = Vec::new();
        let opened = open_regular(path).unwrap();
        for_each_scanned_line_opened(opened, rule, &mut Vec::new(), options, |line, scan| {
            lines.push(describe(line, scan));
            true
        })
        .unwrap();
        lines
    }

    /// A file under the size for rounds is streamed, and from a line of [`MAP_LINES_FROM`] bytes
    /// or more (in the middle, or last and unterminated) goes on from a map: it hands over the
    /// lines the plain stream gives (numbers, offsets, terminators, scans), all of them or up to
    /// where `step` stops, before, at and after the long line; under [`ReadStrategy::Mmap`] the
    /// file is mapped whole and scanned on the calling thread, with the same lines.
    #[test]
    fn long_lines_of_a_stream_are_read_from_a_map_as_the_stream_reads_them() {
        for long_last in [false, true] {
            let mut bytes = Vec::new();
            let mut k = 0usize;
            while bytes.len() < MMAP_THRESHOLD as usize + (1 << 20) {
                let text = if k == 700 || k == 1800 {
                    "z".repeat(MAP_LINES_FROM * 3 / 2 + 4321)
                } else {
                    "y".repeat(k * 37 % 2000)
                };
                let line = match k % 5 {
                    0 => format!(r#"{{"type":"message","id":"m{k}","message":{{"role":"user","content":"{text}"}}}}"#),
                    1 => format!(r#"{{"type":"custom","data":"{text}""#),
                    2 => String::new(),
                    3 => format!(r#"{{"type":"message","message":{{"role":"assistant","usage":{{"input":{k}}}}}}}"#),
                    _ => format!(r#"  {{"type":"label","label":"{text}"}}  "#),
                };
                bytes.extend_from_slice(line.as_bytes());
                bytes.extend_from_slice(if k.is_multiple_of(7) { b"\r\n" } else { b"\n" });
                k += 1;
            }
            if long_last {
                bytes.extend_from_slice(
                    format!(r#"{{"type":"custom","data":"{}"}}"#, "w".repeat(MAP_LINES_FROM * 3 / 2)).as_bytes(),
                );
            } else {
                bytes.extend_from_slice(b"{\"type\":\"unterminated\"");
            }
            let path =
                std::env::temp_dir().join(format!("session-scan-long-lines-{}-{long_last}.jsonl", std::process::id()));
            std::fs::write(&path, &bytes).unwrap();
            assert!((bytes.len() as u64) < PARALLEL_LINES_MIN);
            for rule in [LineRule::Newline, LineRule::Readline] {
                let options = ScanOptions::default();
                let streamed = streamed(&path, rule, options);
                assert!(streamed.len() > 1_900, "{}", streamed.len());
                for stop_after in [usize::MAX, 500, 701, 1234] {
                    for strategy in [ReadStrategy::Auto, ReadStrategy::Mmap] {
                        let maps_before = LONG_LINE_MAPS.with(std::cell::Cell::get);
                        let mut passed = Vec::new();
                        let pass = with_strategy(strategy, || {
                            for_each_scanned_line(
                                &path,
                                rule,
                                options,
                                &mut Vec::new(),
                                PARALLEL_LINES_MIN,
                                |_| usize::MAX,
                                |line, scan| {
                                    passed.push(describe(line, scan));
                                    passed.len() < stop_after
                                },
                            )
                        })
                        .unwrap();
                        assert!(matches!(pass, ScannedPass::Done(..)));
                        assert_eq!(passed, streamed[..stop_after.min(streamed.len())], "{rule:?} {strategy:?}");
                        // The stream went on from a map exactly when it reached the first long line.
                        let mapped = LONG_LINE_MAPS.with(std::cell::Cell::get) - maps_before;
                        let reached = stop_after > 700 && strategy == ReadStrategy::Auto;
                        assert_eq!(mapped, usize::from(reached), "{rule:?} {strategy:?} {stop_after}");
                    }
                }
            }
            std::fs::remove_file(&path).unwrap();
        }
    }

    /// A file cut short by another writer while the stream reads a long line from its map is read
    /// again from a fresh state: the pass's result is the plain stream's of the shorter file, not
    /// a mix of what was handed over before and after the cut.
    #[cfg(unix)]
    #[test]
    fn a_file_cut_while_a_long_line_is_read_from_its_map_is_read_again() {
        let mut bytes = Vec::new();
        for k in 0..400 {
            bytes.extend_from_slice(
                format!(
                    r#"{{"type":"message","id":"m{k}","message":{{"role":"user","content":"{}"}}}}"#,
                    "y".repeat(k % 700)
                )
                .as_bytes(),
            );
            bytes.push(b'\n');
        }
        let short_end = bytes.len();
        bytes.extend_from_slice(
            format!(r#"{{"type":"custom","data":"{}"}}"#, "z".repeat(MAP_LINES_FROM * 3)).as_bytes(),
        );
        bytes.push(b'\n');
        for k in 0..50 {
            bytes.extend_from_slice(format!(r#"{{"type":"label","label":"after {k}"}}"#).as_bytes());
            bytes.push(b'\n');
        }
        let path = std::env::temp_dir().join(format!("session-scan-cut-long-line-{}.jsonl", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let (mut cut, maps_before) = (false, LONG_LINE_MAPS.with(std::cell::Cell::get));
        let (lines, _, _) = with_strategy(ReadStrategy::Auto, || {
            fold_lines(
                &path,
                LineRule::Readline,
                &mut Vec::new(),
                ScanOptions::default(),
                PARALLEL_LINES_MIN,
                Vec::new,
                |lines: &mut Vec<String>, line, scan| {
                    if line.bytes.len() > MAP_LINES_FROM && !cut {
                        // Another writer cuts the file back to its short lines.
                        cut = true;
                        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(short_end as u64).unwrap();
                    }
                    lines.push(describe(line, scan));
                    true
                },
            )
        })
        .unwrap();
        assert!(cut, "the long line was handed over");
        assert_eq!(LONG_LINE_MAPS.with(std::cell::Cell::get) - maps_before, 1, "it was read from the map");
        let expected = streamed(&path, LineRule::Readline, ScanOptions::default());
        assert_eq!(expected.len(), 400);
        assert_eq!(lines, expected);
        std::fs::remove_file(&path).unwrap();
    }

    /// Runs `f` with the read strategy set to `strategy` on this thread's passes (the default
    /// again afterwards).
    fn with_strategy<R>(strategy: ReadStrategy, f: impl FnOnce() -> R) -> R {
        let _guard = STRATEGY_LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        set_default_strategy(strategy);
        let out = f();
        set_default_strategy(ReadStrategy::Auto);
        out
    }

    /// The strategy is process-wide: tests that change it take turns.
    static STRATEGY_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// A mapped file whose lines grow past the cut search's reach is handed over as the stream
    /// gives it: the rounds before the long line, then the stream from its start, with the same
    /// line numbers, offsets and scans (a wrong starting offset or line count fails it).
    #[test]
    fn long_lines_continue_in_the_stream_where_the_rounds_stop() {
        let mut bytes = Vec::new();
        let mut k = 0usize;
        while bytes.len() < PARALLEL_LINES_MIN as usize + (3 << 20) {
            // Short lines for the first 5 MiB, then some lines longer than the reach.
            let long = bytes.len() > 5 << 20 && k.is_multiple_of(9);
            let text = "x".repeat(if long { 9000 + k % 5000 } else { k % 300 });
            let line = match k % 4 {
                0 => format!(r#"{{"type":"message","id":"m{k}","message":{{"role":"user","content":"{text}"}}}}"#),
                1 => format!(r#"{{"type":"custom","data":"{text}""#),
                2 => String::new(),
                _ => format!(
                    r#"{{"type":"message","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}]}}}}"#
                ),
            };
            bytes.extend_from_slice(line.as_bytes());
            bytes.extend_from_slice(if k.is_multiple_of(6) {
                b"\r\n"
            } else if k % 6 == 1 {
                b"\r"
            } else {
                b"\n"
            });
            k += 1;
        }
        let path = std::env::temp_dir().join(format!("session-scan-long-lines-{}.jsonl", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        for rule in [LineRule::Newline, LineRule::Readline] {
            let options = ScanOptions { blocks: true };
            let streamed = streamed(&path, rule, options);
            let mut passed = Vec::new();
            let pass = for_each_scanned_line(
                &path,
                rule,
                options,
                &mut Vec::new(),
                PARALLEL_LINES_MIN,
                |_| 4096,
                |line, scan| {
                    passed.push(describe(line, scan));
                    true
                },
            )
            .unwrap();
            assert!(matches!(pass, ScannedPass::Done(..)));
            assert!(streamed.len() > 20_000, "{}", streamed.len());
            assert_eq!(passed, streamed, "{rule:?}");
        }
        std::fs::remove_file(&path).unwrap();
    }
}
