//! Session totals exactly as Pi 1.6 computes them (format.md §10): `AgentSession.getSessionStats()` and
//! `getUsageCostBreakdown()`, over every entry of the file, every branch included.

use bumpalo::Bump;

use crate::json::{JsStr, Value, to_number};
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
    /// One of the amounts added was a string, an array or an object: JavaScript's `+` then
    /// concatenates, and [`Totals::text`] holds what Pi prints.
    pub concatenates: bool,
}

impl std::ops::AddAssign for UsageTotals {
    fn add_assign(&mut self, o: UsageTotals) {
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.cost += o.cost;
        self.concatenates |= o.concatenates;
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
        let amounts =
            [obj.get("input"), obj.get("output"), obj.get("cacheRead"), obj.get("cacheWrite"), cost.get("total")];
        self.concatenates |=
            amounts.iter().any(|v| matches!(v, Some(Value::String(_) | Value::Array(_) | Value::Object(_))));
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
    /// The amounts as Pi prints them when a usage held a string, an array or an object where a
    /// number belongs (`+=` then concatenates: `0.5 + "1"` is `"0.51"`); `None` otherwise, and
    /// always `None` for a file Pi writes. `stats` and `breakdown` keep reading such values as
    /// numbers (`ToNumber`), for the reports that sum sessions.
    pub text: Option<Box<TextTotals>>,
}

/// A JavaScript `+=` total: a number until a string, an array or an object is added, then text.
#[derive(Debug, Clone, PartialEq)]
pub enum JsAmount {
    /// Only numbers, `null`, booleans and `undefined` added so far.
    Number(f64),
    /// The concatenated text.
    Text(String),
}

impl Default for JsAmount {
    /// `0`, as `createUsageTotals()` starts each amount.
    fn default() -> Self {
        JsAmount::Number(0.0)
    }
}

impl JsAmount {
    /// `self += value` (`undefined` when `None`).
    pub fn add(&mut self, value: Option<&Value<'_>>) {
        match self {
            JsAmount::Number(a) => match value {
                Some(Value::String(_) | Value::Array(_) | Value::Object(_)) => {
                    *self = JsAmount::Text(template(Some(&Value::Number(*a))) + &template(value));
                }
                other => *a += to_number(other),
            },
            JsAmount::Text(t) => t.push_str(&template(value)),
        }
    }

    /// `self + other`.
    pub fn plus(&self, other: &JsAmount) -> JsAmount {
        match (self, other) {
            (JsAmount::Number(a), JsAmount::Number(b)) => JsAmount::Number(a + b),
            _ => JsAmount::Text(self.to_js_string() + &other.to_js_string()),
        }
    }

    /// `ToNumber`, as `>` and `-` apply it.
    pub fn to_number(&self) -> f64 {
        match self {
            JsAmount::Number(n) => *n,
            JsAmount::Text(t) => crate::json::string_to_number(t.as_bytes()),
        }
    }

    fn to_js_string(&self) -> String {
        match self {
            JsAmount::Number(n) => template(Some(&Value::Number(*n))),
            JsAmount::Text(t) => t.clone(),
        }
    }
}

/// [`Totals`] with JavaScript's `+`: `getSessionStats()`'s amounts and the breakdown's rows.
#[derive(Debug, Clone, PartialEq)]
pub struct TextTotals {
    /// `input` tokens.
    pub input: JsAmount,
    /// `output` tokens.
    pub output: JsAmount,
    /// `cacheRead` tokens.
    pub cache_read: JsAmount,
    /// `cacheWrite` tokens.
    pub cache_write: JsAmount,
    /// `input + output + cacheRead + cacheWrite`, left to right.
    pub tokens: JsAmount,
    /// `cost.total`.
    pub cost: JsAmount,
    /// `{key, cost, tokens}`, kept and ordered as Pi keeps and orders them.
    pub breakdown: Vec<(String, JsAmount, JsAmount)>,
}

/// `createUsageTotals()` with JavaScript values: input, output, cacheRead, cacheWrite, cost.
type JsSums = [JsAmount; 5];

/// `addUsageToTotals` with JavaScript's `+`; nothing where Pi throws (see [`UsageTotals::add`]).
fn add_js(sums: &mut JsSums, usage: &Value<'_>) {
    let Some(obj) = usage.as_object() else { return };
    let Some(cost) = obj.get("cost").filter(|c| !matches!(c, Value::Null)) else { return };
    for (sum, key) in sums.iter_mut().zip(["input", "output", "cacheRead", "cacheWrite"]) {
        sum.add(obj.get(key));
    }
    sums[4].add(cost.get("total"));
}

/// What one entry adds in `addUsageToTotals` (format.md §10), from its full value.
struct UsageSource<'v, 'a> {
    /// The usage `getSessionStats()` adds (`None` inside where it must add one that is missing),
    /// and what to report where Pi throws on it.
    stat: Option<(Option<&'v Value<'a>>, &'static str)>,
    /// The breakdown's key and usage (a truthy usage only).
    row: Option<(String, &'v Value<'a>)>,
}

fn usage_source<'v, 'a>(entry: &crate::session::Entry<'_>, value: &'v Value<'a>) -> UsageSource<'v, 'a> {
    if entry.is_type("usage") {
        let usage = value.get("usage");
        let key = || format!("{}/{}", template(value.get("provider")), template(value.get("model")));
        return UsageSource {
            stat: Some((usage, "usage entry without a usage object with cost")),
            row: truthy(usage).map(|u| (key(), u)),
        };
    }
    let tools = |usage: Option<&'v Value<'a>>, what: &'static str| UsageSource {
        stat: usage.map(|u| (Some(u), what)),
        row: usage.map(|u| (TOOLS_KEY.to_string(), u)),
    };
    if entry.is_type("compaction") || entry.is_type("branch_summary") {
        return tools(truthy(value.get("usage")), "summary usage without cost");
    }
    let Some(message) = message_object(value) else { return UsageSource { stat: None, row: None } };
    match message_role(entry, message) {
        Some(r) if *r == "toolResult" => tools(truthy(message.get("usage")), "tool result usage without cost"),
        Some(r) if *r == "assistant" => {
            let model = match message.get("responseModel") {
                None | Some(Value::Null) => message.get("model"),
                some => some,
            };
            let key = format!("{}/{}", template(message.get("provider")), template(model));
            let usage = message.get("usage");
            UsageSource { stat: Some((usage, "assistant message without usage")), row: truthy(usage).map(|u| (key, u)) }
        }
        _ => UsageSource { stat: None, row: None },
    }
}

/// A message entry's `message`, unless missing or `null`.
fn message_object<'v, 'a>(value: &'v Value<'a>) -> Option<&'v Value<'a>> {
    value.get("message").filter(|m| !matches!(m, Value::Null))
}

/// `message.role`, after migration (a renamed hook message has none of the roles counted).
fn message_role<'v, 'a>(entry: &crate::session::Entry<'_>, message: &'v Value<'a>) -> Option<&'v JsStr<'a>> {
    if entry.hook_message_renamed { None } else { message.get("role").and_then(Value::as_str) }
}

fn truthy<'v, 'a>(u: Option<&'v Value<'a>>) -> Option<&'v Value<'a>> {
    u.filter(|u| u.is_truthy())
}

fn js_tokens(sums: &JsSums) -> JsAmount {
    sums[0].plus(&sums[1]).plus(&sums[2]).plus(&sums[3])
}

/// The totals again, every usage from its full value, with JavaScript's `+` (a rare file: one
/// with a usage amount that is not a number).
fn text_totals(session: &Session<'_>) -> TextTotals {
    let mut arena = Bump::new();
    let mut sums = JsSums::default();
    let mut by_key: Vec<(String, JsSums)> = Vec::new();
    for (_, entry) in session.entries() {
        if !["message", "usage", "compaction", "branch_summary"].iter().any(|t| entry.is_type(t)) {
            continue;
        }
        arena.reset();
        let Ok(value) = entry.value(&arena) else { continue };
        let UsageSource { stat, row } = usage_source(entry, &value);
        if let Some((Some(u), _)) = stat {
            add_js(&mut sums, u);
        }
        if let Some((key, u)) = row {
            let i = slot(&mut by_key, key);
            add_js(&mut by_key[i].1, u);
        }
    }
    let mut breakdown: Vec<(String, JsAmount, JsAmount)> = by_key
        .into_iter()
        .map(|(key, s)| {
            let tokens = js_tokens(&s);
            let [_, _, _, _, cost] = s;
            (key, cost, tokens)
        })
        .filter(|(_, cost, tokens)| cost.to_number() > 0.0 || tokens.to_number() > 0.0)
        .collect();
    js_sort(&mut breakdown, |a, b| b.1.to_number() - a.1.to_number());
    let tokens = js_tokens(&sums);
    let [input, output, cache_read, cache_write, cost] = sums;
    TextTotals { input, output, cache_read, cache_write, tokens, cost, breakdown }
}

const TOOLS_KEY: &str = "Tools/summaries";

/// Computes the session totals and the cost breakdown in one pass over the entries.
pub fn session_totals(session: &Session<'_>) -> Totals {
    totals_with(session, true)
}

/// The totals of one branch: the records at `path` (root first, as [`Session::branch`] gives
/// them), counted as [`session_totals`] counts a file that held only those entries. What the
/// session spent beyond them went to branches it left. A usage amount that is not a number is
/// summed as a number here (`text` is `None`).
pub fn branch_totals(session: &Session<'_>, path: &[usize]) -> Totals {
    let entries = path.iter().map(|&i| &session.records[i]).filter(|e| !e.is_type("session"));
    totals_over(entries, true).0
}

/// [`session_totals`]; `read_assistants_raw` off reads every assistant from its full value.
fn totals_with(session: &Session<'_>, read_assistants_raw: bool) -> Totals {
    let (mut totals, concatenates) = totals_over(session.entries().map(|(_, e)| e), read_assistants_raw);
    if concatenates {
        totals.text = Some(Box::new(text_totals(session)));
    }
    totals
}

/// The totals of `entries` (`text` left `None`), and whether an amount that is not a number made
/// JavaScript's `+` concatenate.
fn totals_over<'e, 'a: 'e>(
    entries: impl Iterator<Item = &'e crate::session::Entry<'a>>,
    read_assistants_raw: bool,
) -> (Totals, bool) {
    let mut totals = Totals::default();
    let mut by_key: Vec<(String, UsageTotals)> = Vec::new();
    let mut arena = Bump::new();
    for entry in entries {
        let wanted = ["message", "usage", "compaction", "branch_summary"].iter().any(|t| entry.is_type(t));
        if !wanted {
            continue;
        }
        if count_without_parsing(entry, &mut totals.stats) {
            continue;
        }
        if let Some(a) = assistant_without_parsing(entry).filter(|_| read_assistants_raw) {
            let stats = &mut totals.stats;
            stats.total_messages += 1;
            stats.assistant_messages += 1;
            stats.tool_calls += a.tool_calls;
            match a.usage {
                Some(u) => stats.usage += u,
                None => totals.diagnostics.push(Diagnostic {
                    line: entry.line_number,
                    offset: entry.offset,
                    message: "assistant message without usage (Pi 1.6 throws here; this value is skipped)".into(),
                }),
            }
            if a.usage_truthy {
                let slot = slot(&mut by_key, a.key);
                if let Some(u) = a.usage {
                    by_key[slot].1 += u;
                }
            }
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
        if !(entry.is_type("usage") || entry.is_type("compaction") || entry.is_type("branch_summary")) {
            stats.total_messages += 1;
            let Some(message) = message_object(&value) else {
                problem("message entry without a message object");
                continue;
            };
            match message_role(entry, message) {
                Some(r) if *r == "user" => stats.user_messages += 1,
                Some(r) if *r == "toolResult" => stats.tool_results += 1,
                Some(r) if *r == "assistant" => {
                    stats.assistant_messages += 1;
                    if let Some(blocks) = message.get("content").and_then(Value::as_array) {
                        let calls = blocks
                            .iter()
                            .filter(|b| b.get("type").and_then(Value::as_str).is_some_and(|t| *t == "toolCall"));
                        stats.tool_calls += calls.count() as u64;
                        if blocks.iter().any(|b| matches!(b, Value::Null)) {
                            problem("assistant content block that is null");
                        }
                    }
                }
                _ => {}
            }
        }
        let source = usage_source(entry, &value);
        if let Some((usage, what)) = source.stat
            && usage.is_none_or(|u| stats.usage.add(u).is_none())
        {
            problem(what);
        }
        if let Some((key, usage)) = source.row {
            let slot = slot(&mut by_key, key);
            // A usage the reference throws on was reported above.
            let _ = by_key[slot].1.add(usage);
        }
    }
    let concatenates = totals.stats.usage.concatenates || by_key.iter().any(|(_, t)| t.concatenates);
    let mut rows: Vec<BreakdownRow> = by_key
        .into_iter()
        .map(|(key, t)| BreakdownRow { key, cost: t.cost, tokens: t.tokens() })
        .filter(|r| r.cost > 0.0 || r.tokens > 0.0)
        .collect();
    js_sort(&mut rows, |a, b| b.cost - a.cost);
    totals.breakdown = rows;
    (totals, concatenates)
}

/// The breakdown row for `key`, added at the end the first time (rows keep first-use order).
fn slot<T: Default>(by_key: &mut Vec<(String, T)>, key: String) -> usize {
    match by_key.iter().position(|(k, _)| *k == key) {
        Some(i) => i,
        None => {
            by_key.push((key, T::default()));
            by_key.len() - 1
        }
    }
}

/// What an assistant message adds to the totals.
struct AssistantCount {
    tool_calls: u64,
    /// The usage's amounts; `None` where Pi throws (no usage, not an object, no cost).
    usage: Option<UsageTotals>,
    /// A truthy `usage` makes a breakdown row, even one Pi then throws on.
    usage_truthy: bool,
    /// `provider/model` (`responseModel` first).
    key: String,
}

/// Reads an assistant message without building its value: its object is scanned for its own
/// fields, tool calls are found in the raw content, the usage read from its raw text. `None`
/// when the full value is needed (escaped keys, a number out of range, a renamed hook message,
/// a `null` content block, which the full reading reports).
fn assistant_without_parsing(entry: &crate::session::Entry<'_>) -> Option<AssistantCount> {
    use crate::json::scan::SpanKind;
    use crate::session::Detail;
    let Detail::Message { message: Some(SpanKind::Object), span: Some((start, end)), null_block: false, .. } =
        &entry.detail
    else {
        return None;
    };
    if entry.hook_message_renamed || !entry.role().is("assistant") {
        return None;
    }
    let m = entry.line.get(*start as usize..*end as usize)?;
    crate::json::with_line_scan(m, crate::json::ScanOptions::default(), |sc| assistant_from_scan(m, sc.ok()?))
}

/// [`assistant_without_parsing`] from the scan of the message object `m`.
fn assistant_from_scan(m: &[u8], sc: &crate::json::Scanned) -> Option<AssistantCount> {
    use crate::json::scan::SpanKind;
    use crate::property::PropertyValue;
    if sc.escaped_keys || sc.overflow {
        return None;
    }
    let f = |k: &str| PropertyValue::from_span(m, sc.field(m, k));
    let mut tool_calls = 0;
    if let Some(c) = sc.field(m, "content").filter(|c| c.kind == SpanKind::Array) {
        crate::json::walk::tool_call_blocks(&m[c.start as usize..c.end as usize], |_| tool_calls += 1)?;
    }
    let usage_span = sc.field(m, "usage");
    let usage = usage_span.and_then(|u| usage_amounts(&m[u.start as usize..u.end as usize], u.kind));
    let model = match f("responseModel") {
        PropertyValue::Absent | PropertyValue::Null => f("model"),
        some => some,
    };
    Some(AssistantCount {
        tool_calls,
        usage,
        usage_truthy: f("usage").is_truthy(),
        key: format!("{}/{}", template(f("provider").to_value().as_ref()), template(model.to_value().as_ref())),
    })
}

/// `addUsageToTotals` on a raw usage object (valid JSON text) without building it, unless a key
/// holds an escape: `None` where Pi throws (not an object, or `cost` missing or `null`).
pub(crate) fn usage_amounts(raw: &[u8], kind: crate::json::scan::SpanKind) -> Option<UsageTotals> {
    use crate::json::scan::SpanKind;
    if kind != SpanKind::Object {
        return None;
    }
    if let Some(amounts) = usage_in_pi_layout(raw) {
        return Some(amounts);
    }
    if let Some(read) = usage_members(raw) {
        return read;
    }
    // Keys written with escapes: read from the full value.
    let arena = Bump::new();
    let mut totals = UsageTotals::default();
    totals.add(&crate::json::parse_value(raw, &arena).ok()?)?;
    Some(totals)
}

/// [`usage_amounts`] from the numbers the scan kept ([`crate::json::Scanned::usage_numbers`]),
/// in `line`: input, output, cacheRead, cacheWrite and cost.total (`None` if a span is not in it).
pub(crate) fn usage_from_numbers(line: &[u8], numbers: [(u32, u32); 5]) -> Option<UsageTotals> {
    use crate::property::PropertyValue;
    let mut amounts = [0.0; 5];
    for (amount, (start, end)) in amounts.iter_mut().zip(numbers) {
        *amount = PropertyValue::Raw(std::borrow::Cow::Borrowed(line.get(start as usize..end as usize)?)).to_number();
    }
    let [input, output, cache_read, cache_write, cost] = amounts;
    Some(UsageTotals { input, output, cache_read, cache_write, cost, concatenates: false })
}

/// [`usage_amounts`] of a usage object laid out exactly as Pi writes it (every key once, in
/// Pi's order, no spaces, numbers only), read by matching its keys in place; `None` for any other
/// layout.
fn usage_in_pi_layout(a: &[u8]) -> Option<UsageTotals> {
    use crate::property::PropertyValue;
    /// Past `key` at `at`, then past a number: where it ends, and the number when `used` (the
    /// parts of the cost are not converted: their long decimals cost a full parse each). The
    /// key's length is a constant, so that it is compared inline, not by `memcmp`.
    #[inline(always)]
    fn number_after<const N: usize>(a: &[u8], at: &mut usize, key: &[u8; N], used: bool) -> Option<f64> {
        if a.get(*at..*at + N)? != key {
            return None;
        }
        let start = *at + N;
        let (end, _) = crate::json::scan::number(a, start).ok()?;
        *at = end;
        Some(if used { PropertyValue::Raw(std::borrow::Cow::Borrowed(&a[start..end])).to_number() } else { f64::NAN })
    }
    let mut at = 0;
    let input = number_after(a, &mut at, b"{\"input\":", true)?;
    let output = number_after(a, &mut at, b",\"output\":", true)?;
    let cache_read = number_after(a, &mut at, b",\"cacheRead\":", true)?;
    let cache_write = number_after(a, &mut at, b",\"cacheWrite\":", true)?;
    number_after(a, &mut at, b",\"totalTokens\":", false)?;
    number_after(a, &mut at, b",\"cost\":{\"input\":", false)?;
    number_after(a, &mut at, b",\"output\":", false)?;
    number_after(a, &mut at, b",\"cacheRead\":", false)?;
    number_after(a, &mut at, b",\"cacheWrite\":", false)?;
    let cost = number_after(a, &mut at, b",\"total\":", true)?;
    (&a[at..] == b"}}").then_some(UsageTotals { input, output, cache_read, cache_write, cost, concatenates: false })
}

/// [`usage_amounts`] by walking the members of the usage object (valid JSON, already scanned
/// with its line) and of its `cost`, last occurrences winning; `None` when a key holds an escape
/// (the caller then scans the object).
fn usage_members(raw: &[u8]) -> Option<Option<UsageTotals>> {
    use crate::property::PropertyValue;
    let field = |span: Option<(usize, usize)>| match span {
        None => PropertyValue::Absent,
        Some((start, end)) => PropertyValue::from_span(raw, Some(raw_span(raw, start, end))),
    };
    let mut found: [Option<(usize, usize)>; 5] = [None; 5];
    crate::json::walk::members(raw, 0, |key, start, end| {
        let slot = match key {
            b"input" => 0,
            b"output" => 1,
            b"cacheRead" => 2,
            b"cacheWrite" => 3,
            b"cost" => 4,
            _ => return,
        };
        found[slot] = Some((start, end));
    })?;
    let mut total_span = None;
    let total = match found[4] {
        None => return Some(None),
        Some((start, _)) if raw[start] == b'n' => return Some(None),
        Some((start, end)) if raw[start] == b'{' => {
            let cost = &raw[start..end];
            let mut total = None;
            crate::json::walk::members(cost, 0, |key, s, e| {
                if key == b"total" {
                    total = Some((start + s, start + e));
                }
            })?;
            total_span = total;
            field(total).to_number()
        }
        Some(_) => f64::NAN,
    };
    let text = |span: Option<(usize, usize)>| span.is_some_and(|(start, _)| matches!(raw[start], b'"' | b'[' | b'{'));
    let concatenates = found[..4].iter().any(|&s| text(s)) || text(total_span);
    Some(Some(UsageTotals {
        concatenates,
        input: field(found[0]).to_number(),
        output: field(found[1]).to_number(),
        cache_read: field(found[2]).to_number(),
        cache_write: field(found[3]).to_number(),
        cost: total,
    }))
}

/// The scan's span of the raw value at `start..end`.
fn raw_span(a: &[u8], start: usize, end: usize) -> crate::json::Span {
    use crate::json::scan::SpanKind;
    let (start, end, kind) = match a[start] {
        b'"' => (start + 1, end - 1, SpanKind::Str { escaped: a[start + 1..end - 1].contains(&b'\\') }),
        b'n' => (start, end, SpanKind::Null),
        b't' | b'f' => (start, end, SpanKind::Bool),
        b'{' => (start, end, SpanKind::Object),
        b'[' => (start, end, SpanKind::Array),
        _ => (start, end, SpanKind::Number),
    };
    crate::json::Span { start: start as u32, end: end as u32, kind }
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
        // `Array.prototype.join`: `null` and `undefined` items are empty.
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| if matches!(v, Value::Null) { String::new() } else { template(Some(v)) })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A usage object read from its raw text (`usage_amounts`) gives what `addUsageToTotals`
    /// adds from its full value (format.md §10), one object at a time (so that a `NaN` or an infinity in
    /// one cannot hide a difference in another): duplicate keys, spacing, big and odd numbers,
    /// values that are not numbers, escapes in keys and values, costs Pi throws on.
    #[test]
    fn usage_objects_read_raw_as_their_full_values() {
        use crate::json::scan::SpanKind;
        let usages = [
            r#"{"input":10,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":0.5}}"#,
            r#"{ "input" : 1 , "input":2, "output": 12345678901234567, "cacheRead": -3, "cacheWrite": 0, "cost" : { "total" : 2, "total": 0.75 } }"#,
            r#"{"input":123456789012345,"output":1234567890123456,"cacheRead":1e2,"cacheWrite":-0,"cost":{"total":1e-7}}"#,
            r#"{"input":1.5e2,"output":[1],"cacheRead":{"a":1},"cost":5}"#,
            r#"{"cost":"x","output":"7","cacheWrite":"\u0038","cacheRead":" 9 "}"#,
            r#"{"input":true,"output":false,"cacheRead":null,"cost":{"total":null}}"#,
            r#"{"cost":{"total":1},"cost":null}"#,
            r#"{"cost":null,"cost":{"total":1}}"#,
            r#"{"input":1}"#,
            r#"{"inp\u0075t":5,"cost":{"tot\u0061l":0.25}}"#,
            r#"{"input":5,"cost":{"tot\u0061l":0.25,"total":1}}"#,
            r#"{"input":1e999,"cost":{"total":-1e999}}"#,
            r#"{}"#,
            r#"{"input":4474,"output":1975,"cacheRead":31870,"cacheWrite":9546,"totalTokens":47865,"cost":{"input":0.013422,"output":0.029625000000000002,"cacheRead":0.009561,"cacheWrite":0.0357975,"total":0.0884055}}"#,
            r#"{"input":-1,"output":1e2,"cacheRead":12345678901234567,"cacheWrite":0,"totalTokens":1,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":-0.5e-3}}"#,
            r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":1},"input":7}"#,
            r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":1,"total":2}}"#,
            r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":"1"}}"#,
            r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":1}}"#,
            r#"{"input":1e999,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":3}}"#,
            r#"{"x":[{"a":"]}\\\"","b":[]},[1,"}",true,false,null,[]]],"input":3,"s":"\\\\","cost":{"y":{"z":"\"}"},"total":1}}"#,
        ];
        for usage in usages {
            let arena = Bump::new();
            let value = crate::json::parse_value(usage.as_bytes(), &arena).unwrap();
            let mut full = UsageTotals::default();
            let full = full.add(&value).map(|()| full);
            // Added to zero as totals are (which turns -0 into 0).
            let raw = usage_amounts(usage.as_bytes(), SpanKind::Object).map(|u| {
                let mut t = UsageTotals::default();
                t += u;
                t
            });
            assert_eq!(format!("{raw:?}"), format!("{full:?}"), "{usage}");
        }
        // Pi's layout is read in place (the object of Pi's writer), and a layout one key off is not.
        let pi = usages.iter().find(|u| u.contains("0.0884055")).unwrap();
        assert_eq!(usage_in_pi_layout(pi.as_bytes()).map(|u| (u.input, u.cost)), Some((4474.0, 0.0884055)));
        for near in usages.iter().filter(|u| u.contains("\"total\":1,\"total\"") || u.ends_with(",\"input\":7}")) {
            assert!(usage_in_pi_layout(near.as_bytes()).is_none(), "{near}");
        }
        // The members are read, not the scan's fallback: a raw reading of the second object.
        let raw = usage_members(usages[1].as_bytes()).unwrap().unwrap();
        assert_eq!((raw.input, raw.output, raw.cache_read, raw.cost), (2.0, 12345678901234567.0, -3.0, 0.75));
    }

    /// Assistants read from their raw text give the totals, breakdown and diagnostics of their
    /// full values (format.md §10), on the shapes that could tell them apart: escapes in keys, in the usage
    /// and in a block's `type`, usages Pi throws on, odd providers and models, big numbers.
    #[test]
    fn assistants_read_raw_total_as_their_full_values() {
        let usage = r#"{"input":10,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":0.5}}"#;
        let messages = [
            format!(r#"{{"role":"assistant","content":[{{"type":"text","text":"a\"b"}},{{"type":"toolCall","id":"1","name":"bash","arguments":{{}}}},{{"type":"toolCall","name":"x"}}],"provider":"p","model":"m","usage":{usage}}}"#),
            format!(r#"{{"role":"assistant","content":[],"provider":"p","model":"m","responseModel":"r","usage":{usage}}}"#),
            r#"{"role":"assistant","content":[],"provider":"p","model":"m"}"#.to_string(),
            r#"{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":1,"cost":null}}"#.to_string(),
            r#"{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":1}}"#.to_string(),
            r#"{"role":"assistant","content":[],"provider":"p","model":"m","usage":7}"#.to_string(),
            r#"{"role":"assistant","content":[],"provider":"p","model":"m","usage":false}"#.to_string(),
            r#"{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"inp\u0075t":5,"cost":{"tot\u0061l":0.25}}}"#.to_string(),
            r#"{"role":"assistant","content":[{"type":"tool\u0043all","name":"y"}],"provider":"p","model":"m","usage":{"cost":{"total":1}}}"#.to_string(),
            r#"{"role":"assistant","content":[{"ty\u0070e":"toolCall"}],"provider":"p","model":"m","usage":{"cost":{"total":1}}}"#.to_string(),
            r#"{"role":"assistant","content":"text","provider":5,"model":null,"responseModel":null,"usage":{"input":"12","output":true,"cost":{"total":"0.125"}}}"#.to_string(),
            r#"{"role":"assistant","content":[{"type":"toolCall"}],"provider":{"a":1},"model":[1],"usage":{"input":1e999,"cost":{"total":2}}}"#.to_string(),
            r#"{"role":"assistant","content":[],"usage":{"input":1,"cost":{"total":3}},"usage":{"input":2,"cost":{"total":4}}}"#.to_string(),
            r#"{"role":"assistant","content":[],"usage":{ "input" : 1 , "input":2, "output": 12345678901234567, "cacheRead": -3, "cacheWrite": 0, "cost" : { "total" : 2, "total": 0.75 } }}"#.to_string(),
            r#"{"role":"assistant","content":[],"usage":{"input":1.5e2,"output":[1],"cacheRead":{"a":1},"cost":5}}"#.to_string(),
            r#"{"role":"assistant","content":[],"usage":{"cost":"x","output":"7","cacheWrite":"\u0038"}}"#.to_string(),
            // A null block: Pi throws reading its type (found by differential fuzzing against Pi 1.6).
            r#"{"role":"assistant","content":[null,{"type":"toolCall"}],"usage":{"input":1,"cost":{"total":1}}}"#.to_string(),
            r#"{"role":"assistant","content":[ null ],"usage":{"input":1,"cost":{"total":1}}}"#.to_string(),
            r#"{"role":"assistant","content":[{"type":"text","text":"null"}],"usage":{"input":1,"cost":{"total":1}}}"#.to_string(),
        ];
        let mut text = String::from(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        );
        text.push('\n');
        let mut parent = "null".to_string();
        for (k, m) in messages.iter().enumerate() {
            text.push_str(&format!(
                r#"{{"type":"message","id":"e{k}","parentId":{parent},"timestamp":"2026-01-01T00:00:0{}.000Z","message":{m}}}"#,
                k % 10
            ));
            text.push('\n');
            parent = format!("\"e{k}\"");
        }
        let session = Session::load(text.as_bytes()).unwrap();
        let raw = totals_with(&session, true);
        let full = totals_with(&session, false);
        assert_eq!(format!("{:?}", raw.stats), format!("{:?}", full.stats));
        assert_eq!(format!("{:?}", raw.breakdown), format!("{:?}", full.breakdown));
        assert_eq!(format!("{:?}", raw.diagnostics), format!("{:?}", full.diagnostics));
        // What they agree on is not nothing.
        assert_eq!(full.stats.assistant_messages, 19);
        assert_eq!(full.stats.tool_calls, 6);
        assert_eq!(full.diagnostics.len(), 7, "{:?}", full.diagnostics);
        let null_blocks: Vec<u64> = full
            .diagnostics
            .iter()
            .filter(|d| d.message.starts_with("assistant content block that is null"))
            .map(|d| d.line)
            .collect();
        assert_eq!(null_blocks, [18, 19]);
        assert!(full.breakdown.len() >= 3, "{:?}", full.breakdown);
    }
}
