//! Running the `session-scan` binary in tests: scratch folders, a deadline, small sessions.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

#[allow(dead_code)] // not every binary test uses every helper
pub const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
#[allow(dead_code)] // not every binary test uses every helper
pub const MESSAGE: &str = r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1767225601000}}"#;

#[allow(dead_code)] // not every binary test uses every helper
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("session-scan-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the binary with a deadline: a hang is a failure, not a stuck test run.
#[allow(dead_code)] // not every binary test uses every helper
pub fn run(cmd: &mut Command) -> Output {
    let child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || send.send(child.wait_with_output()));
    match receive.recv_timeout(Duration::from_secs(20)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("session-scan did not finish within 20 s");
        }
    }
}

/// The binary, in UTC: the goldens were written by Node in UTC, and a time without an offset is
/// read in the local zone.
#[allow(dead_code)] // not every binary test uses every helper
pub fn scan() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_session-scan"));
    command.env("TZ", "UTC");
    command
}

#[allow(dead_code)] // not every binary test uses every helper
pub fn good_file(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("{HEADER}\n{MESSAGE}\n")).unwrap();
    p
}

#[allow(dead_code)] // not every binary test uses every helper
pub fn json_lines(out: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(out).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A store of `n` sessions, one a day back from 2026-06-01, each file's mtime a minute after its
/// last message, plus a broken file much older than all of them.
#[allow(dead_code)] // not every binary test uses every helper
pub fn dated_store(name: &str, n: u64) -> PathBuf {
    let dir = scratch(name);
    let cwd = dir.join("--w--");
    std::fs::create_dir_all(&cwd).unwrap();
    let day = 86_400_000u64;
    let newest = 1_780_272_000_000u64; // 2026-06-01T00:00:00Z
    for k in 0..n {
        let t = newest - k * day;
        let text = format!(
            "{HEADER}\n{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"day {k}\",\"timestamp\":{t}}}}}\n"
        );
        let path = cwd.join(format!("s{k:04}.jsonl"));
        std::fs::write(&path, text).unwrap();
        let mtime = std::time::UNIX_EPOCH + Duration::from_millis(t + 60_000);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(mtime).unwrap();
    }
    let broken = cwd.join("broken.jsonl");
    std::fs::write(&broken, "not a session\n").unwrap();
    let old = std::time::UNIX_EPOCH + Duration::from_millis(newest - (n + 30) * day);
    std::fs::File::options().write(true).open(&broken).unwrap().set_modified(old).unwrap();
    dir
}

/// The `--stats` line of a JSON listing (the last line on stderr), without its time.
#[allow(dead_code)] // not every binary test uses every helper
pub fn stats_of(out: &std::process::Output) -> serde_json::Value {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    let mut line: serde_json::Value = serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let stats = line["stats"].as_object_mut().unwrap_or_else(|| panic!("no stats: {stderr}"));
    assert!(stats.remove("ms").is_some_and(|ms| ms.as_f64().is_some_and(|ms| ms >= 0.0)), "{stderr}");
    line["stats"].take()
}

#[allow(dead_code)] // not every binary test uses every helper
pub fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// `session-scan` as run by a user whose home is `home`, in `project`, with none of Pi's or
/// Atomic's variables set but `vars`.
#[allow(dead_code)] // not every binary test uses every helper
pub fn scan_at(home: &Path, project: &Path, vars: &[(&str, &Path)]) -> Command {
    let mut cmd = scan();
    cmd.env("HOME", home).current_dir(project);
    for app in ["PI", "ATOMIC"] {
        for var in ["CODING_AGENT_DIR", "CODING_AGENT_SESSION_DIR"] {
            cmd.env_remove(format!("{app}_{var}"));
        }
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd
}

/// The ids `list --json` prints.
#[allow(dead_code)] // not every binary test uses every helper
pub fn listed_ids(out: &Output) -> Vec<String> {
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut ids: Vec<String> = rows.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
    ids.sort();
    ids
}
