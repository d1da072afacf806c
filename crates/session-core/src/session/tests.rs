//! Tests of loading: the loader's rules, the tree, the leaf, labels and names.

use super::*;

const FILE: &[u8] = br#"garbage
{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[]}}
{"type":"custom","customType":"x","data":{"id":"not this"},"id":"c1","parentId":"u1","timestamp":"2025-01-01T00:00:03.000Z"}
{"type":"label","id":"l1","parentId":"a1","timestamp":"2025-01-01T00:00:04.000Z","targetId":"u1","label":"start"}
{"type":"session_info","id":"n1","parentId":"l1","timestamp":"2025-01-01T00:00:05.000Z","name":"  named \n"}
{"type":"context_window_change","id":"w1","parentId":"n1","timestamp":"2025-01-01T00:00:06.000Z","contextWindow":5}
{"type":"message","id":"cut"#;

#[test]
fn loads_kinds_roles_children_labels_and_name() {
    // spec format.md §2 (garbage before the header is skipped), format.md §3 (custom puts its payload first),
    // format.md §5 (cut-off last line skipped, reported), format.md §6 (leaf = last record, labels, name).
    let s = Session::load(FILE).unwrap();
    assert!(s.incomplete_tail);
    assert_eq!(s.diagnostics.len(), 2);
    // The offset is that of the unterminated string `"cut`.
    assert_eq!((s.diagnostics[1].line, s.diagnostics[1].offset), (9, FILE.len() as u64 - 4));
    let kinds: Vec<EntryKind> = s.entries().map(|(_, e)| e.kind()).collect();
    use EntryKind as K;
    assert_eq!(kinds, [K::Message, K::Message, K::Custom, K::Label, K::SessionInfo, K::ContextWindowChange]);
    assert_eq!(s.records[1].message_role(), Some(Role::User));
    assert_eq!(s.records[3].id, PropertyValue::Str("c1".into()));
    assert_eq!(s.leaf_id(), Some(&PropertyValue::Str("w1".into())));
    let u1 = PropertyValue::Str("u1".into());
    assert_eq!(s.children(&u1), [2, 3]);
    assert_eq!(s.label(&u1).map(|l| l.0.clone()), Some(PropertyValue::Str("start".into())));
    assert_eq!(s.name().map(|n| n.to_str_lossy().into_owned()).as_deref(), Some("named"));
    let ids: Vec<_> = s.branch(None).path.iter().map(|&i| s.records[i].id.clone()).collect();
    assert_eq!(ids, ["u1", "a1", "l1", "n1", "w1"].map(|x| PropertyValue::Str(x.into())));
}

/// A line written as Pi writes a message has its four fields taken where the scan found the
/// prefix; the entry must equal what the lookups give (the last of a repeated key, format.md §3), on
/// lines with repeated, extra and non-ASCII fields.
#[test]
fn pi_written_messages_read_as_the_lookups_do() {
    let head = r#"{"type":"message","id":"0123abcd","parentId":"89efcdab","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"#;
    let lines = [
        format!(r#"{head}"user","content":"hi"}}}}"#),
        format!(r#"{head}"assistant","content":[],"usage":{{"input":1}}}}}}"#),
        format!(r#"{head}"toolResult","content":[],"usage":{{"input":1}},"role":"user"}}}}"#),
        format!(r#"{head}"user","content":"hi"}},"id":"later"}}"#),
        format!(r#"{head}"user","content":"hi"}},"type":"label","targetId":"x","label":"y"}}"#),
        format!(r#"{head}"user","content":"hi"}},"message":null}}"#),
        format!(r#"{head}"user","content":"hi"}},"extra":1}}"#),
        r#"{"type":"message","id":"é123abc","parentId":"89efcdab","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"x"}}"#.to_string(),
        r#"{"type":"message","id":"0123abcd","parentId":"89efcdab","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"x"},"timestamp":5}"#.to_string(),
    ];
    let mut fast = 0;
    for text in &lines {
        let line = crate::lines::Line { bytes: text.as_bytes(), offset: 0, number: 1, terminated: true };
        let mut scanned = json::scan_line(text.as_bytes()).unwrap();
        fast += usize::from(scanned.pi_prefix && scanned.fields.len() == 5);
        let direct = format!("{:?}", Entry::from_scan(line, &scanned));
        scanned.pi_prefix = false;
        assert_eq!(direct, format!("{:?}", Entry::from_scan(line, &scanned)), "{text}");
    }
    // The first three, and the non-ASCII id, take the direct path.
    assert_eq!(fast, 4);
}

/// The walk up takes a parent from the record before it only when ids are unique (format.md §6: the
/// index keeps the last record of an id); with a duplicate id the later record is followed,
/// and a cycle stops where it closes (spec edge cases 14 and 22).
#[test]
fn walks_follow_the_index_with_duplicate_ids_and_stop_at_cycles() {
    let line = |id: &str, parent: &str| {
        format!(r#"{{"type":"message","id":"{id}","parentId":{parent},"message":{{"role":"user","content":"x"}}}}"#)
    };
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"}"#;
    let ids = |s: &Session<'_>, b: Branch| -> (Vec<String>, Option<usize>) {
        let path = b.path.iter().map(|&i| s.records[i].id.as_str().unwrap().to_str_lossy().into_owned());
        (path.collect(), b.cycle_at)
    };
    // Unique ids: parents before, far before, and after their children.
    let file = [header.to_string(), line("a", "null"), line("b", "\"a\""), line("c", "\"a\""), line("d", "\"c\"")];
    let text = file.join("\n");
    let s = Session::load(text.as_bytes()).unwrap();
    assert_eq!(ids(&s, s.branch(None)), (vec!["a".into(), "c".into(), "d".into()], None));
    // "b" twice: the index names the second, whose parent is "x", so the walk from "c" goes
    // there and not to the "b" just before it.
    let file = [
        header.to_string(),
        line("x", "null"),
        line("a", "null"),
        line("b", "\"a\""),
        line("c", "\"b\""),
        line("b", "\"x\""),
    ];
    let text = file.join("\n");
    let s = Session::load(text.as_bytes()).unwrap();
    let c = s.get(&PropertyValue::Str("c".into()));
    assert_eq!(ids(&s, s.walk_up(c)), (vec!["x".into(), "b".into(), "c".into()], None));
    // A cycle: p -> q -> p.
    let file = [header.to_string(), line("p", "\"q\""), line("q", "\"p\"")];
    let text = file.join("\n");
    let s = Session::load(text.as_bytes()).unwrap();
    let (path, cycle) = ids(&s, s.branch(None));
    assert_eq!(path, ["p", "q"]);
    assert_eq!(cycle, Some(2));
}

/// The walk with its shortcut equals the plain walk through the index (last record of an id,
/// stop at the first record met twice) from every record of 3,000 drawn sessions: ids from a
/// small pool (so that some repeat), parents before, after, missing or null, cycles.
#[test]
fn the_walk_equals_the_plain_walk_through_the_index() {
    let mut next = crate::json::scan::tests::xorshift(0x3c6e_f372_fe94_f82b);
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"}"#;
    let mut with_duplicates = 0;
    for _ in 0..3_000 {
        let pool = 2 + next() % 30;
        let n = 1 + next() % 25;
        let mut file = vec![header.to_string()];
        let mut previous: Option<u64> = None;
        for _ in 0..n {
            let id = next() % pool;
            let parent = match next() % 6 {
                0 => "null".to_string(),
                1 => format!("\"{}\"", next() % pool),
                2 => "\"missing\"".to_string(),
                _ => previous.map_or("null".to_string(), |p| format!("\"{p}\"")),
            };
            file.push(format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"message":{{"role":"user","content":"x"}}}}"#
            ));
            previous = Some(id);
        }
        let text = file.join("\n");
        let s = Session::load(text.as_bytes()).unwrap();
        with_duplicates += usize::from(!s.unique_ids);
        for start in 0..s.records.len() {
            let mut path = Vec::new();
            let mut cycle_at = None;
            let mut seen = AHashSet::new();
            let mut current = Some(start);
            while let Some(i) = current {
                if !seen.insert(i) {
                    cycle_at = Some(i);
                    break;
                }
                path.push(i);
                let parent = &s.records[i].parent_id;
                current = if parent.is_truthy() { s.get(parent) } else { None };
            }
            path.reverse();
            assert_eq!(s.walk_up(Some(start)), Branch { path, cycle_at }, "{text}");
        }
    }
    assert!((500..2_500).contains(&with_duplicates), "too narrow a draw: {with_duplicates} of 3,000 with repeated ids");
}

#[test]
fn chunked_loading_equals_whole_loading() {
    let whole = Session::load(FILE).unwrap();
    for parts in 1..8 {
        let chunks = split_points(FILE, parts).into_iter().map(|r| scan_chunk(FILE, r)).collect();
        let s = Session::from_chunks(FILE, chunks).unwrap();
        assert_eq!(s.diagnostics, whole.diagnostics, "{parts}");
        let key = |s: &Session<'_>| {
            s.records.iter().map(|e| (e.line_number, e.offset, e.id.clone().into_owned())).collect::<Vec<_>>()
        };
        assert_eq!(key(&s), key(&whole), "{parts}");
        assert_eq!(s.incomplete_tail, whole.incomplete_tail);
    }
}

#[test]
fn header_rules() {
    assert_eq!(Session::load(b"").unwrap_err(), LoadError::Empty);
    let err = Session::load(b"\n{\"type\":\"message\",\"id\":\"x\"}\n").unwrap_err();
    assert!(matches!(err, LoadError::NotASession { line: Some(2), offset: Some(1), .. }), "{err:?}");
    assert!(Session::load(b"{\"type\":\"session\",\"id\":5}\n").is_err());
}
