//! `session-scan label`: sets or clears the label of an entry, as Pi's tree view does
//! (`appendLabelChange`).

use session_scan::append::Change;

use super::rename::WriteArgs;

/// `session-scan label`.
#[derive(clap::Args)]
pub struct LabelArgs {
    /// The session: a file, an id or an id prefix.
    session: String,
    /// The entry's id.
    entry: String,
    /// The label; without it, the entry's label is cleared.
    text: Option<String>,
    #[command(flatten)]
    write: WriteArgs,
}

/// Runs it.
pub fn run(a: &LabelArgs, _g: &super::Globals) -> anyhow::Result<bool> {
    let change = Change::Label { target: a.entry.clone(), label: a.text.clone() };
    super::rename::append(&a.session, &change, &a.write)
}
