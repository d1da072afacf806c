//! Where Pi keeps its sessions and how it names them: the agent folder, the default store, the
//! session-dir override of the environment and the settings, the per-cwd folder name, and Pi's
//! `resolvePath`.

use std::path::{Path, PathBuf};

/// The per-cwd directory name (format.md §1): `--` + the resolved cwd without one leading separator,
/// with `/`, `\` and `:` as `-`, + `--`.
pub fn encode_cwd(resolved: &str) -> String {
    let trimmed = resolved.strip_prefix(['/', '\\']).unwrap_or(resolved);
    let body: String = trimmed.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    format!("--{body}--")
}

/// `resolvePath` on POSIX: `~` expanded, `file://` URLs converted, then `path.resolve` against
/// the process's cwd (`.`/`..` resolved, doubled and trailing separators dropped).
pub fn resolve_path(input: &str) -> String {
    let cwd = std::env::current_dir().map(|d| d.to_string_lossy().into_owned()).unwrap_or_else(|_| "/".into());
    resolve_path_from(input, &cwd)
}

/// `resolvePath(input, base)`: [`resolve_path`] with a relative `input` taken from `base` (itself
/// resolved first) instead of the process's cwd.
pub fn resolve_path_from(input: &str, base: &str) -> String {
    let mut p = match input.strip_prefix("file://") {
        Some(rest) => percent_decode(rest),
        None => expand_tilde(input, &home()),
    };
    if !p.starts_with('/') {
        let base = if base.starts_with('/') { base.to_string() } else { resolve_path(base) };
        p = format!("{base}/{p}");
    }
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(v) = s.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The default sessions root: `$PI_CODING_AGENT_DIR/sessions` or `~/.pi/agent/sessions`
/// (`ATOMIC_…`, then `PI_…`, and `~/.atomic` for Atomic).
pub fn default_root(atomic: bool) -> PathBuf {
    agent_dir(atomic, &home()).join("sessions")
}

/// The home folder as Node's `os.homedir()` finds it: `$HOME`, else the user's entry in the
/// password database (a service or cron job may run without `HOME`).
fn home() -> String {
    std::env::home_dir().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The agent folder: `$PI_CODING_AGENT_DIR` (Atomic: `$ATOMIC_CODING_AGENT_DIR`, then Pi's name),
/// `~` expanded, else `~/.pi/agent` (`~/.atomic/agent`).
fn agent_dir(atomic: bool, home: &str) -> PathBuf {
    match app_var(atomic, "CODING_AGENT_DIR") {
        Some(dir) => PathBuf::from(expand_tilde(&dir, home)),
        None => PathBuf::from(home).join(if atomic { ".atomic" } else { ".pi" }).join("agent"),
    }
}

/// `PI_<name>` (Atomic: `ATOMIC_<name>`, then Pi's as an alias), when set and not empty.
fn app_var(atomic: bool, name: &str) -> Option<String> {
    let apps: &[&str] = if atomic { &["ATOMIC", "PI"] } else { &["PI"] };
    apps.iter().find_map(|app| std::env::var(format!("{app}_{name}")).ok().filter(|v| !v.is_empty()))
}

/// `~` and `~/…` in the home folder, as Pi's `expandTildePath` reads them.
fn expand_tilde(path: &str, home: &str) -> String {
    if path == "~" {
        home.to_string()
    } else {
        path.strip_prefix("~/").map_or(path.to_string(), |r| format!("{home}/{r}"))
    }
}

/// The store Pi 1.6 run here keeps its sessions in: its session-dir override (environment, then
/// settings) if it has one, else the default root.
pub fn store_here(atomic: bool) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|project| session_dir_override(atomic, &project))
        .unwrap_or_else(|| default_root(atomic))
}

/// The session-dir override Pi 1.6 starts with (format.md §1), after `--session-dir`: the environment's
/// `PI_CODING_AGENT_SESSION_DIR` (Atomic: `ATOMIC_CODING_AGENT_SESSION_DIR`, with the `PI_` name as
/// an alias), `~` expanded; else `sessionDir` from the settings, the project's
/// (`<project>/.pi/settings.json`) over the global one (`<agent dir>/settings.json`). Pi keeps such
/// sessions in that one flat folder, where its picker lists them. A relative folder is taken from
/// `project`, the folder Pi would run in.
pub fn session_dir_override(atomic: bool, project: &Path) -> Option<PathBuf> {
    session_dir_setting(atomic, project).map(|dir| project.join(dir))
}

/// [`session_dir_override`] as written (`~` expanded).
fn session_dir_setting(atomic: bool, project: &Path) -> Option<PathBuf> {
    let home = home();
    if let Some(dir) = app_var(atomic, "CODING_AGENT_SESSION_DIR") {
        return Some(PathBuf::from(expand_tilde(&dir, &home)));
    }
    let project_settings = project.join(if atomic { ".atomic" } else { ".pi" }).join("settings.json");
    let global_settings = agent_dir(atomic, &home).join("settings.json");
    // The project's `sessionDir`, whatever its value, replaces the global one (Pi merges the
    // project's settings over the global ones); only a non-empty string names a folder.
    let set = [project_settings, global_settings]
        .iter()
        .find_map(|settings| settings_session_dir(&crate::read::read_regular(settings).ok()?))?;
    set.map(|dir| PathBuf::from(expand_tilde(&dir, &home)))
}

/// The `sessionDir` of a settings file (a JSON object): `None` when it has none (or cannot be
/// read as one), `Some(None)` when its value is not a non-empty string.
fn settings_session_dir(bytes: &[u8]) -> Option<Option<String>> {
    let arena = bumpalo::Bump::new();
    let settings = session_core::json::parse_value(bytes, &arena).ok()?;
    let dir = settings.get("sessionDir")?;
    Some(dir.as_str().filter(|d| !d.is_empty()).map(|d| d.to_str_lossy().into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_cwds_as_pi_1_6() {
        // format.md §1 examples.
        assert_eq!(encode_cwd("/home/u/proj"), "--home-u-proj--");
        assert_eq!(encode_cwd(&resolve_path("//srv/share/")), "--srv-share--");
        assert_eq!(encode_cwd("/a b/ü:x"), "--a b-ü-x--");
        assert_eq!(resolve_path("/a/./b/../c/"), "/a/c");
    }
}
