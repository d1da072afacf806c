//! The writer under any sequence of operations with any values: no panic; after each operation
//! the file (once written) holds exactly the records the session holds in memory, loads, and
//! has one entry per id; refused operations change nothing.
#![allow(clippy::unwrap_used)] // test inputs are generated; a panic is a failed test

use std::path::PathBuf;

use proptest::prelude::*;
use session_core::json::{JsStr, Object, Value};
use session_core::state::{BranchSummary, Compaction, NewSession, Sources};
use session_scan::manager::{Opener, SessionManager};

/// A JSON value of any shape.
fn json() -> impl Strategy<Value = Value<'static>> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<f64>().prop_map(Value::Number),
        ".{0,12}".prop_map(|s| Value::String(JsStr::owned(s))),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((".{0,6}", inner), 0..4).prop_map(|props| {
                let mut o = Object::new();
                for (k, v) in props {
                    o.insert(JsStr::owned(k), v);
                }
                Value::Object(o)
            }),
        ]
    })
}

/// A message of a known role with any content, or any value at all.
fn message() -> impl Strategy<Value = Value<'static>> {
    let role = prop_oneof![
        Just("user"),
        Just("assistant"),
        Just("toolResult"),
        Just("system"),
        Just("custom"),
        Just("bashExecution"),
        Just("other")
    ];
    prop_oneof![
        3 => (role, json(), json(), json()).prop_map(|(role, content, sections, tools)| {
            let mut o = Object::new();
            o.insert("role", Value::str(role));
            o.insert("content", content);
            if role == "system" {
                o.insert("sections", sections);
                o.insert("toolsAdded", tools);
            }
            o.insert("timestamp", Value::Number(1.0));
            Value::Object(o)
        }),
        1 => json(),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Message(Value<'static>),
    Thinking(String),
    Model(String, String),
    Usage(String, Value<'static>, Option<String>),
    Compaction(String, Option<usize>, f64, Option<Value<'static>>),
    Custom(String, Option<Value<'static>>),
    CustomMessage(String, Value<'static>, bool),
    Name(String),
    Label(usize, Option<String>),
    ContextEdit(usize, Value<'static>),
    Branch(usize),
    ResetLeaf,
    BranchWithSummary(Option<usize>, String),
    Branched(Option<usize>),
    NewSession,
    Reopen(bool),
}

fn op() -> impl Strategy<Value = Op> {
    let text = ".{0,10}";
    prop_oneof![
        6 => message().prop_map(Op::Message),
        1 => text.prop_map(Op::Thinking),
        1 => (text, text).prop_map(|(p, m)| Op::Model(p, m)),
        1 => (text, json(), proptest::option::of(text)).prop_map(|(k, u, n)| Op::Usage(k, u, n)),
        1 => (text, proptest::option::of(0..40usize), any::<f64>(), proptest::option::of(json()))
            .prop_map(|(s, k, t, d)| Op::Compaction(s, k, t, d)),
        1 => (text, proptest::option::of(json())).prop_map(|(t, d)| Op::Custom(t, d)),
        1 => (text, json(), any::<bool>()).prop_map(|(t, c, d)| Op::CustomMessage(t, c, d)),
        1 => text.prop_map(Op::Name),
        1 => (0..40usize, proptest::option::of(text)).prop_map(|(k, l)| Op::Label(k, l)),
        2 => (0..40usize, json()).prop_map(|(k, r)| Op::ContextEdit(k, r)),
        1 => (0..40usize).prop_map(Op::Branch),
        1 => Just(Op::ResetLeaf),
        1 => (proptest::option::of(0..40usize), text).prop_map(|(k, s)| Op::BranchWithSummary(k, s)),
        1 => proptest::option::of(0..40usize).prop_map(Op::Branched),
        1 => Just(Op::NewSession),
        1 => any::<bool>().prop_map(Op::Reopen),
    ]
}

/// A clock that ticks and counted ids, shared by the managers of one run.
#[derive(Clone, Default)]
struct Counted(std::sync::Arc<std::sync::Mutex<(u32, u64)>>);

impl Sources for Counted {
    fn now_ms(&mut self) -> i64 {
        let mut c = self.0.lock().unwrap();
        c.1 += 1;
        1_772_400_000_000 + c.1 as i64
    }
    fn random_uuid(&mut self) -> String {
        let mut c = self.0.lock().unwrap();
        c.0 += 1;
        // Few short ids: collisions are frequent.
        format!("{:08x}-0000-4000-8000-{:012x}", c.0 % 29, c.0)
    }
    fn session_id(&mut self) -> String {
        let mut c = self.0.lock().unwrap();
        c.0 += 1;
        format!("019ca000-0000-7000-8000-{:012x}", c.0)
    }
}

fn check(m: &SessionManager) {
    let state = m.state();
    if state.unheld() > 0 {
        // Opened indexed only: the file loads with as many entries as the index holds.
        let file = std::fs::read(m.session_file().unwrap()).unwrap();
        let session = session_core::Session::load(&file).unwrap();
        assert_eq!(session.entries().count(), state.entry_count());
        return;
    }
    // The records in memory load, one entry per id.
    let session = state.session().unwrap();
    assert_eq!(session.entries().count(), state.entry_count());
    if state.is_persisted() && state.is_flushed() {
        let file = std::fs::read(m.session_file().unwrap()).unwrap();
        assert_eq!(file, state.bytes().unwrap(), "the file holds what memory holds");
    } else if let Some(f) = m.session_file() {
        assert!(!f.exists() || !state.is_persisted(), "nothing is written before the conversation");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_sequence_of_operations_keeps_file_and_memory_equal(ops in proptest::collection::vec(op(), 1..40)) {
        let dir = std::env::temp_dir().join(format!("session-scan-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let sources = Counted::default();
        let opener = || Opener::default().sources(sources.clone());
        let mut m = opener().create("/work/p", Some(&dir), &NewSession::default()).unwrap();
        let mut ids: Vec<String> = Vec::new();
        let pick = |ids: &[String], k: usize| ids.get(k).cloned().unwrap_or_else(|| format!("missing{k}"));
        for op in ops {
            let before_bytes = m.state().bytes().ok().map(<[u8]>::to_vec);
            let result: Result<Option<String>, _> = match &op {
                Op::Message(v) => m.append_message(v).map(Some),
                Op::Thinking(l) => m.append_thinking_level_change(l).map(Some),
                Op::Model(p, id) => m.append_model_change(p, id).map(Some),
                Op::Usage(k, u, n) => m.append_usage(k, "p", "m", u, n.as_deref()).map(Some),
                Op::Compaction(s, k, t, d) => {
                    let kept = k.map(|k| pick(&ids, k));
                    m.append_compaction(&Compaction {
                        summary: s,
                        first_kept_entry_id: kept.as_deref(),
                        tokens_before: *t,
                        details: d.as_ref(),
                        from_hook: None,
                        usage: None,
                    })
                    .map(Some)
                }
                Op::Custom(t, d) => m.append_custom(t, d.as_ref()).map(Some),
                Op::CustomMessage(t, c, d) => m.append_custom_message(t, c, *d, None).map(Some),
                Op::Name(n) => m.append_session_info(n).map(Some),
                Op::Label(k, l) => m.append_label_change(&pick(&ids, *k), l.as_deref()).map(Some),
                Op::ContextEdit(k, r) => m.append_context_edit(&pick(&ids, *k), r).map(Some),
                Op::Branch(k) => m.branch(&pick(&ids, *k)).map(|()| None),
                Op::ResetLeaf => {
                    m.reset_leaf();
                    Ok(None)
                }
                Op::BranchWithSummary(k, s) => {
                    let from = k.map(|k| pick(&ids, k));
                    let summary = BranchSummary { summary: s, details: None, from_hook: None, usage: None };
                    m.branch_with_summary(from.as_deref(), &summary).map(Some)
                }
                Op::Branched(k) => {
                    let leaf = k.map(|k| pick(&ids, k));
                    m.create_branched_session(leaf.as_deref()).map(|_| None)
                }
                Op::NewSession => m.new_session(&NewSession::default()).map(|_| None),
                Op::Reopen(indexed_only) => {
                    let file: Option<PathBuf> = m.session_file().map(PathBuf::from);
                    if let Some(f) = file.filter(|f| f.exists()) {
                        drop(m);
                        let o = if *indexed_only { opener().held_below(1) } else { opener() };
                        m = o.open(&f, None, None).unwrap();
                    }
                    Ok(None)
                }
            };
            match result {
                Ok(Some(id)) => ids.push(id),
                Ok(None) => {}
                // A refusal changes nothing (a reader may have read the file's bytes back in).
                Err(_) => {
                    if let (Some(before), Ok(now)) = (&before_bytes, m.state().bytes()) {
                        prop_assert_eq!(now, &before[..]);
                    }
                }
            }
            check(&m);
        }
        drop(m);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
