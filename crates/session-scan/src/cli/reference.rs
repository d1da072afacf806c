//! The command reference in `docs/`, generated from the clap definitions: a Markdown page and a
//! man page. A test fails when the committed files differ from what the code generates; run it
//! with `SESSION_SCAN_WRITE_DOCS=1` to write them again.

use std::fmt::Write as _;

/// The Markdown reference: every command's long help, in the order `session-scan --help` lists them.
pub fn markdown() -> String {
    let mut cmd = super::command().term_width(100);
    cmd.build();
    let mut out = String::new();
    out.push_str("# `session-scan` command reference\n\n");
    out.push_str(
        "Generated from the command line's own definitions (`cargo test -p session-scan --bin session-scan`\n",
    );
    out.push_str(
        "checks it; `SESSION_SCAN_WRITE_DOCS=1` writes it again). The same text is `session-scan help COMMAND`.\n\n",
    );
    let _ = writeln!(out, "```text\n{}```\n", cmd.render_long_help().to_string().trim_end().to_owned() + "\n");
    let names: Vec<String> =
        cmd.get_subcommands().filter(|s| s.get_name() != "help").map(|s| s.get_name().to_owned()).collect();
    for name in names {
        let Some(sub) = cmd.find_subcommand_mut(&name) else { continue };
        let mut sub = sub.clone().bin_name(format!("session-scan {name}"));
        let _ = writeln!(out, "## `session-scan {name}`\n");
        let _ = writeln!(out, "```text\n{}\n```\n", sub.render_long_help().to_string().trim_end());
    }
    out
}

/// The man pages: `session-scan(1)`, and `session-scan-COMMAND(1)` for each command.
pub fn man_pages() -> Vec<(String, Vec<u8>)> {
    let mut cmd = super::command().term_width(100);
    cmd.build();
    let mut pages = Vec::new();
    let mut page = |name: String, cmd: clap::Command| {
        let mut out = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = clap_mangen::Man::new(cmd).render(&mut out);
        pages.push((format!("{name}.1"), out));
    };
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("session-scan-{}", sub.get_name());
        page(name.clone(), sub.clone().name(clap::builder::Str::from(name.leak() as &str)));
    }
    page("session-scan".to_owned(), cmd);
    pages
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs_dir() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")
    }

    /// The committed reference is what the code generates (or is written again on request).
    #[test]
    fn the_committed_command_reference_is_current() {
        let mut files = vec![("cli.md".to_owned(), markdown().into_bytes())];
        files.extend(man_pages().into_iter().map(|(name, page)| (format!("man/{name}"), page)));
        let write = std::env::var_os("SESSION_SCAN_WRITE_DOCS").is_some();
        for (name, generated) in files {
            let path = docs_dir().join(&name);
            if write {
                std::fs::create_dir_all(docs_dir().join("man")).expect("docs/man can be made");
                std::fs::write(&path, &generated).expect("docs/ is writable");
                continue;
            }
            let committed = std::fs::read(&path).unwrap_or_default();
            assert!(
                committed == generated,
                "docs/{name} is out of date: run `SESSION_SCAN_WRITE_DOCS=1 cargo test -p session-scan --bin session-scan`"
            );
        }
    }

    /// Every command has a section of the reference.
    #[test]
    fn the_reference_has_every_command() {
        let md = markdown();
        for sub in super::super::command().get_subcommands() {
            assert!(md.contains(&format!("## `session-scan {}`", sub.get_name())), "{}", sub.get_name());
        }
    }
}
