//! Project chores: `cargo xtask manifest [--check]` writes or checks `corpora/manifest.json`.

use std::path::PathBuf;

use anyhow::{Context, bail};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().map(PathBuf::from).unwrap_or_default()
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("manifest") => manifest(args.iter().any(|a| a == "--check")),
        _ => {
            eprintln!("usage: cargo xtask manifest [--check]");
            bail!("unknown task")
        }
    }
}

fn manifest(check: bool) -> anyhow::Result<()> {
    let corpora = root().join("corpora");
    let text = session_scan::manifest::render_manifest(&corpora)? + "\n";
    let path = corpora.join("manifest.json");
    if check {
        let committed = std::fs::read_to_string(&path).context("reading corpora/manifest.json")?;
        if committed != text {
            bail!("corpora/manifest.json is out of date: run `cargo xtask manifest`");
        }
        println!("corpora/manifest.json is up to date");
    } else {
        std::fs::write(&path, text)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
