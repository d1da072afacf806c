//! Pi 1.6's threaded picker view (`buildSessionTree`, `flattenSessionTree`): sessions under the
//! session they were forked from, each level newest subtree first.

use std::collections::HashMap;
use std::hash::Hash;

/// The threaded view: its rows, and the sessions it leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Threads {
    /// The rows, in order.
    pub rows: Vec<Row>,
    /// The sessions whose parent chain never reaches a root (parent loops), as Pi leaves them
    /// out; a session whose key a later one repeats is shown as that one (Pi's map keeps the
    /// last), so it is not among them.
    pub left_out: Vec<usize>,
}

/// One row of the threaded view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The session's place in the input.
    pub session: usize,
    /// Its depth below a root (0 for a root).
    pub depth: usize,
}

/// The threaded order of `sessions` (in the listing's order): each has a key (its path as Pi
/// compares paths), the key of its parent session if any, and its `modified` time. A session whose
/// parent is listed goes under it; the others are roots. Roots, and each node's children, are
/// ordered by the latest `modified` of their subtrees (newest first; `NaN` as JavaScript sorts and
/// `Math.max` it). Sessions whose parents form a loop are under no root and are not in the view,
/// as in Pi; [`Threads::left_out`] names them.
pub fn threaded<K: Hash + Eq>(sessions: &[(K, Option<K>, f64)]) -> Threads {
    let tree = Tree::new(sessions);
    let mut rows = Vec::with_capacity(sessions.len());
    // Depth first, children in order, without recursion (a chain may be long).
    let mut stack: Vec<(usize, usize)> = tree.roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((node, depth)) = stack.pop() {
        rows.push(Row { session: node, depth });
        stack.extend(tree.children[node].iter().rev().map(|&c| (c, depth + 1)));
    }
    Threads { rows, left_out: tree.left_out }
}

struct Tree {
    roots: Vec<usize>,
    children: Vec<Vec<usize>>,
    /// Nodes under no root.
    left_out: Vec<usize>,
}

impl Tree {
    fn new<K: Hash + Eq>(sessions: &[(K, Option<K>, f64)]) -> Tree {
        // Pi's `byPath`: a key listed twice is the last session with it, wherever either appears.
        let mut node_of: HashMap<&K, usize> = HashMap::with_capacity(sessions.len());
        for (k, (key, _, _)) in sessions.iter().enumerate() {
            node_of.insert(key, k);
        }
        let mut roots = Vec::new();
        let mut children = vec![Vec::new(); sessions.len()];
        for (key, parent, _) in sessions {
            let node = node_of[key];
            match parent.as_ref().and_then(|p| node_of.get(p)) {
                Some(&p) => children[p].push(node),
                None => roots.push(node),
            }
        }
        // Latest activity of each subtree, from the roots down (nodes not under a root keep none).
        let mut latest: Vec<f64> = sessions.iter().map(|s| s.2).collect();
        let mut order = Vec::new();
        let mut stack: Vec<usize> = roots.clone();
        let mut seen = vec![false; sessions.len()];
        while let Some(n) = stack.pop() {
            // A node reached twice (a key listed twice) is walked once: its subtree is the same.
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            order.push(n);
            stack.extend(&children[n]);
        }
        for &n in order.iter().rev() {
            for &c in &children[n] {
                latest[n] = js_max(latest[n], latest[c]);
            }
        }
        let by_latest = |a: &usize, b: &usize| latest[*b] - latest[*a];
        crate::jssort::js_sort(&mut roots, by_latest);
        for list in &mut children {
            crate::jssort::js_sort(list, by_latest);
        }
        // The nodes the walk above never reached (a session whose key a later one repeats is no
        // node of its own).
        let left_out = (0..sessions.len()).filter(|&k| !seen[k] && node_of[&sessions[k].0] == k).collect();
        Tree { roots, children, left_out }
    }
}

/// `Math.max(a, b)`: `NaN` if either is.
fn js_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(sessions: &[(&str, Option<&str>, f64)]) -> Vec<(&'static str, usize)> {
        let names = ["a", "b", "c", "d", "e", "f"];
        threaded(sessions).rows.iter().map(|r| (names[r.session], r.depth)).collect()
    }

    #[test]
    fn children_go_under_their_parents_newest_subtree_first() {
        // a (old) has a child d that is the newest of all: a's subtree comes first.
        let s =
            [("a", None, 1.0), ("b", None, 5.0), ("c", Some("a"), 2.0), ("d", Some("c"), 9.0), ("e", Some("b"), 3.0)];
        assert_eq!(view(&s), [("a", 0), ("c", 1), ("d", 2), ("b", 0), ("e", 1)]);
        // A parent not listed: a root.
        let s = [("a", Some("zz"), 1.0), ("b", None, 2.0)];
        assert_eq!(view(&s), [("b", 0), ("a", 0)]);
    }

    #[test]
    fn loops_are_left_out_and_named() {
        let s = [("a", Some("b"), 1.0), ("b", Some("a"), 2.0), ("c", Some("c"), 3.0), ("d", None, 4.0)];
        assert_eq!(view(&s), [("d", 0)]);
        assert_eq!(threaded(&s).left_out, [0, 1, 2]);
    }

    #[test]
    fn nan_times_poison_their_subtrees_as_math_max_does() {
        let s = [("a", None, 1.0), ("b", Some("a"), f64::NAN), ("c", None, 2.0)];
        // a's latest activity is NaN: compared as equal, the roots keep their order.
        assert_eq!(view(&s), [("a", 0), ("b", 1), ("c", 0)]);
    }
}
