//! Moving a session file to the user's trash as the freedesktop.org trash specification says
//! (`$XDG_DATA_HOME/Trash`, else `~/.local/share/Trash`), so that it can be restored: the picker's
//! delete never removes a file.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The home trash folder.
pub fn trash_dir() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(data.join("Trash"))
}

/// A path as the `Path=` key of a `.trashinfo` file writes it: bytes outside the unreserved set
/// and `/` percent-encoded.
fn encode(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Moves `path` into the trash, with its `.trashinfo` record (written first, exclusively, so that
/// two deletions never share a name); gives where the file went. The file is renamed, never
/// copied: a trash on another file system is an error and the file stays where it was.
pub fn move_to_trash(path: &Path) -> std::io::Result<PathBuf> {
    let trash =
        trash_dir().ok_or_else(|| std::io::Error::other("no trash folder: neither XDG_DATA_HOME nor HOME is set"))?;
    let (files, info) = (trash.join("files"), trash.join("info"));
    std::fs::create_dir_all(&files)?;
    std::fs::create_dir_all(&info)?;
    let absolute = std::path::absolute(path)?;
    let name = path.file_name().ok_or_else(|| std::io::Error::other("not a file name"))?.to_string_lossy().into_owned();
    let deleted =
        jiff::tz::TimeZone::system().to_datetime(jiff::Timestamp::now()).strftime("%Y-%m-%dT%H:%M:%S").to_string();
    for n in 0..1000 {
        let candidate = if n == 0 { name.clone() } else { format!("{name}.{n}") };
        let record = info.join(format!("{candidate}.trashinfo"));
        let mut file = match std::fs::File::options().write(true).create_new(true).open(&record) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        };
        let target = files.join(&candidate);
        if target.exists() {
            drop(file);
            let _ = std::fs::remove_file(&record);
            continue;
        }
        file.write_all(format!("[Trash Info]\nPath={}\nDeletionDate={deleted}\n", encode(&absolute)).as_bytes())?;
        file.sync_all()?;
        return match std::fs::rename(path, &target) {
            Ok(()) => Ok(target),
            Err(e) => {
                let _ = std::fs::remove_file(&record);
                Err(e)
            }
        };
    }
    Err(std::io::Error::other("the trash holds a thousand files of this name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_percent_encoded() {
        assert_eq!(encode(Path::new("/home/a b/ä.jsonl")), "/home/a%20b/%C3%A4.jsonl");
    }
}
