//! Redaction of secrets and home folders from text meant to be shared (`export --redact`).

use std::collections::BTreeMap;

use regex::Regex;

/// Word boundaries are ASCII ones (`(?-u:\b)`): a Unicode one makes the search fall back to a
/// slower engine on text that is not ASCII. What is replaced, in order: each rule's match becomes `[REDACTED <kind>]`, but for the groups
/// named `pre` and `post`, which are kept (home folders become `~`).
const RULES: &[(&str, &str)] = &[
    ("private key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----"),
    ("anthropic key", r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai key", r"(?-u:\b)sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("github token", r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("gitlab token", r"(?-u:\b)glpat-[A-Za-z0-9_-]{20,}"),
    ("aws access key", r"(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)"),
    ("google api key", r"(?-u:\b)AIza[0-9A-Za-z_-]{35}"),
    ("slack token", r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10,}"),
    ("stripe key", r"(?-u:\b)[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("jwt", r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("bearer token", r"(?i)(?P<pre>(?-u:\b)bearer\s+)[A-Za-z0-9._~+/-]{16,}=*"),
    ("url password", r"(?i)(?P<pre>(?-u:\b)[a-z][a-z0-9+.-]*://[^\s/:@]+:)[^\s/@]{3,}(?P<post>@)"),
];

/// `NAME=value`, `"name": "value"` and `name: value` where the name ends in a word that says it
/// holds a secret and the value has a digit (so that code such as `apiKey = options.key` stays):
/// the value is replaced, the name kept. The word comes first in the pattern so that the search
/// can look for it as a literal (a pattern that starts with the name's other characters took 18 s
/// on a 99 MB export).
const ASSIGNMENT: &str = r#"(?i)((?:api[_-]?key|secrets?|password|passwd|token|access[_-]?key|private[_-]?key|credentials?)(?-u:\b)["']?\s*[:=]\s*["']?)([^\s"'`,;})\]]{8,})"#;

/// Home folders (`/home/NAME`, `/Users/NAME`, `C:\Users\NAME`): they name the user.
const HOME: &str = r"(?:/home/|/Users/|[A-Za-z]:\\Users\\)[^/\\\s`'\x22<>|:]+";

/// The compiled rules.
pub struct Redactor {
    rules: Vec<(&'static str, Regex)>,
    assignment: Regex,
    home: Regex,
}

/// How many of each kind were replaced.
pub type Counts = BTreeMap<&'static str, usize>;

impl Redactor {
    /// Compiles the rules (they are fixed, so this cannot fail at run time).
    pub fn new() -> Redactor {
        let compile = |p: &str| Regex::new(p).unwrap_or_else(|e| unreachable!("fixed pattern {p}: {e}"));
        Redactor {
            rules: RULES.iter().map(|(kind, p)| (*kind, compile(p))).collect(),
            assignment: compile(ASSIGNMENT),
            home: compile(HOME),
        }
    }

    /// `text` with every secret and home folder replaced, and how many of each were.
    pub fn redact(&self, text: &str) -> (String, Counts) {
        let mut counts = Counts::new();
        let mut out = text.to_string();
        for (kind, re) in &self.rules {
            out = replace_counting(re, &out, &mut counts, kind, |c| {
                let kept = |name: &str| c.name(name).map_or("", |m| m.as_str());
                format!("{}[REDACTED {kind}]{}", kept("pre"), kept("post"))
            });
        }
        out = replace_counting(&self.assignment, &out, &mut counts, "secret value", |c| {
            // A value already replaced by a rule above stays as it is.
            if c[2].starts_with("[REDACTED") || !c[2].bytes().any(|b| b.is_ascii_digit()) {
                c[0].to_string()
            } else {
                format!("{}[REDACTED secret value]", &c[1])
            }
        });
        out = replace_counting(&self.home, &out, &mut counts, "home folder", |_| "~".to_string());
        (out, counts)
    }
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new()
    }
}

fn replace_counting(
    re: &Regex,
    text: &str,
    counts: &mut Counts,
    kind: &'static str,
    with: impl Fn(&regex::Captures<'_>) -> String,
) -> String {
    let mut n = 0;
    let out = re.replace_all(text, |c: &regex::Captures<'_>| {
        let replacement = with(c);
        n += usize::from(replacement != c[0]);
        replacement
    });
    if n > 0 {
        *counts.entry(kind).or_default() += n;
    }
    out.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(text: &str) -> (String, Counts) {
        Redactor::new().redact(text)
    }

    #[test]
    fn keys_and_tokens_are_replaced_by_their_kind() {
        let cases = [
            ("key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 here", "key [REDACTED anthropic key] here"),
            ("OPENAI sk-proj-AbCdEfGhIjKlMnOpQrStUvWx", "OPENAI [REDACTED openai key]"),
            ("ghp_0123456789abcdefghijABCDEFGHIJ012345 x", "[REDACTED github token] x"),
            ("id AKIAIOSFODNN7EXAMPLE.", "id [REDACTED aws access key]."),
            ("Authorization: Bearer abcdef0123456789abcdef", "Authorization: Bearer [REDACTED bearer token]"),
            ("postgres://app:hunter2hunter2@db:5432/x", "postgres://app:[REDACTED url password]@db:5432/x"),
            ("export API_KEY=0123456789abcdef", "export API_KEY=[REDACTED secret value]"),
            (r#"{"password": "correct-horse-9"}"#, r#"{"password": "[REDACTED secret value]"}"#),
            ("CLIENT_SECRETS=abcdefgh12345678", "CLIENT_SECRETS=[REDACTED secret value]"),
            ("cd /home/alice/src/app && ls /Users/bob", "cd ~/src/app && ls ~"),
        ];
        for (text, want) in cases {
            assert_eq!(redacted(text).0, want, "{text}");
        }
    }

    #[test]
    fn a_private_key_block_goes_whole_and_counts_are_kept() {
        let text =
            "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nAAAA\n-----END OPENSSH PRIVATE KEY-----\nz";
        let (out, counts) = redacted(text);
        assert_eq!(out, "a\n[REDACTED private key]\nz");
        assert_eq!(counts.get("private key"), Some(&1));
        let (_, counts) = redacted("SECRET=abcdefghijk1 TOKEN=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123");
        // The token was already replaced by its rule; the assignment rule does not count it again.
        assert_eq!(counts.get("secret value"), Some(&1));
        assert_eq!(counts.get("anthropic key"), Some(&1));
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for text in [
            "the token count is 1234",
            "password: ok",
            "sk-short",
            "a tokenizer=sentencepiece2",
            "const totalTokens = totalInput2 + x;",
            "const apiKey = options.apiKey;",
            "export ANTHROPIC_API_KEY=sk-ant-...",
            "/home is empty",
            "see https://example.com/a:b@c",
        ] {
            let (out, counts) = redacted(text);
            assert_eq!((out.as_str(), counts.len()), (text, 0), "{text}");
        }
    }
}
