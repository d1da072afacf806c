//! `session-scan pick` end to end in a real terminal: the binary runs in `tmux` with its stdout
//! redirected to a file, keys are typed with `send-keys`, the screen is read with `capture-pane`.
//! Needs `tmux` (CI installs it) and `setsid`.

#![allow(clippy::unwrap_used)] // a panic is a failed test

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A store of sample-16's sessions under a home of its own, and a tmux server of its own.
struct Stage {
    home: PathBuf,
    socket: String,
}

impl Stage {
    fn new(name: &str) -> Stage {
        let home = std::env::temp_dir().join(format!("session-scan-pick-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        let sessions = home.join(".pi/agent/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/sample-16/sessions");
        for folder in ["--Users-bob-work-api-server--", "--home-alice-src-website--"] {
            std::fs::create_dir_all(sessions.join(folder)).unwrap();
            for f in std::fs::read_dir(corpus.join(folder)).unwrap() {
                let f = f.unwrap().path();
                std::fs::copy(&f, sessions.join(folder).join(f.file_name().unwrap())).unwrap();
            }
        }
        Stage { home, socket: format!("session-scan-pick-{name}-{}", std::process::id()) }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").arg("-L").arg(&self.socket).args(args).output().expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Starts the picker at `cols`x`rows`, stdout to `out.txt`, its exit code to `rc.txt`.
    fn start(&self, cols: u16, rows: u16, extra: &str) {
        let bin = env!("CARGO_BIN_EXE_session-scan");
        let h = self.home.display();
        let script = format!(
            "cd {h} && HOME={h} XDG_CACHE_HOME={h}/cache XDG_DATA_HOME={h}/data TERM=xterm-256color {bin} pick --cwd /Users/bob/work/api-server {extra} > {h}/out.txt; echo $? > {h}/rc.txt; sleep 30"
        );
        self.tmux(&["new-session", "-d", "-s", "t", "-x", &cols.to_string(), "-y", &rows.to_string(), &script]);
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "t"])
    }

    /// Waits until the screen shows `text`.
    fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(start.elapsed() < Duration::from_secs(15), "{text:?} never shown:\n{screen}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend(keys);
        self.tmux(&args);
    }

    /// The exit code and stdout, once the picker has ended.
    fn ended(&self) -> (i32, String) {
        let start = Instant::now();
        let rc = self.home.join("rc.txt");
        while !rc.exists() || std::fs::read_to_string(&rc).unwrap().trim().is_empty() {
            assert!(start.elapsed() < Duration::from_secs(15), "the picker did not end:\n{}", self.screen());
            std::thread::sleep(Duration::from_millis(50));
        }
        let code = std::fs::read_to_string(&rc).unwrap().trim().parse().unwrap();
        (code, std::fs::read_to_string(self.home.join("out.txt")).unwrap())
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

#[test]
fn a_query_and_enter_print_the_chosen_path() {
    let stage = Stage::new("enter");
    stage.start(100, 30, "");
    stage.wait_for("this project · threaded · 36 sessions");
    stage.keys(&["run the tests"]);
    let screen = stage.wait_for("Search: run the tests");
    assert!(screen.contains("by relevance"), "{screen}");
    // The first row is the best match; its file is what Enter prints.
    stage.keys(&["Enter"]);
    let (code, out) = stage.ended();
    assert_eq!(code, 0);
    let path = PathBuf::from(out.trim_end());
    assert!(path.starts_with(stage.home.join(".pi/agent/sessions/--Users-bob-work-api-server--")), "{out}");
    assert!(path.is_file(), "{out}");
    assert!(out.ends_with(".jsonl\n"));
}

#[test]
fn escape_prints_nothing_and_exits_130() {
    let stage = Stage::new("esc");
    stage.start(100, 30, "--all");
    stage.wait_for("all projects");
    stage.keys(&["Escape"]);
    let (code, out) = stage.ended();
    assert_eq!((code, out.as_str()), (130, ""));
}

#[test]
fn delete_asks_then_moves_the_session_to_the_trash() {
    let stage = Stage::new("delete");
    stage.start(100, 30, "--flat");
    stage.wait_for("newest first · 36 sessions");
    stage.keys(&["C-d"]);
    let screen = stage.wait_for("Move to the trash? y to confirm");
    let folder = stage.home.join(".pi/agent/sessions/--Users-bob-work-api-server--");
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 36, "nothing moved before the answer:\n{screen}");
    stage.keys(&["n"]);
    stage.wait_for("kept");
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 36);
    stage.keys(&["C-d"]);
    stage.wait_for("Move to the trash?");
    stage.keys(&["y"]);
    stage.wait_for("35 sessions");
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 35);
    let trash = stage.home.join("data/Trash");
    let moved: Vec<_> = std::fs::read_dir(trash.join("files")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(moved.len(), 1);
    let info =
        std::fs::read_to_string(trash.join("info").join(format!("{}.trashinfo", moved[0].to_string_lossy()))).unwrap();
    assert!(info.starts_with("[Trash Info]\nPath=/") && info.contains("DeletionDate="), "{info}");
    stage.keys(&["Escape"]);
    assert_eq!(stage.ended().0, 130);
}

#[test]
fn ctrl_r_names_the_session_as_pi_does() {
    let stage = Stage::new("rename");
    stage.start(100, 30, "--flat");
    stage.wait_for("newest first · 36 sessions");
    stage.keys(&["C-r", "C-u"]);
    stage.keys(&["picked name"]);
    stage.wait_for("Name: picked name");
    stage.keys(&["Enter"]);
    let screen = stage.wait_for("renamed");
    // The selection follows the session, wherever rows still streaming in put it.
    let selected = screen.lines().find(|l| l.starts_with('›')).unwrap_or_default();
    assert!(selected.contains("picked name"), "the selected row shows the new name:\n{screen}");
    stage.keys(&["Enter"]);
    let (code, out) = stage.ended();
    assert_eq!(code, 0);
    let bytes = std::fs::read(out.trim_end()).unwrap();
    let last = bytes[..bytes.len() - 1].rsplit(|&b| b == b'\n').next().unwrap();
    let entry: serde_json::Value = serde_json::from_slice(last).unwrap();
    assert_eq!((entry["type"].as_str(), entry["name"].as_str()), (Some("session_info"), Some("picked name")));
    assert_eq!(session_core::Session::load(&bytes).unwrap().name().unwrap().to_str_lossy(), "picked name");
}

#[test]
fn the_screen_fits_80x24_and_follows_a_resize() {
    let stage = Stage::new("resize");
    stage.start(120, 40, "");
    stage.wait_for("36 sessions");
    stage.tmux(&["resize-window", "-t", "t", "-x", "80", "-y", "24"]);
    let start = Instant::now();
    loop {
        let screen = stage.screen();
        let lines: Vec<&str> = screen.lines().collect();
        let fits = lines.len() <= 24 && lines.iter().all(|l| unicode_width::UnicodeWidthStr::width(*l) <= 80);
        if fits && lines.iter().any(|l| l.starts_with("↑↓ move · Enter open")) && lines[0].starts_with("Search:") {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(15), "not redrawn at 80x24:\n{screen}");
        std::thread::sleep(Duration::from_millis(50));
    }
    stage.keys(&["C-c"]);
    assert_eq!(stage.ended(), (130, String::new()));
}

/// Without a terminal (no controlling tty), the picker says so and exits 2.
#[test]
fn without_a_terminal_it_says_so() {
    let out = Command::new("setsid")
        .arg("-w")
        .arg(env!("CARGO_BIN_EXE_session-scan"))
        .arg("pick")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("pick needs a terminal"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
}
