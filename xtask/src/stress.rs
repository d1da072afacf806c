//! `cargo xtask stress`: the hostile inputs too large to commit or to make in a unit test, run
//! through the release binary with their time and peak memory: a 1 GB single line, a sparse
//! 2 GB file, 100,000 sessions in one folder, and a session appended to while it is listed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().map(PathBuf::from).unwrap_or_default()
}

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"stress","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/stress"}"#;

/// Exit code, seconds and peak resident MB of one run.
type Measured = (i32, f64, Option<f64>);

/// Runs the binary under `/usr/bin/time` when it exists.
fn measure(bin: &Path, args: &[&str]) -> anyhow::Result<Measured> {
    let timer = Path::new("/usr/bin/time");
    let t = std::time::Instant::now();
    let out = if timer.exists() {
        Command::new(timer).args(["-f", "%M"]).arg(bin).args(args).stdout(std::process::Stdio::null()).output()?
    } else {
        Command::new(bin).args(args).stdout(std::process::Stdio::null()).output()?
    };
    let secs = t.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rss = timer.exists().then(|| stderr.lines().last().and_then(|l| l.trim().parse::<f64>().ok())).flatten();
    Ok((out.status.code().unwrap_or(-1), secs, rss.map(|kb| kb / 1024.0)))
}

/// `cargo xtask stress [--dir DIR]`.
pub fn stress(dir: Option<PathBuf>) -> anyhow::Result<()> {
    let dir = dir.unwrap_or_else(|| root().join("target/stress"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let status =
        Command::new("cargo").args(["build", "--release", "-p", "session-scan"]).current_dir(root()).status()?;
    anyhow::ensure!(status.success(), "build failed");
    let bin = root().join("target/release/session-scan");
    let mut rows: Vec<(String, String, Measured)> = Vec::new();

    // A 1 GB single line (a message whose text is 1e9 bytes), made here, never committed.
    let one_line = dir.join("one-line/--stress--");
    std::fs::create_dir_all(&one_line)?;
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(one_line.join("big.jsonl"))?);
        writeln!(f, "{HEADER}")?;
        f.write_all(br#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":""#)?;
        let block = vec![b'x'; 1 << 20];
        for _ in 0..953 {
            f.write_all(&block)?;
        }
        f.write_all(b"\",\"timestamp\":1}}\n")?;
    }
    let file = one_line.join("big.jsonl");
    let file_s = file.to_string_lossy().into_owned();
    let root_s = dir.join("one-line").to_string_lossy().into_owned();
    for (name, args) in [
        ("list --json (picker)", vec!["list", &root_s, "--json", "--fields", "path,messageCount,firstMessage"]),
        ("usage daily --json", vec!["usage", "daily", &root_s, "--json", "--timezone", "UTC"]),
        ("stats --json", vec!["stats", "--json", &file_s]),
    ] {
        rows.push(("1 GB single line".into(), name.into(), measure(&bin, &args)?));
    }

    // A sparse 2 GB file: a header, then 2 GB of NUL bytes with no newline.
    let sparse = dir.join("sparse/--stress--");
    std::fs::create_dir_all(&sparse)?;
    {
        let f = std::fs::File::create(sparse.join("sparse.jsonl"))?;
        (&f).write_all(format!("{HEADER}\n").as_bytes())?;
        f.set_len(2 << 30)?;
    }
    let sparse_root = dir.join("sparse").to_string_lossy().into_owned();
    for (name, args) in [
        ("list --json", vec!["list", &sparse_root, "--json"]),
        ("usage daily --json", vec!["usage", "daily", &sparse_root, "--json", "--timezone", "UTC"]),
    ] {
        rows.push(("sparse 2 GB file".into(), name.into(), measure(&bin, &args)?));
    }

    // 100,000 small sessions in one folder.
    let many = dir.join("many");
    std::fs::create_dir_all(&many)?;
    for k in 0..100_000 {
        let text = format!(
            "{HEADER}\n{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"session {k}\",\"timestamp\":{}}}}}\n",
            1_767_225_600_000u64 + k
        );
        std::fs::write(many.join(format!("s{k:06}.jsonl")), text)?;
    }
    let many_s = many.to_string_lossy().into_owned();
    rows.push((
        "100,000 files in one folder".into(),
        "list --dir --json".into(),
        measure(&bin, &["list", "--dir", &many_s, "--json"])?,
    ));

    // A session appended to while it is listed: every listing must see a consistent prefix.
    let live = dir.join("live/--stress--");
    std::fs::create_dir_all(&live)?;
    let live_file = live.join("live.jsonl");
    std::fs::write(&live_file, format!("{HEADER}\n"))?;
    let live_root = dir.join("live").to_string_lossy().into_owned();
    let writer = {
        let path = live_file.clone();
        std::thread::spawn(move || -> anyhow::Result<()> {
            let mut f = std::fs::OpenOptions::new().append(true).open(&path)?;
            for k in 0..20_000 {
                let line = format!(
                    "{{\"type\":\"message\",\"id\":\"m{k}\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{}\"}}}}\n",
                    "y".repeat(200)
                );
                f.write_all(line.as_bytes())?;
            }
            Ok(())
        })
    };
    let mut last = 0u64;
    let mut consistent = true;
    for _ in 0..20 {
        let out = Command::new(&bin).args(["list", &live_root, "--json", "--fields", "messageCount"]).output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let count: u64 = text
            .split("\"messageCount\":")
            .nth(1)
            .and_then(|r| r.split(['}', ',']).next())
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0);
        consistent &= count >= last && out.status.code().is_some_and(|c| c <= 1);
        last = count;
    }
    writer.join().map_err(|_| anyhow::anyhow!("writer thread panicked"))?.context("appending")?;
    println!("{:<28} {:<24} {:>5} {:>9} {:>10}", "input", "command", "exit", "seconds", "peak MB");
    for (input, cmd, (code, secs, rss)) in &rows {
        let rss = rss.map_or("-".to_string(), |r| format!("{r:.0}"));
        println!("{input:<28} {cmd:<24} {code:>5} {secs:>9.2} {rss:>10}");
    }
    println!("appended while listed: 20 listings, message counts never went back: {consistent}");
    std::fs::remove_dir_all(&dir)?;
    anyhow::ensure!(rows.iter().all(|r| r.2.0 >= 0 && r.2.0 <= 1) && consistent, "a stress case failed");
    Ok(())
}
