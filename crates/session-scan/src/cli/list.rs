//! `session-scan list`: Pi's session picker listing, as JSON, NDJSON or a table.

use session_scan::store;
use std::io::Write;
use std::path::PathBuf;

use session_core::json::write_string;
use session_scan::list::{self, Listed, Scope};
use session_scan::render;

use super::search::{Search, SortMode};

#[derive(clap::Args)]
pub struct ListArgs {
    /// Sessions: a store, a project's folder, files, ids.
    ///
    /// A sessions root or a project's folder of sessions, or session files and ids (default: Pi's
    /// store, $PI_CODING_AGENT_DIR/sessions or ~/.pi/agent/sessions, or its session-dir override).
    #[arg(value_name = "SESSION")]
    sessions: Vec<String>,
    /// The sessions root, as an option.
    #[arg(long, conflicts_with = "sessions")]
    root_dir: Option<PathBuf>,
    /// Only this cwd's sessions, as Pi's picker lists them.
    ///
    /// List one cwd: its folder under the root (filtered by header cwd unless it is the default
    /// root, as Pi 1.6 does), or, with --dir, the sessions of that cwd in the flat folder.
    #[arg(long)]
    cwd: Option<String>,
    /// A flat session folder (Pi's --session-dir).
    ///
    /// A flat session folder (Pi's --session-dir layout) instead of a root.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Atomic's store; its internal sessions hidden.
    ///
    /// Atomic's store (~/.atomic/agent/sessions, ATOMIC_CODING_AGENT_DIR); hides internal
    /// workflow sessions.
    #[arg(long)]
    atomic: bool,
    /// With --atomic: show internal workflow sessions too.
    #[arg(long, requires = "atomic")]
    include_internal: bool,
    /// Forks under the session they came from.
    ///
    /// Sessions under the session they were forked from (their header's parentSession), each
    /// level newest first, as Pi's picker shows them without a search; rows get a "depth".
    #[arg(long)]
    threaded: bool,
    /// Only these fields (JSON) or columns (table), comma-separated.
    ///
    /// Fields: path, id, cwd, name, parentSessionPath, created, modified, messageCount,
    /// firstMessage, allMessagesText (JSON only), and with --atomic Atomic's hasName, internal,
    /// workflow and summary. Without allMessagesText, texts are not read.
    /// The table's default columns: id (the shortest unique prefix, at least 8 characters, which
    /// every command takes), modified, messages, name or first message, project.
    #[arg(long, value_delimiter = ',', value_name = "FIELDS")]
    fields: Option<Vec<String>>,
    /// At most N sessions, the newest.
    ///
    /// At most N sessions: the newest (with --threaded or a search, the first in that order).
    #[arg(long, value_name = "N", value_parser = super::whole_number, allow_hyphen_values = true)]
    limit: Option<usize>,
    /// Only sessions modified on or after this date.
    ///
    /// YYYY-MM-DD or YYYYMMDD (from the start of that day in the zone of --timezone), or an ISO
    /// date-time.
    #[arg(long)]
    since: Option<String>,
    /// Only the sessions' paths, one per line.
    ///
    /// Only the sessions' paths, one per line, in the listing's order (for fzf, xargs, and
    /// `pi --session "$(session-scan list --paths --limit 1)"`).
    #[arg(long, conflicts_with_all = ["json", "ndjson", "fields"])]
    paths: bool,
    /// The array with the reference's field names.
    #[arg(long, conflicts_with = "ndjson")]
    json: bool,
    /// One JSON object per line, as each is read.
    ///
    /// One JSON object per line, printed as each file is read (unordered); with --limit, the
    /// newest N, newest first, printed once they are known; with --threaded or a search, in that
    /// order once it is known.
    #[arg(long)]
    ndjson: bool,
    /// Keep the listing in a cache for the next one.
    ///
    /// Keep what was listed in a cache file and list unchanged files from it next time
    /// ($XDG_CACHE_HOME/session-scan/list.cache or ~/.cache/session-scan/list.cache). For the
    /// table, or --fields without allMessagesText (texts are not cached); not for a search.
    #[arg(long)]
    cache: bool,
    /// The cache in this file instead (implies --cache).
    #[arg(long, value_name = "FILE")]
    cache_file: Option<PathBuf>,
    /// Say on stderr what the listing read, and how fast.
    ///
    /// After the listing, say on stderr how many session files were found, read, listed from the
    /// cache, left out and shown, and how long it took (a JSON line with --json or --ndjson).
    #[arg(long)]
    stats: bool,
}

/// What a listing did, for `--stats`.
#[derive(Default)]
struct Tally {
    /// Session files found.
    found: usize,
    /// Of those, left unopened by `--since` (their mtime is too old).
    pruned: usize,
    /// Files whose listing was taken (read, or from the cache).
    taken: usize,
    /// Of those, listed from the cache.
    from_cache: u64,
    /// Sessions Pi leaves out (errors), and Atomic's hidden internal ones.
    left_out: usize,
    hidden: usize,
    /// Rows printed.
    shown: usize,
}

impl Tally {
    fn count(&mut self, l: &Listed) {
        self.taken += 1;
        match &l.info {
            Err(_) if l.hidden => self.hidden += 1,
            Err(_) => self.left_out += 1,
            Ok(_) => {}
        }
    }

    fn print(&self, json: bool, ms: f64) {
        let read = self.taken as u64 - self.from_cache.min(self.taken as u64);
        if json {
            eprintln!(
                "{{\"stats\":{{\"found\":{},\"pruned\":{},\"read\":{read},\"fromCache\":{},\"leftOut\":{},\"hidden\":{},\"shown\":{},\"ms\":{ms:.1}}}}}",
                self.found, self.pruned, self.from_cache, self.left_out, self.hidden, self.shown
            );
        } else {
            eprintln!(
                "session-scan: list: {} session files found, {} not opened (--since), {read} read, {} from the cache, {} left out, {} hidden, {} shown, in {ms:.1} ms",
                self.found, self.pruned, self.from_cache, self.left_out, self.hidden, self.shown
            );
        }
    }
}

pub fn run(a: &ListArgs, g: &super::Globals) -> anyhow::Result<bool> {
    run_with(a, g, None)
}

pub(super) fn run_with(a: &ListArgs, g: &super::Globals, search: Option<&Search>) -> anyhow::Result<bool> {
    let started = std::time::Instant::now();
    let fields = chosen_fields(a)?;
    // Texts are read only when asked for, and then kept as the JSON text they are written as.
    // The table shows no texts: it reads the files as a picker does.
    let as_json = a.json || a.ndjson;
    let print_texts = as_json && fields.iter().any(|f| f == "allMessagesText");
    let with_hits = search.is_some_and(|s| s.hits > 0 && s.query.is_some());
    let query = search.and_then(|s| s.query.as_ref());
    // A query is matched against the decoded texts.
    let texts = match (query, print_texts) {
        (Some(_), _) if with_hits => list::Texts::DecodedWithPieces,
        (Some(_), _) => list::Texts::Decoded,
        (None, true) => list::Texts::Json,
        (None, false) => list::Texts::Skip,
    };
    let cache = open_cache(a, search.is_some(), texts)?;
    // An instant as it is; a day from its start in the zone of the command line.
    let since = match &a.since {
        None => None,
        Some(s) => Some(match s.parse::<jiff::Timestamp>() {
            Ok(t) => t.as_millisecond() as f64,
            Err(_) => {
                let day = session_scan::days::parse_day(s, &g.zone.tz).map_err(|e| anyhow::anyhow!("--since: {e}"))?;
                session_scan::days::day_start_ms(day, &g.zone.tz)
            }
        }),
    };
    let scope = scope_of(a)?;
    let filter = match &scope {
        Scope::Dir { filter, .. } => filter.clone(),
        Scope::All { .. } | Scope::Files { .. } => None,
    };
    let hide_internal = a.atomic && !a.include_internal;
    let reading = list::Reading::new(texts, hide_internal).with_strategy(g.strategy).with_local_zone(&g.local_zone);
    let reading = if a.atomic { reading.with_atomic_fields() } else { reading };
    let how = match &cache {
        Some(cache) => reading.with_cache(cache),
        None => reading,
    };
    // Each session is scored on the thread that read it, and its texts let go unless printed.
    let score = |l: &mut Listed| score_found(search, print_texts, l);
    let how = if search.is_some() { how.with_then(&score) } else { how };
    // A search orders by score, and threads by parents: no file can be passed over by its mtime
    // for --limit.
    let reorders = search.is_some() || a.threaded;
    let limit = a.limit.filter(|_| !reorders);
    let ndjson_stream = a.ndjson && a.limit.is_none() && !reorders;
    // A whole listing takes each file's mtime as it reads it (in parallel) and sorts after;
    // pruning by metadata and streaming newest first need the mtimes before any read.
    let stat_later = since.is_none() && limit.is_none() && !ndjson_stream;
    // A whole store is discovered folder by folder while it is read (`read_store`).
    let whole_store = stat_later && matches!(scope, Scope::All { .. });
    let mut candidates = if whole_store {
        Vec::new()
    } else {
        list::discover_with(&scope, if stat_later { list::Stat::Later } else { list::Stat::Now })
    };
    let mut tally = Tally { found: candidates.len(), ..Tally::default() };
    // Files that cannot reach --since by their mtime are not opened (see MTIME_SLACK_MS).
    if let Some(since) = since {
        list::prune_before(&mut candidates, since);
    }
    tally.pruned = tally.found - candidates.len();
    let keep = |l: &Listed| -> bool {
        let Ok(info) = &l.info else { return false };
        filter.as_deref().is_none_or(|c| list::cwd_matches(info, c))
            && since.is_none_or(|s| info.modified >= s)
            && (search.is_none() || l.found.is_some())
    };
    // Without --since or --limit every session file there is read: the cache's entries of others
    // there are of files deleted since.
    let read_all = match &scope {
        _ if since.is_some() || limit.is_some() => None,
        Scope::All { root } => Some(session_scan::cache::ReadAll::Store(root)),
        Scope::Dir { dir, .. } => Some(session_scan::cache::ReadAll::Folder(dir)),
        Scope::Files { .. } => None,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut failed = false;
    // Rows in arrival order cannot be the newest N: under --limit they are cut and sorted first.
    if ndjson_stream {
        let (tx, rx) = std::sync::mpsc::channel::<Listed>();
        let printed = std::thread::scope(|s| {
            s.spawn(move || list::read_infos_streaming(&candidates, how, tx));
            let mut n = 0;
            for l in rx {
                tally.count(&l);
                failed |= report_omitted(&l, true);
                if keep(&l) && a.limit.is_none_or(|lim| n < lim) {
                    n += 1;
                    if out.write_all(&ndjson_line(&l, &fields, false, None)).and_then(|()| out.flush()).is_err() {
                        return n;
                    }
                }
            }
            n
        });
        tally.shown = printed;
        tally.from_cache = cache.as_ref().map_or(0, |c| c.hits());
        save_cache(cache, read_all);
        if a.stats {
            tally.print(true, started.elapsed().as_secs_f64() * 1000.0);
        }
        return Ok(failed);
    }
    // With --limit, files are read newest first only until the answer is known.
    let mut listed = match (limit, &scope) {
        (Some(limit), _) => list::read_newest(&candidates, limit, how, &keep),
        // The whole store: each folder's files read as soon as it is listed.
        (None, Scope::All { root }) if whole_store => list::read_store(root, how),
        (None, _) => list::read_infos(&candidates, how),
    };
    if stat_later {
        list::presort(&scope, &mut listed);
    }
    if whole_store {
        tally.found = listed.len();
    }
    tally.from_cache = cache.as_ref().map_or(0, |c| c.hits());
    save_cache(cache, read_all);
    for l in &listed {
        tally.count(l);
        failed |= report_omitted(l, a.json || a.ndjson);
    }
    listed.retain(keep);
    list::sort_by_modified(&mut listed);
    if let Some(Search { query: Some(_), sort: SortMode::Relevance, .. }) = search {
        session_core::search::sort_by_relevance(&mut listed, |l| {
            (l.found.as_ref().map_or(0.0, |f| f.score), l.info.as_ref().map_or(f64::NAN, |i| i.modified))
        });
    }
    let mut depths = Vec::new();
    if a.threaded && search.is_none_or(|s| s.query.is_none()) {
        let hidden;
        (listed, depths, hidden) = list::threaded(listed);
        for l in hidden {
            eprintln!(
                "session-scan: {}: not in the threaded view: its parent sessions form a loop (Pi leaves it out too)",
                l.path.display()
            );
        }
    }
    if let Some(lim) = a.limit {
        listed.truncate(lim);
    }
    tally.shown = listed.len();
    let written = write_rows(&mut out, a, g, &listed, &depths, &fields, with_hits);
    if let Err(e) = written.and_then(|()| out.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(e.into());
    }
    if a.stats {
        tally.print(as_json, started.elapsed().as_secs_f64() * 1000.0);
    }
    // The process ends here: freeing every session's strings one by one took the main thread
    // about 6 ms of a 160 ms listing of 10,000 sessions; the system takes the memory back whole.
    std::mem::forget(listed);
    // A search that finds nothing is exit 1, as grep's.
    let nothing_found = search.is_some() && tally.shown == 0;
    Ok(failed || nothing_found)
}

/// The fields asked for with `--fields` (checked), else every field of Pi's `SessionInfo`.
fn chosen_fields(a: &ListArgs) -> anyhow::Result<Vec<String>> {
    let table = !(a.json || a.ndjson || a.paths);
    if table && a.fields.iter().flatten().any(|f| f == "allMessagesText") {
        anyhow::bail!("--fields: the table shows no message texts; allMessagesText goes with --json or --ndjson");
    }
    // Atomic's rows have fields of their own.
    let known: Vec<&str> =
        render::INFO_FIELDS.iter().chain(if a.atomic { &ATOMIC_FIELDS[..] } else { &[] }).copied().collect();
    Ok(match &a.fields {
        Some(f) => {
            for name in f {
                if !known.contains(&name.as_str()) {
                    anyhow::bail!("unknown field {name:?}; fields are {}", known.join(","));
                }
            }
            f.clone()
        }
        None => known.iter().map(|s| s.to_string()).collect(),
    })
}

/// The listing cache asked for with `--cache` or `--cache-file`, opened (its notes said), if
/// the listing can use one.
fn open_cache(
    a: &ListArgs,
    searching: bool,
    texts: list::Texts,
) -> anyhow::Result<Option<session_scan::cache::ListCache>> {
    let cache_path = match (&a.cache_file, a.cache) {
        (Some(file), _) => Some(file.clone()),
        (None, true) => Some(session_scan::cache::ListCache::default_path().ok_or_else(|| {
            anyhow::anyhow!("--cache: neither XDG_CACHE_HOME nor HOME is set; name a file with --cache-file")
        })?),
        (None, false) => None,
    };
    if cache_path.is_some() && searching {
        anyhow::bail!("search reads every session's texts, which --cache does not keep");
    }
    if cache_path.is_some() && texts != list::Texts::Skip {
        anyhow::bail!("--cache keeps the picker's fields only: give --fields without allMessagesText");
    }
    let cache = cache_path.map(|p| session_scan::cache::ListCache::open(&p));
    for note in cache.iter().flat_map(|c| c.notes()) {
        eprintln!("session-scan: {note}");
    }
    Ok(cache)
}

/// The sessions to list: the whole store, or one folder (filtered by cwd where Pi filters it).
fn scope_of(a: &ListArgs) -> anyhow::Result<Scope> {
    let named = super::sessions::paths(&a.sessions, a.atomic, super::sessions::WhenNone::Store)?;
    // A folder named by an option must be there too, as every path the user names.
    for dir in [&a.dir, &a.root_dir].into_iter().flatten() {
        if !dir.exists() {
            anyhow::bail!(session_scan::named::NameError::Missing(dir.to_string_lossy().into_owned()));
        }
    }
    let given_root = match named.as_slice() {
        _ if a.sessions.is_empty() => a.root_dir.clone(),
        // A project's folder: the files in it, as `list(cwd, dir)` lists a flat folder.
        [dir] if dir.is_dir() && !list::jsonl_names(dir).is_empty() && a.cwd.is_none() => {
            return Ok(Scope::Dir { dir: dir.clone(), filter: None });
        }
        [dir] if dir.is_dir() => Some(dir.clone()),
        _ => return Ok(Scope::Files { files: session_scan::expand_paths(&named) }),
    };
    let resolved_cwd = a.cwd.as_deref().map(store::resolve_path);
    // Without a root or folder given, Pi's own session-dir override (environment, then settings)
    // names the flat folder its picker lists, if there is one.
    let dir = match (&a.dir, &given_root) {
        (Some(dir), _) => Some(dir.clone()),
        (None, Some(_)) => None,
        (None, None) => {
            let project = resolved_cwd.as_ref().map(PathBuf::from).or_else(|| std::env::current_dir().ok());
            project.and_then(|p| store::session_dir_override(a.atomic, &p))
        }
    };
    let default_root = store::default_root(a.atomic);
    let root = given_root.unwrap_or_else(|| default_root.clone());
    // Pi lists nothing, silently, from a folder that is not there; we say why the list is empty.
    // (A cwd without sessions has no folder of its own under the root: not worth a word.)
    let folder = dir.as_ref().unwrap_or(&root);
    if !folder.is_dir() {
        let why = if folder.exists() { "not a folder" } else { "no such folder" };
        eprintln!("session-scan: {}: {why}; no sessions to list", folder.display());
    }
    Ok(match (dir, &resolved_cwd) {
        // 1.6 filters a folder by the sessions' cwd unless it is that cwd's default folder.
        (Some(dir), Some(cwd)) => {
            let is_default = dir == default_root.join(store::encode_cwd(cwd));
            Scope::Dir { dir, filter: (!is_default).then(|| cwd.clone()) }
        }
        (Some(dir), None) => Scope::Dir { dir, filter: None },
        (None, Some(cwd)) => {
            let dir = root.join(store::encode_cwd(cwd));
            let is_default = root == default_root;
            Scope::Dir { dir, filter: (!is_default).then(|| cwd.clone()) }
        }
        (None, None) => Scope::All { root },
    })
}

/// Scores a listed session against the search, keeping what was found and letting its texts go
/// unless they are printed.
fn score_found(search: Option<&Search>, print_texts: bool, l: &mut Listed) {
    let (Some(search), Ok(info)) = (search, &mut l.info) else { return };
    if search.named && !session_core::search::has_session_name(info.name.as_ref()) {
        return;
    }
    if let Some(query) = &search.query {
        let id = info.id.to_js_string();
        let score = query.score(&session_core::search::Searched {
            name: info.name.as_ref().map(|n| n.as_bytes()),
            id: &id,
            cwd: info.cwd.as_bytes(),
            text: &info.all_messages_text,
        });
        l.found = score.map(|score| list::Found {
            score,
            hits: query.hits(&info.all_messages_text, &info.text_pieces, search.hits),
        });
        info.text_pieces = Vec::new();
        if !print_texts {
            info.all_messages_text = Vec::new();
        }
    } else {
        l.found = Some(list::Found { score: 0.0, hits: Vec::new() });
    }
}

/// Writes the rows as NDJSON, a JSON array (serialised in parallel, a batch at a time: the
/// array is never held whole) or the table.
fn write_rows(
    out: &mut impl Write,
    a: &ListArgs,
    g: &super::Globals,
    listed: &[Listed],
    depths: &[usize],
    fields: &[String],
    with_hits: bool,
) -> std::io::Result<()> {
    if a.ndjson {
        listed
            .iter()
            .enumerate()
            .try_for_each(|(k, l)| out.write_all(&ndjson_line(l, fields, with_hits, depths.get(k).copied())))
    } else if a.json {
        // Rows are serialised in parallel, a batch at a time: the array is never held whole.
        (|| {
            use rayon::prelude::*;
            out.write_all(b"[")?;
            for (b, batch) in listed.chunks(64).enumerate() {
                let rows: Vec<Vec<u8>> = batch
                    .par_iter()
                    .enumerate()
                    .map(|(k, l)| row_json(l, fields, with_hits, depths.get(b * 64 + k).copied()))
                    .collect();
                for (k, row) in rows.iter().enumerate() {
                    out.write_all(if b == 0 && k == 0 { b"\n" } else { b",\n" })?;
                    out.write_all(row)?;
                }
            }
            out.write_all(if listed.is_empty() { b"]\n" } else { b"\n]\n" })
        })()
    } else if a.paths {
        listed.iter().filter(|l| l.info.is_ok()).try_for_each(|l| {
            out.write_all(l.path.as_os_str().as_encoded_bytes())?;
            out.write_all(b"\n")
        })
    } else {
        out.write_all(table(listed, depths, a.fields.as_deref(), g).as_bytes())
    }
}

/// Writes the cache back, if there is one; a failure is reported, not fatal.
fn save_cache(cache: Option<session_scan::cache::ListCache>, read_all: Option<session_scan::cache::ReadAll<'_>>) {
    let Some(cache) = cache else { return };
    let path = cache.path().to_path_buf();
    if let Err(e) = cache.save(read_all) {
        eprintln!("session-scan: cache {}: cannot write ({e})", path.display());
    }
    // The process ends soon after: its entries are not freed one by one (as with the listing).
    std::mem::forget(cache);
}

/// Reports on stderr a file Pi leaves out (Pi is silent), as a JSON line when `json`; returns
/// whether one was.
fn report_omitted(l: &Listed, json: bool) -> bool {
    match &l.info {
        Err(e) if !l.hidden => {
            if json {
                eprintln!(
                    "{}",
                    session_scan::render::error_json(&l.path.to_string_lossy(), e.line, e.offset, &e.reason)
                );
            } else {
                eprintln!("{}: left out of the list, as Pi does: {e}", l.path.display());
            }
            true
        }
        _ => false,
    }
}

/// [`row_json`] and its newline, for `--ndjson`.
fn ndjson_line(l: &Listed, fields: &[String], with_hits: bool, depth: Option<usize>) -> Vec<u8> {
    let mut line = row_json(l, fields, with_hits, depth);
    line.push(b'\n');
    line
}

/// The fields Atomic's `SessionInfo` has beyond Pi's: `hasName` (a `session_info` exists, even one
/// that cleared the name), `internal` and `workflow` (only for a valid workflow marker) and
/// `summary` (format.md §8).
const ATOMIC_FIELDS: [&str; 4] = ["hasName", "internal", "workflow", "summary"];

/// Writes one of Atomic's fields of a row; false, with nothing written, when the row has none.
fn write_atomic_field(atomic: &list::AtomicFields, key: &str, out: &mut Vec<u8>) -> bool {
    match key {
        "hasName" => out.extend_from_slice(if atomic.has_name { b"true" } else { b"false" }),
        "internal" if atomic.workflow.is_some() => out.extend_from_slice(b"true"),
        "workflow" => match &atomic.workflow {
            Some(json) => out.extend_from_slice(json.as_bytes()),
            None => return false,
        },
        "summary" => match &atomic.summary {
            Some(text) => write_string(text.as_bytes(), out),
            None => return false,
        },
        _ => return false,
    }
    true
}

fn row_json(l: &Listed, fields: &[String], with_hits: bool, depth: Option<usize>) -> Vec<u8> {
    let Ok(info) = &l.info else { return Vec::new() };
    let path = l.path.to_str().map_or_else(|| l.path.to_string_lossy(), std::borrow::Cow::Borrowed);
    // Room for the longest fields as they are, so that the row is not grown while written.
    let texts = info.all_messages_json.len().max(info.all_messages_text.len());
    let mut buf = Vec::with_capacity(texts + info.first_message.as_bytes().len() + path.len() + 512);
    buf.push(b'{');
    for (k, f) in fields.iter().enumerate() {
        if fields[..k].contains(f) {
            continue;
        }
        let key_at = buf.len();
        if key_at > 1 {
            buf.push(b',');
        }
        write_string(f.as_bytes(), &mut buf);
        buf.push(b':');
        let written = match &l.atomic {
            Some(atomic) if ATOMIC_FIELDS.contains(&f.as_str()) => write_atomic_field(atomic, f, &mut buf),
            _ => render::write_info_field(&path, info, f, &mut buf),
        };
        if !written {
            buf.truncate(key_at);
        }
    }
    if let Some(depth) = depth {
        if buf.len() > 1 {
            buf.push(b',');
        }
        buf.extend_from_slice(format!("\"depth\":{depth}").as_bytes());
    }
    if let Some(found) = &l.found {
        if buf.len() > 1 {
            buf.push(b',');
        }
        buf.extend_from_slice(b"\"score\":");
        session_core::json::write_number(found.score, &mut buf);
        if with_hits {
            buf.extend_from_slice(b",\"hits\":[");
            for (k, hit) in found.hits.iter().enumerate() {
                if k > 0 {
                    buf.push(b',');
                }
                buf.extend_from_slice(format!("{{\"line\":{},\"offset\":{},\"id\":", hit.line, hit.offset).as_bytes());
                match hit.id.to_value() {
                    Some(v) => session_core::json::write_json(&v, &mut buf),
                    None => buf.extend_from_slice(b"null"),
                }
                buf.extend_from_slice(if hit.user {
                    b",\"role\":\"user\",\"text\":"
                } else {
                    b",\"role\":\"assistant\",\"text\":"
                });
                write_string(hit.snippet.as_bytes(), &mut buf);
                buf.push(b'}');
            }
            buf.push(b']');
        }
    }
    buf.push(b'}');
    buf
}

/// The table: the columns `--fields` names, else id, modified, messages, name or first message,
/// and project; fitted to the terminal (the project leaves first, then the messages).
fn table(listed: &[Listed], depths: &[usize], fields: Option<&[String]>, g: &super::Globals) -> String {
    use session_scan::table::{Column, RowStyle, Table, home_tilde, thousands};
    const DEFAULT: [&str; 5] = ["id", "modified", "messageCount", "title", "cwd"];
    let mut names: Vec<&str> = match fields {
        Some(f) => f.iter().map(String::as_str).collect(),
        None => DEFAULT.to_vec(),
    };
    // Atomic's summary, as Atomic's picker shows it: a column beside the name, when a row has one.
    if fields.is_none() && listed.iter().any(|l| l.atomic.as_ref().is_some_and(|a| a.summary.is_some())) {
        names.insert(4, "summary");
    }
    let zone = format!("({})", g.zone.label);
    let column = |name: &str| match name {
        "id" => Column::text("id", 8),
        "modified" => Column::text(&format!("modified {zone}"), 16),
        "created" => Column::text(&format!("created {zone}"), 16).droppable(3),
        "messageCount" => Column::number("msgs").droppable(2),
        "title" => Column::text("name / first message", 20),
        "name" => Column::text("name", 12),
        "firstMessage" => Column::text("first message", 20),
        "cwd" => Column::text("project", 16).middle().dim().droppable(4),
        "summary" => Column::text("summary", 16).droppable(3),
        "hasName" | "internal" | "workflow" => Column::text(name, 5).droppable(7),
        "path" => Column::text("path", 16).middle().dim().droppable(5),
        _ => Column::text("parent session", 16).middle().dim().droppable(6),
    };
    let mut t = Table::new(names.iter().map(|n| column(n)).collect());
    let shown: Vec<&Listed> = listed.iter().filter(|l| l.info.is_ok()).collect();
    let ids: Vec<String> = shown
        .iter()
        .map(|l| {
            l.info.as_ref().map(|i| String::from_utf8_lossy(&i.id.to_js_string()).into_owned()).unwrap_or_default()
        })
        .collect();
    let short = session_scan::named::short_ids(&ids.iter().map(String::as_str).collect::<Vec<_>>(), 8);
    let mut k = 0;
    for (n, l) in listed.iter().enumerate() {
        let Ok(info) = &l.info else { continue };
        // A fork under its parent: indented, with a branch mark.
        let depth = depths.get(n).copied().unwrap_or(0);
        let indent = if depth == 0 { String::new() } else { format!("{}└ ", "  ".repeat(depth - 1)) };
        let named = info.name.as_ref().map(|n| n.to_str_lossy().into_owned());
        let cell = |name: &str| match name {
            "id" => short[k].clone(),
            "modified" => g.zone.minute(info.modified),
            "created" => g.zone.minute(info.created),
            "messageCount" => thousands(info.message_count as f64),
            "title" => {
                format!("{indent}{}", named.clone().unwrap_or_else(|| info.first_message.to_str_lossy().into_owned()))
            }
            "name" => named.clone().unwrap_or_default(),
            "firstMessage" => info.first_message.to_str_lossy().into_owned(),
            "cwd" => home_tilde(&info.cwd.to_str_lossy()),
            "path" => home_tilde(&l.path.to_string_lossy()),
            "summary" => l.atomic.as_ref().and_then(|a| a.summary.clone()).unwrap_or_default(),
            "hasName" => l.atomic.as_ref().map_or(String::new(), |a| a.has_name.to_string()),
            "internal" => l.atomic.as_ref().map_or(String::new(), |a| a.workflow.is_some().to_string()),
            "workflow" => l.atomic.as_ref().and_then(|a| a.workflow.clone()).unwrap_or_default(),
            _ => info.parent_session.as_str().map(|p| home_tilde(&p.to_str_lossy())).unwrap_or_default(),
        };
        t.row(names.iter().map(|n| cell(n)).collect(), RowStyle::Plain);
        for hit in l.found.iter().flat_map(|f| &f.hits) {
            let text = format!("  line {} {}: {}", hit.line, if hit.user { "user" } else { "assistant" }, hit.snippet);
            let cells =
                names.iter().map(|n| if matches!(*n, "title" | "firstMessage") { text.clone() } else { String::new() });
            t.row(cells.collect(), RowStyle::Faint);
        }
        k += 1;
    }
    t.note(format!("{} sessions", shown.len()));
    t.render(session_scan::table::width(), g.color)
}
