//! `session-scan pick`: the full-screen session picker. It draws on the terminal (`/dev/tty`) and
//! prints the chosen session's path on stdout, so that it works inside `$(...)`:
//! `pi --session "$(session-scan pick)"`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event, KeyEventKind};
use ratatui::crossterm::{execute, terminal};
use session_scan::list::{self, Listed, Texts};
use session_scan::picker::{Action, Picker, Scope};
use session_scan::resolve::Places;

/// `session-scan pick`.
#[derive(clap::Args)]
pub struct PickArgs {
    /// Run `pi --session PATH` on the chosen session instead of printing its path.
    #[arg(long)]
    exec: bool,
    /// Open on every project's sessions (Tab switches).
    #[arg(long)]
    all: bool,
    /// Open newest first rather than threaded (Ctrl-T switches).
    #[arg(long)]
    flat: bool,
    /// The project, as Pi run in this folder sees it (default: the current folder).
    #[arg(long)]
    cwd: Option<String>,
    /// Pi's --session-dir.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The Atomic fork's store.
    #[arg(long)]
    atomic: bool,
    /// With --atomic: show Atomic's internal workflow sessions too.
    #[arg(long, requires = "atomic")]
    include_internal: bool,
}

/// Sets the terminal back as it was, whatever happens after the picker took it.
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = terminal::disable_raw_mode();
        if let Ok(mut tty) = std::fs::OpenOptions::new().write(true).open("/dev/tty") {
            let _ = execute!(tty, terminal::LeaveAlternateScreen, ratatui::crossterm::cursor::Show);
        }
    }
}

/// Runs it: prints the chosen path and exits 0, exits 130 when left without a choice, and is an
/// error (exit 2) without a terminal.
pub fn run(a: &PickArgs, g: &super::Globals) -> anyhow::Result<bool> {
    let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").map_err(|e| {
        anyhow::anyhow!("pick needs a terminal to draw on (/dev/tty: {e}); list gives the sessions as text")
    })?;
    let places = Places::for_args(a.cwd.as_deref(), a.dir.clone(), a.atomic);
    let hide_internal = a.atomic && !a.include_internal;
    let cache = session_scan::cache::ListCache::default_path().map(|p| session_scan::cache::ListCache::open(&p));
    // The readers run on threads of their own, which the picker never waits for: what they
    // borrow lives as long as the process (which ends when the picker does).
    let candidates: &'static [list::Candidate] =
        Box::leak(list::discover_with(&places.all, list::Stat::Later).into_boxed_slice());
    let cache: &'static Option<session_scan::cache::ListCache> = Box::leak(Box::new(cache));
    let local_zone: &'static jiff::tz::TimeZone = Box::leak(Box::new(g.local_zone.clone()));
    let strategy = g.strategy;
    let listed_scope = places.all.clone();
    let total = candidates.len();
    let mut picker = Picker::new(Vec::new(), places.cwd_dir.clone());
    picker.local_zone = g.local_zone.clone();
    if a.all {
        picker.scope = Scope::All;
    }
    picker.threaded = !a.flat;
    // Rows stream in as they are read (unchanged files from the listing cache at once); the cache
    // is saved once all are read.
    let (rows_tx, rows_rx) = mpsc::channel::<Listed>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let reading =
            list::Reading::new(Texts::Skip, hide_internal).with_strategy(strategy).with_local_zone(local_zone);
        let reading = match cache {
            Some(c) => reading.with_cache(c),
            None => reading,
        };
        list::read_infos_streaming(candidates, reading, rows_tx);
        // Every file of the store (or of the session-dir override) was read: the cache's entries
        // of others there are of files deleted since.
        let read_all = match &listed_scope {
            list::Scope::All { root } => Some(session_scan::cache::ReadAll::Store(root)),
            list::Scope::Dir { dir, .. } => Some(session_scan::cache::ReadAll::Folder(dir)),
            list::Scope::Files { .. } => None,
        };
        if let Some(c) = cache {
            let _ = c.save(read_all);
        }
        let _ = done_tx.send(());
    });
    let texts_reader = move |tx: mpsc::Sender<Vec<Listed>>| {
        std::thread::spawn(move || {
            let reading =
                list::Reading::new(Texts::Decoded, hide_internal).with_strategy(strategy).with_local_zone(local_zone);
            let _ = tx.send(list::read_infos(candidates, reading));
        });
    };
    let chosen = {
        let _restore = Restore;
        terminal::enable_raw_mode()?;
        let mut out = tty.try_clone()?;
        execute!(out, terminal::EnterAlternateScreen)?;
        let mut screen = Terminal::new(CrosstermBackend::new(tty))?;
        let (texts_tx, texts_rx) = mpsc::channel::<Vec<Listed>>();
        let mut read = 0usize;
        let mut listing = true;
        loop {
            let mut batch = Vec::new();
            while let Ok(l) = rows_rx.try_recv() {
                batch.push(l);
            }
            if !batch.is_empty() {
                read += batch.len();
                picker.add(batch);
            }
            if listing && done_rx.try_recv().is_ok() {
                listing = false;
                if picker.status.starts_with("reading sessions") {
                    picker.status.clear();
                }
            }
            if listing && (picker.status.is_empty() || picker.status.starts_with("reading sessions")) {
                picker.status = format!("reading sessions: {read} of {total}");
            }
            if let Ok(with_texts) = texts_rx.try_recv() {
                picker.set_texts(with_texts);
            }
            screen.draw(|f| picker.draw(f))?;
            if !event::poll(Duration::from_millis(40))? {
                continue;
            }
            let Event::Key(key) = event::read()? else { continue };
            if key.kind != KeyEventKind::Press {
                continue;
            }
            match picker.key(key) {
                Action::None => {}
                Action::Choose(path) => break Some(path),
                Action::Cancel => break None,
                Action::NeedTexts => texts_reader(texts_tx.clone()),
                Action::Rename(path, name) => {
                    let change = session_scan::append::Change::Name(name);
                    match session_scan::append::append(&path, &change, session_scan::append::AppendOptions::default()) {
                        Ok(_) => {
                            let candidate = [list::Candidate { path: path.clone(), mtime: None }];
                            let reading = list::Reading::new(Texts::Skip, hide_internal).with_local_zone(local_zone);
                            if let Some(fresh) = list::read_infos(&candidate, reading).pop() {
                                picker.update(fresh);
                            }
                            picker.status = "renamed".into();
                        }
                        Err(e) => picker.status = format!("not renamed: {e}"),
                    }
                }
                Action::Delete(path) => match session_scan::trash::move_to_trash(&path) {
                    Ok(to) => {
                        picker.remove(&path);
                        picker.status =
                            format!("moved to the trash: {}", session_scan::table::home_tilde(&to.to_string_lossy()));
                    }
                    Err(e) => picker.status = format!("not moved to the trash: {e}"),
                },
            }
        }
    };
    let Some(path) = chosen else {
        // Left without a choice, as a shell's cancelled command: nothing on stdout.
        std::process::exit(130);
    };
    if a.exec {
        use std::os::unix::process::CommandExt;
        let e = std::process::Command::new("pi").arg("--session").arg(&path).exec();
        anyhow::bail!("cannot run pi: {e}");
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", path.display())?;
    stdout.flush()?;
    Ok(false)
}
