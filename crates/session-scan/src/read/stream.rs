//! One file's lines streamed through a reused buffer, a chunk sized to the L2 cache at a time;
//! a line that outgrows the buffer sends the rest of the file to a map.

use session_core::json::ScanOptions;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::*;

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
/// On the bench store's picker listing: with 1 MiB of L2 per core, 64 KiB chunks are 1.05x faster
/// than 1 MiB ones; with 2 MiB, 1 MiB chunks take 0.92-0.95x the CPU time of 64 KiB ones, both in
/// the process and in the kernel, and 512 KiB the same as 1 MiB.
pub(super) fn stream_chunk() -> u64 {
    static CHUNK: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *CHUNK.get_or_init(|| chunk_for_l2_share(l2_share()))
}

/// [`stream_chunk`]'s rule, by the L2 bytes each CPU has to itself (when known).
pub(super) fn chunk_for_l2_share(l2_share: Option<u64>) -> u64 {
    const SMALL: u64 = 64 << 10;
    match l2_share {
        Some(bytes) if bytes >= 2 << 20 => (bytes / 4).min(1 << 20),
        _ => SMALL,
    }
}

/// The L2 cache bytes each CPU has to itself: CPU 0's level-2 data or unified cache, divided by
/// the CPUs that share it (Linux's `/sys/devices/system/cpu`); `None` where that is not known.
pub(super) fn l2_share() -> Option<u64> {
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
pub(super) fn cache_size_bytes(text: &str) -> Option<u64> {
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
pub(super) fn cpu_list_len(text: &str) -> Option<u64> {
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
pub(super) const MAX_KEPT_BUFFER: usize = 64 << 20;

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
pub(super) type Opened = (File, std::fs::Metadata);

/// [`for_each_line`] on a file already opened, each line with its scan (made in the same pass
/// as the split, [`session_core::lines::ScannedLines`]).
pub(super) fn for_each_scanned_line_opened(
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
pub(super) struct StreamStart {
    pub(super) offset: u64,
    pub(super) lines_before: u64,
    pub(super) map_long_lines: bool,
}

/// How a stream ended.
pub(super) enum Streamed {
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
/// Ten files of 30 MB holding 10 MB lines list in 19.2 ms mapped against 32.7 ms streamed; with
/// this switch they take 36.4 ms against 34.9 ms mapped whole, while every other file keeps the
/// stream, which is the faster for them.
pub(super) const MAP_LINES_FROM: usize = 1 << 20;

#[cfg(test)]
thread_local! {
    /// How many streams on this thread went on from a map at a long line.
    pub(super) static LONG_LINE_MAPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Streams lines to `f`, scanned with `scan` when it is given (else with no scan).
pub(super) fn stream_opened(
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

pub(super) fn stream_lines(
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

pub(super) const CACHE_LINE: usize = 64;

/// Moves the bytes of `buf[range]` to the start of `buf` as [`read_start`] places them; returns
/// where they start now.
pub(super) fn carry(buf: &mut Vec<u8>, range: std::ops::Range<usize>) -> usize {
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
/// is zeroed once: zeroing after every short last read costs the bench store's listing 25 MB of writes).
/// Where the bytes kept are more (a long line being gathered), the room is made by that
/// `read_to_end` (no zeroing of a buffer growing for a long line), and whatever is left of it
/// zeroed once.
pub(super) fn fill(file: &mut File, buf: &mut Vec<u8>, at: usize, limit: usize) -> std::io::Result<(usize, bool)> {
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
