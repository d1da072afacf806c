//! One session's branch as Markdown, for reading or sharing (`session-scan export`): every entry
//! from the root to the leaf, compacted history included, tool calls and their output in fences.

use std::fmt::Write as _;

use session_core::Session;
use session_core::json::Value;

use crate::redact::{Counts, Redactor};
use crate::table::{dollars, thousands};

/// How much to show, and in what zone.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// Tool and command output past this many lines is cut, with a note of how many were left
    /// out (`None`: all of it; `Some(0)`: none).
    pub max_output_lines: Option<usize>,
    /// Times are shown in this zone, which the header names.
    pub zone: crate::days::Zone,
}

impl Default for ExportOptions {
    /// All output, times in UTC.
    fn default() -> ExportOptions {
        ExportOptions { max_output_lines: None, zone: crate::days::Zone::utc() }
    }
}

/// Ends what came before with exactly one blank line.
fn new_block(out: &mut String) {
    let kept = out.trim_end_matches('\n').len();
    out.truncate(kept);
    if !out.is_empty() {
        out.push_str("\n\n");
    }
}

/// A line of its own between blocks (a model change, a name).
fn note(out: &mut String, text: &str) {
    new_block(out);
    let _ = writeln!(out, "*{text}*");
}

/// Marks a new part of the transcript: an anchor (`#entry-ID` links to it, `#line-N` for an entry
/// without an id; text of a message can hold headings too, the anchor tells ours apart), then its
/// heading with its time and label.
fn heading(out: &mut String, anchor: &str, title: &str, time: Option<&str>, label: Option<&str>) {
    new_block(out);
    let _ = writeln!(out, "<a id=\"{anchor}\"></a>");
    let _ = write!(out, "### {title}");
    if let Some(t) = time {
        let _ = write!(out, " · {t}");
    }
    if let Some(l) = label {
        let _ = write!(out, " · label `{}`", l.replace('`', "'"));
    }
    out.push_str("\n\n");
}

/// An id as it can stand in an HTML attribute and a URL fragment: characters other than ASCII
/// letters, digits, `-` and `_` become `_`.
fn anchor_id(id: &str) -> String {
    id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// `body` in a fence longer than any run of backticks inside it.
pub fn fenced(body: &str, lang: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let newline = if body.ends_with('\n') { "" } else { "\n" };
    format!("{fence}{lang}\n{body}{newline}{fence}\n")
}

/// A fence line as CommonMark reads one: up to three spaces, then three or more backticks or
/// tildes; its character, length and what follows.
pub fn fence_of(line: &str) -> Option<(u8, usize, &str)> {
    let indent = line.bytes().take_while(|&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let c = *rest.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = rest.bytes().take_while(|&b| b == c).count();
    (n >= 3).then(|| (c, n, &rest[n..]))
}

/// Where CommonMark's block parsing stands after a line of message text (containers aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockState {
    /// Between blocks.
    Nothing,
    /// In a paragraph (or unsure: lines that are not clearly something else count as one).
    Paragraph,
    /// In a fenced code block: its indentation, character and length.
    Fence(usize, u8, usize),
    /// In an HTML block of CommonMark's kinds 1-5 (`<pre>`, `<script>`, `<style>`, `<textarea>`,
    /// `<!--`, `<?`, `<!X`, `<![CDATA[`), which only the text given ends.
    HtmlUntil(&'static str),
    /// In an HTML block of kinds 6-7, which a blank line ends.
    HtmlUntilBlank,
}

/// The HTML block of kinds 1-5 a line starts, as CommonMark's start conditions read it, with the
/// text that ends it.
fn html_block_of(rest: &[u8]) -> Option<&'static str> {
    for (tag, end) in
        [(&b"pre"[..], "</pre>"), (b"script", "</script>"), (b"style", "</style>"), (b"textarea", "</textarea>")]
    {
        if rest.len() > tag.len()
            && rest[0] == b'<'
            && rest[1..=tag.len()].eq_ignore_ascii_case(tag)
            && rest.get(tag.len() + 1).is_none_or(|&b| b == b'>' || b.is_ascii_whitespace())
        {
            return Some(end);
        }
    }
    if rest.starts_with(b"<!--") {
        Some("-->")
    } else if rest.starts_with(b"<?") {
        Some("?>")
    } else if rest.starts_with(b"<![CDATA[") {
        Some("]]>")
    } else if rest.starts_with(b"<!") && rest.get(2).is_some_and(u8::is_ascii_alphabetic) {
        Some(">")
    } else {
        None
    }
}

/// CommonMark's block-level tag names (HTML blocks of kind 6).
const BLOCK_TAGS: &[&str] = &[
    "address",
    "article",
    "aside",
    "base",
    "basefont",
    "blockquote",
    "body",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hr",
    "html",
    "iframe",
    "legend",
    "li",
    "link",
    "main",
    "menu",
    "menuitem",
    "nav",
    "noframes",
    "ol",
    "optgroup",
    "option",
    "p",
    "param",
    "search",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
];

/// Whether a line starts an HTML block of kind 6: `<` or `</`, a block-level tag name, then a
/// space, `>`, `/>` or the line's end.
fn starts_block_tag(rest: &[u8]) -> bool {
    let Some(after) = rest.strip_prefix(b"<") else { return false };
    let after = after.strip_prefix(b"/").unwrap_or(after);
    let name_len = after.iter().take_while(|b| b.is_ascii_alphanumeric()).count();
    let (name, tail) = after.split_at(name_len);
    BLOCK_TAGS.iter().any(|t| t.as_bytes().eq_ignore_ascii_case(name))
        && (tail.is_empty() || tail[0] == b'>' || tail[0].is_ascii_whitespace() || tail.starts_with(b"/>"))
}

/// Whether a line is a whole open or closing tag and nothing else (an HTML block of kind 7), read
/// strictly: a line in doubt is not one.
fn is_lone_tag(rest: &[u8]) -> bool {
    let ws = |s: &[u8]| s.iter().take_while(|b| matches!(b, b' ' | b'\t')).count();
    let name = |s: &[u8], first: fn(&u8) -> bool, more: fn(&u8) -> bool| {
        if s.first().is_some_and(first) { 1 + s[1..].iter().take_while(|b| more(b)).count() } else { 0 }
    };
    let tag_name = |s: &[u8]| name(s, u8::is_ascii_alphabetic, |b| b.is_ascii_alphanumeric() || *b == b'-');
    let end_of_line = |s: &[u8]| s.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'));
    let Some(mut s) = rest.strip_prefix(b"<") else { return false };
    if let Some(after) = s.strip_prefix(b"/") {
        let n = tag_name(after);
        let after = &after[n..];
        let after = &after[ws(after)..];
        return n > 0 && after.first() == Some(&b'>') && end_of_line(&after[1..]);
    }
    let n = tag_name(s);
    if n == 0 {
        return false;
    }
    s = &s[n..];
    loop {
        let spaces = ws(s);
        let attribute = name(
            &s[spaces..],
            |b| b.is_ascii_alphabetic() || matches!(b, b'_' | b':'),
            |b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'),
        );
        if spaces == 0 || attribute == 0 {
            break;
        }
        s = &s[spaces + attribute..];
        let before_eq = ws(s);
        if s.get(before_eq) == Some(&b'=') {
            let v = &s[before_eq + 1..];
            let v = &v[ws(v)..];
            let value_len = match v.first() {
                Some(&q @ (b'"' | b'\'')) => match v[1..].iter().position(|&b| b == q) {
                    Some(k) => k + 2,
                    None => return false,
                },
                _ => v.iter().take_while(|b| !b" \t\r\n\"'=<>`".contains(b)).count(),
            };
            if value_len == 0 {
                return false;
            }
            s = &v[value_len..];
        }
    }
    let s = &s[ws(s)..];
    let s = s.strip_prefix(b"/").unwrap_or(s);
    s.first() == Some(&b'>') && end_of_line(&s[1..])
}

/// An ATX heading or a thematic break: a one-line block after which no paragraph goes on.
fn is_one_line_block(rest: &[u8]) -> bool {
    let hashes = rest.iter().take_while(|&&b| b == b'#').count();
    if (1..=6).contains(&hashes) && rest.get(hashes).is_none_or(|b| matches!(b, b' ' | b'\t')) {
        return true;
    }
    let mut marks = rest.iter().filter(|b| !matches!(b, b' ' | b'\t'));
    let Some(&mark @ (b'*' | b'-' | b'_')) = marks.next() else { return false };
    let mut count = 1;
    marks.all(|&b| {
        count += 1;
        b == mark
    }) && count >= 3
}

/// Whether `line` holds `end` (an HTML block's end). On the starting line it is looked for from
/// the start itself, as `cmark` does (`<!-->` is a whole comment). An end tag is looked for in
/// lower case only: CommonMark takes `</SCRIPT>` too, `pulldown-cmark` does not, and the closing
/// line added for the stricter reading is a stray end tag, harmless, for the other.
fn ends_html_block(line: &str, end: &str) -> bool {
    line.contains(end)
}

/// The line that closes the block `text` leaves open, if it leaves one: a fence, or an HTML block
/// that only its end closes. Message text is put in as it is, and such a block would otherwise
/// take in the rest of the transcript (blocks that a blank line ends are ended by the one after
/// each message).
pub fn unclosed_block(text: &str) -> Option<String> {
    let mut state = BlockState::Nothing;
    for line in text.lines() {
        let indent = line.bytes().take_while(|&b| b == b' ').count();
        let rest = &line.as_bytes()[indent.min(line.len())..];
        let blank = line.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r'));
        state = match state {
            BlockState::Fence(_, c, n) => match fence_of(line) {
                Some((d, m, after)) if c == d && m >= n && after.trim().is_empty() => BlockState::Nothing,
                _ => state,
            },
            BlockState::HtmlUntil(end) if ends_html_block(line, end) => BlockState::Nothing,
            BlockState::HtmlUntil(_) => state,
            BlockState::HtmlUntilBlank if blank => BlockState::Nothing,
            BlockState::HtmlUntilBlank => state,
            BlockState::Nothing | BlockState::Paragraph => {
                let paragraph = state == BlockState::Paragraph;
                if blank {
                    BlockState::Nothing
                } else if indent > 3 {
                    // Indented code, or a paragraph's next line.
                    state
                } else if let Some((c, n, _)) =
                    fence_of(line).filter(|(c, _, after)| *c == b'~' || !after.contains('`'))
                {
                    BlockState::Fence(indent, c, n)
                } else if let Some(end) = html_block_of(rest) {
                    if ends_html_block(line, end) { BlockState::Nothing } else { BlockState::HtmlUntil(end) }
                } else if starts_block_tag(rest) || (!paragraph && is_lone_tag(rest)) {
                    BlockState::HtmlUntilBlank
                } else if is_one_line_block(rest) {
                    BlockState::Nothing
                } else {
                    BlockState::Paragraph
                }
            }
        };
    }
    match state {
        // Indented as the opening line: in a list item, so is the fence.
        BlockState::Fence(indent, c, n) => {
            Some(format!("{}{}", " ".repeat(indent), char::from(c).to_string().repeat(n)))
        }
        BlockState::HtmlUntil(end) => Some(end.to_string()),
        _ => None,
    }
}

/// Message text as it is, with a fence or HTML block it leaves open closed.
fn push_text(out: &mut String, text: &str) {
    out.push_str(text);
    if let Some(close) = unclosed_block(text) {
        let _ = write!(out, "\n{close}");
    }
}

/// `text` cut to `max` lines, with how many were left out.
fn cut(text: &str, max: Option<usize>) -> (String, usize) {
    let Some(max) = max else { return (text.to_string(), 0) };
    let total = text.lines().count();
    if total <= max {
        return (text.to_string(), 0);
    }
    let kept: Vec<&str> = text.lines().take(max).collect();
    (kept.join("\n"), total - max)
}

fn string(v: Option<&Value<'_>>) -> Option<String> {
    v.and_then(Value::as_str).map(|s| s.to_str_lossy().into_owned())
}

/// Tool output in a fence, cut as asked.
fn output_block(out: &mut String, text: &str, opts: &ExportOptions) {
    let (shown, left_out) = cut(text, opts.max_output_lines);
    if !shown.is_empty() {
        out.push_str(&fenced(&shown, ""));
    }
    if left_out > 0 {
        let _ = writeln!(out, "*… {left_out} more line{}*", if left_out == 1 { "" } else { "s" });
    } else if text.is_empty() {
        out.push_str("*(no output)*\n");
    }
}

/// A tool call's arguments, one per line: `key: value`, a string of several lines as an
/// indented block after `key: |`, anything else as JSON.
fn arguments(args: Option<&Value<'_>>) -> String {
    let Some(Value::Object(o)) = args else {
        return args.map(session_core::json::to_json).unwrap_or_default();
    };
    let mut s = String::new();
    for (k, v) in o.iter() {
        let key = k.to_str_lossy();
        match v {
            Value::String(t) => {
                let t = t.to_str_lossy();
                if t.contains('\n') {
                    let _ = writeln!(s, "{key}: |");
                    for line in t.lines() {
                        let _ = writeln!(s, "  {line}");
                    }
                } else {
                    let _ = writeln!(s, "{key}: {t}");
                }
            }
            other => {
                let _ = writeln!(s, "{key}: {}", session_core::json::to_json(other));
            }
        }
    }
    s
}

/// A message's `content`: text as it is (it is Markdown already), thinking folded, tool calls
/// with their arguments, images named.
fn content(out: &mut String, content: Option<&Value<'_>>) {
    match content {
        Some(Value::String(t)) => {
            push_text(out, &t.to_str_lossy());
            out.push('\n');
        }
        Some(Value::Array(blocks)) => {
            for b in blocks {
                match string(b.get("type")).as_deref() {
                    Some("text") => {
                        push_text(out, &string(b.get("text")).unwrap_or_default());
                        out.push_str("\n\n");
                    }
                    Some("thinking") => {
                        let thinking = string(b.get("thinking")).unwrap_or_default();
                        if !thinking.trim().is_empty() {
                            out.push_str("<details><summary>Thinking</summary>\n\n");
                            push_text(out, &thinking);
                            out.push_str("\n\n</details>\n\n");
                        }
                    }
                    Some("toolCall") => {
                        let name = string(b.get("name")).unwrap_or_default();
                        let _ = writeln!(out, "**→ `{}`**\n", name.replace('`', "'"));
                        out.push_str(&fenced(&arguments(b.get("arguments")), ""));
                        out.push('\n');
                    }
                    Some("image") => {
                        let mime = string(b.get("mimeType")).unwrap_or_else(|| "image".into());
                        let _ = write!(out, "*[{mime}]*\n\n");
                    }
                    other => {
                        let _ = write!(out, "*[{} block]*\n\n", other.unwrap_or("untyped"));
                    }
                }
            }
        }
        _ => {}
    }
}

/// The text blocks of a tool result's content, joined by lines; images named.
fn result_text(content: Option<&Value<'_>>) -> String {
    match content {
        Some(Value::String(t)) => t.to_str_lossy().into_owned(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|b| match string(b.get("type")).as_deref() {
                Some("text") => string(b.get("text")).unwrap_or_default(),
                Some("image") => format!("[{}]", string(b.get("mimeType")).unwrap_or_else(|| "image".into())),
                other => format!("[{} block]", other.unwrap_or("untyped")),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A system message (format.md §7.3): its added instructions, its sections (set or deleted) and the tools it
/// adds or removes, folded.
fn system_message(out: &mut String, m: &Value<'_>) {
    let names = |key: &str| -> Vec<String> {
        m.get(key).and_then(Value::as_array).unwrap_or_default().iter().filter_map(|t| string(t.get("name"))).collect()
    };
    let (added, removed) = (names("toolsAdded"), names("toolsRemoved"));
    let sections: Vec<(String, Option<String>)> = match m.get("sections") {
        Some(Value::Object(o)) => o.iter().map(|(k, v)| (k.to_str_lossy().into_owned(), string(Some(v)))).collect(),
        _ => Vec::new(),
    };
    let mut summary = vec![format!("{} section{}", sections.len(), if sections.len() == 1 { "" } else { "s" })];
    if !added.is_empty() {
        summary.push(format!("tools added: {}", added.join(", ")));
    }
    if !removed.is_empty() {
        summary.push(format!("tools removed: {}", removed.join(", ")));
    }
    let _ = write!(out, "<details><summary>{}</summary>\n\n", summary.join("; "));
    let text = result_text(m.get("content"));
    if !text.is_empty() {
        out.push_str(&fenced(&text, ""));
        out.push('\n');
    }
    for (name, value) in sections {
        match value {
            Some(v) => {
                let _ = writeln!(out, "**{name}**\n");
                out.push_str(&fenced(&v, ""));
                out.push('\n');
            }
            None => {
                let _ = writeln!(out, "**{name}**: removed\n");
            }
        }
    }
    out.push_str("</details>\n");
}

/// Where an entry is: its anchor, time and label.
#[derive(Clone, Copy)]
struct Place<'p> {
    id: &'p str,
    time: Option<&'p str>,
    label: Option<&'p str>,
}

/// One message entry.
fn message(out: &mut String, role: &str, m: &Value<'_>, at: Place<'_>, opts: &ExportOptions) {
    let Place { id, time, label } = at;
    match role {
        "user" => {
            heading(out, id, "User", time, label);
            content(out, m.get("content"));
        }
        "assistant" => {
            let model = match (string(m.get("provider")), string(m.get("model"))) {
                (Some(p), Some(model)) => format!("Assistant · {p}/{model}"),
                (None, Some(model)) => format!("Assistant · {model}"),
                _ => "Assistant".into(),
            };
            heading(out, id, &model, time, label);
            content(out, m.get("content"));
            if let Some(reason @ ("error" | "aborted")) = string(m.get("stopReason")).as_deref() {
                let why = string(m.get("errorMessage")).unwrap_or_default();
                let _ = writeln!(
                    out,
                    "*Stopped ({reason}){}*\n",
                    if why.is_empty() { String::new() } else { format!(": {why}") }
                );
            }
        }
        "toolResult" => {
            let name = string(m.get("toolName")).unwrap_or_default();
            let error = matches!(m.get("isError"), Some(Value::Bool(true)));
            let title = format!("Tool result · `{}`{}", name.replace('`', "'"), if error { " · error" } else { "" });
            heading(out, id, &title, time, label);
            output_block(out, &result_text(m.get("content")), opts);
        }
        "bashExecution" => {
            heading(out, id, "Shell command", time, label);
            out.push_str(&fenced(&string(m.get("command")).unwrap_or_default(), "sh"));
            output_block(out, &string(m.get("output")).unwrap_or_default(), opts);
            let mut notes = Vec::new();
            if let Some(code) = m.get("exitCode").and_then(Value::as_f64) {
                notes.push(format!("exit code {code}"));
            }
            if matches!(m.get("cancelled"), Some(Value::Bool(true))) {
                notes.push("cancelled".into());
            }
            if matches!(m.get("truncated"), Some(Value::Bool(true))) {
                notes.push("output truncated by Pi".into());
            }
            if !notes.is_empty() {
                let _ = writeln!(out, "*{}*", notes.join(", "));
            }
        }
        "branchSummary" | "compactionSummary" => {
            let title = if role == "branchSummary" { "Branch summary" } else { "Compaction summary" };
            heading(out, id, title, time, label);
            push_text(out, &string(m.get("summary")).unwrap_or_default());
            out.push('\n');
        }
        "system" => {
            heading(out, id, "System prompt", time, label);
            system_message(out, m);
        }
        other => {
            let custom = string(m.get("customType"));
            let title = match (other, custom) {
                ("custom", Some(t)) => format!("Custom message · {t}"),
                (r, _) => format!("Message · {}", if r.is_empty() { "(no role)" } else { r }),
            };
            heading(out, id, &title, time, label);
            content(out, m.get("content"));
        }
    }
}

/// The first line of the first user message on `path` with text: the title of a session without
/// a name.
fn first_user_line(session: &Session<'_>, path: &[usize]) -> Option<String> {
    let mut arena = bumpalo::Bump::new();
    for &i in path {
        arena.reset();
        let entry = &session.records[i];
        if !(entry.is_type("message") && entry.role().is("user")) {
            continue;
        }
        let Ok(v) = entry.value(&arena) else { continue };
        let mut text = String::new();
        content(&mut text, v.get("message").and_then(|m| m.get("content")));
        if let Some(line) = text.lines().find(|l| !l.trim().is_empty()) {
            return Some(line.to_string());
        }
    }
    None
}

/// Writes the Markdown of the records at `path` (root first) of `session`, read from `file`, an
/// entry at a time (a session of gigabytes is never held as one text), each redacted first when
/// a `redactor` is given; gives what was redacted.
pub fn write_markdown(
    w: &mut dyn std::io::Write,
    file: &str,
    session: &Session<'_>,
    path: &[usize],
    opts: &ExportOptions,
    redactor: Option<&Redactor>,
) -> std::io::Result<Counts> {
    let mut counts = Counts::new();
    let mut emit = |text: &str| -> std::io::Result<()> {
        match redactor {
            Some(r) => {
                let (redacted, found) = r.redact(text);
                for (kind, n) in found {
                    *counts.entry(kind).or_default() += n;
                }
                w.write_all(redacted.as_bytes())
            }
            None => w.write_all(text.as_bytes()),
        }
    };
    emit(&header_block(file, session, path, &opts.zone))?;
    // One entry's parsed value and text at a time.
    let mut arena = bumpalo::Bump::new();
    let mut chunk = String::new();
    for &i in path {
        arena.reset();
        chunk.clear();
        let entry = &session.records[i];
        let time = entry.timestamp.as_str().map(|t| opts.zone.second(&t.to_str_lossy()));
        let label = session.label(&entry.id).and_then(|(l, _)| l.as_str()).map(|l| l.to_str_lossy().into_owned());
        let Ok(v) = entry.value(&arena) else { continue };
        let anchor = match entry.id.as_str() {
            Some(id) => format!("entry-{}", anchor_id(&id.to_str_lossy())),
            None => format!("line-{}", entry.line_number),
        };
        let (id, time, label) = (anchor.as_str(), time.as_deref(), label.as_deref());
        let kind = entry.entry_type.as_str().map(|t| t.to_str_lossy().into_owned()).unwrap_or_default();
        match kind.as_str() {
            "message" => {
                let Some(m) = v.get("message") else { continue };
                let role = entry.role().as_str().map(|r| r.to_str_lossy().into_owned()).unwrap_or_default();
                message(&mut chunk, &role, m, Place { id, time, label }, opts);
            }
            "compaction" => {
                heading(&mut chunk, id, "Compaction", time, label);
                let before = v.get("tokensBefore").and_then(Value::as_f64);
                let _ = writeln!(
                    chunk,
                    "*The messages above were summarized for the model{}:*\n",
                    before.map(|t| format!(" ({t} tokens before)")).unwrap_or_default()
                );
                for line in string(v.get("summary")).unwrap_or_default().lines() {
                    let _ = writeln!(chunk, "> {line}");
                }
            }
            "branch_summary" => {
                heading(&mut chunk, id, "Branch summary", time, label);
                for line in string(v.get("summary")).unwrap_or_default().lines() {
                    let _ = writeln!(chunk, "> {line}");
                }
            }
            // Atomic's resume summary (format.md §8).
            "session_summary" => {
                heading(&mut chunk, id, "Session summary", time, label);
                for line in string(v.get("summary")).unwrap_or_default().lines() {
                    let _ = writeln!(chunk, "> {line}");
                }
            }
            "custom_message" => {
                let t = string(v.get("customType")).unwrap_or_default();
                heading(&mut chunk, id, &format!("Custom message · {t}"), time, label);
                content(&mut chunk, v.get("content"));
            }
            "model_change" => {
                let model =
                    [string(v.get("provider")), string(v.get("modelId"))].into_iter().flatten().collect::<Vec<_>>();
                note(&mut chunk, &format!("Model: {}", model.join("/")));
            }
            "thinking_level_change" => {
                note(&mut chunk, &format!("Thinking level: {}", string(v.get("thinkingLevel")).unwrap_or_default()));
            }
            "session_info" => {
                if let Some(name) = string(v.get("name")) {
                    note(&mut chunk, &format!("Session named “{}”", name.trim()));
                }
            }
            "context_edit" => {
                let target = string(v.get("targetId")).unwrap_or_default();
                match v.get("replacement") {
                    Some(Value::Object(r)) => {
                        note(&mut chunk, &format!("Context edit: what the model sees of `{target}` is now:"));
                        chunk.push('\n');
                        content(&mut chunk, r.get("content"));
                    }
                    _ => note(&mut chunk, &format!("Context edit: `{target}` is left out of what the model sees")),
                }
            }
            // Labels are shown on what they label; extension state is not conversation.
            "label" | "custom" => {}
            other => {
                note(&mut chunk, &format!("{} entry", if other.is_empty() { "untyped" } else { other }));
            }
        }
        if !chunk.is_empty() {
            chunk.truncate(chunk.trim_end_matches('\n').len());
            chunk.insert(0, '\n');
            chunk.push('\n');
            emit(&chunk)?;
        }
    }
    Ok(counts)
}

/// The title and the facts of the session: id, project, start, file, branch, cost by model.
fn header_block(file: &str, session: &Session<'_>, path: &[usize], zone: &crate::days::Zone) -> String {
    let header = &session.header;
    let id = session.id().to_str_lossy().into_owned();
    let name = session.name().map(|n| n.to_str_lossy().trim().to_string()).filter(|n| !n.is_empty());
    let title = name
        .or_else(|| first_user_line(session, path).map(|t| shorten(&t, 80)))
        .unwrap_or_else(|| format!("Session {id}"));
    let mut out = format!("# {}\n\n", title.trim_start_matches('#').trim());
    let _ = writeln!(out, "- **Session:** `{id}`");
    if let Some(cwd) = string(header.get("cwd")) {
        let _ = writeln!(out, "- **Project:** `{cwd}`");
    }
    if let Some(created) = string(header.get("timestamp")) {
        let _ = writeln!(out, "- **Started:** {} (times in {})", zone.second(&created), zone.label);
    }
    let _ = writeln!(out, "- **File:** `{file}`");
    let leaf = path.last().and_then(|&i| session.records[i].id.as_str()).map(|s| s.to_str_lossy().into_owned());
    let _ = writeln!(
        out,
        "- **Branch:** {} of the file's {} entries, from the root to `{}`",
        path.len(),
        session.records.len().saturating_sub(1),
        leaf.unwrap_or_default()
    );
    let totals = session_core::stats::session_totals(session);
    let u = &totals.stats.usage;
    let _ = writeln!(
        out,
        "- **Cost** (every branch of the file): ${} for {} tokens ({} in, {} out, {} cache read, {} cache write)",
        dollars(u.cost),
        thousands(u.tokens()),
        thousands(u.input),
        thousands(u.output),
        thousands(u.cache_read),
        thousands(u.cache_write)
    );
    for row in &totals.breakdown {
        let _ = writeln!(out, "  - {}: ${}, {} tokens", row.key, dollars(row.cost), thousands(row.tokens));
    }
    out
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max { s.to_string() } else { format!("{}…", s.chars().take(max).collect::<String>()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_is_longer_than_any_backtick_run_inside() {
        assert_eq!(fenced("plain", ""), "```\nplain\n```\n");
        assert_eq!(fenced("a ```` b\n", "sh"), "`````sh\na ```` b\n`````\n");
    }

    #[test]
    fn a_fence_left_open_is_closed() {
        assert_eq!(unclosed_block("a\n```\nb\n```\n"), None);
        assert_eq!(unclosed_block("```\nx\n```python\ny\n```\n```"), Some("```".into()));
        assert_eq!(unclosed_block("~~~~\n```\n~~~"), Some("~~~~".into()));
        assert_eq!(unclosed_block("    ```\nindented four: code, not a fence"), None);
        assert_eq!(unclosed_block("``` a`b\nnot a fence: a backtick in its info"), None);
    }

    /// CommonMark's HTML blocks 1-5 end only at their end text, not at a blank line.
    #[test]
    fn an_html_block_left_open_is_closed() {
        assert_eq!(unclosed_block("<!-- a note\n\nmore"), Some("-->".into()));
        assert_eq!(unclosed_block("<!-- closed -->\ntext"), None);
        assert_eq!(unclosed_block("<!-->"), None);
        assert_eq!(unclosed_block("  <SCRIPT>\nlet a = 1;\n\n"), Some("</script>".into()));
        assert_eq!(unclosed_block("<pre>\nx\n</pre> after"), None);
        assert_eq!(unclosed_block("<pre>\nx\n</PRE> after"), Some("</pre>".into()));
        assert_eq!(unclosed_block("<style type=\"text/css\">"), Some("</style>".into()));
        assert_eq!(unclosed_block("<textarea"), Some("</textarea>".into()));
        assert_eq!(unclosed_block("<prefix> is not pre"), None);
        assert_eq!(unclosed_block("<?php echo 1;"), Some("?>".into()));
        assert_eq!(unclosed_block("<!DOCTYPE html"), Some(">".into()));
        assert_eq!(unclosed_block("<![CDATA[ x"), Some("]]>".into()));
        assert_eq!(unclosed_block("<div>\nends at a blank line\n"), None);
        assert_eq!(unclosed_block("    <!-- indented four: code"), None);
        assert_eq!(unclosed_block("a paragraph, then\n<!--\n"), Some("-->".into()));
        // Inside a fence an HTML start is code, and inside an HTML block a fence is HTML.
        assert_eq!(unclosed_block("```\n<!--\n```"), None);
        assert_eq!(unclosed_block("<!--\n```\n-->"), None);
        assert_eq!(unclosed_block("<!--\n-->\n```"), Some("```".into()));
    }

    #[test]
    fn output_is_cut_to_the_lines_asked_for() {
        assert_eq!(cut("a\nb\nc", Some(2)), ("a\nb".to_string(), 1));
        assert_eq!(cut("a\nb\nc", None), ("a\nb\nc".to_string(), 0));
        assert_eq!(cut("a\nb", Some(2)), ("a\nb".to_string(), 0));
    }
}
