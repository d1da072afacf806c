//! Line splitting over a whole file's bytes, with each line's byte offset and line number.
//!
//! Two splitting rules exist in the reference: the session loader splits on `\n` only (a lone
//! `\r` stays inside the line and `\r\n` leaves a trailing `\r`, which JSON treats as
//! whitespace), while the listing reader (`readline`) also ends a line at `\r\n` and at a lone
//! `\r`. A final piece without a terminator is still a line; it is flagged so that callers can
//! report it as incomplete rather than corrupt.

use memchr::{memchr, memchr2};

/// Which bytes end a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRule {
    /// Only `\n` (the session loader, `loadEntriesFromFile`).
    Newline,
    /// `\n`, `\r\n` and a lone `\r` (Node's `readline`, used for `SessionInfo`).
    Readline,
}

/// One line of a file: its bytes without the terminator, and where it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// The line's bytes, terminator excluded.
    pub bytes: &'a [u8],
    /// Absolute byte offset of the line's first byte.
    pub offset: u64,
    /// 1-based line number under the rule that split it.
    pub number: u64,
    /// False for a last line that has no terminator (a write cut off, or still in progress).
    pub terminated: bool,
}

/// Iterator over the lines of a byte slice.
#[derive(Debug, Clone)]
pub struct Lines<'a> {
    bytes: &'a [u8],
    pos: usize,
    number: u64,
    rule: LineRule,
}

impl<'a> Lines<'a> {
    /// Splits `bytes` under `rule`.
    pub fn new(bytes: &'a [u8], rule: LineRule) -> Self {
        Lines { bytes, pos: 0, number: 0, rule }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    #[inline]
    fn next(&mut self) -> Option<Line<'a>> {
        let rest = self.bytes.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        let start = self.pos;
        self.number += 1;
        let (len, terminator) = match self.rule {
            LineRule::Newline => match memchr(b'\n', rest) {
                Some(i) => (i, 1),
                None => (rest.len(), 0),
            },
            LineRule::Readline => match memchr2(b'\n', b'\r', rest) {
                Some(i) if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') => (i, 2),
                Some(i) => (i, 1),
                None => (rest.len(), 0),
            },
        };
        self.pos = start + len + terminator;
        Some(Line { bytes: &rest[..len], offset: start as u64, number: self.number, terminated: terminator != 0 })
    }
}

/// [`Lines`] with each line's scan, found in the same pass ([`crate::json::scan_line_at`]): a
/// line's terminator is searched for only when the line is not JSON. Blank lines come with no
/// scan. Each scan is made into one reused result and lent until the next line.
#[derive(Debug, Clone)]
pub struct ScannedLines<'a> {
    cursor: ScanCursor<'a>,
    scanned: crate::json::Scanned,
}

thread_local! {
    /// The scan of the thread's last [`ScannedLines`], kept for its storage: a stream makes one
    /// for every chunk it reads, and a fresh scan's lists grew again each time. Apart from
    /// `with_line_scan`'s, which is only borrowed for one call: one slot for both, moved out and
    /// back on every call, costs picker_info 7.9% more instructions.
    static KEPT_SCAN: std::cell::Cell<Option<crate::json::Scanned>> = const { std::cell::Cell::new(None) };
}

impl<'a> ScannedLines<'a> {
    /// Splits and scans `bytes` under `rule`.
    pub fn new(bytes: &'a [u8], rule: LineRule, options: crate::json::ScanOptions) -> Self {
        let scanned = KEPT_SCAN.try_with(std::cell::Cell::take).ok().flatten().unwrap_or_default();
        ScannedLines { cursor: ScanCursor { bytes, pos: 0, number: 0, rule, options }, scanned }
    }

    /// Where the next line starts.
    pub fn position(&self) -> usize {
        self.cursor.pos
    }

    /// The next line and its scan.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<(Line<'a>, crate::json::LineScan<'_>)> {
        let (line, outcome) = self.cursor.next_into(&mut self.scanned)?;
        Some((line, outcome.map(|o| o.map(|()| &self.scanned))))
    }

    /// The next line, its scan made into `out` (storage the caller reuses): `None` for a blank
    /// line, else whether it is JSON.
    #[inline]
    pub fn next_into(
        &mut self,
        out: &mut crate::json::Scanned,
    ) -> Option<(Line<'a>, Option<Result<(), crate::json::ScanError>>)> {
        self.cursor.next_into(out)
    }
}

impl Drop for ScannedLines<'_> {
    fn drop(&mut self) {
        let scanned = std::mem::take(&mut self.scanned);
        let _ = KEPT_SCAN.try_with(|kept| kept.set(Some(scanned)));
    }
}

#[derive(Debug, Clone)]
struct ScanCursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    number: u64,
    rule: LineRule,
    options: crate::json::ScanOptions,
}

impl<'a> ScanCursor<'a> {
    #[inline]
    fn next_into(
        &mut self,
        out: &mut crate::json::Scanned,
    ) -> Option<(Line<'a>, Option<Result<(), crate::json::ScanError>>)> {
        let rest = self.bytes.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        let start = self.pos;
        self.number += 1;
        let (len, outcome) = crate::json::scan_line_at(rest, self.rule, self.options, out);
        let terminator = match rest.get(len) {
            None => 0,
            Some(b'\r') if self.rule == LineRule::Readline && rest.get(len + 1) == Some(&b'\n') => 2,
            Some(_) => 1,
        };
        self.pos = start + len + terminator;
        let line = Line { bytes: &rest[..len], offset: start as u64, number: self.number, terminated: terminator != 0 };
        let outcome = match outcome {
            Err(_) if is_blank(line.bytes) => None,
            outcome => Some(outcome),
        };
        Some((line, outcome))
    }
}

/// Counts line starts with `memchr`: the floor every whole-file pass is measured against.
pub fn count_lines(bytes: &[u8]) -> usize {
    let newlines = memchr::memchr_iter(b'\n', bytes).count();
    newlines + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// True when a line is blank to JavaScript's `String.prototype.trim` (which the reference applies
/// before deciding to skip a line).
pub fn is_blank(bytes: &[u8]) -> bool {
    match bytes.iter().find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)) {
        None => true,
        Some(b) if b.is_ascii() => false,
        // Non-ASCII whitespace such as NBSP, U+2028 or a BOM.
        Some(_) => crate::text::js_trim(bytes).is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(bytes: &[u8], rule: LineRule) -> Vec<(&[u8], u64, u64, bool)> {
        Lines::new(bytes, rule).map(|l| (l.bytes, l.offset, l.number, l.terminated)).collect()
    }

    #[test]
    fn newline_rule_keeps_cr_inside_lines() {
        // spec format.md §5: CRLF leaves a trailing `\r` (JSON whitespace); lone CR does not split.
        let got = collect(b"a\r\nb\rc\nd", LineRule::Newline);
        assert_eq!(got, vec![(&b"a\r"[..], 0, 1, true), (&b"b\rc"[..], 3, 2, true), (&b"d"[..], 7, 3, false)]);
    }

    #[test]
    fn readline_rule_splits_on_cr_and_crlf() {
        // spec format.md §5: readline splits on \n, \r\n and a lone \r.
        let got = collect(b"a\r\nb\rc\n\nd\r", LineRule::Readline);
        assert_eq!(
            got,
            vec![
                (&b"a"[..], 0, 1, true),
                (&b"b"[..], 3, 2, true),
                (&b"c"[..], 5, 3, true),
                (&b""[..], 7, 4, true),
                (&b"d"[..], 8, 5, true),
            ]
        );
    }

    #[test]
    fn empty_input_has_no_lines_and_counts_agree() {
        assert!(collect(b"", LineRule::Newline).is_empty());
        for input in [&b""[..], b"a", b"a\n", b"a\nb", b"\n\n"] {
            assert_eq!(count_lines(input), Lines::new(input, LineRule::Newline).count());
        }
    }

    #[test]
    fn blank_follows_js_trim() {
        assert!(is_blank(b" \t\r"));
        assert!(is_blank("\u{a0}\u{2028}\u{feff}".as_bytes()));
        assert!(!is_blank(b" x "));
        assert!(!is_blank(b"\x00"));
    }

    /// Lines split and scanned in one pass are the lines `Lines` splits, with the scans
    /// `scan_line_with` gives them (blank lines without one), under both rules and both scan
    /// options, on drawn text mixing JSON pieces, terminators and damage.
    #[test]
    fn scanned_lines_are_split_lines_scanned() {
        use crate::json::{ScanOptions, scan_line_with};
        const PIECES: [&[u8]; 26] = [
            br#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","name":"x"}]}}"#,
            br#"{"a":[1,2.5e3,true,null],"b":"s\"q"}"#,
            b"{}",
            b"[]",
            b"\n",
            b"\r",
            b"\r\n",
            b" ",
            b"\t",
            b"\x0c",
            b"\"",
            b"\\",
            b"{",
            b"}",
            b"\"k\":",
            b"\"long string of more than sixty-four bytes so that the block scan reads it whole..\"",
            b"\"with\\nescape and a \\u00e9 in a string that is long enough for the blocks, too\"",
            b"-0.5",
            b"12",
            b"tru",
            b"true",
            b",",
            b"\xc3\xa9",
            b"\"\n\"",
            b"\"\\\r\"",
            b"null",
        ];
        let mut next = crate::json::scan::tests::xorshift(0x0bad_5eed_1234_5678);
        let mut lines_seen = 0;
        let mut valid = 0;
        for _ in 0..20_000 {
            let mut text = Vec::new();
            for _ in 0..(1 + next() % 12) {
                text.extend_from_slice(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            for rule in [LineRule::Newline, LineRule::Readline] {
                for blocks in [false, true] {
                    let options = ScanOptions { blocks };
                    let mut lines = ScannedLines::new(&text, rule, options);
                    let mut fused = Vec::new();
                    while let Some((line, scanned)) = lines.next() {
                        fused.push((line, scanned.map(|s| s.cloned())));
                    }
                    let split: Vec<_> = Lines::new(&text, rule)
                        .map(|l| (l, (!is_blank(l.bytes)).then(|| scan_line_with(l.bytes, options))))
                        .collect();
                    let show = String::from_utf8_lossy(&text);
                    assert_eq!(fused.len(), split.len(), "{show:?} {rule:?}");
                    for ((fl, fs), (sl, ss)) in fused.iter().zip(&split) {
                        assert_eq!(fl, sl, "{show:?} {rule:?}");
                        match (fs, ss) {
                            (None, None) => {}
                            (Some(Ok(a)), Some(Ok(b))) => {
                                assert_eq!(format!("{a:?}"), format!("{b:?}"), "{show:?} {rule:?}");
                                valid += 1;
                            }
                            (Some(Err(a)), Some(Err(b))) => assert_eq!(a, b, "{show:?} {rule:?}"),
                            _ => panic!("{show:?} {rule:?}: {fs:?} against {ss:?}"),
                        }
                    }
                    lines_seen += split.len();
                }
            }
        }
        assert!(lines_seen > 100_000 && valid > 10_000, "too few lines drawn: {lines_seen}, {valid} valid");
    }
}
