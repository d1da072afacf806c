//! Fuzz target: context rebuild in all three dialects (harness generations A and C), and the LLM
//! conversion.
#![no_main]
use libfuzzer_sys::fuzz_target;
use session_core::context::{Dialect, LeafChoice, build_context, convert_to_llm};

fuzz_target!(|data: &[u8]| {
    if session_core::context::harness4::is_format4(data) {
        let arena = bumpalo::Bump::new();
        if let Ok(f) = session_core::context::harness4::load_format4(data, &arena) {
            for branch in ["main", "alt"] {
                if let Ok(ctx) = session_core::context::harness4::build_context4(&f, branch) {
                    let llm = convert_to_llm(&ctx.messages, &arena);
                    let mut out = Vec::new();
                    for m in ctx.messages.iter().chain(&llm) {
                        m.write_json(&mut out);
                    }
                }
            }
        }
    }
    let Ok(s) = session_core::Session::load(data) else { return };
    for d in [Dialect::Pi, Dialect::Atomic, Dialect::Harness] {
        let arena = bumpalo::Bump::new();
        let ctx = build_context(&s, &LeafChoice::Session, d, &arena);
        let llm = convert_to_llm(&ctx.messages, &arena);
        let mut out = Vec::new();
        for m in ctx.messages.iter().chain(&llm) {
            m.write_json(&mut out);
        }
    }
});
