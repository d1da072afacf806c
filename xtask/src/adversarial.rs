//! Writes `corpora/adversarial/`: small hostile session files and a hostile store, made the same
//! way every time so that their expected outputs can be committed beside them.

use std::path::Path;

use anyhow::Context;

const HEADER: &str = r#"{"type":"session","version":3,"id":"adv","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

fn message(id: &str, parent: Option<&str>, role: &str, text: &str) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"{role}","content":"{text}","timestamp":1767225601000}}}}"#
    )
}

fn file(lines: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(l.as_bytes());
        out.push(b'\n');
    }
    out
}

/// Every session file of the corpus, by name.
fn session_files() -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    out.push((
        "cycle-two.jsonl",
        file(&[
            HEADER.into(),
            message("a", Some("b"), "user", "a's parent is b"),
            message("b", Some("a"), "assistant", "b's parent is a"),
        ]),
    ));
    out.push((
        "self-parent.jsonl",
        file(&[
            HEADER.into(),
            message("root", None, "user", "hello"),
            message("self", Some("self"), "user", "my parent is me"),
        ]),
    ));
    out.push((
        "duplicate-id-loops.jsonl",
        file(&[
            HEADER.into(),
            message("a", None, "user", "first a"),
            message("b", Some("a"), "assistant", "b under a"),
            message("c", Some("b"), "user", "c under b"),
            message("a", Some("c"), "assistant", "second a, under c"),
            message("d", Some("a"), "user", "d under a"),
        ]),
    ));
    // 100k records sharing one id: every lookup, tree and walk must stay linear.
    let mut dup = vec![HEADER.to_string(), message("d", None, "user", "the first d")];
    for i in 1..100_000 {
        if i % 1000 == 0 {
            dup.push(message("d", Some("d"), "assistant", "a d under d"));
        } else {
            dup.push(r#"{"type":"custom","id":"d","parentId":"d"}"#.into());
        }
    }
    out.push(("duplicate-ids-100k.jsonl", file(&dup)));
    // Nesting 100k deep: a full parse refuses it, the scan walks it without recursion.
    let deep = format!(
        r#"{{"type":"custom","customType":"deep","id":"n","parentId":"m","data":{}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    out.push((
        "nesting-100k.jsonl",
        file(&[
            HEADER.into(),
            message("m", None, "user", "before the deep one"),
            deep,
            message("z", Some("n"), "user", "after it"),
        ]),
    ));
    // Invalid UTF-8 inside strings (Node decodes it to U+FFFD; JSON stays valid) and outside them.
    let mut bad = file(&[HEADER.into(), message("u1", None, "user", "ok")]);
    for (i, bytes) in
        [&b"\xff\xfe"[..], b"\xc3\x28", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\xc0\xaf", b"\xf4\x90\x80\x80"]
            .iter()
            .enumerate()
    {
        let prev = if i == 0 { "u1".to_string() } else { format!("v{}", i - 1) };
        bad.extend_from_slice(
            format!(
                r#"{{"type":"message","id":"v{i}","parentId":"{prev}","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"user","content":"bad "#
            )
            .as_bytes(),
        );
        bad.extend_from_slice(bytes);
        bad.extend_from_slice(br#" here","timestamp":1767225602000}}"#);
        bad.push(b'\n');
    }
    bad.extend_from_slice(b"\xff\xff not json at all \x80\n");
    bad.extend_from_slice(message("w", Some("v5"), "assistant", "after the noise").as_bytes());
    bad.push(b'\n');
    out.push(("invalid-utf8.jsonl", bad));
    // NUL bytes: raw in a string (a control character: the line is not JSON), escaped (valid),
    // a line of NULs, and NULs between records.
    let mut nul = file(&[HEADER.into(), message("n1", None, "user", "ok")]);
    nul.extend_from_slice(
        br#"{"type":"message","id":"n2","parentId":"n1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"raw "#,
    );
    nul.extend_from_slice(b"\0\0");
    nul.extend_from_slice(br#" nul","timestamp":1767225602000}}"#);
    nul.push(b'\n');
    nul.extend_from_slice(message("n3", Some("n1"), "user", "escaped \\u0000 nul").as_bytes());
    nul.push(b'\n');
    nul.extend_from_slice(&[0u8; 64]);
    nul.push(b'\n');
    nul.extend_from_slice(message("n4", Some("n3"), "assistant", "after the NULs").as_bytes());
    nul.extend_from_slice(b"\n\0\n");
    out.push(("nul-bytes.jsonl", nul));
    // Lines that are almost JSON.
    let mut noise = file(&[HEADER.into(), message("p1", None, "user", "start")]);
    for l in [
        &br#"{"type":"message","id":"t1","parentId":"p1""#[..],
        br#"{"type":"message","id":"t2","parentId":"p1"}}"#,
        br#"{"type":"message","id":"t3","parentId":"p1",}"#,
        br#"{"type":"message","id":"t4","parentId":"p1","x":1e400}"#,
        br#"{"type":"message","id":"t5","parentId":"p1","x":"\ud800"}"#,
        br#"{"type":"message","id":"t6","parentId":"p1","x":"\q"}"#,
        br#"{"type":"message","id":"t7","parentId":"p1","x":01}"#,
        br#"{"type":"message","id":"t8","parentId":"p1","id":"t8b"}"#,
        br#"[1,2,3]"#,
        br#""just a string""#,
        br#"null"#,
        b"{\"type\":\"message\",\"id\":\"t9\",\r\"parentId\":\"p1\"}",
        b"   ",
    ] {
        noise.extend_from_slice(l);
        noise.push(b'\n');
    }
    noise.extend_from_slice(message("p2", Some("p1"), "assistant", "end").as_bytes());
    noise.push(b'\n');
    out.push(("almost-json.jsonl", noise));
    // A v1 file (no version) with arrays and an empty object among its entries: migration gives
    // them ids and links them into the chain (arrays are objects to JavaScript); a number, a
    // string or `true` would make Pi throw instead.
    out.push((
        "v1-array-lines.jsonl",
        file(&[
            r#"{"type":"session","id":"v1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#.into(),
            message("a", None, "user", "first"),
            "[1,2]".into(),
            message("b", Some("a"), "assistant", "second"),
            "{}".into(),
            "[]".into(),
            message("c", Some("b"), "user", "third"),
        ]),
    ));
    // Usage amounts that are not numbers: JavaScript's `+=` concatenates strings, arrays and
    // objects, and the totals and breakdown rows become text.
    let assistant = |id: &str, parent: &str, provider: &str, usage: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"ok"}}],"provider":{provider},"model":"m","usage":{usage},"stopReason":"stop","timestamp":1767225602000}}}}"#
        )
    };
    let usage = |input: &str, total: &str| {
        format!(
            r#"{{"input":{input},"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":{total}}}}}"#
        )
    };
    out.push((
        "string-amounts.jsonl",
        file(&[
            HEADER.into(),
            message("u1", None, "user", "go"),
            assistant("a1", "u1", r#""p""#, &usage("10", "0.25")),
            assistant("a2", "a1", r#""p""#, &usage("10", r#""1""#)),
            assistant("a3", "a2", r#"["x",null,"y"]"#, &usage(r#""5""#, "0.5")),
            assistant("a4", "a3", r#""q""#, &usage("[1,null,[2,3]]", r#"{"a":1}"#)),
            assistant("a5", "a4", r#""p""#, &usage("true", "null")),
            format!(
                r#"{{"type":"usage","id":"z1","parentId":"a5","timestamp":"2026-01-01T00:00:03.000Z","provider":"r","model":"m","usage":{}}}"#,
                usage("1", r#""abc""#)
            ),
        ]),
    ));
    // Ids that are numbers: JavaScript's `Map` takes `0`, `-0` and `0.0` as one key, and `1` and
    // `1e0` as another; the last record of a key owns its node.
    let numeric = |id: &str, parent: &str, time: &str| {
        format!(
            r#"{{"type":"message","id":{id},"parentId":{parent},"timestamp":"2026-01-01T00:00:{time}.000Z","message":{{"role":"user","content":"x","timestamp":1767225601000}}}}"#
        )
    };
    out.push((
        "numeric-ids.jsonl",
        file(&[
            HEADER.into(),
            numeric("\"r\"", "null", "01"),
            numeric("-0.0", "\"r\"", "02"),
            numeric("1", "\"r\"", "03"),
            numeric("\"k\"", "0", "04"),
            numeric("1e0", "-0", "05"),
            numeric("0", "\"r\"", "06"),
            numeric("\"z\"", "1.0", "07"),
        ]),
    ));
    // The last entry's `id` is `null`: so is Pi's leaf, and `buildSessionPath` gives an empty
    // context for a `null` leaf (not the last entry's path, as for a missing or unknown one).
    out.push((
        "null-leaf-id.jsonl",
        file(&[
            HEADER.into(),
            message("n1", None, "user", "hello"),
            message("n2", Some("n1"), "assistant", "hi"),
            numeric("null", "\"n2\"", "08"),
        ]),
    ));
    out
}

/// Writes the corpus under `out` (`sessions/` and `store/`), replacing what was there.
pub fn write(out: &Path) -> anyhow::Result<()> {
    let sessions = out.join("sessions");
    let store = out.join("store");
    for dir in [&sessions, &store] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).with_context(|| format!("clearing {}", dir.display()))?;
        }
    }
    std::fs::create_dir_all(&sessions)?;
    for (name, bytes) in session_files() {
        std::fs::write(sessions.join(name), bytes)?;
    }
    // A store with a folder named like a session, a symlink loop, a symlinked cwd folder, a
    // dangling link and a file in the root (ignored, as Pi ignores it).
    let cwd = store.join("--w--");
    std::fs::create_dir_all(cwd.join("x.jsonl"))?;
    std::fs::write(cwd.join("x.jsonl").join("keep"), "a folder named like a session file\n")?;
    std::fs::write(cwd.join("ok.jsonl"), file(&[HEADER.into(), message("a", None, "user", "the one good session")]))?;
    std::os::unix::fs::symlink(".", cwd.join("loop"))?;
    std::os::unix::fs::symlink("missing.jsonl", cwd.join("dangling.jsonl"))?;
    std::os::unix::fs::symlink("--w--", store.join("--again--"))?;
    std::fs::write(store.join("in-root.jsonl"), file(&[HEADER.into()]))?;
    Ok(())
}
