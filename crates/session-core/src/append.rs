//! The lines Pi 1.6's `SessionManager` appends to a session it has open, built from our reading
//! of the file: `appendSessionInfo` (a name) and `appendLabelChange` (a label set or cleared).
//! Each new entry is a child of the session's leaf, with an id Pi's `generateId` would accept (eight
//! hex characters not taken, else a whole UUID) and the time given. No I/O: the caller writes.

use crate::Session;
use crate::property::PropertyValue;
use crate::record::{EntryBody, Parent, entry_line_under, normalise_name};

/// Why a change cannot be appended as Pi would append it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendError {
    /// `appendLabelChange` on an id no entry has (Pi throws `Entry ID not found`).
    NoSuchEntry(String),
    /// The leaf entry's id cannot be read back as JSON.
    LeafIdUnreadable,
}

impl std::fmt::Display for AppendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AppendError::NoSuchEntry(id) => write!(f, "no entry has the id {id:?}"),
            AppendError::LeafIdUnreadable => write!(f, "the last entry's id cannot be read: nothing is appended"),
        }
    }
}

impl std::error::Error for AppendError {}

/// A change Pi appends as one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// `appendSessionInfo(name)`: the name is normalised as Pi normalises it.
    Name(String),
    /// `appendLabelChange(target, label)`: `None` clears (no `label` key), `Some("")` is written
    /// as it is, as Pi writes it.
    Label {
        /// The labelled entry's id.
        target: String,
        /// The label.
        label: Option<String>,
    },
}

/// The id Pi's `generateId` gives: the first of up to 100 candidates (`short()`, eight hex
/// characters) that is not `taken`, else `long()` (a whole UUID).
pub fn generate_id(
    taken: &dyn Fn(&str) -> bool,
    short: &mut dyn FnMut() -> String,
    long: &mut dyn FnMut() -> String,
) -> String {
    (0..100).map(|_| short()).find(|id| !taken(id)).unwrap_or_else(long)
}

/// [`generate_id`] among the ids of `session`'s entries.
pub fn new_entry_id(
    session: &Session<'_>,
    short: &mut dyn FnMut() -> String,
    long: &mut dyn FnMut() -> String,
) -> String {
    generate_id(&|id| session.get(&PropertyValue::Str(id.into())).is_some(), short, long)
}

/// The line (with its `\n`) that appends `change` to `session`, as entry `id` written at
/// `timestamp` (an ISO time with milliseconds, as `toISOString` gives).
pub fn change_line(session: &Session<'_>, change: &Change, id: &str, timestamp: &str) -> Result<Vec<u8>, AppendError> {
    // The leaf's id as it is written: a string, or another JSON value of a hand-edited file.
    let leaf_value = session.leaf_id().map(PropertyValue::to_value);
    let parent = match (session.leaf_id(), &leaf_value) {
        (None, _) => Parent::Null,
        (Some(PropertyValue::Absent), _) => Parent::Absent,
        (Some(_), Some(Some(v))) => Parent::Json(v),
        (Some(_), _) => return Err(AppendError::LeafIdUnreadable),
    };
    let mut out = Vec::new();
    match change {
        Change::Name(name) => {
            let name = normalise_name(name);
            entry_line_under(&EntryBody::SessionInfo(&name), id, parent, timestamp, &mut out);
        }
        Change::Label { target, label } => {
            if session.get(&PropertyValue::Str(target.as_str().into())).is_none() {
                return Err(AppendError::NoSuchEntry(target.clone()));
            }
            let body = EntryBody::Label { target_id: target, label: label.as_deref() };
            entry_line_under(&body, id, parent, timestamp, &mut out);
        }
    }
    Ok(out)
}

/// What Pi writes before a new line: a line break when the file does not end with one (its loader
/// adds it when it opens such a file).
pub fn repair_before_append(bytes: &[u8]) -> &'static [u8] {
    if bytes.last().is_some_and(|&b| b != b'\n') { b"\n" } else { b"" }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
        "\n"
    );

    #[test]
    fn a_name_and_a_label_are_children_of_the_leaf() {
        let s = Session::load(FILE.as_bytes()).unwrap();
        let line =
            change_line(&s, &Change::Name(" my\r\n\nname ".into()), "bbbbbbbb", "2026-02-03T04:05:06.789Z").unwrap();
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "{\"type\":\"session_info\",\"id\":\"bbbbbbbb\",\"parentId\":\"aaaaaaaa\",\"timestamp\":\"2026-02-03T04:05:06.789Z\",\"name\":\"my name\"}\n"
        );
        let clear = Change::Label { target: "aaaaaaaa".into(), label: None };
        let line = change_line(&s, &clear, "cccccccc", "2026-02-03T04:05:06.789Z").unwrap();
        assert!(String::from_utf8(line).unwrap().ends_with("\"targetId\":\"aaaaaaaa\"}\n"));
        let missing = Change::Label { target: "zz".into(), label: Some("x".into()) };
        assert_eq!(change_line(&s, &missing, "d", "t"), Err(AppendError::NoSuchEntry("zz".into())));
    }

    #[test]
    fn ids_taken_are_passed_over_as_pi_does() {
        let s = Session::load(FILE.as_bytes()).unwrap();
        let mut tries = ["aaaaaaaa", "aaaaaaaa", "12345678"].into_iter().map(String::from);
        let id = new_entry_id(&s, &mut || tries.next().unwrap(), &mut || unreachable!());
        assert_eq!(id, "12345678");
        let id = new_entry_id(&s, &mut || "aaaaaaaa".into(), &mut || "a whole uuid".into());
        assert_eq!(id, "a whole uuid");
        assert_eq!(repair_before_append(b"x"), b"\n");
        assert_eq!(repair_before_append(b"x\n"), b"");
    }
}
