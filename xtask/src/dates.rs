//! Writes `corpora/dates/date-parse.jsonl`: date strings and what Node's `Date.parse` gives for
//! each, in UTC and in New York's zone, for the conformance test of `session_core::jsdate`.
//! Needs `node` on `PATH` (any version Pi runs on); the test itself does not.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

/// Reads JSON strings, one a line, and prints `Date.parse` of each (`null` for `NaN`).
const NODE_SCRIPT: &str = r#"
const lines = require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean);
const out = lines.map((l) => { const t = Date.parse(JSON.parse(l)); return Number.isNaN(t) ? "null" : String(t); });
process.stdout.write(out.join("\n") + "\n");
"#;

/// The zones the corpus is read in: UTC and one with daylight saving time.
const ZONES: [(&str, &str); 2] = [("utc", "UTC"), ("new_york", "America/New_York")];

/// Strings written by hand: Pi's own shape, the ISO format's edges, and the shapes people and
/// other tools write.
const CHOSEN: &[&str] = &[
    "2026-01-05T10:00:00.000Z",
    "2026-02-30T00:00:00.000Z",
    "2026-02-31T00:00Z",
    "2026-02-32",
    "2026-04-31",
    "2026-01-05T24:00:00.000Z",
    "2026-01-05T24:00:01Z",
    "2026-01-05T24:00:00.001Z",
    "2026-01-05T23:60:00Z",
    "2026-01-05T10:00:00.000Z ",
    " 2026-01-05T10:00:00.000Z",
    "2026-01-05T10:00:00",
    "2026-01-05T10:00",
    "2026-01-05T10",
    "2026-01-05t10:00z",
    "2026-01-05T10:00:00.5Z",
    "2026-01-05T10:00:00.123456Z",
    "2026-01-05T10:00:00.0123456789012Z",
    "2026-01-05T10:00:00.1234567890123456Z",
    "2026-01-05T10:00:00+01:00",
    "2026-01-05T10:00:00+0100",
    "2026-01-05T10:00:00+01",
    "2026-01-05T10:00:00-23:59",
    "2026-01-05T10:00:00+24:00",
    "2026-01-05T10:00:00.000+01:00",
    "2026",
    "2026-01",
    "2026-1-5",
    "2026-13-01",
    "2026-00-01",
    "2026-01-00",
    "+002026-01-05",
    "-002026-01-05",
    "-000000-01-01",
    "+000000-01-01T00:00:00Z",
    "+275760-09-13T00:00:00.000Z",
    "+275760-09-13T00:00:00.001Z",
    "-271821-04-20T00:00:00.000Z",
    "-271821-04-19T23:59:59.999Z",
    "-2026",
    "+2026",
    "2026T10:00",
    "2026-01T10:00Z",
    "20260105",
    "0",
    "5",
    "13",
    "32",
    "49",
    "50",
    "99",
    "100",
    "1e3",
    "1.5",
    "1.5.2026",
    "1/5/2026",
    "1/5/26",
    "5/1/2026",
    "2026/01/05",
    "2026/1/5 10:00",
    "Jan 5",
    "Jan",
    "5 Jan",
    "Jan 5 2026",
    "5 Jan 2026",
    "2026 Jan 5",
    "January 5, 2026",
    "Thursday, January 5, 2026",
    "5-Jan-2026",
    "Jan 5 2026 10:00 PM",
    "Jan 5 2026 12:00 AM",
    "Jan 5 2026 12:00 PM",
    "Jan 5 2026 13:00 PM",
    "Jan 5 2026 10.30",
    "Jan 5 2026 10:30:45:12",
    "Jan 5 2026 10:30:45.5",
    "jan 5 2026 10:00 z",
    "Jan 5 2026 10:00:00 UTC+5",
    "Jan 5 2026 10:00:00 GMT-0800",
    "Jan 5 2026 10:00:00 GMT+05:30",
    "Jan 5 2026 10:00 EST",
    "Jan 5 2026 10:00 PDT",
    "Mon Jan 05 2026 10:00:00 GMT+0100 (Central European Standard Time)",
    "Thu, 01 Jan 2026 00:00:00 GMT",
    "2026-01-05 10:00",
    "2026-01-05 10:00:00.5",
    "2026-01-05 10:00 PM",
    "2026-01-05 10:00 +01:00",
    "2026-01-05 10:00 EST",
    "10:00 2026-01-05",
    "10:00 -5 2026-01-05",
    "12:00",
    "10: 2026",
    "10:: 2026",
    "10:00:: 2026",
    "2026 -5",
    "- 2026",
    ")2026",
    "2026 ) 5",
    "(x) 2026",
    "(2026-01-05",
    "2026 (",
    "((a)b) 2026",
    "Z 2026",
    "2026 Z",
    "2026 gmt",
    "T",
    "",
    " ",
    "garbage",
    "2026\u{0}garbage",
    "2026\u{a0}01",
    "2026\u{200b}01",
    "\u{ff12}\u{ff10}\u{ff12}\u{ff16}",
    "2026 \u{1f680}",
    "\u{1f680} 2026",
    "2000-01-01 10:00 +400000:00",
    "2000-01-01 10:00 +1000000:00",
    "2000-01-01 10:00 +1200000:00",
    "Jan 1 1000000",
    "Jan 1 1000001",
    "Jan 1 275760",
    "Sep 13 275760 00:00 UTC",
    "Sep 13 275760 00:00",
    "Sep 13 275760 01:00 GMT+2",
    "2026-03-08T02:30:00",
    "2026-03-08T03:30:00",
    "2026-11-01T01:30:00",
    "2026-11-01T00:30:00",
    "Mar 8 2026 2:30",
    "Nov 1 2026 1:30",
    "1970-01-01T00:00:00",
    "Jan 1 20000 10:00",
    "Jan 1 -5 10:00",
    "12 Jan 5 2026",
];

/// A date-like string drawn from pieces: numbers, separators, words and spaces.
fn random_string(next: &mut impl FnMut() -> u64) -> String {
    const WORDS: &[&str] = &[
        "Jan",
        "feb",
        "MARCH",
        "apr",
        "May",
        "june",
        "Jul",
        "aug",
        "Sept",
        "oct",
        "Nov",
        "december",
        "am",
        "PM",
        "a.m.",
        "UTC",
        "ut",
        "GMT",
        "z",
        "Z",
        "T",
        "t",
        "EST",
        "edt",
        "CST",
        "cdt",
        "MST",
        "mdt",
        "PST",
        "pdt",
        "CET",
        "Mon",
        "Thursday",
        "of",
        "x",
        "utcx",
        "gmtfoo",
        "janvier",
        "\u{e9}t\u{e9}",
        "_",
        "[",
        "~",
    ];
    const SEPARATORS: &[&str] = &[
        "-", ":", ".", "/", ",", " ", "  ", "T", "Z", "+", "-", "(", ")", "(note)", "::", "\t", "\u{a0}", "\u{3000}",
        "@", "'", "\u{0}",
    ];
    let mut s = String::new();
    let pieces = 1 + next() % 9;
    for _ in 0..pieces {
        match next() % 10 {
            0..=4 => {
                let digits = [1, 2, 2, 2, 3, 4, 4, 6, 8, 10][(next() % 10) as usize];
                for _ in 0..digits {
                    s.push(char::from(b'0' + (next() % 10) as u8));
                }
            }
            5..=7 => s.push_str(SEPARATORS[(next() % SEPARATORS.len() as u64) as usize]),
            _ => s.push_str(WORDS[(next() % WORDS.len() as u64) as usize]),
        }
    }
    s
}

/// An ISO-shaped string with one part changed, so that the format's edges are met often.
fn iso_variant(next: &mut impl FnMut() -> u64) -> String {
    let mut s: Vec<char> = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        next() % 10000,
        next() % 14,
        next() % 33,
        next() % 26,
        next() % 61,
        next() % 61,
        next() % 1000
    )
    .chars()
    .collect();
    match next() % 6 {
        0 => {
            s.truncate(1 + (next() % 24) as usize);
        }
        1 => {
            let at = (next() % 24) as usize;
            s[at] = [' ', 'z', 't', '+', '-', '0', '9', '/'][(next() % 8) as usize];
        }
        2 => {
            s.pop();
            let offset = format!("{}{:02}:{:02}", ['+', '-'][(next() % 2) as usize], next() % 26, next() % 61);
            s.extend(offset.chars());
        }
        3 => {
            s.pop();
        }
        _ => {}
    }
    s.into_iter().collect()
}

/// A date as people and other programs write it (month names, slashes, a time, `am`/`pm`, a
/// zone), sometimes with a piece left out or doubled.
fn legacy_variant(next: &mut impl FnMut() -> u64) -> String {
    const MONTHS: &[&str] = &["Jan", "February", "mar", "APR", "May", "Jun", "July", "aug", "Sep", "Oct", "nov", "Dec"];
    const ZONES: &[&str] =
        &["", " GMT", " UTC", " Z", " EST", " PDT", " GMT+0530", " +01:00", " -0800", " UTC-5", " (CET)"];
    let pick = |next: &mut dyn FnMut() -> u64, items: &[&'static str]| items[(next() % items.len() as u64) as usize];
    let (month, day, year) = (pick(next, MONTHS), next() % 34, [2026, 1999, 26, 75, 5, 10000][(next() % 6) as usize]);
    let date = match next() % 5 {
        0 => format!("{month} {day} {year}"),
        1 => format!("{day} {month} {year}"),
        2 => format!("{}/{day}/{year}", next() % 14),
        3 => format!("{year}/{}/{day}", next() % 14),
        _ => format!("{day}-{month}-{year}"),
    };
    let time = match next() % 5 {
        0 => String::new(),
        1 => format!(" {}:{:02}", next() % 25, next() % 61),
        2 => format!(" {}:{:02}:{:02}.{}", next() % 25, next() % 61, next() % 61, next() % 10_000),
        3 => format!(" {}:{:02} {}", next() % 14, next() % 60, ["AM", "pm", "a", "PM"][(next() % 4) as usize]),
        _ => format!(" {}:{:02}:", next() % 24, next() % 60),
    };
    let mut s = format!("{}{date}{time}{}", ["", "Mon ", "Thursday, ", "x "][(next() % 4) as usize], pick(next, ZONES));
    if next().is_multiple_of(4) {
        let at = (next() % (s.len() as u64 + 1)) as usize;
        if s.is_char_boundary(at) {
            s.insert(at, [' ', ':', '-', '+', '.', '(', ')', 'T', '1'][(next() % 9) as usize]);
        }
    }
    s
}

/// Writes the corpus to `out`.
pub fn write(out: &Path) -> anyhow::Result<usize> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut strings: Vec<String> = CHOSEN.iter().map(|s| s.to_string()).collect();
    for k in 0..15_000 {
        strings.push(match k % 5 {
            0 => iso_variant(&mut next),
            1 | 2 => legacy_variant(&mut next),
            _ => random_string(&mut next),
        });
    }
    let input: String = strings.iter().map(|s| serde_json::to_string(s).map(|j| j + "\n")).collect::<Result<_, _>>()?;
    let mut answers = Vec::new();
    for (_, zone) in ZONES {
        let mut child = Command::new("node")
            .args(["-e", NODE_SCRIPT])
            .env("TZ", zone)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .context("running node (needed only to write this corpus)")?;
        child.stdin.take().context("node's stdin")?.write_all(input.as_bytes())?;
        let output = child.wait_with_output()?;
        if !output.status.success() {
            bail!("node failed in {zone}");
        }
        let text = String::from_utf8(output.stdout)?;
        let values: Vec<serde_json::Value> = text.lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
        if values.len() != strings.len() {
            bail!("node answered {} of {} strings", values.len(), strings.len());
        }
        answers.push(values);
    }
    let mut text = String::new();
    for (k, s) in strings.iter().enumerate() {
        let mut row = serde_json::Map::new();
        row.insert("s".into(), s.clone().into());
        for (z, (name, _)) in ZONES.iter().enumerate() {
            row.insert((*name).into(), answers[z][k].clone());
        }
        text += &serde_json::to_string(&row)?;
        text.push('\n');
    }
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("date-parse.jsonl"), text)?;
    Ok(strings.len())
}
