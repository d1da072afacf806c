//! `grep`: a text or pattern in the texts of sessions (every entry of every branch: messages,
//! thinking, tool calls' arguments, tool output, shell commands, summaries), with where each is.

use std::ops::Range;

use memchr::memmem;
use session_core::Session;
use session_core::entry_texts::{Kind, entry_texts};
use session_core::json::Value;

/// What is looked for.
enum Pattern {
    /// A text, as it is.
    Literal(Box<memmem::Finder<'static>>),
    /// A regular expression (also a text matched in any case).
    Regex(regex::Regex),
}

/// A compiled search: the pattern, the kinds of text searched, and a test on raw lines that
/// passes every line that can hold a match.
pub struct Grep {
    pattern: Pattern,
    kinds: [bool; Kind::ALL.len()],
    /// The text as the line holds it when JSON writes it unescaped: a line without it (and
    /// without `\u` or `\/`, which could spell it) holds no match.
    raw_needle: Option<memmem::Finder<'static>>,
    /// The days whose entries are searched (by the entry's `timestamp`).
    days: crate::days::DayRange,
}

/// One place a match is.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The entry's 1-based line.
    pub line: u64,
    /// The line's byte offset.
    pub offset: u64,
    /// The entry's id, when it is a string.
    pub id: Option<String>,
    /// What the text is.
    pub kind: Kind,
    /// The tool, for a tool call or result.
    pub tool: Option<String>,
    /// What matched.
    pub matched: String,
    /// The text around it, on one line.
    pub text: String,
    /// Where in `text` the match is (bytes).
    pub text_match: Range<usize>,
}

/// Bytes kept on each side of a match in [`Hit::text`].
const AROUND: usize = 60;

impl Grep {
    /// A search for `pattern` (a text, or with `regex` a regular expression in the `regex`
    /// crate's syntax) in the kinds of text given (all when empty).
    pub fn new(pattern: &str, regex: bool, ignore_case: bool, kinds: &[Kind]) -> Result<Grep, regex::Error> {
        let mut wanted = [kinds.is_empty(); Kind::ALL.len()];
        for k in kinds {
            wanted[*k as usize] = true;
        }
        let (pattern, raw_needle) = if regex || ignore_case {
            let source = if regex { pattern.to_string() } else { regex::escape(pattern) };
            (Pattern::Regex(regex::RegexBuilder::new(&source).case_insensitive(ignore_case).build()?), None)
        } else {
            let plain = !pattern.is_empty() && pattern.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\');
            let finder = memmem::Finder::new(pattern.as_bytes()).into_owned();
            (Pattern::Literal(Box::new(finder.clone())), plain.then_some(finder))
        };
        Ok(Grep { pattern, kinds: wanted, raw_needle, days: crate::days::DayRange::all() })
    }

    /// Only entries of these days.
    pub fn on_days(self, days: crate::days::DayRange) -> Grep {
        Grep { days, ..self }
    }

    /// The first match in `text`.
    fn find(&self, text: &str) -> Option<Range<usize>> {
        match &self.pattern {
            Pattern::Literal(f) => f.find(text.as_bytes()).map(|at| at..at + f.needle().len()),
            Pattern::Regex(r) => r.find(text).map(|m| m.range()),
        }
    }

    /// Whether a raw line can hold a match.
    fn line_may_match(&self, line: &[u8]) -> bool {
        match &self.raw_needle {
            None => true,
            Some(f) => {
                f.find(line).is_some() || memmem::find(line, b"\\u").is_some() || memmem::find(line, b"\\/").is_some()
            }
        }
    }

    /// The matches in a session's entries, in file order: the first in each text; at most `max`.
    pub fn session_hits(&self, session: &Session<'_>, max: Option<usize>) -> Vec<Hit> {
        let mut hits = Vec::new();
        let mut arena = bumpalo::Bump::new();
        for entry in session.records.iter().skip(1) {
            if max.is_some_and(|m| hits.len() >= m) {
                break;
            }
            let searched = ["message", "compaction", "branch_summary", "session_summary", "custom_message"]
                .iter()
                .any(|t| entry.is_type(t));
            if !searched
                || !self.line_may_match(entry.line)
                || !self.days.holds(entry.timestamp.time_value(&session.local_zone))
            {
                continue;
            }
            arena.reset();
            let Ok(value) = entry.value(&arena) else { continue };
            for piece in entry_texts(&value) {
                if !self.kinds[piece.kind as usize] {
                    continue;
                }
                let Some(text) = piece.text.as_str().map(|t| t.to_str_lossy()) else { continue };
                let Some(found) = self.find(&text) else { continue };
                let (around_text, text_match) = around(&text, found.clone());
                hits.push(Hit {
                    line: entry.line_number,
                    offset: entry.offset,
                    id: entry.id.as_str().map(|id| id.to_str_lossy().into_owned()),
                    kind: piece.kind,
                    tool: piece.tool.and_then(Value::as_str).map(|t| t.to_str_lossy().into_owned()),
                    matched: text[found.clone()].to_string(),
                    text: around_text,
                    text_match,
                });
                if max.is_some_and(|m| hits.len() >= m) {
                    break;
                }
            }
        }
        hits
    }
}

/// The text around `found`, at most [`AROUND`] bytes on each side (cut at characters), with
/// line breaks and tabs as spaces and `…` where it was cut, and where the match is in it.
fn around(text: &str, found: Range<usize>) -> (String, Range<usize>) {
    let mut start = found.start.saturating_sub(AROUND);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (found.end + AROUND).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    let mut s = String::with_capacity(end - start + 6);
    if start > 0 {
        s.push('…');
    }
    let one_line = |c: char| if matches!(c, '\n' | '\r' | '\t') { ' ' } else { c };
    s.extend(text[start..found.start].chars().map(one_line));
    let at = s.len();
    s.extend(text[found.clone()].chars().map(one_line));
    let text_match = at..s.len();
    s.extend(text[found.end..end].chars().map(one_line));
    if end < text.len() {
        s.push('…');
    }
    (s, text_match)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_around_a_match_is_cut_at_characters() {
        let text = format!("{}needle{}", "é".repeat(50), "x\n".repeat(40));
        let at = text.find("needle").unwrap();
        let (s, at) = around(&text, at..at + 6);
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.contains("éneedlex x"), "{s}");
        assert_eq!(&s[at], "needle");
        assert_eq!(around("a needle b", 2..8), ("a needle b".to_string(), 2..8));
        assert_eq!(around("a\nneedle\nb", 1..9), ("a needle b".to_string(), 1..9));
    }

    #[test]
    fn raw_lines_pass_when_they_can_hold_the_text() {
        let g = Grep::new("cargo build", false, false, &[]).unwrap();
        assert!(g.line_may_match(br#"{"text":"run cargo build"}"#));
        assert!(!g.line_may_match(br#"{"text":"run cargo test"}"#));
        // Escapes could spell it.
        assert!(g.line_may_match(br#"{"text":"cargo\u0020build"}"#));
        // A text JSON escapes is never looked for in the raw line.
        let quoted = Grep::new("say \"hi\"", false, false, &[]).unwrap();
        assert!(quoted.line_may_match(br#"{"text":"nothing"}"#));
    }
}
