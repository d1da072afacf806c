//! `cargo xtask corpus`: a deterministic generator of realistic Pi 1.6 session stores.
//!
//! File sizes follow real stores (lognormal around a 105 KB median with a heavy tail: p90 about
//! 650 KB, p99 about 5 MB, the largest 80 MB or more once the store is large enough), and
//! sessions use every entry type: branches, compactions with kept ranges and system-message
//! checkpoints, branch summaries, labels, names, usage entries, context edits, system messages,
//! extension entries, images, unicode and escapes, and forks that copy a parent's entries with
//! `parentSession`. The same seed gives the same bytes.

use std::path::PathBuf;

use anyhow::Context;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng as _, SeedableRng};
use session_core::json::{JsStr, Object, Value, write_json};

/// Generator settings.
pub struct CorpusSpec {
    /// Total bytes to write (at least).
    pub size: u64,
    /// PRNG seed.
    pub seed: u64,
    /// Output sessions root.
    pub out: PathBuf,
    /// Extra sessions of 100 MB or more.
    pub outliers: usize,
    /// Median session size in bytes (real stores: about 105 KB).
    pub median: u64,
}

struct Rng(ChaCha8Rng);

impl Rng {
    fn u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.u64() % n }
    }
    fn unit(&mut self) -> f64 {
        (self.u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.unit().max(1e-12), self.unit());
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
    fn hex(&mut self, n: usize) -> String {
        (0..n).map(|_| char::from(b"0123456789abcdef"[self.below(16) as usize])).collect()
    }
}

/// Where forks say their parents live (Pi writes absolute paths).
const VIRTUAL_ROOT: &str = "/home/dev/.pi/agent/sessions";

const WORDS: &[&str] = &[
    "the",
    "parser",
    "session",
    "tree",
    "branch",
    "leaf",
    "fix",
    "test",
    "build",
    "error",
    "value",
    "file",
    "line",
    "async",
    "return",
    "index",
    "config",
    "cache",
    "token",
    "stream",
    "entry",
    "label",
    "retry",
    "handler",
    "struct",
    "compile",
    "failing",
    "refactor",
    "benchmark",
    "unicode",
    "üñïçødé",
    "проект",
    "数据",
    "🚀",
    "résumé",
    "naïve",
];
const CWDS: &[&str] = &[
    "/home/dev/src/pi-mono",
    "/home/dev/src/rust-port",
    "/home/alice/work/api-server",
    "/Users/bob/projects/ml-experiments",
    "/home/dev/проекты/mobile-app",
    "/home/dev/src/monorepo/packages/data-pipeline",
    "/srv/build/website",
    "/home/carol/notes",
];
const MODELS: &[(&str, &str)] = &[
    ("anthropic", "claude-sonnet-4-5"),
    ("anthropic", "claude-opus-4-1"),
    ("openai", "gpt-5"),
    ("openai", "gpt-5-mini"),
    ("google", "gemini-2.5-pro"),
    ("openrouter", "qwen/qwen3-coder"),
];
const TOOLS: &[&str] = &["read", "bash", "edit", "write", "grep", "find", "ls"];

fn s(v: impl Into<String>) -> Value<'static> {
    Value::String(JsStr::owned(v.into()))
}
fn n(v: f64) -> Value<'static> {
    Value::Number(v)
}
fn obj(props: Vec<(&'static str, Value<'static>)>) -> Value<'static> {
    let mut o = Object::new();
    for (k, v) in props {
        o.insert(k, v);
    }
    Value::Object(o)
}

fn iso(ms: i64) -> String {
    session_core::text::js_iso_string(ms as f64)
}

fn text(r: &mut Rng, words: usize) -> String {
    let mut out = String::new();
    for k in 0..words {
        if k > 0 {
            out.push(if r.chance(0.04) { '\n' } else { ' ' });
        }
        let word: &&str = r.pick(WORDS);
        out.push_str(word);
        if r.chance(0.01) {
            out.push_str(" \"quoted\"\t\\path\\x \u{1b}[31mred\u{1b}[0m");
        }
    }
    out
}

fn words(r: &mut Rng, min: usize, extra: u64) -> String {
    let k = min + r.below(extra) as usize;
    text(r, k)
}

fn usage(r: &mut Rng, scale: f64) -> Value<'static> {
    let input = (r.below(20_000) as f64 * scale).round();
    let output = r.below(2_000) as f64;
    let cache_read = if r.chance(0.6) { r.below(50_000) as f64 } else { 0.0 };
    let cache_write = if r.chance(0.3) { r.below(10_000) as f64 } else { 0.0 };
    let (ci, co, cr, cw) = (input * 3e-6, output * 15e-6, cache_read * 3e-7, cache_write * 3.75e-6);
    obj(vec![
        ("input", n(input)),
        ("output", n(output)),
        ("cacheRead", n(cache_read)),
        ("cacheWrite", n(cache_write)),
        ("totalTokens", n(input + output + cache_read + cache_write)),
        (
            "cost",
            obj(vec![
                ("input", n(ci)),
                ("output", n(co)),
                ("cacheRead", n(cr)),
                ("cacheWrite", n(cw)),
                ("total", n(ci + co + cr + cw)),
            ]),
        ),
    ])
}

/// One session being written.
struct Writer {
    lines: Vec<u8>,
    ids: Vec<String>,
    clock: i64,
    leaf: Option<String>,
    since_compaction: usize,
    model: (&'static str, &'static str),
}

impl Writer {
    fn entry(
        &mut self,
        r: &mut Rng,
        ty: &'static str,
        fields: Vec<(&'static str, Value<'static>)>,
        payload_first: bool,
    ) -> String {
        self.clock += 500 + r.below(90_000) as i64;
        let id = loop {
            let id = r.hex(8);
            if !self.ids.contains(&id) {
                break id;
            }
        };
        let mut o = Object::new();
        o.insert("type", s(ty));
        if payload_first {
            for (k, v) in fields.iter().cloned() {
                o.insert(k, v);
            }
        }
        o.insert("id", s(id.clone()));
        o.insert("parentId", self.leaf.clone().map_or(Value::Null, s));
        o.insert("timestamp", s(iso(self.clock)));
        if !payload_first {
            for (k, v) in fields {
                o.insert(k, v);
            }
        }
        let start = self.lines.len();
        write_json(&Value::Object(o), &mut self.lines);
        self.lines.push(b'\n');
        self.since_compaction += self.lines.len() - start;
        self.ids.push(id.clone());
        self.leaf = Some(id.clone());
        id
    }

    fn message(&mut self, r: &mut Rng, m: Value<'static>) -> String {
        self.entry(r, "message", vec![("message", m)], false)
    }

    /// One user turn: the prompt, assistant steps with tool calls and results, a final answer.
    fn turn(&mut self, r: &mut Rng, big: bool) {
        let t = self.clock;
        let prompt = words(r, 8, 60);
        let m = obj(vec![
            ("role", s("user")),
            ("content", Value::Array(vec![obj(vec![("type", s("text")), ("text", s(prompt))])])),
            ("timestamp", n(t as f64)),
        ]);
        self.message(r, m);
        for _ in 0..r.below(6) {
            let tool = *r.pick(TOOLS);
            let call_id = format!("toolu_{}", r.hex(20));
            let content = vec![
                obj(vec![
                    ("type", s("thinking")),
                    ("thinking", s(words(r, 20, 80))),
                    ("thinkingSignature", s(r.hex(64))),
                ]),
                obj(vec![("type", s("text")), ("text", s(words(r, 5, 30)))]),
                obj(vec![
                    ("type", s("toolCall")),
                    ("id", s(call_id.clone())),
                    ("name", s(tool)),
                    (
                        "arguments",
                        obj(vec![("path", s(format!("src/{}.rs", r.pick(WORDS)))), ("command", s(text(r, 4)))]),
                    ),
                ]),
            ];
            let (provider, model) = self.model;
            let u = usage(r, 1.0);
            let m = obj(vec![
                ("role", s("assistant")),
                ("content", Value::Array(content)),
                ("api", s("messages")),
                ("provider", s(provider)),
                ("model", s(model)),
                ("usage", u),
                ("stopReason", s("toolUse")),
                ("timestamp", n(self.clock as f64)),
            ]);
            self.message(r, m);
            let out_words =
                if big && r.chance(0.3) { 2_000 + r.below(40_000) as usize } else { 20 + r.below(600) as usize };
            let mut blocks = vec![obj(vec![("type", s("text")), ("text", s(text(r, out_words)))])];
            if r.chance(0.03) {
                let data: String = (0..(4_000 + r.below(60_000)))
                    .map(|_| {
                        char::from(
                            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[r.below(64) as usize],
                        )
                    })
                    .collect();
                blocks.push(obj(vec![("type", s("image")), ("data", s(data)), ("mimeType", s("image/png"))]));
            }
            let mut tr = vec![
                ("role", s("toolResult")),
                ("toolCallId", s(call_id)),
                ("toolName", s(tool)),
                ("content", Value::Array(blocks)),
                ("isError", Value::Bool(r.chance(0.05))),
                ("timestamp", n(self.clock as f64)),
            ];
            if r.chance(0.02) {
                tr.push(("usage", usage(r, 0.2)));
            }
            let m = obj(tr);
            self.message(r, m);
        }
        let (provider, model) = self.model;
        let u = usage(r, 1.0);
        let m = obj(vec![
            ("role", s("assistant")),
            ("content", Value::Array(vec![obj(vec![("type", s("text")), ("text", s(words(r, 10, 200)))])])),
            ("api", s("messages")),
            ("provider", s(provider)),
            ("model", s(model)),
            ("usage", u),
            ("stopReason", s("stop")),
            ("timestamp", n(self.clock as f64)),
        ]);
        self.message(r, m);
    }

    fn system(&mut self, r: &mut Rng) {
        let sections = obj(vec![("preamble", s(text(r, 40))), ("tools", s(text(r, 30))), ("cwd", s("/w"))]);
        let tools =
            Value::Array(TOOLS.iter().map(|t| obj(vec![("name", s(*t)), ("description", s(text(r, 12)))])).collect());
        let m = obj(vec![
            ("role", s("system")),
            ("content", s("")),
            ("sections", sections),
            ("toolsAdded", tools),
            ("timestamp", n(self.clock as f64)),
        ]);
        self.message(r, m);
    }
}

/// Writes one session of about `target` bytes; returns its lines (for forks) and entry ids.
fn session(r: &mut Rng, target: u64, start_ms: i64, prefix: Option<(&[u8], &[String])>) -> (Vec<u8>, Vec<String>) {
    let mut w = Writer {
        lines: Vec::new(),
        ids: Vec::new(),
        clock: start_ms,
        leaf: None,
        since_compaction: 0,
        model: *r.pick(MODELS),
    };
    if let Some((lines, ids)) = prefix {
        w.lines.extend_from_slice(lines);
        w.ids = ids.to_vec();
        w.leaf = ids.last().cloned();
        w.clock += 1;
    } else {
        let fields = vec![("provider", s(w.model.0)), ("modelId", s(w.model.1))];
        w.entry(r, "model_change", fields, false);
        let fields = vec![("thinkingLevel", s(*r.pick(&["off", "low", "medium", "high"])))];
        w.entry(r, "thinking_level_change", fields, false);
        if !r.chance(0.07) {
            w.system(r);
        }
    }
    let big = target > 2_000_000;
    while (w.lines.len() as u64) < target {
        w.turn(r, big);
        let roll = r.unit();
        if roll < 0.05 && w.ids.len() > 6 {
            // Go back and branch, with a summary of the abandoned path.
            let back = w.ids[w.ids.len() - 1 - r.below(5) as usize - 1].clone();
            let from = w.leaf.clone().unwrap_or_default();
            w.leaf = Some(back);
            let u = usage(r, 0.3);
            let fields = vec![("fromId", s(from)), ("summary", s(text(r, 60))), ("usage", u)];
            w.entry(r, "branch_summary", fields, false);
        } else if roll < 0.09 {
            let target_id = w.ids[r.below(w.ids.len() as u64) as usize].clone();
            let fields =
                vec![("targetId", s(target_id)), ("label", s(*r.pick(&["checkpoint", "good", "bug here", "ünïcode"])))];
            w.entry(r, "label", fields, false);
        } else if roll < 0.11 {
            let fields = vec![("name", s(text(r, 4)))];
            w.entry(r, "session_info", fields, false);
        } else if roll < 0.15 {
            let u = usage(r, 0.1);
            let fields =
                vec![("kind", s("cache_warm")), ("provider", s(w.model.0)), ("model", s(w.model.1)), ("usage", u)];
            w.entry(r, "usage", fields, false);
        } else if roll < 0.17 {
            let fields = vec![("customType", s("ext-state")), ("data", obj(vec![("n", n(r.below(100) as f64))]))];
            w.entry(r, "custom", fields, true);
        } else if roll < 0.19 {
            let fields = vec![
                ("customType", s("ext-note")),
                ("content", s(text(r, 20))),
                ("display", Value::Bool(r.chance(0.5))),
            ];
            w.entry(r, "custom_message", fields, true);
        } else if roll < 0.21 && w.ids.len() > 3 {
            let target_id = w.ids[w.ids.len() - 2].clone();
            let replacement = if r.chance(0.3) { Value::Null } else { obj(vec![("content", s(text(r, 10)))]) };
            let fields = vec![("targetId", s(target_id)), ("replacement", replacement)];
            w.entry(r, "context_edit", fields, false);
        } else if roll < 0.23 {
            w.model = *r.pick(MODELS);
            let fields = vec![("provider", s(w.model.0)), ("modelId", s(w.model.1))];
            w.entry(r, "model_change", fields, false);
        }
        if w.since_compaction > 400_000 && w.ids.len() > 30 {
            let kept = w.ids[w.ids.len() - 10].clone();
            let u = usage(r, 2.0);
            let sys = obj(vec![
                ("role", s("system")),
                ("content", s("")),
                ("sections", obj(vec![("preamble", s(text(r, 40)))])),
                ("timestamp", n((w.clock + 1) as f64)),
            ]);
            let fields = vec![
                ("summary", s(text(r, 150))),
                ("firstKeptEntryId", s(kept)),
                ("tokensBefore", n(150_000.0 + r.below(50_000) as f64)),
                ("usage", u),
                ("systemMessage", sys),
            ];
            w.entry(r, "compaction", fields, false);
            w.since_compaction = 0;
        }
    }
    (w.lines, w.ids)
}

/// Session sizes: lognormal (median 105 KB by default, sigma 1.5) with a heavy tail.
fn draw_size(r: &mut Rng, median: u64) -> u64 {
    let mut size = ((median as f64).ln() + 1.5 * r.normal()).exp();
    if r.chance(0.02) {
        size *= 2.0 + 10.0 * r.unit();
    }
    size.clamp(2_000.0, 60e6) as u64
}

fn encode_cwd(cwd: &str) -> String {
    let t = cwd.strip_prefix('/').unwrap_or(cwd);
    format!("--{}--", t.replace(['/', '\\', ':'], "-"))
}

/// Writes the store; returns (files, bytes).
pub fn generate(spec: &CorpusSpec) -> anyhow::Result<(usize, u64)> {
    let mut r = Rng(ChaCha8Rng::seed_from_u64(spec.seed));
    std::fs::create_dir_all(&spec.out).with_context(|| format!("creating {}", spec.out.display()))?;
    let mut sizes: Vec<u64> = Vec::new();
    let mut total = 0u64;
    // The largest: 80 MB in a store of 1 GiB or more, proportionally smaller otherwise.
    let largest = (spec.size / 12).clamp(spec.median.min(500_000), 80_000_000);
    sizes.push(largest);
    total += largest;
    for _ in 0..spec.outliers {
        sizes.push(100_000_000 + r.below(20_000_000));
    }
    while total < spec.size {
        let s = draw_size(&mut r, spec.median).min(spec.size.saturating_sub(total).max(2_000));
        sizes.push(s);
        total += s;
    }
    // Interleave the big one among the rest, deterministically.
    let pos = r.below(sizes.len() as u64) as usize;
    sizes.swap(0, pos);
    let mut clock: i64 = 1_767_225_600_000; // 2026-01-01
    let mut previous: Vec<(PathBuf, Vec<u8>, Vec<String>)> = Vec::new();
    let mut bytes = 0u64;
    for (k, &size) in sizes.iter().enumerate() {
        clock += 60_000 + r.below(20 * 60_000) as i64;
        let cwd = CWDS[((r.unit().powf(2.0)) * CWDS.len() as f64) as usize % CWDS.len()];
        let id = format!("019{}-{}-7{}-{}-{}", r.hex(5), r.hex(4), r.hex(3), r.hex(4), r.hex(12));
        let dir = spec.out.join(encode_cwd(cwd));
        std::fs::create_dir_all(&dir)?;
        let name = format!("{}_{id}.jsonl", iso(clock).replace([':', '.'], "-"));
        let path = dir.join(&name);
        let fork = (k > 5 && r.chance(0.05)).then(|| r.below(previous.len() as u64) as usize);
        let mut header = vec![
            ("type", s("session")),
            ("version", n(3.0)),
            ("id", s(id)),
            ("timestamp", s(iso(clock))),
            ("cwd", s(cwd)),
        ];
        let (lines, ids) = match fork.map(|f| &previous[f]) {
            Some((ppath, plines, pids)) => {
                // The parent as Pi writes it: an absolute path, here under a fixed virtual root so
                // that the bytes do not depend on --out.
                header.push(("parentSession", s(format!("{VIRTUAL_ROOT}/{}", ppath.display()))));
                // Copy a prefix of the parent, ending on a whole line.
                let cut = plines.len() / 2;
                let end = plines[..cut].iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1);
                let copied = plines[..end].iter().filter(|&&c| c == b'\n').count();
                session(&mut r, size, clock, Some((&plines[..end], &pids[..copied.min(pids.len())])))
            }
            None => session(&mut r, size, clock, None),
        };
        let mut out = Vec::with_capacity(lines.len() + 256);
        write_json(&obj(header), &mut out);
        out.push(b'\n');
        out.extend_from_slice(&lines);
        std::fs::write(&path, &out)?;
        bytes += out.len() as u64;
        if out.len() < 4_000_000 && previous.len() < 64 {
            previous.push((PathBuf::from(encode_cwd(cwd)).join(&name), lines, ids));
        }
    }
    Ok((sizes.len(), bytes))
}

/// Parses sizes like `1GiB`, `500MB`, `20k`, `123`.
pub fn parse_size(text: &str) -> anyhow::Result<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num: f64 = num.parse().with_context(|| format!("size {text:?}"))?;
    let mult: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "kib" => 1024.0,
        "m" | "mb" => 1e6,
        "mib" => 1024.0 * 1024.0,
        "g" | "gb" => 1e9,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        u => anyhow::bail!("unknown size unit {u:?} in {text:?}"),
    };
    Ok((num * mult) as u64)
}
