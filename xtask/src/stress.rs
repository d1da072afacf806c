//! `cargo xtask stress`: the hostile inputs too large to commit or to make in a unit test, run
//! through the release binary with their time and peak memory: a 1 GB single line, a sparse
//! 2 GB file, 100,000 sessions in one folder, and a session appended to while it is listed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use crate::root;

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

/// Writes a session of about `bytes` bytes whose messages carry `line` bytes of text each.
fn write_session(path: &Path, bytes: usize, line: usize, seed: usize) -> anyhow::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(f, "{HEADER}")?;
    let text = "z".repeat(line);
    let (mut written, mut k) = (0usize, 0usize);
    let mut parent = "null".to_string();
    while written < bytes {
        let role = if k % 2 == 0 { "user" } else { "assistant" };
        let usage = if role == "assistant" {
            r#","usage":{"input":10,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":30,"cost":{"input":0.01,"output":0.02,"cacheRead":0,"cacheWrite":0,"total":0.03}},"provider":"p","model":"m""#
        } else {
            ""
        };
        let l = format!(
            "{{\"type\":\"message\",\"id\":\"e{seed}-{k}\",\"parentId\":{parent},\"timestamp\":\"2026-01-0{}T00:00:01.000Z\",\"message\":{{\"role\":\"{role}\",\"content\":\"{text}\",\"timestamp\":1767225601000{usage}}}}}\n",
            1 + k % 9
        );
        f.write_all(l.as_bytes())?;
        written += l.len();
        parent = format!("\"e{seed}-{k}\"");
        k += 1;
    }
    f.flush()?;
    Ok(())
}

/// `cargo xtask memcheck`: peak memory of listing and usage stays bounded whatever the file
/// sizes. The same store is measured twice, the second time with two 96 MB sessions of 1 MB
/// lines added; the check fails when the picker listing or the usage report passes 64 MB or
/// grows by more than 16 MB. The full listing prints `allMessagesText`, every message's text, so
/// its output grows with the input: its memory may grow by 2.5 bytes per byte of output.
pub fn memcheck() -> anyhow::Result<()> {
    anyhow::ensure!(Path::new("/usr/bin/time").exists(), "memcheck needs GNU time at /usr/bin/time");
    let dir = root().join("target/memcheck");
    let _ = std::fs::remove_dir_all(&dir);
    let store = dir.join("store/--w--");
    std::fs::create_dir_all(&store)?;
    let status =
        Command::new("cargo").args(["build", "--release", "-p", "session-scan"]).current_dir(root()).status()?;
    anyhow::ensure!(status.success(), "build failed");
    let bin = root().join("target/release/session-scan");
    for k in 0..64 {
        write_session(&store.join(format!("small-{k:02}.jsonl")), 256 << 10, 300, k)?;
    }
    let root_s = dir.join("store").to_string_lossy().into_owned();
    let commands: [(&str, Vec<&str>); 3] = [
        ("list --json", vec!["list", &root_s, "--json"]),
        (
            "list (picker fields)",
            vec!["list", &root_s, "--json", "--fields", "path,messageCount,firstMessage,modified"],
        ),
        ("usage daily --json", vec!["usage", "daily", &root_s, "--json", "--timezone", "UTC"]),
    ];
    let small: Vec<Measured> = commands.iter().map(|(_, a)| measure(&bin, a)).collect::<anyhow::Result<_>>()?;
    for k in 0..2 {
        write_session(&store.join(format!("huge-{k}.jsonl")), 96 << 20, 1 << 20, 100 + k)?;
    }
    let large: Vec<Measured> = commands.iter().map(|(_, a)| measure(&bin, a)).collect::<anyhow::Result<_>>()?;
    println!("{:<24} {:>14} {:>14} {:>8}", "command", "16 MB store", "+192 MB files", "growth");
    let mut ok = true;
    let output = |args: &[&str]| -> anyhow::Result<f64> {
        Ok(Command::new(&bin).args(args).output()?.stdout.len() as f64 / (1 << 20) as f64)
    };
    let full_output = output(&commands[0].1)?;
    for (i, (((name, _), s), l)) in commands.iter().zip(&small).zip(&large).enumerate() {
        let (Some(a), Some(b)) = (s.2, l.2) else { anyhow::bail!("no peak memory reading for {name}") };
        let bounded = if i == 0 { b - a < 2.5 * full_output } else { b < 64.0 && b - a < 16.0 };
        let pass = s.0 == 0 && l.0 == 0 && bounded;
        ok &= pass;
        println!("{name:<24} {a:>11.1} MB {b:>11.1} MB {:>5.1} MB {}", b - a, if pass { "ok" } else { "FAIL" });
    }
    std::fs::remove_dir_all(&dir)?;
    println!("full listing output on the larger store: {full_output:.1} MB");
    anyhow::ensure!(ok, "peak memory is not bounded");
    Ok(())
}
