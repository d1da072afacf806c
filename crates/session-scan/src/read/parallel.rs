//! One large file's lines scanned on every core, a round of pieces at a time, and handed over in
//! order; pages already read are given back.

use session_core::json::ScanOptions;
use std::path::Path;

use super::*;

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
pub(super) const MANY_FILES_PER_THREAD: usize = 4;

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
pub(super) const LONG_LINE: usize = 64 << 20;

/// Files up to this size are read in rounds to their end, whatever their lines (the pages of
/// one line are then at most this much).
pub(super) const LONG_LINES_FROM: u64 = 1 << 30;

/// A round scans this many bytes of a mapped file, in pieces on all cores.
pub(super) const ROUND_BYTES: usize = 4 << 20;

/// Pieces per round, per thread.
pub(super) const PIECES_PER_THREAD: usize = 2;

/// A piece holds at most this many lines' scans (168 bytes each and their lists, about 500 for a
/// message line), so that memory stays bounded when lines are tiny; a piece that reaches it ends
/// the round early.
pub(super) const PIECE_LINES: usize = 2048;

/// What [`for_each_scanned_line`] did.
pub(super) enum ScannedPass {
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
pub(super) struct Piece<'a> {
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
pub(super) fn line_start_within(bytes: &[u8], at: usize, limit: usize) -> Option<usize> {
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

/// How a pass over many files reads each: the strategy asked for, and the size from which a file
/// is mapped and its lines scanned on every core ([`parallel_lines_from`]).
#[derive(Debug, Clone, Copy)]
pub struct Pass {
    /// Buffered, mapped where that is faster, or mapped wherever it is worth it.
    pub strategy: ReadStrategy,
    /// Files of this many bytes or more go in rounds on every core.
    pub parallel_from: u64,
}

/// Opens a file and calls `step` with each line under `rule` and its scan, in order, until
/// `step` returns false. A file under `parallel_from` bytes is streamed through `buf`, a line of
/// [`MAP_LINES_FROM`] bytes or more read from a map (under [`ReadStrategy::Mmap`], one of
/// [`MMAP_THRESHOLD`] or more is mapped and scanned on this thread, [`scan_mapped_here`]; under
/// [`ReadStrategy::Buffered`] every one goes back to the caller's stream). A larger file is
/// mapped and goes in rounds: each round's bytes are cut into pieces at line starts, and the
/// pieces are split into lines and scanned on all cores, then handed over in order. From a line
/// longer than `long_line(size)` on, the rest of the file is streamed through `buf`.
pub(super) fn for_each_scanned_line(
    path: &Path,
    pass: Pass,
    rule: session_core::lines::LineRule,
    options: ScanOptions,
    buf: &mut Vec<u8>,
    long_line: impl Fn(u64) -> usize,
    mut step: impl FnMut(session_core::lines::Line<'_>, session_core::json::LineScan<'_>) -> bool,
) -> std::io::Result<ScannedPass> {
    use rayon::prelude::*;
    let Pass { strategy, parallel_from } = pass;
    let (mut file, meta) = open_regular(path)?;
    match strategy {
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
pub(super) fn finish_mapped(
    map: crate::mmap::Mapped,
    path: &Path,
    meta: &std::fs::Metadata,
) -> std::io::Result<ScannedPass> {
    if map.truncated() {
        drop(map);
        return open_regular(path).map(ScannedPass::Stream);
    }
    Ok(ScannedPass::Done(meta.len(), mtime_ms(meta)))
}

/// While a file is scanned on one core from its map, the pages read are given back each time the
/// scan has passed this many bytes more.
pub(super) const RELEASE_EVERY: usize = 4 << 20;

/// [`for_each_scanned_line`] for a file too small to be worth rounds on all cores, but large
/// enough to map: the map is split and scanned in one pass on this thread (no copy into a
/// buffer), with pages given back as the scan moves on.
pub(super) fn scan_mapped_here(
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
pub(super) fn scan_map_from(
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
/// `for_each_scanned_line` (rounds on all cores when the file has `parallel_from` bytes or
/// more, see [`parallel_lines_from`]; else the stream through `buf`, which goes on from a map at
/// a long line), or, when a mapped file shrank (or under [`ReadStrategy::Buffered`]), the plain
/// stream from a fresh state. Returns the state, the file's size and its mtime (ms). Every line
/// but a blank one comes with its scan, made with `options`.
pub fn fold_lines<S>(
    path: &Path,
    pass: Pass,
    rule: session_core::lines::LineRule,
    buf: &mut Vec<u8>,
    options: ScanOptions,
    init: impl Fn() -> S,
    mut step: impl FnMut(&mut S, session_core::lines::Line<'_>, session_core::json::LineScan<'_>) -> bool,
) -> std::io::Result<(S, u64, f64)> {
    let mut state = init();
    let reach = |size: u64| if size <= LONG_LINES_FROM { usize::MAX } else { LONG_LINE };
    let pass =
        for_each_scanned_line(path, pass, rule, options, buf, reach, |line, scanned| step(&mut state, line, scanned))?;
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
