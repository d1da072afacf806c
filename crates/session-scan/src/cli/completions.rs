//! `session-scan completions`: a shell's completion script.

/// The shell to write a script for.
#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell.
    shell: clap_complete::Shell,
}

/// Writes the script on stdout.
pub fn run(a: &CompletionsArgs, _g: &super::Globals) -> anyhow::Result<bool> {
    clap_complete::generate(a.shell, &mut super::command(), "session-scan", &mut std::io::stdout());
    Ok(false)
}
