//! Session totals exactly as Pi 1.6 computes them (§10): `AgentSession.getSessionStats()` and
//! `getUsageCostBreakdown()`, over every entry of the file, every branch included.

use bumpalo::Bump;

use crate::json::{Value, to_number};
use crate::jssort::js_sort;
use crate::session::{Diagnostic, Session};

/// Token counts and cost: the reference's `getSessionStats()` fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionStats {
    /// Messages with role `user`.
    pub user_messages: u64,
    /// Messages with role `assistant`.
    pub assistant_messages: u64,
    /// `toolCall` blocks in assistant content.
    pub tool_calls: u64,
    /// Messages with role `toolResult`.
    pub tool_results: u64,
    /// Every `message` entry.
    pub total_messages: u64,
    /// Summed usage.
    pub usage: UsageTotals,
}

/// Running sums of one or more `Usage` objects (`createUsageTotals`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UsageTotals {
    /// `input` tokens.
    pub input: f64,
    /// `output` tokens.
    pub output: f64,
    /// `cacheRead` tokens.
    pub cache_read: f64,
    /// `cacheWrite` tokens.
    pub cache_write: f64,
    /// `cost.total`.
    pub cost: f64,
}

impl std::ops::AddAssign for UsageTotals {
    fn add_assign(&mut self, o: UsageTotals) {
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.cost += o.cost;
    }
}

impl std::ops::SubAssign for UsageTotals {
    fn sub_assign(&mut self, o: UsageTotals) {
        self.input -= o.input;
        self.output -= o.output;
        self.cache_read -= o.cache_read;
        self.cache_write -= o.cache_write;
        self.cost -= o.cost;
    }
}

impl UsageTotals {
    /// `input + output + cacheRead + cacheWrite` (never `totalTokens`).
    pub fn tokens(&self) -> f64 {
        self.input + self.output + self.cache_read + self.cache_write
    }

    /// `addUsageToTotals`: JavaScript `+=` on each field. `None` when the reference would throw
    /// (a usage without a `cost` object, or not an object at all).
    pub fn add(&mut self, usage: &Value<'_>) -> Option<()> {
        let obj = usage.as_object()?;
        let cost = obj.get("cost")?;
        if matches!(cost, Value::Null) {
            return None;
        }
        let total = to_number(cost.get("total"));
        self.input += to_number(obj.get("input"));
        self.output += to_number(obj.get("output"));
        self.cache_read += to_number(obj.get("cacheRead"));
        self.cache_write += to_number(obj.get("cacheWrite"));
        self.cost += total;
        Some(())
    }
}

/// One row of `getUsageCostBreakdown`.
#[derive(Debug, Clone, PartialEq)]
pub struct BreakdownRow {
    /// `provider/model`, or `Tools/summaries`.
    pub key: String,
    /// Summed `cost.total`.
    pub cost: f64,
    /// Summed tokens.
    pub tokens: f64,
}

/// Totals of one session, with what the reference would have thrown on.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    /// `getSessionStats()`.
    pub stats: SessionStats,
    /// `getUsageCostBreakdown(getEntries())`.
    pub breakdown: Vec<BreakdownRow>,
    /// Entries where the reference throws (e.g. an assistant without usage); we skip the value.
    pub diagnostics: Vec<Diagnostic>,
}

const TOOLS_KEY: &str = "Tools/summaries";

/// Computes the session totals and the cost breakdown in one pass over the entries.
pub fn session_totals(session: &Session<'_>) -> Totals {
    let mut totals = Totals::default();
    let mut by_key: Vec<(String, UsageTotals)> = Vec::new();
    let mut arena = Bump::new();
    for (_, entry) in session.entries() {
        let wanted = ["message", "usage", "compaction", "branch_summary"].iter().any(|t| entry.is_type(t));
        if !wanted {
            continue;
        }
        if count_without_parsing(entry, &mut totals.stats) {
            continue;
        }
        arena.reset();
        let Ok(value) = entry.value(&arena) else { continue };
        let mut problem = |what: &str| {
            totals.diagnostics.push(Diagnostic {
                line: entry.line_number,
                offset: entry.offset,
                message: format!("{what} (Pi 1.6 throws here; this value is skipped)"),
            });
        };
        let stats = &mut totals.stats;
        let mut row: Option<(String, &Value<'_>)> = None;
        if entry.is_type("usage") {
            match value.get("usage") {
                Some(u) if stats.usage.add(u).is_some() => {}
                _ => problem("usage entry without a usage object with cost"),
            }
            if let Some(u) = value.get("usage").filter(|u| u.is_truthy()) {
                let key = format!("{}/{}", template(value.get("provider")), template(value.get("model")));
                row = Some((key, u));
            }
        } else if entry.is_type("compaction") || entry.is_type("branch_summary") {
            if let Some(u) = value.get("usage").filter(|u| u.is_truthy()) {
                if stats.usage.add(u).is_none() {
                    problem("summary usage without cost");
                }
                row = Some((TOOLS_KEY.to_string(), u));
            }
        } else {
            stats.total_messages += 1;
            let Some(message) = value.get("message").filter(|m| !matches!(m, Value::Null)) else {
                problem("message entry without a message object");
                continue;
            };
            let role = if entry.hook_message_renamed { None } else { message.get("role").and_then(Value::as_str) };
            match role {
                Some(r) if *r == "user" => stats.user_messages += 1,
                Some(r) if *r == "toolResult" => {
                    stats.tool_results += 1;
                    if let Some(u) = message.get("usage").filter(|u| u.is_truthy()) {
                        if stats.usage.add(u).is_none() {
                            problem("tool result usage without cost");
                        }
                        row = Some((TOOLS_KEY.to_string(), u));
                    }
                }
                Some(r) if *r == "assistant" => {
                    stats.assistant_messages += 1;
                    if let Some(blocks) = message.get("content").and_then(Value::as_array) {
                        let calls = blocks
                            .iter()
                            .filter(|b| b.get("type").and_then(Value::as_str).is_some_and(|t| *t == "toolCall"));
                        stats.tool_calls += calls.count() as u64;
                    }
                    match message.get("usage") {
                        Some(u) if stats.usage.add(u).is_some() => {}
                        _ => problem("assistant message without usage"),
                    }
                    let model = match message.get("responseModel") {
                        None | Some(Value::Null) => message.get("model"),
                        some => some,
                    };
                    let key = format!("{}/{}", template(message.get("provider")), template(model));
                    if let Some(u) = message.get("usage").filter(|u| u.is_truthy()) {
                        row = Some((key, u));
                    }
                }
                _ => {}
            }
        }
        if let Some((key, usage)) = row {
            let slot = match by_key.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    by_key.push((key, UsageTotals::default()));
                    by_key.len() - 1
                }
            };
            // A usage the reference throws on was reported above.
            let _ = by_key[slot].1.add(usage);
        }
    }
    let mut rows: Vec<BreakdownRow> = by_key
        .into_iter()
        .map(|(key, t)| BreakdownRow { key, cost: t.cost, tokens: t.tokens() })
        .filter(|r| r.cost > 0.0 || r.tokens > 0.0)
        .collect();
    js_sort(&mut rows, |a, b| b.cost - a.cost);
    totals.breakdown = rows;
    totals
}

/// Counts a message entry that carries no usage from its scan alone: a message object whose
/// role is neither `assistant` nor `toolResult`, or a tool result without a truthy `usage`.
/// Those are most of a session's bytes, and none of their values is needed.
fn count_without_parsing(entry: &crate::session::Entry<'_>, stats: &mut SessionStats) -> bool {
    use crate::json::scan::SpanKind;
    use crate::session::Detail;
    let Detail::Message { message: Some(SpanKind::Object), tool_result_usage, .. } = &entry.detail else {
        return false;
    };
    let role = entry.role();
    if role.is("assistant") {
        return false;
    }
    if role.is("toolResult") {
        if *tool_result_usage {
            return false;
        }
        stats.total_messages += 1;
        stats.tool_results += 1;
        return true;
    }
    stats.total_messages += 1;
    if role.is("user") {
        stats.user_messages += 1;
    }
    true
}

/// A value as a template literal prints it (`${v}`).
pub(crate) fn template(v: Option<&Value<'_>>) -> String {
    match v {
        None => "undefined".into(),
        Some(Value::Null) => "null".into(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => {
            if n.is_nan() {
                "NaN".into()
            } else if n.is_infinite() {
                if *n > 0.0 { "Infinity".into() } else { "-Infinity".into() }
            } else {
                let mut out = Vec::new();
                crate::json::write_number(*n, &mut out);
                String::from_utf8_lossy(&out).into_owned()
            }
        }
        Some(Value::String(s)) => s.to_str_lossy().into_owned(),
        Some(Value::Array(_)) => "[array]".into(),
        Some(Value::Object(_)) => "[object Object]".into(),
    }
}
