//! `session-scan resolve`: which session file `pi --session ARG` or `pi -c` would open.

use std::path::PathBuf;

use session_core::json::{JsStr, Object, Value};
use session_scan::list;
use session_scan::resolve::{self, NotASession, Places, Recent, Resolved};

/// `session-scan resolve`.
#[derive(clap::Args)]
pub struct ResolveArgs {
    /// A session file, id or id prefix.
    ///
    /// A session file, id or id prefix, as `pi --session` (or `--fork`) takes it.
    #[arg(required_unless_present = "continue_recent", conflicts_with = "continue_recent")]
    session: Option<String>,
    /// The session `pi -c` would continue instead.
    ///
    /// The session `pi -c` would continue instead: the newest session file by mtime in the cwd's
    /// folder whose header is found.
    #[arg(long = "continue", short = 'c')]
    continue_recent: bool,
    /// As Pi run in this folder (default: the current folder).
    #[arg(long)]
    cwd: Option<String>,
    /// Pi's --session-dir, a flat session folder.
    ///
    /// Pi's --session-dir, a flat session folder (default: Pi's own override from the environment
    /// or the settings, if there is one).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// One JSON object.
    ///
    /// One JSON object: {"type":"path"|"local"|"global"|"not_found","path"?,"cwd"?}, or with
    /// --continue {"type":"recent"|"new","path"?}.
    #[arg(long)]
    json: bool,
}

/// Runs it: `Ok(true)` when nothing was found (exit 1).
pub fn run(a: &ResolveArgs, _g: &super::Globals) -> anyhow::Result<bool> {
    let places = Places::for_args(a.cwd.as_deref(), a.dir.clone(), false);
    let mut row: Vec<(&str, String)> = Vec::new();
    if a.continue_recent {
        let mut passed_over = |path: &std::path::Path, why: &NotASession| {
            if *why == NotASession::NotRegular {
                eprintln!(
                    "session-scan: {}: not a regular file, passed over (Pi's discovery would wait on it for a writer)",
                    path.display()
                );
            }
        };
        match resolve::most_recent(&places.cwd_dir, places.filter.as_deref(), &mut passed_over) {
            Recent::Found(path) => {
                row.extend([("type", "recent".into()), ("path", path.to_string_lossy().into_owned())]);
            }
            Recent::None => {
                eprintln!(
                    "session-scan: no session to continue in {}: pi -c would start a new one",
                    places.cwd_dir.display()
                );
                row.push(("type", "new".into()));
            }
            Recent::GivenUp(path) => {
                eprintln!(
                    "session-scan: {}: cannot be read for its mtime, so Pi's discovery gives up on the folder: pi -c would start a new session",
                    path.display()
                );
                row.push(("type", "new".into()));
            }
        }
    } else {
        let arg = a.session.as_deref().unwrap_or_default();
        if arg.is_empty() {
            anyhow::bail!("resolve: an empty SESSION names nothing (pi ignores --session \"\")");
        }
        let mut non_string_id = |l: &list::Listed| {
            eprintln!(
                "session-scan: {}: its id is not a string, passed over (pi stops with a TypeError here)",
                l.path.display()
            );
        };
        match resolve::resolve_session(arg, &places, &mut non_string_id) {
            Resolved::Path(path) => {
                row.extend([("type", "path".into()), ("path", path.to_string_lossy().into_owned())])
            }
            Resolved::Local(path) => {
                row.extend([("type", "local".into()), ("path", path.to_string_lossy().into_owned())])
            }
            Resolved::Global { path, cwd } => {
                eprintln!(
                    "session-scan: {}: in another project ({cwd}): pi would offer to fork it into this one",
                    path.display()
                );
                row.extend([("type", "global".into()), ("path", path.to_string_lossy().into_owned()), ("cwd", cwd)]);
            }
            Resolved::NotFound => {
                eprintln!("session-scan: no session matches {arg:?}");
                row.push(("type", "not_found".into()));
            }
        }
    }
    let found = !matches!(row[0].1.as_str(), "new" | "not_found");
    let mut out = Vec::new();
    if a.json {
        let mut object = Object::new();
        for (key, value) in &row {
            object.insert(*key, Value::String(JsStr::owned(value.as_str())));
        }
        session_core::json::write_json(&Value::Object(object), &mut out);
        out.push(b'\n');
    } else if let Some((_, path)) = row.iter().find(|(key, _)| *key == "path") {
        out.extend_from_slice(path.as_bytes());
        out.push(b'\n');
    }
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(&out).and_then(|()| stdout.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(e.into());
    }
    Ok(!found)
}
