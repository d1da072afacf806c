//! The JSON records the CLI prints (the shapes `reference/record.mjs tree` and `stats` print) and their
//! readable text forms.

use session_core::json::{JsStr, Object, Value};
use session_core::session::{Session, Tree};
use session_core::stats::Totals;
use session_core::{PropertyValue, info::SessionInfo};

/// Nodes listed beyond this stop the tree walk (duplicate ids can repeat subtrees without end).
pub const MAX_TREE_NODES: usize = 5_000_000;

fn obj<'a>(props: Vec<(&'static str, Value<'a>)>) -> Value<'a> {
    let mut o = Object::new();
    for (k, v) in props {
        o.insert(k, v);
    }
    Value::Object(o)
}

fn field<'a>(props: &mut Vec<(&'static str, Value<'a>)>, key: &'static str, f: &PropertyValue<'a>) {
    if let Some(v) = f.to_value() {
        props.push((key, v));
    }
}

fn num(n: f64) -> Value<'static> {
    Value::Number(n)
}

/// What a tree walk met that the reference would not survive.
#[derive(Debug, Default)]
pub struct TreeWalkNotes {
    /// Children that would re-enter their own ancestors (duplicate ids forming a loop).
    pub cycles_cut: usize,
    /// The walk reached [`MAX_TREE_NODES`].
    pub truncated: bool,
}

/// Walks the tree in pre-order, calling `visit(node, last_flags)` where `last_flags[d]` tells
/// whether the node's ancestor at depth `d` (and finally the node itself) is the last child. A
/// child already on the current path is not entered (duplicate ids can form loops), and the walk
/// stops after [`MAX_TREE_NODES`] nodes.
pub fn walk_tree(tree: &Tree, mut visit: impl FnMut(usize, &[bool])) -> TreeWalkNotes {
    let mut notes = TreeWalkNotes::default();
    let mut on_path = vec![false; tree.nodes.len()];
    let mut path: Vec<usize> = Vec::new();
    let mut last_flags: Vec<bool> = Vec::new();
    let n_roots = tree.roots.len();
    let mut stack: Vec<(usize, usize, bool)> =
        tree.roots.iter().enumerate().rev().map(|(i, &r)| (r, 0, i + 1 == n_roots)).collect();
    let mut visited = 0usize;
    while let Some((n, depth, last)) = stack.pop() {
        for gone in path.drain(depth..) {
            on_path[gone] = false;
        }
        last_flags.truncate(depth);
        if on_path[n] {
            notes.cycles_cut += 1;
            continue;
        }
        if visited >= MAX_TREE_NODES {
            notes.truncated = true;
            break;
        }
        visited += 1;
        on_path[n] = true;
        path.push(n);
        last_flags.push(last);
        visit(n, &last_flags);
        let children = &tree.nodes[n].children;
        for (i, &c) in children.iter().enumerate().rev() {
            stack.push((c, depth + 1, i + 1 == children.len()));
        }
    }
    notes
}

/// `{"file","roots","nodes"}` in pre-order, as `tree.mjs` prints it.
pub fn tree_record<'a>(file: &str, session: &Session<'a>, tree: &Tree) -> (Value<'a>, TreeWalkNotes) {
    let id_value = |node: usize| session.records[tree.nodes[node].record].id.to_value().unwrap_or(Value::Null);
    let roots = tree.roots.iter().map(|&r| id_value(r)).collect();
    let mut nodes = Vec::new();
    let notes = walk_tree(tree, |n, _| {
        let node = &tree.nodes[n];
        let e = &session.records[node.record];
        let mut props = Vec::new();
        field(&mut props, "id", &e.id);
        field(&mut props, "parentId", &e.parent_id);
        field(&mut props, "type", &e.entry_type);
        field(&mut props, "timestamp", &e.timestamp);
        if let Some((label, ts)) = session.label(&e.id) {
            field(&mut props, "label", label);
            field(&mut props, "labelTimestamp", ts);
        }
        props.push(("children", Value::Array(node.children.iter().map(|&c| id_value(c)).collect())));
        nodes.push(obj(props));
    });
    let rec = obj(vec![
        ("file", Value::String(JsStr::owned(file))),
        ("roots", Value::Array(roots)),
        ("nodes", Value::Array(nodes)),
    ]);
    (rec, notes)
}

/// `{"file","sessionId","stats","breakdown"}`, as `stats.mjs` prints it.
pub fn stats_record<'a>(file: &str, session: &Session<'a>, totals: &Totals) -> Value<'a> {
    let s = &totals.stats;
    let u = &s.usage;
    let amounts = match &totals.text {
        // A usage amount that is not a number: the values as JavaScript's `+` made them.
        Some(t) => [&t.input, &t.output, &t.cache_read, &t.cache_write, &t.tokens, &t.cost].map(js_amount),
        None => [u.input, u.output, u.cache_read, u.cache_write, u.tokens(), u.cost].map(num),
    };
    let stats = obj(stats_fields(s, amounts));
    let rows: Vec<(&str, Value<'static>, Value<'static>)> = match &totals.text {
        Some(t) => {
            t.breakdown.iter().map(|(key, cost, tokens)| (key.as_str(), js_amount(cost), js_amount(tokens))).collect()
        }
        None => totals.breakdown.iter().map(|r| (r.key.as_str(), num(r.cost), num(r.tokens))).collect(),
    };
    let breakdown = rows
        .into_iter()
        .map(|(key, cost, tokens)| {
            obj(vec![("key", Value::String(JsStr::owned(key))), ("cost", cost), ("tokens", tokens)])
        })
        .collect();
    obj(vec![
        ("file", Value::String(JsStr::owned(file))),
        ("sessionId", Value::String(session.id().clone())),
        ("stats", stats),
        ("breakdown", Value::Array(breakdown)),
    ])
}

/// The fields of `getSessionStats()`'s record, with its six amounts (input, output, cache read,
/// cache write, total tokens, cost) as given.
fn stats_fields<'a>(s: &session_core::stats::SessionStats, amounts: [Value<'a>; 6]) -> Vec<(&'static str, Value<'a>)> {
    let [input, output, cache_read, cache_write, tokens, cost] = amounts;
    vec![
        ("userMessages", num(s.user_messages as f64)),
        ("assistantMessages", num(s.assistant_messages as f64)),
        ("toolCalls", num(s.tool_calls as f64)),
        ("toolResults", num(s.tool_results as f64)),
        ("totalMessages", num(s.total_messages as f64)),
        (
            "tokens",
            obj(vec![
                ("input", input),
                ("output", output),
                ("cacheRead", cache_read),
                ("cacheWrite", cache_write),
                ("total", tokens),
            ]),
        ),
        ("cost", cost),
    ]
}

/// `"activeBranch"` of `stats --json` (beyond Pi): the totals of the entries from the root to the
/// leaf, in `stats`'s shape (amounts as numbers), with the leaf's id and the number of entries.
pub fn branch_record(totals: &Totals, leaf: Option<&PropertyValue<'_>>, entries: usize) -> Value<'static> {
    let u = &totals.stats.usage;
    let mut fields = vec![
        ("leafId", leaf.and_then(PropertyValue::to_value).map_or(Value::Null, Value::into_owned)),
        ("entries", num(entries as f64)),
    ];
    fields.extend(stats_fields(
        &totals.stats,
        [u.input, u.output, u.cache_read, u.cache_write, u.tokens(), u.cost].map(num),
    ));
    obj(fields)
}

/// A JavaScript total: its number, or the text `+` concatenated.
fn js_amount(a: &session_core::stats::JsAmount) -> Value<'static> {
    match a {
        session_core::stats::JsAmount::Number(n) => num(*n),
        session_core::stats::JsAmount::Text(t) => Value::String(JsStr::owned(t.clone())),
    }
}

/// A `SessionInfo` with the reference's field names; invalid dates are `null`.
pub fn info_record<'a>(path: &str, info: &'a SessionInfo<'_>) -> Value<'a> {
    info_record_texts(path, info, true)
}

/// [`info_record`]; with `decode_texts` false, texts kept as JSON (`all_messages_json`) are not
/// decoded: `allMessagesText` is then `null`, for a writer that copies that JSON text instead.
pub fn info_record_texts<'a>(path: &str, info: &'a SessionInfo<'_>, decode_texts: bool) -> Value<'a> {
    let date = |t: f64| {
        if t.is_nan() { Value::Null } else { Value::String(JsStr::owned(session_core::text::js_iso_string(t))) }
    };
    let mut props = vec![("path", Value::String(JsStr::owned(path)))];
    field(&mut props, "id", &info.id);
    props.push(("cwd", Value::String(info.cwd.clone())));
    if let Some(name) = &info.name {
        props.push(("name", Value::String(name.clone())));
    }
    field(&mut props, "parentSessionPath", &info.parent_session);
    props.push(("created", date(info.created)));
    props.push(("modified", date(info.modified)));
    props.push(("messageCount", num(info.message_count as f64)));
    props.push(("firstMessage", Value::String(JsStr(std::borrow::Cow::Borrowed(info.first_message.as_bytes())))));
    let texts = match (info.all_messages_json.is_empty(), decode_texts) {
        (true, _) => Value::String(JsStr(std::borrow::Cow::Borrowed(&info.all_messages_text))),
        (false, true) => {
            let mut decoded = Vec::new();
            session_core::json::unescape_into(&info.all_messages_json, &mut decoded);
            Value::String(JsStr(std::borrow::Cow::Owned(decoded)))
        }
        (false, false) => Value::Null,
    };
    props.push(("allMessagesText", texts));
    obj(props)
}

/// The names of [`info_record`]'s fields, in the reference's order (`list --fields` takes these).
pub const INFO_FIELDS: [&str; 10] = [
    "path",
    "id",
    "cwd",
    "name",
    "parentSessionPath",
    "created",
    "modified",
    "messageCount",
    "firstMessage",
    "allMessagesText",
];

/// Appends the JSON of one field of [`info_record`] (`key` one of [`INFO_FIELDS`]), written
/// straight from the info; false, with nothing written, when the record has no such field.
/// Texts kept as JSON (`all_messages_json`) are copied as they are. Building the record and then
/// writing it took 6.79 M instructions for 360 picker rows; written so, 3.24 M (callgrind).
pub fn write_info_field(path: &str, info: &SessionInfo<'_>, key: &str, out: &mut Vec<u8>) -> bool {
    use session_core::json::{write_json, write_number, write_string};
    let date = |t: f64, out: &mut Vec<u8>| {
        if t.is_nan() {
            out.extend_from_slice(b"null");
        } else {
            out.push(b'"');
            session_core::text::push_js_iso_string(t, out);
            out.push(b'"');
        }
    };
    let field = |f: &PropertyValue<'_>, out: &mut Vec<u8>| match f {
        PropertyValue::Absent => false,
        PropertyValue::Null => {
            out.extend_from_slice(b"null");
            true
        }
        PropertyValue::Str(s) => {
            write_string(s.as_bytes(), out);
            true
        }
        PropertyValue::Raw(_) => f.to_value().map(|v| write_json(&v, out)).is_some(),
    };
    match key {
        "path" => write_string(path.as_bytes(), out),
        "id" => return field(&info.id, out),
        "cwd" => write_string(info.cwd.as_bytes(), out),
        "name" => match &info.name {
            Some(name) => write_string(name.as_bytes(), out),
            None => return false,
        },
        "parentSessionPath" => return field(&info.parent_session, out),
        "created" => date(info.created, out),
        "modified" => date(info.modified, out),
        "messageCount" => write_number(info.message_count as f64, out),
        "firstMessage" => write_string(info.first_message.as_bytes(), out),
        "allMessagesText" if info.all_messages_json.is_empty() => write_string(&info.all_messages_text, out),
        "allMessagesText" => {
            out.push(b'"');
            out.extend_from_slice(&info.all_messages_json);
            out.push(b'"');
        }
        _ => return false,
    }
    true
}

/// A straight run of more unlabelled entries than this is folded in the drawn tree.
pub const FOLD_CHAINS_OVER: usize = 12;

/// How the tree is drawn: folded or whole, to what width, times in what zone.
#[derive(Debug, Clone, Copy)]
pub struct TreeView<'z> {
    /// Fold long straight runs (their first and last three entries stay).
    pub fold: bool,
    /// Lines are cut to this many columns.
    pub width: usize,
    /// Entry times are shown in this zone, which the first line names.
    pub zone: &'z crate::days::Zone,
}

/// The tree drawn as Pi's `/tree` draws it: a straight run of entries stays in one column, and
/// only a branch point indents its branches (`├─`, `└─`); the active path is marked `*`, labels
/// are shown in brackets, long straight runs are folded, and lines fit the width.
pub fn tree_text(file: &str, session: &Session<'_>, tree: &Tree, view: TreeView<'_>) -> (String, TreeWalkNotes) {
    let active: std::collections::HashSet<usize> = session.branch(None).path.into_iter().collect();
    let title = format!("{file} (times in {})", view.zone.label);
    let mut out = crate::table::fit(&title, view.width, crate::table::Cut::Middle, false).trim_end().to_owned();
    out.push('\n');
    let mut notes = TreeWalkNotes::default();
    let line = |n: usize, prefix: &str, out: &mut String| {
        let e = &session.records[tree.nodes[n].record];
        let mark = if active.contains(&tree.nodes[n].record) { "*" } else { " " };
        let kind = e.entry_type.as_str().map(|s| s.to_str_lossy().into_owned()).unwrap_or_else(|| "?".into());
        let role = e.role().as_str().map(|r| format!(" {}", r.to_str_lossy())).unwrap_or_default();
        let id = e.id.as_str().map(|s| s.to_str_lossy().into_owned()).unwrap_or_else(|| "(no id)".into());
        let ts = e.timestamp.as_str().map(|s| view.zone.second(&s.to_str_lossy())).unwrap_or_default();
        let text = format!("{mark} {prefix}{id} {kind}{role} {ts}{}", label_of(session, n, tree));
        out.push_str(crate::table::fit(&text, view.width, crate::table::Cut::End, false).trim_end());
        out.push('\n');
    };
    let labelled = |n: usize| !label_of(session, n, tree).is_empty();
    // (node, the prefix of its line, the prefix of the lines below it)
    let mut stack: Vec<(usize, String, String)> = Vec::new();
    let roots = &tree.roots;
    for (i, &r) in roots.iter().enumerate().rev() {
        let (head, rest) = match (roots.len(), i + 1 == roots.len()) {
            (1, _) => ("", ""),
            (_, true) => ("└─ ", "   "),
            (_, false) => ("├─ ", "│  "),
        };
        stack.push((r, head.to_owned(), rest.to_owned()));
    }
    // Each node is drawn once: a node reached again (duplicate ids can make a loop) is cut.
    let mut seen = vec![false; tree.nodes.len()];
    let mut drawn = 0usize;
    while let Some((first, head, rest)) = stack.pop() {
        // The straight run from `first`: each node with one child goes on in the same column.
        let mut run = vec![first];
        let mut cut = false;
        loop {
            let &last = run.last().unwrap_or(&first);
            if seen[last] {
                notes.cycles_cut += 1;
                run.pop();
                cut = true;
                break;
            }
            seen[last] = true;
            match tree.nodes[last].children.as_slice() {
                [only] => run.push(*only),
                _ => break,
            }
        }
        if drawn + run.len() > MAX_TREE_NODES {
            notes.truncated = true;
            run.truncate(MAX_TREE_NODES.saturating_sub(drawn));
        }
        drawn += run.len();
        let mut k = 0;
        while k < run.len() {
            let prefix = if k == 0 { head.as_str() } else { rest.as_str() };
            // A long stretch of unlabelled entries (its first and last three shown).
            let stretch = run[k..].iter().take_while(|&&n| !labelled(n)).count();
            if view.fold && stretch > FOLD_CHAINS_OVER && k + stretch < run.len() + 1 {
                for &n in &run[k..k + 3] {
                    line(n, if n == run[0] { prefix } else { rest.as_str() }, &mut out);
                }
                let hidden = stretch - 6;
                let marked = run[k + 3..k + stretch - 3].iter().any(|&n| active.contains(&tree.nodes[n].record));
                let folded = format!("{} {rest}┆ {hidden} more entries", if marked { "*" } else { " " });
                out.push_str(crate::table::fit(&folded, view.width, crate::table::Cut::End, false).trim_end());
                out.push('\n');
                for &n in &run[k + stretch - 3..k + stretch] {
                    line(n, rest.as_str(), &mut out);
                }
                k += stretch;
                continue;
            }
            line(run[k], prefix, &mut out);
            k += 1;
        }
        if notes.truncated {
            break;
        }
        let Some(&end) = run.last() else { continue };
        if cut {
            continue;
        }
        let children = &tree.nodes[end].children;
        for (i, &c) in children.iter().enumerate().rev() {
            let last = i + 1 == children.len();
            let (h, r) = if last { ("└─ ", "   ") } else { ("├─ ", "│  ") };
            stack.push((c, format!("{rest}{h}"), format!("{rest}{r}")));
        }
    }
    (out, notes)
}

/// ` [label]` of a node, or nothing.
fn label_of(session: &Session<'_>, n: usize, tree: &Tree) -> String {
    let e = &session.records[tree.nodes[n].record];
    session.label(&e.id).and_then(|(l, _)| l.as_str().map(|l| format!(" [{}]", l.to_str_lossy()))).unwrap_or_default()
}

/// Totals as a small table.
pub fn stats_text(file: &str, session: &Session<'_>, totals: &Totals, branch: Option<&Totals>) -> String {
    use crate::table::{dollars, thousands};
    let s = &totals.stats;
    let u = &s.usage;
    let n = |x: u64| thousands(x as f64);
    let mut out = format!("{file}\n  session {}\n", session.id());
    out.push_str(&format!(
        "  messages {} (user {}, assistant {}, tool results {}), tool calls {}\n",
        n(s.total_messages),
        n(s.user_messages),
        n(s.assistant_messages),
        n(s.tool_results),
        n(s.tool_calls)
    ));
    out.push_str(&format!(
        "  tokens {} (input {}, output {}, cache read {}, cache write {})\n  cost ${}\n",
        thousands(u.tokens()),
        thousands(u.input),
        thousands(u.output),
        thousands(u.cache_read),
        thousands(u.cache_write),
        dollars(u.cost)
    ));
    if !totals.breakdown.is_empty() {
        let width = totals.breakdown.iter().map(|r| r.key.len()).max().unwrap_or(0);
        for r in &totals.breakdown {
            out.push_str(&format!(
                "    {:<width$}  ${:>10}  {:>12} tokens\n",
                r.key,
                dollars(r.cost),
                thousands(r.tokens)
            ));
        }
    }
    if let Some(b) = branch {
        let (bu, left) = (&b.stats.usage, u.cost - b.stats.usage.cost);
        out.push_str(&format!(
            "  active branch: messages {}, tokens {}, cost ${} (${} on branches left)\n",
            n(b.stats.total_messages),
            thousands(bu.tokens()),
            dollars(bu.cost),
            dollars(left)
        ));
    }
    out
}

/// `{"file","leafId","branch","sessionName","entryCount","context":{"messages","thinkingLevel","model"}}`,
/// the fields `reference/record.mjs context` names; `messages` is written as given (raw stored messages included).
pub fn context_record(
    file: &str,
    session: &Session<'_>,
    leaf: Option<&PropertyValue<'_>>,
    branch: &[usize],
    context: &session_core::context::Context<'_>,
    messages: &[session_core::context::Message<'_>],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + messages.len() * 64);
    write_context_record(&mut out, file, session, leaf, branch, context, messages);
    out
}

/// The `context --json` record of a harness generation C (format 4) file: the same keys as
/// [`context_record`] (`leafId` is the branch tip, `branch` the entry ids read), plus
/// `branchName`, `lane` and `format: "v4"`. Format 4 keeps no model or thinking level in its
/// entries, so those are Pi's defaults (`null`, `"off"`).
pub fn write_format4_record(
    out: &mut Vec<u8>,
    file: &str,
    f: &session_core::context::harness4::Format4<'_>,
    ctx: &session_core::context::harness4::Context4<'_>,
    branch_name: &str,
    messages: &[session_core::context::Message<'_>],
) {
    use session_core::json::{write_json, write_string};
    out.extend_from_slice(b"{\"file\":");
    write_string(file.as_bytes(), out);
    out.extend_from_slice(b",\"format\":\"v4\",\"branchName\":");
    write_string(branch_name.as_bytes(), out);
    out.extend_from_slice(b",\"lane\":");
    write_string(ctx.lane.as_bytes(), out);
    out.extend_from_slice(b",\"leafId\":");
    match &ctx.tip {
        Some(t) => write_string(t.as_bytes(), out),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"branch\":");
    let ids = ctx.path.iter().map(|&i| Value::String(f.entries[i].id.clone())).collect();
    write_json(&Value::Array(ids), out);
    out.extend_from_slice(format!(",\"sessionName\":null,\"entryCount\":{}", f.entries.len()).as_bytes());
    out.extend_from_slice(b",\"context\":{\"messages\":");
    write_messages(out, messages);
    out.extend_from_slice(b",\"thinkingLevel\":\"off\",\"model\":null}}\n");
}

/// A JSON array of context messages.
pub fn write_messages(out: &mut Vec<u8>, messages: &[session_core::context::Message<'_>]) {
    out.push(b'[');
    for (k, m) in messages.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        m.write_json(out);
    }
    out.push(b']');
}

/// [`context_record`], appended to `out` (the CLI writes straight into its output buffer).
pub fn write_context_record(
    out: &mut Vec<u8>,
    file: &str,
    session: &Session<'_>,
    leaf: Option<&PropertyValue<'_>>,
    branch: &[usize],
    context: &session_core::context::Context<'_>,
    messages: &[session_core::context::Message<'_>],
) {
    use session_core::json::{write_json, write_string};
    out.extend_from_slice(b"{\"file\":");
    write_string(file.as_bytes(), out);
    // `getLeafId() ?? null`: a leaf record without an id (an array or a number on the last
    // line) is `null` too.
    match leaf.and_then(PropertyValue::to_value) {
        None => out.extend_from_slice(b",\"leafId\":null"),
        Some(v) => {
            out.extend_from_slice(b",\"leafId\":");
            write_json(&v, out);
        }
    }
    out.extend_from_slice(b",\"branch\":");
    let ids = branch.iter().map(|&i| session.records[i].id.to_value().unwrap_or(Value::Null)).collect();
    write_json(&Value::Array(ids), out);
    out.extend_from_slice(b",\"sessionName\":");
    match session.name() {
        Some(n) => write_string(n.as_bytes(), out),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(format!(",\"entryCount\":{}", session.entries().count()).as_bytes());
    out.extend_from_slice(b",\"context\":{\"messages\":");
    write_messages(out, messages);
    if let Some(t) = &context.thinking_level {
        out.extend_from_slice(b",\"thinkingLevel\":");
        write_json(t, out);
    }
    out.extend_from_slice(b",\"model\":");
    write_json(&context.model, out);
    if let Some(tools) = &context.active_tools {
        out.extend_from_slice(b",\"activeToolNames\":");
        write_json(tools, out);
    }
    out.extend_from_slice(b"}}\n");
}

/// A readable transcript: roles, text, thinking folded, tool calls and results shortened,
/// summaries marked.
pub fn context_text(file: &str, messages: &[Value<'_>]) -> String {
    fn short(s: &str, max: usize) -> String {
        let one_line = s.replace('\n', " ⏎ ");
        if one_line.chars().count() <= max {
            one_line
        } else {
            format!("{}…", one_line.chars().take(max).collect::<String>())
        }
    }
    let s =
        |v: Option<&Value<'_>>| v.and_then(Value::as_str).map(|s| s.to_str_lossy().into_owned()).unwrap_or_default();
    let mut out = format!("{file}\n");
    for m in messages {
        let role = s(m.get("role"));
        let mut lines: Vec<String> = Vec::new();
        match role.as_str() {
            "compactionSummary" => lines.push(format!("[compaction summary] {}", short(&s(m.get("summary")), 400))),
            "branchSummary" => lines.push(format!("[branch summary] {}", short(&s(m.get("summary")), 400))),
            "bashExecution" => lines.push(format!("$ {}", short(&s(m.get("command")), 200))),
            "system" => {
                let count = |k: &str| match m.get(k) {
                    Some(Value::Object(o)) => o.len(),
                    Some(Value::Array(a)) => a.len(),
                    _ => 0,
                };
                lines.push(format!(
                    "(system prompt: {} sections, {} tools added, {} removed) {}",
                    count("sections"),
                    count("toolsAdded"),
                    count("toolsRemoved"),
                    short(&s(m.get("content")), 200)
                ));
            }
            _ => match m.get("content") {
                Some(Value::String(t)) => lines.push(t.to_str_lossy().into_owned()),
                Some(Value::Array(blocks)) => {
                    for b in blocks {
                        match s(b.get("type")).as_str() {
                            "text" => lines.push(s(b.get("text"))),
                            "thinking" => lines.push(format!("(thinking: {})", short(&s(b.get("thinking")), 80))),
                            "toolCall" => {
                                let args = b.get("arguments").map(session_core::json::to_json).unwrap_or_default();
                                lines.push(format!("→ {}({})", s(b.get("name")), short(&args, 120)));
                            }
                            "image" => lines.push("[image]".into()),
                            other => lines.push(format!("[{other}]")),
                        }
                    }
                }
                _ => {}
            },
        }
        let label = match role.as_str() {
            "toolResult" => format!("tool result {}", s(m.get("toolName"))),
            "custom" => format!("custom {}", s(m.get("customType"))),
            r => r.to_string(),
        };
        let body = lines.join("\n");
        let body = if role == "toolResult" { short(&body, 300) } else { body };
        out.push_str(&format!("── {label}\n{body}\n"));
    }
    out
}

/// The files a session read and changed (`files`): with `json`, one line
/// `{"file","sessionId","cwd"?,"readFiles","modifiedFiles"}` for every session; else the session's
/// path, then `modified` and `read` lines, for a session that has any. With `only`, just the paths
/// that contain it, and nothing for a session without one.
pub fn write_file_lists(
    out: &mut Vec<u8>,
    file: &str,
    session: &Session<'_>,
    lists: &session_core::files::FileLists,
    only: Option<&str>,
    json: bool,
) {
    let keep = |p: &&JsStr<'_>| only.is_none_or(|t| memchr::memmem::find(p.as_bytes(), t.as_bytes()).is_some());
    let read: Vec<&JsStr<'_>> = lists.read_files.iter().filter(keep).collect();
    let modified: Vec<&JsStr<'_>> = lists.modified_files.iter().filter(keep).collect();
    if only.is_some() && read.is_empty() && modified.is_empty() {
        return;
    }
    if json {
        fn strings<'s>(v: &[&JsStr<'s>]) -> Value<'s> {
            Value::Array(v.iter().map(|p| Value::String((*p).clone())).collect())
        }
        let mut o = session_core::json::Object::new();
        o.insert("file", Value::String(JsStr::owned(file)));
        o.insert("sessionId", Value::String(session.id().clone()));
        if let Some(cwd) = session.header.get("cwd").and_then(Value::as_str) {
            o.insert("cwd", Value::String(cwd.clone()));
        }
        o.insert("readFiles", strings(&read));
        o.insert("modifiedFiles", strings(&modified));
        session_core::json::write_json(&Value::Object(o), out);
        out.push(b'\n');
    } else if !read.is_empty() || !modified.is_empty() {
        out.extend_from_slice(file.as_bytes());
        out.push(b'\n');
        for (kind, paths) in [("modified", &modified), ("read", &read)] {
            for p in paths.iter() {
                out.extend_from_slice(format!("  {kind:<9}{}\n", p.to_str_lossy()).as_bytes());
            }
        }
    }
}

/// `grep`'s matches in one session: with `json`, `{"file","sessionId","line","offset","id","kind",
/// "tool"?,"match","text"}` a line each (`id` is `null` when the entry has no string id); else
/// `FILE:LINE: KIND (TOOL): TEXT`. With `files_only`, one line for a session with matches:
/// `{"file","sessionId","matches"}`, or `FILE (N)`.
/// How `grep`'s text lines are shown: the file as people read it, the width to fit, colour.
pub struct GrepText<'a> {
    /// The file, shortened (relative to the store, or with `~`).
    pub shown: &'a str,
    /// The terminal's width: each line is fitted to it, the match kept in view.
    pub width: usize,
    /// The match in colour.
    pub color: bool,
}

/// `grep`'s hits of one session: JSON records (the file as given), or text lines.
pub fn write_grep_hits(
    out: &mut Vec<u8>,
    file: &str,
    session: &Session<'_>,
    hits: &[crate::grep::Hit],
    files_only: bool,
    json: bool,
    text_form: &GrepText<'_>,
) {
    use session_core::json::Object;
    if hits.is_empty() {
        return;
    }
    let start = || {
        let mut o = Object::new();
        o.insert("file", Value::String(JsStr::owned(file)));
        o.insert("sessionId", Value::String(session.id().clone()));
        o
    };
    if files_only {
        if json {
            let mut o = start();
            o.insert("matches", Value::Number(hits.len() as f64));
            session_core::json::write_json(&Value::Object(o), out);
            out.push(b'\n');
        } else {
            out.extend_from_slice(format!("{} ({})\n", text_form.shown, hits.len()).as_bytes());
        }
        return;
    }
    for hit in hits {
        if json {
            let mut o = start();
            o.insert("line", Value::Number(hit.line as f64));
            o.insert("offset", Value::Number(hit.offset as f64));
            o.insert("id", hit.id.clone().map_or(Value::Null, |id| Value::String(JsStr::owned(id))));
            o.insert("kind", Value::String(JsStr::owned(hit.kind.name())));
            if let Some(tool) = &hit.tool {
                o.insert("tool", Value::String(JsStr::owned(tool.clone())));
            }
            o.insert("match", Value::String(JsStr::owned(hit.matched.clone())));
            o.insert("text", Value::String(JsStr::owned(hit.text.clone())));
            session_core::json::write_json(&Value::Object(o), out);
            out.push(b'\n');
        } else {
            let tool = hit.tool.as_deref().map_or(String::new(), |t| format!(" ({t})"));
            let head = format!("{}:{}: {}{tool}: ", text_form.shown, hit.line, hit.kind.name());
            let room = text_form.width.saturating_sub(crate::table::display_width(&head)).max(20);
            let (before, matched, after) = match_in_view(&hit.text, hit.text_match.clone(), room);
            let text = if text_form.color {
                format!("{before}\x1b[1;31m{matched}\x1b[0m{after}")
            } else {
                format!("{before}{matched}{after}")
            };
            out.extend_from_slice(format!("{head}{text}\n").as_bytes());
        }
    }
}

/// The text around a match in at most `room` columns, on one line: at most a third of the room
/// before the match (cut at its start with `…`), then the match, then what follows (cut at its end).
fn match_in_view(text: &str, m: std::ops::Range<usize>, room: usize) -> (String, String, String) {
    use crate::table::{Cut, display_width, fit};
    let one_line = |s: &str| s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>();
    let (before, matched, after) = (one_line(&text[..m.start]), one_line(&text[m.clone()]), one_line(&text[m.end..]));
    let before_room = (room / 3).min(display_width(&before));
    let before = if display_width(&before) > before_room {
        let kept: String = before
            .chars()
            .rev()
            .scan(0, |w, c| {
                *w += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                (*w < before_room).then_some(c)
            })
            .collect::<Vec<char>>()
            .into_iter()
            .rev()
            .collect();
        format!("…{kept}")
    } else {
        before
    };
    let left = room.saturating_sub(display_width(&before));
    let matched = if display_width(&matched) > left { fit(&matched, left, Cut::End, false) } else { matched };
    let left = left.saturating_sub(display_width(&matched));
    let after = if display_width(&after) > left { fit(&after, left, Cut::End, false) } else { after };
    (before, matched, after.trim_end().to_owned())
}

/// Whether stdout gets colour: a terminal, and `NO_COLOR` not set (or empty).
pub fn stdout_color() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// `FILE:LINE: byte OFFSET: MESSAGE` (or `FILE: MESSAGE` where the place is not known): how every
/// command reports a file it could not use on stderr.
pub fn error_text(file: &str, line: Option<u64>, offset: Option<u64>, message: &str) -> String {
    match (line, offset) {
        (Some(l), Some(o)) => format!("{file}:{l}: byte {o}: {message}"),
        _ => format!("{file}: {message}"),
    }
}

/// `{"file","error":{"line"?,"offset"?,"message"}}`: how every command reports a file it could
/// not use when asked for JSON.
pub fn error_json(file: &str, line: Option<u64>, offset: Option<u64>, message: &str) -> String {
    let mut err = Object::new();
    if let Some(l) = line {
        err.insert("line", Value::Number(l as f64));
    }
    if let Some(o) = offset {
        err.insert("offset", Value::Number(o as f64));
    }
    err.insert("message", Value::String(JsStr::owned(message)));
    let mut rec = Object::new();
    rec.insert("file", Value::String(JsStr::owned(file)));
    rec.insert("error", Value::Object(err));
    session_core::json::to_json(&Value::Object(rec))
}

#[cfg(test)]
mod tests {
    use super::*;
    use session_core::info::{Texts, session_info_with};

    /// Each field written straight from the info equals the record's, as `write_json` writes it,
    /// and a field the record lacks is not written: ids and parents of every kind, names set and
    /// cleared, valid and invalid dates, texts decoded and kept as JSON.
    #[test]
    fn info_fields_written_directly_equal_the_record() {
        let header = |id: &str, parent: &str, time: &str| {
            format!(r#"{{"type":"session","version":3,"id":{id},"timestamp":{time},"cwd":"/w\"q"{parent}}}"#)
        };
        let user = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-02T03:04:05.678Z","message":{"role":"user","content":"hi \u00e9\ud800 \"x\"","timestamp":1767323045678}}"#;
        let named = r#"{"type":"session_info","id":"n1","parentId":"a1","timestamp":"2026-01-02T03:04:06.000Z","name":"  my name "}"#;
        let mut files = Vec::new();
        for id in [r#""s1""#, "12.50", "null", r#"{"b":1,"a":[1e2]}"#] {
            for parent in ["", r#","parentSession":"/p/x.jsonl""#, r#","parentSession":[1, 2]"#] {
                for time in [r#""2026-01-01T00:00:00.000Z""#, r#""not a date""#, "0"] {
                    for body in ["", user, named] {
                        files.push(format!("{}\n{body}\n{body}\n", header(id, parent, time)));
                    }
                }
            }
        }
        // Escaped keys (read from the parse) and repeated ones (the last value counts).
        files.push(format!(
            "{}\n{user}\n",
            r#"{"type":"session","\u0069d":"esc","cwd":"/a","cwd":"/b","timestamp":"2026-01-01T00:00:00.000Z"}"#
        ));
        files.push(format!("{}\n", r#"{"type":"session","id":"x","id":7,"cwd":1,"parentSession":null}"#));
        let mut compared = 0;
        for file in &files {
            for texts in [Texts::Skip, Texts::Decoded, Texts::DecodedWithPieces, Texts::Json] {
                let info = session_info_with(file.as_bytes(), 1_767_000_000_000.0, texts, &crate::UTC).expect(file);
                let record = info_record_texts("/s/f\u{e9}.jsonl", &info, false);
                let Value::Object(record) = record else { panic!("not an object") };
                for key in INFO_FIELDS.iter().chain(&["other", "Path"]) {
                    let mut direct = Vec::new();
                    let written = write_info_field("/s/f\u{e9}.jsonl", &info, key, &mut direct);
                    let mut expected = Vec::new();
                    match record.get(key) {
                        Some(_) if *key == "allMessagesText" && !info.all_messages_json.is_empty() => {
                            expected = [&b"\""[..], &info.all_messages_json, b"\""].concat();
                        }
                        Some(v) => session_core::json::write_json(v, &mut expected),
                        None => {}
                    }
                    assert_eq!(written, record.get(key).is_some(), "{key} in {file}");
                    assert_eq!(String::from_utf8_lossy(&direct), String::from_utf8_lossy(&expected), "{key} in {file}");
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, (4 * 3 * 3 * 3 + 2) * 4 * 12);
    }
}
