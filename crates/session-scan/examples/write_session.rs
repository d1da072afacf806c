//! Writing a session as Pi does: `cargo run -p session-scan --example write_session [DIR]` makes a
//! session in DIR (a temporary folder by default) with a question, an answer, a label and a name,
//! branches it as Pi's `/fork` does, and prints both files.

use session_core::json::parse_value;
use session_scan::manager::SessionManager;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).map_or_else(
        || std::env::temp_dir().join(format!("write-session-{}", std::process::id())),
        std::path::PathBuf::from,
    );
    let arena = bumpalo::Bump::new();
    let question =
        parse_value(br#"{"role":"user","content":"What does this project do?","timestamp":1772400000000}"#, &arena)
            .map_err(|e| e.reason)?;
    let answer = parse_value(
        br#"{"role":"assistant","content":[{"type":"text","text":"It reads and writes Pi's sessions."}],"timestamp":1772400001000}"#,
        &arena,
    )
    .map_err(|e| e.reason)?;

    // Nothing is written until the session holds a user or assistant message.
    let mut m = SessionManager::create("/home/me/project", Some(&dir))?;
    m.append_model_change("anthropic", "claude-sonnet-4-5")?;
    let asked = m.append_message(&question)?;
    m.append_message(&answer)?;
    m.append_label_change(&asked, Some("start"))?;
    m.append_session_info("About the project")?;
    let first = m.session_file().ok_or("a session on disk has a file")?.to_owned();

    // Pi's /fork: a new session holding the branch up to the question, its label written again.
    let forked = m.create_branched_session(Some(&asked))?.ok_or("a session on disk forks to a file")?;
    println!("{}", std::fs::read_to_string(&first)?);
    println!("{}", std::fs::read_to_string(&forked)?);
    println!("name: {:?}", SessionManager::open(&first)?.name()?);
    Ok(())
}
