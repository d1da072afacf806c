//! Our records of a session as `reference/record.mjs` prints Pi's (tree, context), and how two
//! such records are compared.

use std::path::Path;

use session_core::Session;
use session_core::json::{Object, Value};
use session_scan::render;

use super::parse;

/// The keys of a `context` record.
#[allow(dead_code)] // not every test crate compares contexts
pub const CONTEXT_KEYS: &[&str] = &["header", "leafId", "branch", "sessionName", "entryCount", "context", "projection"];

#[allow(dead_code)] // not every test crate compares records
/// JSON equality with object keys in any order and numbers compared exactly.
pub fn same(a: &Value<'_>, b: &Value<'_>) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.iter().any(|(k2, v2)| k == k2 && same(v, v2)))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        _ => a == b,
    }
}

#[allow(dead_code)] // not every test crate compares records
pub fn strip(rec: &Value<'_>, keep: &[&'static str]) -> Value<'static> {
    let mut o = Object::new();
    for k in keep {
        if let Some(v) = rec.get(k) {
            o.insert(*k, v.clone().into_owned());
        }
    }
    Value::Object(o)
}

#[allow(dead_code)] // not every test crate compares trees
pub fn ours_tree(path: &Path, file: &str) -> Result<Value<'static>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let s = Session::load(&bytes).map_err(|e| e.to_string())?;
    let tree = s.tree();
    Ok(render::tree_record(file, &s, &tree).0.into_owned())
}

#[allow(dead_code)] // not every test crate compares contexts
pub fn ours_context(path: &Path, file: &str) -> Result<Value<'static>, String> {
    use session_core::context::{Dialect, LeafChoice, build_context};
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let s = Session::load(&bytes).map_err(|e| e.to_string())?;
    let arena = bumpalo::Bump::new();
    let ctx = build_context(&s, &LeafChoice::Session, Dialect::Pi, &arena);
    let branch = s.branch(None).path;
    let text = render::context_record(file, &s, s.leaf_id(), &branch, &ctx, &ctx.messages);
    let mut rec = parse(std::str::from_utf8(&text).unwrap());
    // `projection` as context.mjs prints it: the source entry's id and type, and its count.
    let projection = ctx
        .projection
        .iter()
        .map(|&(i, n)| {
            let e = &s.records[i];
            let mut o = Object::new();
            o.insert("id", e.id.to_value().unwrap_or(Value::Null).into_owned());
            o.insert("type", e.entry_type.to_value().unwrap_or(Value::Null).into_owned());
            o.insert("messages", Value::Number(n as f64));
            Value::Object(o)
        })
        .collect();
    let Value::Object(o) = &mut rec else { unreachable!() };
    o.insert("projection", Value::Array(projection));
    // The header as Pi's getHeader() gives it: after migration.
    o.insert("header", s.header.clone().into_owned());
    Ok(rec)
}
