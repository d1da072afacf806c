//! `session-scan context`: what the model sees, rebuilt from a leaf in Pi's, Atomic's or the
//! harness's rules.

use session_core::context::harness4;
use session_core::context::{Dialect, LeafChoice, Message, build_context, convert_to_llm};
use session_core::json::{JsStr, Value};
use session_scan::render;
use std::borrow::Cow;

use super::per_file::{FileArgs, Outcome, load, run_files};
use super::sessions::{self, WhenNone};

/// The sessions, the leaf, the dialect and the output form.
#[derive(clap::Args)]
pub struct ContextArgs {
    /// Sessions: files, folders, ids or id prefixes.
    ///
    /// Session files, folders of them, or session ids or id prefixes (default: the session `pi -c`
    /// would continue here).
    #[arg(value_name = "SESSION")]
    sessions: Vec<String>,
    /// One JSON object per file per line.
    #[arg(long)]
    json: bool,
    /// Rebuild from this entry instead of the session's leaf.
    #[arg(long)]
    leaf: Option<String>,
    /// Whose rules: pi, atomic or harness.
    ///
    /// Whose rules: Pi 1.6, the Atomic fork, or pi-agent-core's harness (generation A for v3
    /// lines; generation C for `{"v":4,"kind":"header"}` files).
    #[arg(long, value_enum, default_value_t = DialectArg::Pi, hide_possible_values = true)]
    dialect: DialectArg,
    /// Harness generation C: the branch whose tip to start from.
    #[arg(long, default_value = "main")]
    branch: String,
    /// The messages as rebuilt (context) or as sent (llm).
    ///
    /// `context`: the session messages; `llm`: after Pi's convertToLlm.
    #[arg(long, value_enum, default_value_t = FormatArg::Context, hide_possible_values = true)]
    format: FormatArg,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum DialectArg {
    Pi,
    Atomic,
    Harness,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FormatArg {
    Context,
    Llm,
}

/// Runs it: `Ok(true)` when a file could not be read.
pub fn run(a: &ContextArgs, g: &super::Globals) -> anyhow::Result<bool> {
    let files = FileArgs { files: sessions::paths(&a.sessions, false, WhenNone::Recent)?, json: a.json };
    Ok(run_files(&files, g, |file, bytes, json| context_of_file(a, file, bytes, json, &g.local_zone))?.failed)
}

/// The context messages to print: as rebuilt, or after `convertToLlm`.
fn chosen_messages<'m, 'b>(
    format: FormatArg,
    messages: &'m [Message<'b>],
    arena: &'b bumpalo::Bump,
) -> Cow<'m, [Message<'b>]> {
    match format {
        FormatArg::Llm => Cow::Owned(convert_to_llm(messages, arena)),
        FormatArg::Context => Cow::Borrowed(messages),
    }
}

/// The readable transcript of context messages.
fn push_transcript<'b>(o: &mut Outcome, file: &str, messages: &[Message<'b>], arena: &'b bumpalo::Bump) {
    let values: Vec<Value<'_>> = messages.iter().map(|m| m.to_value(arena)).collect();
    o.stdout.extend(render::context_text(file, &values).into_bytes());
}

/// A harness format-4 file, rebuilt from the tip of `--branch`.
fn format4_context(c: &ContextArgs, file: &str, bytes: &[u8], json: bool) -> Outcome {
    let mut o = Outcome::new();
    let arena = bumpalo::Bump::new();
    let built =
        harness4::load_format4(bytes, &arena).and_then(|f| harness4::build_context4(&f, &c.branch).map(|ctx| (f, ctx)));
    match built {
        Ok((f, ctx)) => {
            let messages = chosen_messages(c.format, &ctx.messages, &arena);
            if json {
                render::write_format4_record(&mut o.stdout, file, &f, &ctx, &c.branch, &messages);
            } else {
                push_transcript(&mut o, file, &messages, &arena);
            }
        }
        Err(e) => o.fail(file, json, e.line, e.offset, e.reason),
    }
    o
}

fn context_of_file(c: &ContextArgs, file: &str, bytes: &[u8], json: bool, local: &jiff::tz::TimeZone) -> Outcome {
    if c.dialect == DialectArg::Harness && harness4::is_format4(bytes) {
        return format4_context(c, file, bytes, json);
    }
    let mut o = Outcome::new();
    let Some(session) = load(&mut o, file, bytes, json, local) else { return o };
    let dialect = match c.dialect {
        DialectArg::Pi => Dialect::Pi,
        DialectArg::Atomic => Dialect::Atomic,
        DialectArg::Harness => Dialect::Harness,
    };
    let leaf_field;
    let (choice, leaf, branch) = match &c.leaf {
        None => (LeafChoice::Session, session.leaf_id(), session.branch(None).path),
        Some(id) => {
            leaf_field = session_core::PropertyValue::Str(JsStr::owned(id.clone()));
            (LeafChoice::Id(JsStr::owned(id.clone())), Some(&leaf_field), session.branch(Some(&leaf_field)).path)
        }
    };
    let arena = bumpalo::Bump::new();
    let ctx = build_context(&session, &choice, dialect, &arena);
    for d in &ctx.diagnostics {
        o.note(file, d.line, d.offset, &d.message);
    }
    if let Some((line, offset)) = session.name_that_throws() {
        o.note(
            file,
            line,
            offset,
            "session name that is not a string (Pi 1.6's getSessionName() throws here): no name",
        );
    }
    let messages = chosen_messages(c.format, &ctx.messages, &arena);
    if json {
        o.stdout.reserve(bytes.len().min(256 << 20));
        render::write_context_record(&mut o.stdout, file, &session, leaf, &branch, &ctx, &messages);
    } else {
        push_transcript(&mut o, file, &messages, &arena);
    }
    o
}
