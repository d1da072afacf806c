//! `Array.prototype.sort` as V8 runs it, for comparators that may return `NaN`.
//!
//! The reference sorts tree children and cost rows with `a - b` comparators that give `NaN` for
//! invalid dates; the order it then produces depends on V8's algorithm. Arrays shorter than 64
//! (every real children list) are sorted exactly as V8's TimSort does: one run found by
//! `CountAndMakeRun`, finished with binary insertion. Longer arrays use a stable sort, which
//! agrees with V8 whenever the comparator is consistent.

use std::cmp::Ordering;

/// Sorts `items` with a JavaScript comparator (`< 0`: a first; `NaN` and `0`: equal, as the
/// specification's `SortCompare` turns `NaN` into `+0`).
pub fn js_sort<T>(items: &mut [T], mut compare: impl FnMut(&T, &T) -> f64) {
    let mut compare = move |a: &T, b: &T| {
        let c = compare(a, b);
        if c.is_nan() { 0.0 } else { c }
    };
    let n = items.len();
    if n < 2 {
        return;
    }
    if n >= 64 {
        items.sort_by(|a, b| {
            let c = compare(a, b);
            if c < 0.0 {
                Ordering::Less
            } else if c > 0.0 {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        });
        return;
    }
    // CountAndMakeRun(0, n).
    let mut run = 2;
    let descending = compare(&items[1], &items[0]) < 0.0;
    for idx in 2..n {
        let order = compare(&items[idx], &items[idx - 1]);
        let breaks = if descending { order >= 0.0 } else { order < 0.0 };
        if breaks {
            break;
        }
        run += 1;
    }
    if descending {
        items[..run].reverse();
    }
    // BinaryInsertionSort(0, run, n).
    for start in run..n {
        let (mut left, mut right) = (0, start);
        while left < right {
            let mid = left + ((right - left) >> 1);
            if compare(&items[start], &items[mid]) < 0.0 {
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        items[left..=start].rotate_right(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_stably_and_like_v8_with_nan() {
        let mut v = vec![(3.0, 'a'), (1.0, 'b'), (3.0, 'c'), (2.0, 'd')];
        js_sort(&mut v, |a, b| a.0 - b.0);
        assert_eq!(v.iter().map(|x| x.1).collect::<String>(), "bdac");
        // Edge case 38 (spec §6, §5 "Invalid ISO timestamps"): Node 20 gives c0 c1 c4 c3 c2.
        let mut v = vec![(30.0, "c3"), (10.0, "c1"), (f64::NAN, "c2"), (10.0, "c4"), (5.0, "c0")];
        js_sort(&mut v, |a, b| a.0 - b.0);
        assert_eq!(v.iter().map(|x| x.1).collect::<Vec<_>>(), ["c0", "c1", "c4", "c3", "c2"]);
        let mut long: Vec<f64> = (0..100).rev().map(f64::from).collect();
        js_sort(&mut long, |a, b| a - b);
        assert!(long.windows(2).all(|w| w[0] <= w[1]));
    }
}
