//! Pi 1.6's session picker search (`session-selector-search`, with `pi-tui`'s `fuzzyMatch`): a
//! query's words, quoted phrases or `re:` pattern, each session's score, and the picker's order.
//!
//! Strings are compared as JavaScript compares them: lowercased by `toLowerCase`, whitespace as
//! `\s` and `trim` see it, and fuzzy positions counted in UTF-16 code units (they set the score).

use std::borrow::Cow;
use std::cell::OnceCell;

use crate::text::is_js_whitespace;

/// A tier's scores all rank before the next tier's.
const TIER_WEIGHT: f64 = 1_000_000.0;
/// The query text is in the session's name.
const TIER_NAME: f64 = 0.0;
/// The query text is in the id, the messages or the cwd.
const TIER_TEXT: f64 = 1.0;
/// The query's characters appear, in order, in the name or the cwd.
const TIER_FUZZY: f64 = 2.0;

/// How one word of the query is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// A bare word: found as it is in any field, else scattered in the name or the cwd.
    Fuzzy,
    /// A quoted phrase: found as it is, whitespace runs counting as one space.
    Phrase,
}

/// One word or phrase of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// Word or phrase.
    pub kind: TokenKind,
    /// Its text, trimmed.
    pub value: String,
    /// What is looked for, made once: a word lowercased, a phrase also with its whitespace runs
    /// as one space (empty for a phrase of whitespace, which Pi skips).
    pub needle: Vec<u8>,
}

impl Token {
    fn new(kind: TokenKind, value: &str) -> Token {
        let needle = match kind {
            TokenKind::Fuzzy => js_lower(value.as_bytes()).into_owned(),
            TokenKind::Phrase => normalize_whitespace_lower(value.as_bytes()),
        };
        Token { kind, value: value.to_string(), needle }
    }
}

/// A parsed query (`parseSearchQuery`).
#[derive(Debug)]
pub enum Query {
    /// Every token must match some field; scores add up.
    Tokens(Vec<Token>),
    /// `re:PATTERN`: a JavaScript regular expression with the `i` flag, tested on each field.
    Regex(regress::Regex),
}

/// A query Pi cannot use: its picker then shows no session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryError(pub String);

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for QueryError {}

/// What the search reads of one session (`SessionInfo`'s fields).
#[derive(Debug, Clone, Copy)]
pub struct Searched<'a> {
    /// `name`, WTF-8.
    pub name: Option<&'a [u8]>,
    /// `String(id)`, WTF-8 (Pi's `id.toLowerCase()` throws on an id that is not a string).
    pub id: &'a [u8],
    /// `cwd`, WTF-8.
    pub cwd: &'a [u8],
    /// `allMessagesText`, WTF-8.
    pub text: &'a [u8],
}

impl Query {
    /// `parseSearchQuery`. `Ok(None)` for a blank query, which keeps every session in its order.
    pub fn parse(query: &str) -> Result<Option<Query>, QueryError> {
        let trimmed = js_trim(query);
        if trimmed.is_empty() {
            return Ok(None);
        }
        if let Some(pattern) = trimmed.strip_prefix("re:") {
            let pattern = js_trim(pattern);
            if pattern.is_empty() {
                return Err(QueryError("Empty regex".into()));
            }
            return match regress::Regex::with_flags(&ucs2_pattern(pattern), "i") {
                Ok(re) => Ok(Some(Query::Regex(re))),
                Err(e) => Err(QueryError(format!("Invalid regular expression: /{pattern}/i: {e}"))),
            };
        }
        let mut tokens = Vec::new();
        let mut buf = String::new();
        let mut in_quote = false;
        let flush = |buf: &mut String, kind: TokenKind, tokens: &mut Vec<Token>| {
            let v = js_trim(buf);
            if !v.is_empty() {
                tokens.push(Token::new(kind, v));
            }
            buf.clear();
        };
        for ch in trimmed.chars() {
            if ch == '"' {
                let kind = if in_quote { TokenKind::Phrase } else { TokenKind::Fuzzy };
                flush(&mut buf, kind, &mut tokens);
                in_quote = !in_quote;
                continue;
            }
            if !in_quote && is_js_whitespace(ch) {
                flush(&mut buf, TokenKind::Fuzzy, &mut tokens);
                continue;
            }
            buf.push(ch);
        }
        if in_quote {
            // Unbalanced quotes: plain words split at whitespace, the quotes kept in them.
            let words = trimmed.split(is_js_whitespace).filter(|w| !w.is_empty());
            return Ok(Some(Query::Tokens(words.map(|w| Token::new(TokenKind::Fuzzy, w)).collect())));
        }
        flush(&mut buf, TokenKind::Fuzzy, &mut tokens);
        Ok(Some(Query::Tokens(tokens)))
    }

    /// `matchSession`: the session's score (lower is better), or `None` when it does not match.
    pub fn score(&self, s: &Searched<'_>) -> Option<f64> {
        match self {
            Query::Regex(re) => {
                let test = |field: &[u8]| re.find_from_ucs2(&utf16(field), 0).next().is_some();
                if s.name.is_some_and(|n| !n.is_empty() && test(n)) {
                    Some(tier(TIER_NAME, 0.0))
                } else if test(s.id) || test(s.text) || test(s.cwd) {
                    Some(tier(TIER_TEXT, 0.0))
                } else {
                    None
                }
            }
            Query::Tokens(tokens) => {
                // The messages are lowercased once; a phrase is looked for in them with any
                // whitespace run standing for its spaces (as in the normalised text, unbuilt).
                let lower_text = OnceCell::new();
                let mut total = 0.0;
                for token in tokens {
                    let text: &[u8] = lower_text.get_or_init(|| js_lower(s.text));
                    let score = match token.kind {
                        TokenKind::Phrase if token.needle.is_empty() => continue,
                        TokenKind::Phrase => phrase_score(s, &token.needle, text),
                        TokenKind::Fuzzy => fuzzy_token_score(s, token, text),
                    };
                    total += score?;
                }
                Some(total)
            }
        }
    }
}

/// A pattern as JavaScript reads it without the `u` flag, where a character outside the BMP is
/// two code units, each matched alone; written so for `regress`, which would read it (or a pair
/// of `\u` escapes) as one character, which UCS-2 text never holds. Such a character becomes its
/// two escapes with an empty group between them, or, in a class, the low unit first.
fn ucs2_pattern(pattern: &str) -> Cow<'_, str> {
    if pattern.chars().all(|c| c.len_utf16() == 1) && !pattern.contains("\\u") {
        return Cow::Borrowed(pattern);
    }
    // The code unit of a `\uXXXX` escape starting at `at`.
    let unit = |at: usize| -> Option<u16> {
        let hex = pattern.get(at..at + 6)?.strip_prefix("\\u")?;
        if hex.bytes().all(|b| b.is_ascii_hexdigit()) { u16::from_str_radix(hex, 16).ok() } else { None }
    };
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut in_class = false;
    let mut chars = pattern.char_indices();
    while let Some((at, c)) = chars.next() {
        if c == '\\' {
            if !in_class
                && let (Some(high), Some(low)) = (unit(at), unit(at + 6))
                && (0xd800..0xdc00).contains(&high)
                && (0xdc00..0xe000).contains(&low)
            {
                out.push_str(&pattern[at..at + 6]);
                out.push_str("(?:)");
                chars.nth(4);
                continue;
            }
            match chars.next() {
                // An identity escape of such a character: its two units, as they are.
                Some((_, e)) if e.len_utf16() == 2 => push_units(&mut out, e, in_class),
                Some((_, e)) => {
                    out.push('\\');
                    out.push(e);
                }
                None => out.push('\\'),
            }
            continue;
        }
        match c {
            '[' => in_class = true,
            ']' => in_class = false,
            _ => {}
        }
        if c.len_utf16() == 2 { push_units(&mut out, c, in_class) } else { out.push(c) }
    }
    Cow::Owned(out)
}

/// A character outside the BMP as two escapes that `regress` keeps apart.
fn push_units(out: &mut String, c: char, in_class: bool) {
    let mut units = [0; 2];
    c.encode_utf16(&mut units);
    let [high, low] = units;
    if in_class {
        out.push_str(&format!("\\u{low:04X}\\u{high:04X}"));
    } else {
        out.push_str(&format!("\\u{high:04X}(?:)\\u{low:04X}"));
    }
}

/// A message where a query is found (`session-scan search --hits`).
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The message's 1-based line.
    pub line: u64,
    /// The line's byte offset.
    pub offset: u64,
    /// The entry's `id`.
    pub id: crate::PropertyValue<'static>,
    /// A user message (else an assistant's).
    pub user: bool,
    /// The text around the first place found, on one line, `…` where it is cut.
    pub snippet: String,
}

impl Query {
    /// The messages whose own text holds a word or phrase of the query as it is, or a match of
    /// the pattern (scattered letters are not looked for), in file order, at most `max`.
    /// `text` is `allMessagesText` and `pieces` its messages (`SessionInfo::text_pieces`).
    pub fn hits(&self, text: &[u8], pieces: &[crate::info::TextPiece], max: usize) -> Vec<Hit> {
        let mut hits = Vec::new();
        for piece in pieces {
            if hits.len() >= max {
                break;
            }
            let Some(own) = text.get(piece.range.clone()) else { continue };
            if let Some(found) = self.find(own) {
                hits.push(Hit {
                    line: piece.line,
                    offset: piece.offset,
                    id: piece.id.clone(),
                    user: piece.user,
                    snippet: snippet(own, found),
                });
            }
        }
        hits
    }

    /// The first place in `text` (bytes) where a word, a phrase or the pattern is found.
    fn find(&self, text: &[u8]) -> Option<std::ops::Range<usize>> {
        match self {
            Query::Regex(re) => {
                let units = utf16(text);
                let m = re.find_from_ucs2(&units, 0).next()?.range();
                let bytes = unit_offsets(text);
                Some(bytes[m.start]..bytes[m.end])
            }
            Query::Tokens(tokens) => {
                // Most messages hold none of it: they are looked at in the fast lowercase first,
                // and only a message that holds a word or phrase is mapped back to its bytes.
                let fast = js_lower(text);
                let held = tokens.iter().any(|token| match token.kind {
                    TokenKind::Fuzzy => includes(&fast, &token.needle),
                    TokenKind::Phrase => !token.needle.is_empty() && includes_spaced(&fast, &token.needle),
                });
                if !held {
                    return None;
                }
                let (lower, lower_map) = folded(text, false);
                let normal = OnceCell::new();
                let mut first: Option<std::ops::Range<usize>> = None;
                for token in tokens {
                    let needle = &token.needle;
                    if needle.is_empty() {
                        continue;
                    }
                    let (hay, map) = match token.kind {
                        TokenKind::Fuzzy => (&lower, &lower_map),
                        TokenKind::Phrase => {
                            let (t, m) = normal.get_or_init(|| folded(text, true));
                            (t, m)
                        }
                    };
                    if let Some(at) = memchr::memmem::find(hay, needle) {
                        let range = map[at]..map[at + needle.len()];
                        if first.as_ref().is_none_or(|f| range.start < f.start) {
                            first = Some(range);
                        }
                    }
                }
                first
            }
        }
    }
}

/// `text` lowercased (and, with `spaces`, its whitespace runs as one space), with the byte of
/// `text` each output byte came from, and one more entry for the end.
fn folded(text: &[u8], spaces: bool) -> (Vec<u8>, Vec<usize>) {
    let (mut out, mut map) = (Vec::with_capacity(text.len()), Vec::with_capacity(text.len() + 1));
    let mut at = 0;
    let mut space = false;
    for chunk in text.utf8_chunks() {
        // The chunk's own lowercase, as `js_lower` makes it (a capital sigma's depends on its
        // neighbours), walked beside the chunk: each character gives its mapping's characters.
        let lowered = chunk.valid().to_lowercase();
        let mut lowered = lowered.chars();
        for c in chunk.valid().chars() {
            let n = if c == 'Σ' { 1 } else { c.to_lowercase().count() };
            if spaces && is_js_whitespace(c) {
                space = true;
                lowered.nth(n - 1);
            } else {
                if space && !out.is_empty() {
                    out.push(b' ');
                    map.push(at);
                }
                space = false;
                let mut buf = [0; 4];
                for lower in lowered.by_ref().take(n) {
                    for &b in lower.encode_utf8(&mut buf).as_bytes() {
                        out.push(b);
                        map.push(at);
                    }
                }
            }
            at += c.len_utf8();
        }
        for &b in chunk.invalid() {
            if space && !out.is_empty() {
                out.push(b' ');
                map.push(at);
            }
            space = false;
            out.push(b);
            map.push(at);
            at += 1;
        }
    }
    map.push(at);
    (out, map)
}

/// About 60 bytes before `found` and 100 after, on one line (whitespace runs as one space),
/// with `…` where the text goes on.
fn snippet(text: &[u8], found: std::ops::Range<usize>) -> String {
    let floor = |mut i: usize| {
        while i > 0 && i < text.len() && text[i] & 0xc0 == 0x80 {
            i -= 1;
        }
        i.min(text.len())
    };
    let from = floor(found.start.saturating_sub(60));
    let to = floor((found.end + 100).min(text.len()));
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    let mut space = false;
    for c in String::from_utf8_lossy(&text[from..to]).chars() {
        if is_js_whitespace(c) || c.is_control() {
            space = true;
            continue;
        }
        if space && !out.is_empty() && out != "…" {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    if to < text.len() {
        out.push('…');
    }
    out
}

fn tier(tier: f64, score: f64) -> f64 {
    tier * TIER_WEIGHT + score
}

fn includes(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// `matchLiteralToken`: `value` is already lowercased; `text` is the lowercased messages.
fn literal_token_score(s: &Searched<'_>, value: &[u8], text: &[u8]) -> Option<f64> {
    let name = js_lower(s.name.unwrap_or_default());
    if includes(&name, value) {
        return Some(tier(TIER_NAME, fuzzy_match(value, &name).unwrap_or(0.0)));
    }
    if includes(&js_lower(s.id), value) || includes(text, value) || includes(&js_lower(s.cwd), value) {
        return Some(tier(TIER_TEXT, 0.0));
    }
    None
}

/// `matchFuzzyToken`.
fn fuzzy_token_score(s: &Searched<'_>, token: &Token, text: &[u8]) -> Option<f64> {
    if let Some(score) = literal_token_score(s, &token.needle, text) {
        return Some(score);
    }
    let mut best: Option<f64> = None;
    for field in [s.name.unwrap_or_default(), s.cwd] {
        if let Some(score) = fuzzy_match(token.value.as_bytes(), field)
            && best.is_none_or(|b| score < b)
        {
            best = Some(score);
        }
    }
    best.map(|b| tier(TIER_FUZZY, b))
}

/// `matchPhraseToken`: `phrase` is lowercased with whitespace runs as one space; `text` is the
/// lowercased messages.
fn phrase_score(s: &Searched<'_>, phrase: &[u8], text: &[u8]) -> Option<f64> {
    let name = normalize_whitespace_lower(s.name.unwrap_or_default());
    if includes(&name, phrase) {
        return Some(tier(TIER_NAME, fuzzy_match(phrase, &name).unwrap_or(0.0)));
    }
    if includes(&js_lower(s.id), phrase)
        || includes_spaced(text, phrase)
        || includes(&normalize_whitespace_lower(s.cwd), phrase)
    {
        return Some(tier(TIER_TEXT, 0.0));
    }
    None
}

/// Whether `normalize_whitespace_lower(text)` holds `phrase` (normalised), for `text` already
/// lowercased: the phrase's words in order, each space standing for a whole whitespace run.
fn includes_spaced(text: &[u8], phrase: &[u8]) -> bool {
    let mut words = phrase.split(|&b| b == b' ');
    let first = words.next().unwrap_or_default();
    let rest: Vec<&[u8]> = words.collect();
    memchr::memmem::find_iter(text, first).any(|at| {
        let mut i = at + first.len();
        rest.iter().all(|word| {
            let mut spaced = false;
            while let n @ 1.. = space_len(&text[i..]) {
                i += n;
                spaced = true;
            }
            let found = spaced && text[i..].starts_with(word);
            i += word.len();
            found
        })
    })
}

/// `pi-tui`'s `fuzzyMatch(query, text)`: the score of the query's characters found in order in
/// the text (lower is better), or `None`. A query of letters then digits (or digits then
/// letters) is also tried the other way round, 5 worse.
pub fn fuzzy_match(query: &[u8], text: &[u8]) -> Option<f64> {
    let query = utf16(&js_lower(query));
    let text = utf16(&js_lower(text));
    if let Some(score) = match_query(&query, &text) {
        return Some(score);
    }
    let swapped = swap_letters_and_digits(&query)?;
    match_query(&swapped, &text).map(|score| score + 5.0)
}

/// `abc12` as `12abc` and `12abc` as `abc12`: ASCII letters and digits only, both present.
fn swap_letters_and_digits(q: &[u16]) -> Option<Vec<u16>> {
    let letter = |u: u16| (u16::from(b'a')..=u16::from(b'z')).contains(&u);
    let digit = |u: u16| (u16::from(b'0')..=u16::from(b'9')).contains(&u);
    let starts_with_letter = letter(*q.first()?);
    let first_kind = |u: u16| if starts_with_letter { letter(u) } else { digit(u) };
    let second_kind = |u: u16| if starts_with_letter { digit(u) } else { letter(u) };
    let split = q.iter().position(|&u| !first_kind(u))?;
    if split == 0 || !q[split..].iter().all(|&u| second_kind(u)) {
        return None;
    }
    Some([&q[split..], &q[..split]].concat())
}

/// `matchQuery`: the greedy alignment's score, bettered by any contiguous occurrence.
fn match_query(query: &[u16], text: &[u16]) -> Option<f64> {
    if query.is_empty() {
        return Some(0.0);
    }
    if query.len() > text.len() {
        return None;
    }
    let mut positions = Vec::with_capacity(query.len());
    let mut from = 0;
    for &unit in query {
        let i = from + text.get(from..)?.iter().position(|&u| u == unit)?;
        positions.push(i);
        from = i + 1;
    }
    let mut score = score_positions(text, &positions);
    let mut start = index_of(text, query, 0);
    while let Some(at) = start {
        for (k, p) in positions.iter_mut().enumerate() {
            *p = at + k;
        }
        score = score.min(score_positions(text, &positions));
        start = index_of(text, query, at + 1);
    }
    if query == text {
        score -= 100.0;
    }
    Some(score)
}

/// `String.prototype.indexOf(needle, from)` for a needle that is not empty.
fn index_of(text: &[u16], needle: &[u16], from: usize) -> Option<usize> {
    text.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|i| i + from)
}

/// `scorePositions`: consecutive matches and word starts are rewarded, gaps and late matches
/// cost. (A first match at 0 counts as consecutive, as there.)
fn score_positions(text: &[u16], positions: &[usize]) -> f64 {
    let mut score = 0.0;
    let mut last: i64 = -1;
    let mut consecutive: i64 = 0;
    for &p in positions {
        let i = p as i64;
        if last == i - 1 {
            consecutive += 1;
            score -= (consecutive * 5) as f64;
        } else {
            consecutive = 0;
            if last >= 0 {
                score += ((i - last - 1) * 2) as f64;
            }
        }
        if p == 0 || is_word_boundary(text[p - 1]) {
            score -= 10.0;
        }
        score += i as f64 * 0.1;
        last = i;
    }
    score
}

/// `/[\s\-_./:]/` on one code unit.
fn is_word_boundary(unit: u16) -> bool {
    matches!(u8::try_from(unit), Ok(b'-' | b'_' | b'.' | b'/' | b':'))
        || char::from_u32(u32::from(unit)).is_some_and(is_js_whitespace)
}

/// `hasSessionName`: a name with more than whitespace.
pub fn has_session_name(name: Option<&crate::json::JsStr<'_>>) -> bool {
    name.is_some_and(|n| !crate::text::js_trim(n.as_bytes()).is_empty())
}

/// `String.prototype.trim` of a query.
fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// `toLowerCase` of WTF-8 text: full Unicode lowercase mappings; lone surrogates and any bytes
/// that are not UTF-8 stay as they are.
pub fn js_lower(s: &[u8]) -> Cow<'_, [u8]> {
    if s.is_ascii() {
        if !s.iter().any(u8::is_ascii_uppercase) {
            return Cow::Borrowed(s);
        }
        return Cow::Owned(s.to_ascii_lowercase());
    }
    let mut out = Vec::with_capacity(s.len() + s.len() / 8);
    if let Ok(valid) = simdutf8::basic::from_utf8(s) {
        lower_str_into(valid, &mut out);
        return Cow::Owned(out);
    }
    for chunk in s.utf8_chunks() {
        lower_str_into(chunk.valid(), &mut out);
        out.extend_from_slice(chunk.invalid());
    }
    Cow::Owned(out)
}

/// `toLowerCase` of valid text, appended to `out`.
fn lower_str_into(valid: &str, out: &mut Vec<u8>) {
    // A capital sigma's lowercase depends on its neighbours (Final_Sigma): the library's
    // whole-string mapping knows them.
    if memchr::memmem::find(valid.as_bytes(), "Σ".as_bytes()).is_some() {
        out.extend_from_slice(valid.to_lowercase().as_bytes());
    } else {
        lower_into(valid, out);
    }
}

/// Characters that are their own lowercase, in blocks that hold no other (so no lookup is
/// needed): Latin-1's small letters, Cyrillic's small letters, punctuation, arrows, symbols,
/// CJK, kana, Hangul, private use and emoji (a test checks every one).
fn lowercase_already(c: char) -> bool {
    matches!(
        u32::from(c),
        0xdf..=0xff
            | 0x430..=0x45f
            | 0x2000..=0x206f
            | 0x2190..=0x23ff
            | 0x2500..=0x2bff
            | 0x3000..=0x9fff
            | 0xac00..=0xd7a3
            | 0xe000..=0xf8ff
            | 0x1_f000..=0x1_faff
    )
}

/// Lowercases text without a capital sigma: ASCII runs a byte at a time, other characters by
/// their own mappings.
fn lower_into(s: &str, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let run = bytes[i..].iter().position(|b| !b.is_ascii()).map_or(bytes.len(), |p| i + p);
        let from = out.len();
        out.extend_from_slice(&bytes[i..run]);
        out[from..].make_ascii_lowercase();
        i = run;
        let Some(c) = s[i..].chars().next() else { break };
        if lowercase_already(c) {
            out.extend_from_slice(&bytes[i..i + c.len_utf8()]);
        } else {
            let mut buf = [0; 4];
            for lower in c.to_lowercase() {
                out.extend_from_slice(lower.encode_utf8(&mut buf).as_bytes());
            }
        }
        i += c.len_utf8();
    }
}

/// `normalizeWhitespaceLower`: lowercased, each whitespace run as one space, trimmed.
pub fn normalize_whitespace_lower(s: &[u8]) -> Vec<u8> {
    let lower = js_lower(s);
    let bytes: &[u8] = &lower;
    let mut out = Vec::with_capacity(bytes.len());
    let mut space = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let ws = if matches!(b, b'\t'..=b'\r' | b' ' | 0xc2 | 0xe1..=0xe3 | 0xef) { space_len(&bytes[i..]) } else { 0 };
        if ws > 0 {
            space = true;
            i += ws;
            continue;
        }
        if space && !out.is_empty() {
            out.push(b' ');
        }
        space = false;
        out.push(b);
        i += 1;
    }
    out
}

/// The length of the JavaScript whitespace character that `s` starts with (UTF-8), else 0.
fn space_len(s: &[u8]) -> usize {
    crate::text::leading_ws_len(s).unwrap_or(0)
}

/// WTF-8 as UTF-16 code units (a lone surrogate is one unit; a byte that is not WTF-8 is
/// U+FFFD).
pub fn utf16(s: &[u8]) -> Vec<u16> {
    let mut out = Vec::with_capacity(s.len());
    for_each_unit(s, |_, unit| out.push(unit));
    out
}

/// The byte offset of each UTF-16 unit of `text` as [`utf16`] reads it (both units of a pair at
/// the character's start), and one more for the end.
fn unit_offsets(text: &[u8]) -> Vec<usize> {
    let mut offsets = Vec::with_capacity(text.len() + 1);
    for_each_unit(text, |at, _| offsets.push(at));
    offsets.push(text.len());
    offsets
}

/// Calls `f(byte offset of its character, unit)` for each UTF-16 unit of WTF-8 `s`.
fn for_each_unit(s: &[u8], mut f: impl FnMut(usize, u16)) {
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        let (len, init) = match b {
            0x00..=0x7f => (1, u32::from(b)),
            0xc2..=0xdf => (2, u32::from(b & 0x1f)),
            0xe0..=0xef => (3, u32::from(b & 0x0f)),
            0xf0..=0xf4 => (4, u32::from(b & 0x07)),
            _ => (0, 0),
        };
        let tail = s.get(i + 1..i + len.max(1)).unwrap_or_default();
        if len == 0 || tail.len() + 1 != len || tail.iter().any(|t| t & 0xc0 != 0x80) {
            f(i, 0xfffd);
            i += 1;
            continue;
        }
        let cp = tail.iter().fold(init, |cp, t| (cp << 6) | u32::from(t & 0x3f));
        match u16::try_from(cp) {
            Ok(unit) => f(i, unit),
            Err(_) => {
                let v = cp - 0x1_0000;
                f(i, 0xd800 | (v >> 10) as u16);
                f(i, 0xdc00 | (v & 0x3ff) as u16);
            }
        }
        i += len;
    }
}

/// `filterAndSortSessions`'s relevance order: by score, then the newest first; `items` are
/// already in the listing's order, which ties keep (V8's stable sort, with its comparisons).
pub fn sort_by_relevance<T>(items: &mut [T], score_and_modified: impl Fn(&T) -> (f64, f64)) {
    crate::jssort::js_sort(items, |a, b| {
        let ((sa, ma), (sb, mb)) = (score_and_modified(a), score_and_modified(b));
        if sa != sb { sa - sb } else { mb - ma }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(q: &str) -> Vec<(TokenKind, String)> {
        match Query::parse(q) {
            Ok(Some(Query::Tokens(t))) => t.into_iter().map(|t| (t.kind, t.value)).collect(),
            other => panic!("{q:?}: {other:?}"),
        }
    }

    #[test]
    fn queries_split_into_words_and_phrases_as_pi_parses_them() {
        use TokenKind::{Fuzzy, Phrase};
        assert_eq!(
            tokens("foo \"node cve\" bar"),
            [(Fuzzy, "foo".into()), (Phrase, "node cve".into()), (Fuzzy, "bar".into())]
        );
        assert_eq!(tokens("a\u{3000}b\u{a0}c"), [(Fuzzy, "a".into()), (Fuzzy, "b".into()), (Fuzzy, "c".into())]);
        // An unclosed quote: plain words, the quote kept.
        assert_eq!(tokens("x \"y z"), [(Fuzzy, "x".into()), (Fuzzy, "\"y".into()), (Fuzzy, "z".into())]);
        assert_eq!(tokens("ab\"cd\"ef"), [(Fuzzy, "ab".into()), (Phrase, "cd".into()), (Fuzzy, "ef".into())]);
        assert_eq!(tokens("\"\""), []);
        assert!(matches!(Query::parse(" \t\u{feff}"), Ok(None)));
        assert_eq!(Query::parse("re:  ").err(), Some(QueryError("Empty regex".into())));
        assert!(Query::parse("re:a(").is_err());
        assert!(matches!(Query::parse("re: fo+ "), Ok(Some(Query::Regex(_)))));
    }

    #[test]
    fn fuzzy_scores_are_pi_tuis() {
        // Worked by hand from `scorePositions`: "ab" at 0: -5 - 10 + 0; then consecutive -10 + 0.1.
        assert_eq!(fuzzy_match(b"ab", b"abc"), Some(-5.0 - 10.0 - 10.0 + 0.1));
        // Equal strings get 100 off.
        assert_eq!(fuzzy_match(b"AB", b"ab"), Some(-25.0 + 0.1 - 100.0));
        // A gap of one after a word start: "ac" in "abc".
        assert_eq!(fuzzy_match(b"ac", b"abc"), Some(-15.0 + 2.0 + 0.2));
        assert_eq!(fuzzy_match(b"xyz", b"abc"), None);
        assert_eq!(fuzzy_match(b"abcd", b"abc"), None);
        // Letters and digits swapped: "v2" not in "2v", found as "2v", 5 worse.
        let direct = fuzzy_match(b"2v", b"2v").map(|s| s + 5.0);
        assert_eq!(fuzzy_match(b"v2", b"2v"), direct);
        // Positions count UTF-16 units: the emoji before takes two.
        let late = fuzzy_match(b"b", "\u{1f600}b".as_bytes());
        assert_eq!(late, Some(0.2));
    }

    #[test]
    fn text_is_lowered_and_spaced_as_javascript_does() {
        assert_eq!(&*js_lower("ÀBΣ İ".as_bytes()), "àbς i\u{307}".as_bytes());
        assert_eq!(&*js_lower("ΣΑΣ ΑΣ".as_bytes()), "σας ας".as_bytes());
        // The fast mapping agrees with the library's on every character but the capital sigma.
        let all: String = (0..0x11_0000).filter_map(char::from_u32).filter(|&c| c != 'Σ').collect();
        assert_eq!(&*js_lower(all.as_bytes()), all.to_lowercase().as_bytes());
        assert_eq!(normalize_whitespace_lower(" A\u{2028}\u{a0} b\t\n".as_bytes()), b"a b");
        assert_eq!(normalize_whitespace_lower(b"\xed\xa0\x80 X"), b"\xed\xa0\x80 x");
        for c in (0..0x11_0000).filter_map(char::from_u32).filter(|&c| lowercase_already(c)) {
            assert!(c.to_lowercase().eq([c]), "{c:?}");
        }
        // A phrase in the lowered text is a phrase in the normalised one, and only then.
        for (text, phrase) in [
            ("a  b", "a b"),
            ("xa\u{a0}\t by", "a b"),
            ("a b", "a  b"),
            ("ab", "a b"),
            ("a\u{2028}b c", "a b c"),
            ("a b a  bc", "b c"),
            ("a -b", "a b"),
        ] {
            let phrase = normalize_whitespace_lower(phrase.as_bytes());
            let expected = includes(&normalize_whitespace_lower(text.as_bytes()), &phrase);
            assert_eq!(includes_spaced(text.as_bytes(), &phrase), expected, "{text:?} {phrase:?}");
        }
        // Every whitespace character, and none other, found by the byte test.
        for c in (0..0x11_0000).filter_map(char::from_u32) {
            let mut buf = [0; 4];
            let encoded = c.encode_utf8(&mut buf).as_bytes();
            let expected = if is_js_whitespace(c) { encoded.len() } else { 0 };
            assert_eq!(space_len(encoded), expected, "{c:?}");
        }
        assert_eq!(utf16("a\u{1f600}".as_bytes()), [0x61, 0xd83d, 0xde00]);
        assert_eq!(utf16(b"\xed\xa0\x80"), [0xd800]);
    }

    #[test]
    fn patterns_match_code_units_as_without_the_u_flag() {
        let found = |pattern: &str, text: &str| {
            let Ok(Some(Query::Regex(re))) = Query::parse(&format!("re:{pattern}")) else { panic!("{pattern}") };
            let units: Vec<u16> = text.encode_utf16().collect();
            re.find_from_ucs2(&units, 0).next().map(|m| m.range())
        };
        assert_eq!(found("🚀", "ab🚀c"), Some(2..4));
        assert_eq!(found("b🚀+c", "ab🚀c"), Some(1..5));
        assert_eq!(found(r"\uD83D\uDE80c", "ab🚀c"), Some(2..5));
        assert_eq!(found("[🚀]{2}c", "ab🚀c"), Some(2..5));
        assert_eq!(found(r"\uDE80", "ab🚀c"), Some(3..4));
        assert_eq!(found(r"\🚀", "🚀"), Some(0..2));
        assert_eq!(found(r"[\]🚀]", "x🚀"), Some(1..2));
        assert_eq!(ucs2_pattern("a.b"), "a.b");
    }

    #[test]
    fn hits_name_the_messages_that_hold_the_query() {
        let file = concat!(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"Fix the PARSER\n\tnow \ud83d\ude80 İx"}}"#,
            "\n",
            r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"},{"type":"text","text":"the parser is fixed"}]}}"#,
            "\n",
            r#"{"type":"message","id":"t1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","content":"parser"}}"#,
            "\n",
        );
        let info = crate::info::session_info_with(
            file.as_bytes(),
            0.0,
            crate::info::Texts::DecodedWithPieces,
            &jiff::tz::TimeZone::UTC,
        )
        .unwrap();
        // The pieces, joined with one space, are the whole text.
        let joined: Vec<&[u8]> = info.text_pieces.iter().map(|p| &info.all_messages_text[p.range.clone()]).collect();
        assert_eq!(joined.join(&b' '), info.all_messages_text);
        let second = file.find("\n").unwrap() as u64 + 1;
        let hits =
            |q: &str, max| Query::parse(q).unwrap().unwrap().hits(&info.all_messages_text, &info.text_pieces, max);
        let found = hits("parser", 10);
        assert_eq!(found.iter().map(|h| (h.line, h.user)).collect::<Vec<_>>(), [(2, true), (3, false)]);
        assert_eq!(
            (found[0].offset, found[0].id.as_str().map(|s| s.to_str_lossy().into_owned())),
            (second, Some("u1".into()))
        );
        assert_eq!(found[0].snippet, "Fix the PARSER now 🚀 İx");
        assert_eq!(hits("parser", 1).len(), 1);
        // A phrase across a line break, a pattern after an astral character, a letter İ lowercases to two.
        assert_eq!(hits("\"parser now\"", 10).len(), 1);
        assert_eq!(hits("re:🚀 .X", 10)[0].line, 2);
        assert_eq!(hits("i\u{307}x", 10)[0].snippet, "Fix the PARSER now 🚀 İx");
        assert!(hits("done fixed", 10).iter().all(|h| !h.user));
        assert!(hits("zzz", 10).is_empty());
        let long = format!("{}needle{}", "a ".repeat(100), " b".repeat(100));
        let (start, end) = (long.find("needle").unwrap(), long.find("needle").unwrap() + 6);
        let cut = snippet(long.as_bytes(), start..end);
        assert!(cut.starts_with('…') && cut.ends_with('…') && cut.contains("needle"), "{cut}");
    }

    /// Drawn texts (with lone surrogates, stray bytes, astral and special-cased letters) and
    /// queries: nothing panics, a hit is always inside a match, and a word that is in the text
    /// as it is always matches.
    #[test]
    fn drawn_texts_and_queries() {
        let parts: [&[u8]; 20] = [
            b"a",
            b"B",
            b"ab",
            b" ",
            b"\t\n",
            "\u{a0}".as_bytes(),
            "İ".as_bytes(),
            "Σ".as_bytes(),
            "ß".as_bytes(),
            "🚀".as_bytes(),
            b"\xed\xa0\x80",
            b"\xff",
            b"\"",
            b"re:",
            b"(",
            b"[",
            b"\\",
            b"x1",
            b"-",
            b"\xc3",
        ];
        let mut next = crate::json::scan::tests::xorshift(0x5ea2_c4ed_0001_u64);
        let mut draw = |max: u64| {
            let n = next() % max;
            (0..n).flat_map(|_| parts[(next() % parts.len() as u64) as usize].iter().copied()).collect::<Vec<u8>>()
        };
        let (mut matched, mut hit) = (0, 0);
        for _ in 0..20_000 {
            let (text, name, cwd, id) = (draw(30), draw(6), draw(6), draw(3));
            let query = String::from_utf8_lossy(&draw(6)).into_owned();
            let s = Searched { name: Some(&name), id: &id, cwd: &cwd, text: &text };
            let piece = crate::info::TextPiece {
                range: 0..text.len(),
                line: 2,
                offset: 9,
                id: crate::PropertyValue::Absent,
                user: true,
            };
            let phrase = normalize_whitespace_lower(query.as_bytes());
            if !phrase.is_empty() {
                let expected = includes(&normalize_whitespace_lower(&text), &phrase);
                assert_eq!(includes_spaced(&js_lower(&text), &phrase), expected, "{phrase:?} in {text:?}");
            }
            let Ok(Some(q)) = Query::parse(&query) else { continue };
            let score = q.score(&s);
            let hits = q.hits(&text, std::slice::from_ref(&piece), 3);
            if !hits.is_empty() {
                hit += 1;
                let single = matches!(&q, Query::Regex(_)) || matches!(&q, Query::Tokens(t) if t.len() == 1);
                assert!(!single || score.is_some(), "{query:?} in {text:?}");
            }
            if let Query::Tokens(tokens) = &q
                && let [Token { kind: TokenKind::Fuzzy, value, .. }] = &tokens[..]
                && includes(&js_lower(&text), &js_lower(value.as_bytes()))
            {
                assert!(score.is_some(), "{query:?} in {text:?}");
                assert_eq!(hits.len(), 1, "{query:?} in {text:?}");
                matched += 1;
            }
        }
        assert!(matched > 500 && hit > 1_000, "{matched} {hit}");
    }

    #[test]
    fn tiers_rank_name_then_text_then_scattered() {
        let s = Searched { name: Some(b"Fix parser"), id: b"0194-abc", cwd: b"/home/u/proj", text: b"hello World" };
        let score = |q: &str| Query::parse(q).unwrap().unwrap().score(&s);
        assert!(score("parser").unwrap() < 1e6);
        assert_eq!(score("world"), Some(1e6));
        assert_eq!(score("ABC"), Some(1e6));
        assert!(score("hmpj").unwrap() > 1.5e6);
        assert_eq!(score("absent"), None);
        assert_eq!(score("\"hello   world\""), Some(1e6));
        assert_eq!(score("re:^h.l+O"), Some(1e6));
        assert_eq!(score("re:fix"), Some(0.0));
        assert_eq!(score("world parser zzz"), None);
    }
}
