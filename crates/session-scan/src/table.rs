//! Tables for the terminal, laid out one way for every command: columns shrink (or, past their
//! least width, leave by priority) until the table fits the width; long text is cut at its end or,
//! for paths, in its middle; numbers take thousands separators; notes below are wrapped.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The width tables are fitted to: `COLUMNS`, else the terminal's, else 120 (at least 40).
pub fn width() -> usize {
    let columns = std::env::var("COLUMNS").ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|&w| w > 0);
    columns.or_else(|| terminal_size::terminal_size().map(|(w, _)| usize::from(w.0))).unwrap_or(120).max(40)
}

/// How a cell too long for its column is shortened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// The end gives way to `…` (text).
    End,
    /// The middle gives way to `…` (paths: their start and their file name stay).
    Middle,
}

/// One column: its header, how it is aligned and cut, and what it may give up.
#[derive(Debug, Clone)]
pub struct Column {
    /// The header.
    pub header: String,
    /// Right-aligned (numbers) or left-aligned.
    pub right: bool,
    /// How long text is cut.
    pub cut: Cut,
    /// The width below which the column is dropped rather than narrowed further; a column whose
    /// cells are never longer is never narrowed.
    pub min: usize,
    /// Columns with the highest rank are narrowed first, and leave first when even their least
    /// widths do not fit.
    pub drop_rank: u8,
    /// Shown dim.
    pub dim: bool,
}

impl Column {
    /// A left-aligned text column cut at its end, never dropped.
    pub fn text(header: &str, min: usize) -> Column {
        Column { header: header.to_owned(), right: false, cut: Cut::End, min, drop_rank: 0, dim: false }
    }

    /// A right-aligned number column, never narrowed (a cut number would mislead).
    pub fn number(header: &str) -> Column {
        Column { header: header.to_owned(), right: true, cut: Cut::End, min: usize::MAX, drop_rank: 0, dim: false }
    }

    /// The column, dropped when the table does not fit, before columns of a lower rank.
    pub fn droppable(mut self, rank: u8) -> Column {
        self.drop_rank = rank;
        self
    }

    /// The column, its long text cut in the middle.
    pub fn middle(mut self) -> Column {
        self.cut = Cut::Middle;
        self
    }

    /// The column, dim.
    pub fn dim(mut self) -> Column {
        self.dim = true;
        self
    }
}

/// How a row is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowStyle {
    /// As it is.
    #[default]
    Plain,
    /// Bold (totals).
    Strong,
    /// Dim (sub-rows).
    Faint,
}

/// A table: columns, rows of cells (one per column) and the lines that follow it.
#[derive(Debug, Clone, Default)]
pub struct Table {
    columns: Vec<Column>,
    rows: Vec<(Vec<String>, RowStyle)>,
    notes: Vec<String>,
}

/// The escapes of a style when colour is on.
struct Paint {
    bold: &'static str,
    dim: &'static str,
    reset: &'static str,
}

impl Table {
    /// An empty table with these columns.
    pub fn new(columns: Vec<Column>) -> Table {
        Table { columns, rows: Vec::new(), notes: Vec::new() }
    }

    /// Adds a row (missing cells are empty).
    pub fn row(&mut self, cells: Vec<String>, style: RowStyle) {
        self.rows.push((cells, style));
    }

    /// Adds a line under the table, wrapped at spaces to the width.
    pub fn note(&mut self, text: String) {
        self.notes.push(text);
    }

    /// The columns shown and their widths at `width`: each column's natural width (its longest
    /// cell or header), narrowed where it can be, from the widest text column down; columns
    /// leave by rank while even their least widths do not fit.
    pub fn layout(&self, width: usize) -> Vec<(usize, usize)> {
        let natural: Vec<usize> = (0..self.columns.len())
            .map(|c| {
                let cells = self.rows.iter().map(|(r, _)| r.get(c).map_or(0, |s| display_width(s)));
                cells.chain([display_width(&self.columns[c].header)]).max().unwrap_or(0)
            })
            .collect();
        let mut shown: Vec<usize> = (0..self.columns.len()).collect();
        loop {
            let gaps = 2 * shown.len().saturating_sub(1);
            let least: usize = shown.iter().map(|&c| natural[c].min(self.columns[c].min.max(1))).sum();
            let rankable = shown.iter().copied().filter(|&c| self.columns[c].drop_rank > 0).max_by_key(|&c| {
                // The highest rank leaves first; among equals, the rightmost.
                (self.columns[c].drop_rank, c)
            });
            if least + gaps <= width || rankable.is_none() {
                break;
            }
            shown.retain(|&c| Some(c) != rankable);
        }
        let gaps = 2 * shown.len().saturating_sub(1);
        let mut widths: Vec<usize> = shown.iter().map(|&c| natural[c]).collect();
        let mut total: usize = widths.iter().sum::<usize>() + gaps;
        // Narrow the widest column a column at a time until the table fits, a column that leaves
        // early counting wider than it is (a rank-4 column gives way until it is half as wide as
        // a rank-0 one).
        while total > width {
            let weight = |k: usize| widths[k] * (4 + usize::from(self.columns[shown[k]].drop_rank));
            let next = (0..shown.len())
                .filter(|&k| widths[k] > self.columns[shown[k]].min.max(1))
                .max_by_key(|&k| (weight(k), std::cmp::Reverse(k)));
            let Some(k) = next else { break };
            widths[k] -= 1;
            total -= 1;
        }
        shown.into_iter().zip(widths).collect()
    }

    /// The table at `width`, with colour escapes when `color`.
    pub fn render(&self, width: usize, color: bool) -> String {
        let paint = if color {
            Paint { bold: "\x1b[1m", dim: "\x1b[2m", reset: "\x1b[0m" }
        } else {
            Paint { bold: "", dim: "", reset: "" }
        };
        let layout = self.layout(width);
        let mut out = String::new();
        let line = |cells: &dyn Fn(usize) -> String, style: RowStyle, header: bool, out: &mut String| {
            let mut text = String::new();
            for (k, &(c, w)) in layout.iter().enumerate() {
                let col = &self.columns[c];
                let cell = fit(&cells(c), w, col.cut, col.right);
                let cell = if k + 1 == layout.len() && !col.right { cell.trim_end().to_owned() } else { cell };
                if k > 0 {
                    text.push_str("  ");
                }
                let faint = !header && style == RowStyle::Plain && col.dim && !cell.trim().is_empty();
                if faint {
                    text.push_str(paint.dim);
                    text.push_str(&cell);
                    text.push_str(paint.reset);
                } else {
                    text.push_str(&cell);
                }
            }
            let (open, close) = match (header, style) {
                (true, _) | (false, RowStyle::Strong) => (paint.bold, paint.reset),
                (false, RowStyle::Faint) => (paint.dim, paint.reset),
                (false, RowStyle::Plain) => ("", ""),
            };
            out.push_str(open);
            out.push_str(text.trim_end());
            out.push_str(close);
            out.push('\n');
        };
        line(&|c| self.columns[c].header.clone(), RowStyle::Plain, true, &mut out);
        for (cells, style) in &self.rows {
            line(&|c| cells.get(c).cloned().unwrap_or_default(), *style, false, &mut out);
        }
        for note in &self.notes {
            for wrapped in wrap(note, width) {
                out.push_str(paint.dim);
                out.push_str(&wrapped);
                out.push_str(paint.reset);
                out.push('\n');
            }
        }
        out
    }
}

/// The width of `s` in terminal columns (wide characters take two; control characters none).
pub fn display_width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// `s` on one line in exactly `w` columns: control characters become spaces, a longer text is cut
/// (with `…`), a shorter one padded on the side its alignment leaves free.
pub fn fit(s: &str, w: usize, cut: Cut, right: bool) -> String {
    let clean: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let used = display_width(&clean);
    let body = if used <= w {
        clean
    } else if cut == Cut::Middle && w >= 5 {
        // The start and the end, the end longer: it holds the file or project name.
        let head = (w - 1) / 3;
        let tail = w - 1 - head;
        format!("{}…{}", take_width(&clean, head), take_width_end(&clean, tail))
    } else if w == 0 {
        String::new()
    } else {
        format!("{}…", take_width(&clean, w - 1))
    };
    let pad = " ".repeat(w.saturating_sub(display_width(&body)));
    if right { format!("{pad}{body}") } else { format!("{body}{pad}") }
}

/// The longest start of `s` at most `w` columns wide.
fn take_width(s: &str, w: usize) -> String {
    let mut used = 0;
    s.chars()
        .take_while(|c| {
            used += c.width().unwrap_or(0);
            used <= w
        })
        .collect()
}

/// The longest end of `s` at most `w` columns wide.
fn take_width_end(s: &str, w: usize) -> String {
    let mut used = 0;
    let mut end: Vec<char> = s
        .chars()
        .rev()
        .take_while(|c| {
            used += c.width().unwrap_or(0);
            used <= w
        })
        .collect();
    end.reverse();
    end.into_iter().collect()
}

/// `text` wrapped at spaces into lines of at most `width` columns (a word longer than a line is
/// cut).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let needed = display_width(&line) + usize::from(!line.is_empty()) + display_width(word);
        if !line.is_empty() && needed > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        if display_width(&line) > width {
            lines.push(fit(&line, width, Cut::End, false));
            line.clear();
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// A whole number with thousands separators: `1,234,567`.
pub fn thousands(n: f64) -> String {
    let s = format!("{}", n.round() as i64);
    let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
    let mut out = String::from(sign);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A cost in dollars, as every table shows it: four decimals (a cent has two; cheap models cost
/// fractions of one).
pub fn dollars(cost: f64) -> String {
    format!("{cost:.4}")
}

/// A path as tables show it: relative to `base` when it lies under it, else with the home folder
/// as `~`.
pub fn short_path(path: &std::path::Path, base: Option<&std::path::Path>) -> String {
    if let Some(rest) = base.and_then(|b| path.strip_prefix(b).ok()).filter(|r| !r.as_os_str().is_empty()) {
        return rest.to_string_lossy().into_owned();
    }
    home_tilde(&path.to_string_lossy())
}

/// `text` with the home folder at its start written `~`.
pub fn home_tilde(text: &str) -> String {
    match std::env::home_dir().map(|h| h.to_string_lossy().into_owned()) {
        Some(home) if home.len() > 1 && text.starts_with(&home) && text[home.len()..].starts_with(['/', '\\']) => {
            format!("~{}", &text[home.len()..])
        }
        Some(home) if home.len() > 1 && text == home => "~".to_owned(),
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest_line(s: &str) -> usize {
        s.lines().map(display_width).max().unwrap_or(0)
    }

    fn sample() -> Table {
        let mut t = Table::new(vec![
            Column::text("name", 12),
            Column::number("count"),
            Column::text("path", 10).middle().droppable(2),
            Column::number("extra").droppable(1),
        ]);
        for k in 0..5 {
            t.row(
                vec![
                    format!("a long name number {k} that goes on"),
                    thousands(1_234_567.0 * f64::from(k)),
                    format!("/home/someone/projects/deep/folder/{k}/file.jsonl"),
                    "x".into(),
                ],
                RowStyle::Plain,
            );
        }
        t.note("a note that is long enough to need wrapping at a narrow width, word by word".into());
        t
    }

    #[test]
    fn a_table_fits_every_width_and_keeps_what_fits() {
        let t = sample();
        for width in [40, 60, 80, 100, 200] {
            let text = t.render(width, false);
            assert!(widest_line(&text) <= width, "{width}: {text}");
        }
        // Wide: every column, nothing cut.
        let wide = t.render(200, false);
        assert!(wide.contains("/home/someone/projects/deep/folder/4/file.jsonl") && wide.contains("extra"));
        // Narrow: the path column leaves before the name and the count.
        let narrow = t.render(40, false);
        assert!(narrow.contains("count") && narrow.contains("name") && !narrow.contains("path"), "{narrow}");
    }

    #[test]
    fn cells_are_cut_at_their_end_or_in_their_middle() {
        assert_eq!(fit("abcdefghij", 6, Cut::End, false), "abcde…");
        assert_eq!(fit("/home/u/file.jsonl", 9, Cut::Middle, false), "/h….jsonl");
        assert_eq!(fit("42", 5, Cut::End, true), "   42");
        assert_eq!(display_width(&fit("日本語のテキスト", 7, Cut::End, false)), 7);
    }

    #[test]
    fn fit_gives_exactly_the_columns_asked_for() {
        // (text, width, expected)
        let cases = [
            ("abc", 5, "abc  "),
            ("abcde", 5, "abcde"),
            ("abcdef", 5, "abcd…"),
            ("a\tb\nc", 5, "a b c"),
            // A wide character that would straddle the edge is left out; the padding makes up.
            ("数据处理", 5, "数据…"),
            ("数据处理", 8, "数据处理"),
            ("数据处理x", 8, "数据处… "),
            ("🚀🚀", 3, "🚀…"),
            ("e\u{301}tude", 5, "e\u{301}tude"),
            ("", 3, "   "),
            ("abc", 0, ""),
        ];
        for (text, width, expected) in cases {
            let got = fit(text, width, Cut::End, false);
            assert_eq!(got, expected, "{text:?} in {width}");
            assert_eq!(display_width(&got), width, "{text:?} in {width}");
        }
    }

    #[test]
    fn numbers_are_written_one_way() {
        assert_eq!(thousands(1_234_567.4), "1,234,567");
        assert_eq!(thousands(-1234.0), "-1,234");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(dollars(1.5), "1.5000");
    }

    #[test]
    fn notes_wrap_at_spaces() {
        let lines = wrap("one two three four five six", 9);
        assert_eq!(lines, ["one two", "three", "four five", "six"]);
    }
}
