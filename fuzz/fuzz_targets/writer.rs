//! Fuzz target: the writer's state under any session and any operations. The input is a session
//! file, then two zero bytes, then operations (a byte each, with the bytes after it as their
//! values). After each operation the records in memory load, with as many ids as the index; a version 1
//! or 2 file's migrated bytes load as a version 3 session.
#![no_main]
use libfuzzer_sys::fuzz_target;
use session_core::json::{JsStr, Object, Value};
use session_core::state::{BranchSummary, Compaction, NewSession, SessionState, Sources};

struct Counted(u32);

impl Sources for Counted {
    fn now_ms(&mut self) -> i64 {
        1_772_400_000_000 + i64::from(self.0)
    }
    fn random_uuid(&mut self) -> String {
        self.0 += 1;
        format!("{:08x}-0000-4000-8000-{:012x}", self.0 % 13, self.0)
    }
    fn session_id(&mut self) -> String {
        self.0 += 1;
        format!("019ca000-0000-7000-8000-{:012x}", self.0)
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn message(role: &'static str, content: Value<'static>) -> Value<'static> {
    let mut o = Object::new();
    o.insert("role", Value::str(role));
    o.insert("content", content);
    Value::Object(o)
}

fuzz_target!(|data: &[u8]| {
    let split = data.windows(2).position(|w| w == [0, 0]).unwrap_or(data.len());
    let (file, ops) = (&data[..split], data.get(split + 2..).unwrap_or(&[]));
    let mut src = Counted(0);
    let mut state = match session_core::Session::load(file) {
        Ok(s) if s.migrated_from.is_some() => {
            if let Ok(bytes) = session_core::state::migrated_bytes(&s, &mut src) {
                let again = session_core::Session::load(&bytes).expect("migrated bytes load");
                assert_eq!(again.migrated_from, None);
            }
            return;
        }
        Ok(s) => SessionState::loaded(&s, "/w").with_bytes(file.to_vec()),
        Err(_) => SessionState::new("/w", true, &NewSession::default(), &mut src).unwrap(),
    };
    let mut ids: Vec<String> = Vec::new();
    let mut chunks = ops.chunks(4);
    while let Some(op) = chunks.next() {
        let arg = op.get(1..).unwrap_or(&[]);
        let pick = |ids: &[String]| {
            ids.get(usize::from(arg.first().copied().unwrap_or(0))).cloned().unwrap_or_else(|| text(arg))
        };
        let value = Value::String(JsStr::owned(text(arg)));
        let pending = match op[0] % 14 {
            0 => Some(state.message(&message("user", value), &mut src)),
            1 => Some(state.message(&message("assistant", Value::Array(vec![value])), &mut src)),
            2 => {
                let mut m = Object::new();
                m.insert("role", Value::str("system"));
                m.insert("content", value.clone());
                let mut sections = Object::new();
                sections.insert(JsStr::owned(text(arg)), value);
                m.insert("sections", Value::Object(sections));
                m.insert("timestamp", Value::Number(1.0));
                Some(state.message(&Value::Object(m), &mut src))
            }
            3 => {
                let kept = pick(&ids);
                let c = Compaction {
                    summary: "s",
                    first_kept_entry_id: (arg.len() % 2 == 0).then_some(kept.as_str()),
                    tokens_before: f64::from(arg.len() as u32),
                    details: None,
                    from_hook: None,
                    usage: None,
                };
                state.compaction(&c, &mut src).ok()
            }
            4 => state.label(&pick(&ids), (arg.len() % 2 == 0).then(|| text(arg)).as_deref(), &mut src).ok(),
            5 => state.context_edit(&pick(&ids), &Value::Null, &mut src).ok(),
            6 => {
                let mut r = Object::new();
                r.insert("content", value);
                state.context_edit(&pick(&ids), &Value::Object(r), &mut src).ok()
            }
            7 => {
                let _ = state.branch(&pick(&ids));
                None
            }
            8 => {
                state.reset_leaf();
                None
            }
            9 => {
                let from = pick(&ids);
                let s = BranchSummary { summary: "left", details: None, from_hook: None, usage: None };
                state.branch_with_summary((arg.len() % 3 != 0).then_some(from.as_str()), &s, &mut src).ok()
            }
            10 => {
                if let Ok(made) =
                    state.branched((arg.len() % 2 == 0).then(|| pick(&ids)).as_deref(), Some("/p.jsonl"), &mut src)
                {
                    session_core::Session::load(&made.bytes).expect("a branched session loads");
                    state.take_branched(made);
                    ids.clear();
                }
                None
            }
            11 => Some(state.session_info(&text(arg), &mut src)),
            12 => Some(state.custom_message("x", &value, true, None, &mut src)),
            _ => Some(state.usage("k", "p", "m", &value, None, &mut src)),
        };
        if let Some(p) = pending {
            ids.push(p.id.clone());
            state.commit(p);
        }
        let session = state.session().expect("held");
        let ids: std::collections::HashSet<_> = session.entries().map(|(_, e)| &e.id).collect();
        assert_eq!(ids.len(), state.entry_count());
    }
});
