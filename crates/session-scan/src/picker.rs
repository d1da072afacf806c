//! The session picker of `session-scan pick`: its state (the rows Pi's `/resume` shows, the
//! current project's or all, threaded or not, filtered by Pi's picker search as the query is
//! typed), its keys, and its screen, drawn with `ratatui` on any backend.

use std::path::{Path, PathBuf};

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use session_core::search::{Query, Searched};

use crate::list::Listed;

/// Which sessions are shown: the current project's (Pi's picker opens so), or every project's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The sessions of the cwd's folder.
    Project,
    /// Every session of the store.
    All,
}

/// What a key asks of the program around the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Nothing beyond drawing again.
    None,
    /// The user chose this session.
    Choose(PathBuf),
    /// The user left without choosing.
    Cancel,
    /// The user confirmed moving this session to the trash.
    Delete(PathBuf),
    /// A query was typed: the sessions' texts are needed for the full-text search.
    NeedTexts,
    /// The user named this session so.
    Rename(PathBuf, String),
}

/// The picker.
pub struct Picker {
    /// Every session listed, newest first (Pi's order), with its message texts once read.
    listed: Vec<Listed>,
    /// The cwd's session folder (the project scope).
    project_dir: PathBuf,
    /// Which sessions are shown.
    pub scope: Scope,
    /// Forks under their parents (Pi's default view), when no query is typed.
    pub threaded: bool,
    /// The query typed.
    pub query: String,
    /// The shown rows: an index into `listed` and the row's depth in the threaded view.
    shown: Vec<(usize, usize)>,
    selected: usize,
    /// The texts have been read and the search covers them.
    texts_read: bool,
    texts_asked: bool,
    /// A line for the status bar (progress, what happened).
    pub status: String,
    /// A deletion waiting for `y`.
    confirm: Option<PathBuf>,
    /// A new name being typed for the selected session.
    renaming: Option<String>,
    /// The preview of the selected session, by its path.
    preview: Option<(PathBuf, Vec<String>)>,
    preview_scroll: u16,
    /// The zone the preview reads times without an offset in (UTC unless given).
    pub local_zone: jiff::tz::TimeZone,
}

/// The `~` form of a path under the home folder.
fn tilde(path: &str) -> String {
    crate::table::home_tilde(path)
}

/// How long ago a time was, as Pi's picker shows it: `now`, `5m`, `3h`, `2d`, `4mo`, `1y`.
fn ago(ms: f64, now_ms: f64) -> String {
    if !ms.is_finite() {
        return "?".into();
    }
    let minutes = ((now_ms - ms) / 60_000.0).max(0.0);
    match minutes {
        m if m < 1.0 => "now".into(),
        m if m < 60.0 => format!("{}m", m as u64),
        m if m < 60.0 * 24.0 => format!("{}h", (m / 60.0) as u64),
        m if m < 60.0 * 24.0 * 30.0 => format!("{}d", (m / 60.0 / 24.0) as u64),
        m if m < 60.0 * 24.0 * 365.0 => format!("{}mo", (m / 60.0 / 24.0 / 30.0) as u64),
        m => format!("{}y", (m / 60.0 / 24.0 / 365.0) as u64),
    }
}

fn now_ms() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_millis() as f64)
}

impl Picker {
    /// A picker over `listed` (any order), the current project's sessions being those in
    /// `project_dir`.
    pub fn new(listed: Vec<Listed>, project_dir: PathBuf) -> Picker {
        let mut p = Picker {
            listed: Vec::new(),
            project_dir,
            scope: Scope::Project,
            threaded: true,
            query: String::new(),
            shown: Vec::new(),
            selected: 0,
            texts_read: false,
            texts_asked: false,
            status: String::new(),
            confirm: None,
            renaming: None,
            preview: None,
            preview_scroll: 0,
            local_zone: jiff::tz::TimeZone::UTC,
        };
        p.add(listed);
        p
    }

    /// Adds sessions read since (rows stream in); the selected session stays selected.
    pub fn add(&mut self, more: Vec<Listed>) {
        let chosen = self.selected_path().map(Path::to_path_buf);
        self.listed.extend(more.into_iter().filter(|l| l.info.is_ok() && !l.hidden));
        crate::list::sort_by_modified(&mut self.listed);
        self.refilter();
        if let Some(path) = chosen {
            self.select_path(&path);
        }
    }

    /// Replaces the listing by one with the sessions' texts (`allMessagesText`): the query then
    /// searches them as Pi's picker does.
    pub fn set_texts(&mut self, with_texts: Vec<Listed>) {
        let chosen = self.selected_path().map(Path::to_path_buf);
        let mut by_path: ahash::AHashMap<PathBuf, Listed> =
            with_texts.into_iter().filter(|l| l.info.is_ok()).map(|l| (l.path.clone(), l)).collect();
        for l in &mut self.listed {
            if let Some(full) = by_path.remove(&l.path) {
                *l = full;
            }
        }
        self.texts_read = true;
        self.refilter();
        // While a query is typed the best match leads; otherwise the selection stays.
        match chosen {
            Some(path) if self.query.trim().is_empty() => self.select_path(&path),
            _ => self.selected = 0,
        }
    }

    /// Whether the full-text search covers the texts.
    pub fn texts_read(&self) -> bool {
        self.texts_read
    }

    /// The sessions shown, in order.
    pub fn shown_paths(&self) -> Vec<&Path> {
        self.shown.iter().map(|&(i, _)| self.listed[i].path.as_path()).collect()
    }

    /// The selected session's file.
    pub fn selected_path(&self) -> Option<&Path> {
        self.shown.get(self.selected).map(|&(i, _)| self.listed[i].path.as_path())
    }

    fn select_path(&mut self, path: &Path) {
        if let Some(k) = self.shown.iter().position(|&(i, _)| self.listed[i].path == path) {
            self.selected = k;
        }
    }

    fn in_scope(&self, l: &Listed) -> bool {
        self.scope == Scope::All || l.path.parent() == Some(self.project_dir.as_path())
    }

    /// Computes the rows shown: the scope's sessions; with a query, those Pi's search finds, by
    /// relevance; without, newest first, threaded when asked.
    fn refilter(&mut self) {
        let query = Query::parse(&self.query);
        let in_scope: Vec<usize> = (0..self.listed.len()).filter(|&i| self.in_scope(&self.listed[i])).collect();
        self.shown = match &query {
            Ok(Some(q)) => {
                let mut found: Vec<(usize, f64, f64)> = in_scope
                    .into_iter()
                    .filter_map(|i| {
                        let info = self.listed[i].info.as_ref().ok()?;
                        let id = info.id.to_js_string();
                        // Until the texts are read, the first message stands for them.
                        let text =
                            if self.texts_read { &info.all_messages_text[..] } else { info.first_message.as_bytes() };
                        let searched = Searched {
                            name: info.name.as_ref().map(|n| n.as_bytes()),
                            id: &id,
                            cwd: info.cwd.as_bytes(),
                            text,
                        };
                        q.score(&searched).map(|s| (i, s, info.modified))
                    })
                    .collect();
                session_core::search::sort_by_relevance(&mut found, |f| (f.1, f.2));
                found.into_iter().map(|(i, _, _)| (i, 0)).collect()
            }
            Ok(None) if self.threaded => {
                let subset: Vec<Listed> = in_scope.iter().map(|&i| self.listed[i].clone()).collect();
                let (ordered, depths, _) = crate::list::threaded(subset);
                let index: ahash::AHashMap<&Path, usize> =
                    self.listed.iter().enumerate().map(|(k, l)| (l.path.as_path(), k)).collect();
                ordered.iter().zip(depths).filter_map(|(l, d)| index.get(l.path.as_path()).map(|&k| (k, d))).collect()
            }
            Ok(None) => in_scope.into_iter().map(|i| (i, 0)).collect(),
            Err(_) => Vec::new(),
        };
        self.status = match &query {
            Err(e) => format!("query: {e}"),
            Ok(Some(_)) if !self.texts_read => {
                "searching names and first messages; message texts are being read…".into()
            }
            _ => String::new(),
        };
        self.selected = self.selected.min(self.shown.len().saturating_sub(1));
    }

    /// Takes a key press.
    pub fn key(&mut self, key: ratatui::crossterm::event::KeyEvent) -> Action {
        use ratatui::crossterm::event::{KeyCode, KeyModifiers};
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if let Some(mut name) = self.renaming.take() {
            match key.code {
                KeyCode::Enter => {
                    return self.selected_path().map_or(Action::None, |p| Action::Rename(p.to_path_buf(), name));
                }
                KeyCode::Esc => self.status = "not renamed".into(),
                KeyCode::Char('u') if ctrl => self.renaming = Some(String::new()),
                KeyCode::Char('c') if ctrl => self.status = "not renamed".into(),
                KeyCode::Backspace => {
                    name.pop();
                    self.renaming = Some(name);
                }
                KeyCode::Char(c) if !ctrl => {
                    name.push(c);
                    self.renaming = Some(name);
                }
                _ => self.renaming = Some(name),
            }
            return Action::None;
        }
        if let Some(path) = self.confirm.take() {
            return match key.code {
                KeyCode::Char('y' | 'Y') => Action::Delete(path),
                _ => {
                    self.status = "kept".into();
                    Action::None
                }
            };
        }
        let page = 10;
        let last = self.shown.len().saturating_sub(1);
        let before = self.selected;
        match key.code {
            KeyCode::Char('c') if ctrl => return Action::Cancel,
            KeyCode::Esc => return Action::Cancel,
            KeyCode::Enter => return self.selected_path().map_or(Action::None, |p| Action::Choose(p.to_path_buf())),
            KeyCode::Up if key.modifiers.contains(KeyModifiers::SHIFT) => {
                self.preview_scroll = self.preview_scroll.saturating_sub(1);
            }
            KeyCode::Down if key.modifiers.contains(KeyModifiers::SHIFT) => self.preview_scroll += 1,
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Char('p') if ctrl => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => self.selected = (self.selected + 1).min(last),
            KeyCode::Char('n') if ctrl => self.selected = (self.selected + 1).min(last),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(page),
            KeyCode::PageDown => self.selected = (self.selected + page).min(last),
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = last,
            KeyCode::Tab => {
                self.scope = if self.scope == Scope::Project { Scope::All } else { Scope::Project };
                self.refilter();
            }
            KeyCode::Char('t') if ctrl => {
                self.threaded = !self.threaded;
                self.refilter();
            }
            KeyCode::Char('r') if ctrl => {
                if let Some(&(i, _)) = self.shown.get(self.selected) {
                    let info = self.listed[i].info.as_ref().ok();
                    let name = info.and_then(|i| i.name.as_ref()).map(|n| n.to_str_lossy().into_owned());
                    self.renaming = Some(name.unwrap_or_default());
                }
            }
            KeyCode::Char('d') if ctrl => {
                if let Some(p) = self.selected_path() {
                    self.confirm = Some(p.to_path_buf());
                }
            }
            KeyCode::Char('u') if ctrl => {
                self.query.clear();
                self.refilter();
            }
            KeyCode::Backspace => {
                self.query.pop();
                self.refilter();
            }
            KeyCode::Char(c) if !ctrl => {
                self.query.push(c);
                self.selected = 0;
                self.refilter();
                if !self.texts_asked {
                    self.texts_asked = true;
                    return Action::NeedTexts;
                }
            }
            _ => {}
        }
        if self.selected != before {
            self.preview_scroll = 0;
        }
        Action::None
    }

    /// Puts a session read again (after a rename) in place of its old row.
    pub fn update(&mut self, fresh: Listed) {
        if let Some(l) = self.listed.iter_mut().find(|l| l.path == fresh.path) {
            *l = fresh;
        }
        self.preview = None;
        let chosen = self.selected_path().map(Path::to_path_buf);
        self.refilter();
        if let Some(path) = chosen {
            self.select_path(&path);
        }
    }

    /// Removes a session from the rows (after it went to the trash).
    pub fn remove(&mut self, path: &Path) {
        self.listed.retain(|l| l.path != path);
        self.refilter();
    }

    /// The preview of the selected session, read on first need: its name, project, id, cost so
    /// far and the last exchanges of its active branch.
    fn preview_lines(&mut self) -> Vec<String> {
        let Some(path) = self.selected_path().map(Path::to_path_buf) else { return Vec::new() };
        if let Some((p, lines)) = &self.preview
            && *p == path
        {
            return lines.clone();
        }
        let lines = preview_of(&path, &self.local_zone);
        self.preview = Some((path, lines.clone()));
        lines
    }

    /// Draws the picker.
    pub fn draw(&mut self, frame: &mut Frame<'_>) {
        let area = frame.area();
        let [top, main, status, footer] = Layout::default()
            .direction(Direction::Vertical)
            .constraints([Constraint::Length(1), Constraint::Min(3), Constraint::Length(1), Constraint::Length(1)])
            .areas(area);
        let wide = area.width >= 110;
        let [list_area, preview_area] = Layout::default()
            .direction(if wide { Direction::Horizontal } else { Direction::Vertical })
            .constraints([Constraint::Percentage(if wide { 58 } else { 55 }), Constraint::Fill(1)])
            .areas(main);
        let scope = if self.scope == Scope::Project { "this project" } else { "all projects" };
        let view = if !self.query.trim().is_empty() {
            "by relevance"
        } else if self.threaded {
            "threaded"
        } else {
            "newest first"
        };
        let right = format!("{scope} · {view} · {} sessions", self.shown.len());
        let prompt = format!("Search: {}▏", self.query);
        let pad = (area.width as usize).saturating_sub(prompt.chars().count() + right.chars().count() + 1);
        frame.render_widget(Paragraph::new(format!("{prompt}{}{right}", " ".repeat(pad.max(1)))), top);
        self.draw_list(frame, list_area);
        let lines = self.preview_lines();
        let preview = Paragraph::new(lines.join("\n"))
            .block(Block::default().borders(Borders::TOP | Borders::LEFT).title(" preview "))
            .wrap(Wrap { trim: false })
            .scroll((self.preview_scroll, 0));
        frame.render_widget(preview, preview_area);
        let status_text = match (&self.confirm, &self.renaming) {
            (Some(p), _) => {
                format!("Move to the trash? y to confirm, any other key keeps it: {}", tilde(&p.to_string_lossy()))
            }
            (None, Some(name)) => format!("Name: {name}▏ (Enter saves, Esc cancels)"),
            (None, None) => self.status.clone(),
        };
        frame.render_widget(Paragraph::new(status_text), status);
        let keys = "↑↓ move · Enter open · Tab scope · ^T thread · ^R rename · ^D delete · Esc quit";
        frame.render_widget(Paragraph::new(keys).style(Style::default().add_modifier(Modifier::DIM)), footer);
    }

    fn draw_list(&mut self, frame: &mut Frame<'_>, area: Rect) {
        let height = area.height as usize;
        if height == 0 {
            return;
        }
        let first = self.selected.saturating_sub(height.saturating_sub(1));
        let now = now_ms();
        let words: Vec<String> = self
            .query
            .split_whitespace()
            .filter(|w| !w.starts_with("re:"))
            .map(|w| w.trim_matches('"').to_lowercase())
            .filter(|w| !w.is_empty())
            .collect();
        let width = area.width as usize;
        let mut lines = Vec::new();
        for (k, &(i, depth)) in self.shown.iter().enumerate().skip(first).take(height) {
            let Ok(info) = &self.listed[i].info else { continue };
            let name = info.name.as_ref().map(|n| n.to_str_lossy().trim().to_string()).filter(|n| !n.is_empty());
            let title = name.unwrap_or_else(|| info.first_message.to_str_lossy().replace(['\n', '\r', '\t'], " "));
            let cwd = info.cwd.to_str_lossy();
            let project = tilde(&cwd);
            let right = format!(
                " {}  {:>4}  {:>5}",
                crate::table::fit(&project, 24, crate::table::Cut::Middle, false),
                info.message_count,
                ago(info.modified, now)
            );
            let indent = "  ".repeat(depth.min(8));
            let room = width.saturating_sub(right.chars().count() + indent.len() + 2);
            let title = crate::table::fit(&title, room, crate::table::Cut::End, false);
            let title = format!("{title:<room$}");
            let selected = k == self.selected;
            let base = if selected { Style::default().add_modifier(Modifier::REVERSED) } else { Style::default() };
            let mut spans = vec![Span::styled(format!("{} {indent}", if selected { "›" } else { " " }), base)];
            spans.extend(highlight(&title, &words, base));
            spans.push(Span::styled(right, base.add_modifier(Modifier::DIM)));
            lines.push(Line::from(spans));
        }
        if self.shown.is_empty() {
            lines.push(Line::from(if self.query.is_empty() {
                "  no sessions here (Tab: all projects)"
            } else {
                "  no session matches"
            }));
        }
        frame.render_widget(Paragraph::new(lines), area);
    }
}

/// `text` in spans, the query's words in bold.
fn highlight(text: &str, words: &[String], base: Style) -> Vec<Span<'static>> {
    let lower = text.to_lowercase();
    if words.is_empty() || lower.len() != text.len() {
        return vec![Span::styled(text.to_owned(), base)];
    }
    let mut marks = vec![false; text.len()];
    for w in words {
        for (at, _) in lower.match_indices(w.as_str()) {
            marks[at..at + w.len()].iter_mut().for_each(|m| *m = true);
        }
    }
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, _) in text.char_indices().skip(1).chain([(text.len(), ' ')]) {
        if i == text.len() || marks[i] != marks[start] {
            let style = if marks[start] { base.add_modifier(Modifier::BOLD | Modifier::UNDERLINED) } else { base };
            spans.push(Span::styled(text[start..i].to_owned(), style));
            start = i;
        }
    }
    spans
}

/// The preview's lines for a session file.
pub fn preview_of(path: &Path, local_zone: &jiff::tz::TimeZone) -> Vec<String> {
    let mut buf = Vec::new();
    let Ok((map, _)) = crate::read_file_into(path, crate::ReadStrategy::Auto, &mut buf) else {
        return vec![format!("{}: cannot be read", path.display())];
    };
    let bytes: &[u8] = map.as_deref().unwrap_or(&buf);
    let Ok(session) = crate::load_session(bytes, local_zone) else {
        return vec![format!("{}: not a session Pi opens", path.display())];
    };
    let mut out = Vec::new();
    if let Some(name) = session.name() {
        out.push(format!("Name:    {}", name.to_str_lossy().trim()));
    }
    let cwd = session.header.get("cwd").and_then(session_core::json::Value::as_str);
    out.push(format!("Project: {}", tilde(&cwd.map(|c| c.to_str_lossy().into_owned()).unwrap_or_default())));
    out.push(format!("Id:      {}", session.id().to_str_lossy()));
    let totals = session_core::stats::session_totals(&session);
    out.push(format!(
        "Cost:    ${} for {} tokens",
        crate::table::dollars(totals.stats.usage.cost),
        crate::table::thousands(totals.stats.usage.tokens())
    ));
    out.push(String::new());
    // The last exchanges of the active branch, oldest first.
    let branch = session.branch(None);
    let arena = bumpalo::Bump::new();
    let mut said = Vec::new();
    for &i in branch.path.iter().rev() {
        if said.len() >= 8 {
            break;
        }
        let e = &session.records[i];
        let role = e.role();
        let who = match role.as_str().map(|r| r.to_str_lossy().into_owned()).as_deref() {
            Some("user") => "you",
            Some("assistant") => "pi",
            _ => continue,
        };
        let Ok(v) = e.value(&arena) else { continue };
        let text: Vec<String> = session_core::entry_texts::entry_texts(&v)
            .iter()
            .filter(|p| {
                matches!(p.kind, session_core::entry_texts::Kind::User | session_core::entry_texts::Kind::Assistant)
            })
            .filter_map(|p| p.text.as_str().map(|s| s.to_str_lossy().trim().to_string()))
            .filter(|s| !s.is_empty())
            .collect();
        if text.is_empty() {
            continue;
        }
        let joined = text.join(" ");
        let short: String = joined.chars().take(400).collect();
        said.push(format!("{who}: {short}{}", if short.len() < joined.len() { "…" } else { "" }));
    }
    said.reverse();
    out.extend(said.into_iter().flat_map(|s| [s, String::new()]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    fn store() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/sample-16/sessions")
    }

    fn picker() -> Picker {
        let listed = crate::list::read_store(&store(), crate::list::Reading::new(crate::list::Texts::Skip, false));
        Picker::new(listed, store().join("--Users-bob-work-api-server--"))
    }

    fn screen(p: &mut Picker, w: u16, h: u16) -> Vec<String> {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| p.draw(f)).unwrap();
        let buf = t.backend().buffer().clone();
        (0..h).map(|y| (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect::<String>()).collect()
    }

    fn press(p: &mut Picker, code: KeyCode) -> Action {
        p.key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn ctrl(p: &mut Picker, c: char) -> Action {
        p.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
    }

    #[test]
    fn the_project_rows_newest_first_with_the_selection_footer_and_preview() {
        let mut p = picker();
        p.threaded = false;
        p.refilter();
        let lines = screen(&mut p, 80, 24);
        assert!(
            lines[0].starts_with("Search: ") && lines[0].contains("this project · newest first · 36 sessions"),
            "{lines:#?}"
        );
        assert!(lines[1].starts_with("› "), "the first row is selected: {lines:#?}");
        assert!(lines[23].starts_with("↑↓ move · Enter open"), "{lines:#?}");
        assert!(lines.iter().any(|l| l.contains("Id:      ")), "the preview: {lines:#?}");
        assert!(lines.iter().all(|l| unicode_width::UnicodeWidthStr::width(l.as_str()) <= 80));
        // Newest first: the shown order is the listing's order by `modified`.
        let modified: Vec<f64> = p.shown.iter().map(|&(i, _)| p.listed[i].info.as_ref().unwrap().modified).collect();
        assert!(modified.windows(2).all(|w| w[0] >= w[1]));
        // Wide: the preview beside the list.
        let wide = screen(&mut p, 160, 40);
        assert!(wide[2].contains("│"), "{wide:#?}");
    }

    #[test]
    fn keys_move_search_scope_choose_and_leave() {
        let mut p = picker();
        let project = p.shown_paths().len();
        press(&mut p, KeyCode::Tab);
        assert_eq!(p.shown_paths().len(), 200, "all projects");
        press(&mut p, KeyCode::Tab);
        assert_eq!(p.shown_paths().len(), project);
        press(&mut p, KeyCode::Down);
        ctrl(&mut p, 'n');
        let third = p.shown_paths()[2].to_path_buf();
        assert_eq!(press(&mut p, KeyCode::Enter), Action::Choose(third));
        ctrl(&mut p, 'p');
        assert_eq!(p.selected, 1);
        // Typing asks once for the texts, and filters with Pi's search.
        assert_eq!(press(&mut p, KeyCode::Char('r')), Action::NeedTexts);
        for c in "un the tests".chars() {
            assert_eq!(press(&mut p, KeyCode::Char(c)), Action::None);
        }
        let shown = p.shown_paths().len();
        assert!(shown > 0 && shown < project, "{shown}");
        assert_eq!(p.selected, 0);
        let lines = screen(&mut p, 100, 30);
        assert!(lines[0].starts_with("Search: run the tests▏") && lines[0].contains("by relevance"), "{lines:#?}");
        // The query's words are in bold in the rows that hold them.
        let mut t = Terminal::new(TestBackend::new(100, 30)).unwrap();
        t.draw(|f| p.draw(f)).unwrap();
        let buf = t.backend().buffer().clone();
        let row = (1..30u16)
            .find(|&y| (0..100u16).map(|x| buf[(x, y)].symbol()).collect::<String>().contains("run the tests"))
            .unwrap();
        let text: String = (0..100u16).map(|x| buf[(x, row)].symbol()).collect();
        let at = text.find("run the tests").unwrap();
        let col = text[..at].chars().count() as u16;
        assert!(buf[(col, row)].modifier.contains(Modifier::BOLD), "a match in bold");
        assert!(col > 0 && !buf[(col - 1, row)].modifier.contains(Modifier::BOLD), "the text around it is not");
        ctrl(&mut p, 'u');
        assert_eq!(p.shown_paths().len(), project);
        // Delete asks first; any key but y keeps the session.
        ctrl(&mut p, 'd');
        assert!(screen(&mut p, 100, 30).iter().any(|l| l.starts_with("Move to the trash? y to confirm")));
        assert_eq!(press(&mut p, KeyCode::Char('n')), Action::None);
        assert_eq!(p.shown_paths().len(), project);
        ctrl(&mut p, 'd');
        let selected = p.selected_path().unwrap().to_path_buf();
        assert_eq!(press(&mut p, KeyCode::Char('y')), Action::Delete(selected));
        // Ctrl-R types a new name in the status line; Enter gives it, Esc keeps the old one.
        ctrl(&mut p, 'r');
        ctrl(&mut p, 'u');
        for c in "new name".chars() {
            press(&mut p, KeyCode::Char(c));
        }
        assert!(screen(&mut p, 100, 30).iter().any(|l| l.starts_with("Name: new name▏ (Enter saves, Esc cancels)")));
        let selected = p.selected_path().unwrap().to_path_buf();
        assert_eq!(press(&mut p, KeyCode::Enter), Action::Rename(selected, "new name".into()));
        ctrl(&mut p, 'r');
        assert_eq!(press(&mut p, KeyCode::Esc), Action::None);
        assert_eq!(p.status, "not renamed");
        assert_eq!(press(&mut p, KeyCode::Esc), Action::Cancel);
        assert_eq!(ctrl(&mut p, 'c'), Action::Cancel);
    }

    #[test]
    fn full_texts_widen_the_search_and_the_threaded_view_indents_forks() {
        let mut p = picker();
        p.scope = Scope::All;
        for c in "qwen".chars() {
            press(&mut p, KeyCode::Char(c));
        }
        let before = p.shown_paths().len();
        let texts = crate::list::read_store(&store(), crate::list::Reading::new(crate::list::Texts::Decoded, false));
        p.set_texts(texts);
        assert!(p.texts_read());
        assert!(p.shown_paths().len() >= before);
        // A parent and its fork, which names it: the fork is drawn under it.
        let root = std::env::temp_dir().join(format!("session-scan-picker-{}", std::process::id()));
        let folder = root.join("--w--");
        std::fs::create_dir_all(&folder).unwrap();
        let parent = folder.join("2026-01-01T00-00-00-000Z_p.jsonl");
        let session = |id: &str, parent: Option<&Path>, text: &str, second: u32| {
            let named = parent.map(|p| format!(r#","parentSession":"{}""#, p.display())).unwrap_or_default();
            format!(
                "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-01-01T00:00:0{second}.000Z\",\"cwd\":\"/w\"{named}}}\n\
                 {{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:0{second}.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":1}}}}\n"
            )
        };
        std::fs::write(&parent, session("p", None, "the parent", 1)).unwrap();
        std::fs::write(folder.join("2026-01-01T00-00-02-000Z_f.jsonl"), session("f", Some(&parent), "the fork", 2))
            .unwrap();
        std::fs::write(folder.join("2026-01-01T00-00-03-000Z_o.jsonl"), session("o", None, "another", 3)).unwrap();
        let listed = crate::list::read_store(&root, crate::list::Reading::new(crate::list::Texts::Skip, false));
        let mut p = Picker::new(listed, folder.clone());
        assert!(p.threaded);
        let rows: Vec<(String, usize)> = p
            .shown
            .iter()
            .map(|&(i, d)| (p.listed[i].path.file_name().unwrap().to_string_lossy().into_owned(), d))
            .collect();
        let at = rows.iter().position(|r| r.0.ends_with("_p.jsonl")).unwrap();
        assert_eq!(
            rows[at + 1],
            ("2026-01-01T00-00-02-000Z_f.jsonl".to_owned(), 1),
            "the fork under its parent: {rows:?}"
        );
        assert_eq!(rows.iter().filter(|r| r.1 == 0).count(), 2);
        let lines = screen(&mut p, 100, 30);
        assert!(lines[at + 2].starts_with("    the fork"), "indented: {lines:#?}");
        ctrl(&mut p, 't');
        assert!(p.shown.iter().all(|&(_, d)| d == 0));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
