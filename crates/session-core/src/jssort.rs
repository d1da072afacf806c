//! `Array.prototype.sort` as V8 runs it, for comparators that may return `NaN`.
//!
//! The reference sorts sessions, tree children and cost rows with `a - b` comparators that give
//! `NaN` for invalid dates; the order it then produces depends on V8's algorithm, TimSort
//! (`third_party/v8/builtins/array-sort.tq`), which this follows comparison for comparison:
//! runs found and extended by binary insertion, merged under the same stack invariants, with
//! the same galloping and the same adaptive gallop threshold. With a consistent comparator the
//! result is the stable sort's; with `NaN` in it, it is what Node prints.

/// Sorts `items` with a JavaScript comparator (`< 0`: a first; `NaN` and `0`: equal, as V8's
/// `CallCompare` turns `NaN` into `+0`).
#[inline]
pub fn js_sort<T>(items: &mut [T], compare: impl FnMut(&T, &T) -> f64) {
    let n = items.len();
    if n < 2 {
        return;
    }
    if n < 64 {
        small_sort(items, compare);
    } else {
        tim_sort(items, compare);
    }
}

/// [`js_sort`] of 64 items or more: runs, merges and gallops.
#[inline(never)]
fn tim_sort<T>(items: &mut [T], compare: impl FnMut(&T, &T) -> f64) {
    let n = items.len();
    // V8 sorts a copy of the elements (its work array); here, their positions.
    let mut sort = TimSort { items, work: (0..n).collect(), compare, runs: Vec::new(), min_gallop: MIN_GALLOP_WINS };
    let min_run = min_run_length(n);
    let (mut low, mut remaining) = (0, n);
    while remaining != 0 {
        let mut run = sort.count_and_make_run(low, low + remaining);
        if run < min_run {
            let forced = min_run.min(remaining);
            sort.binary_insertion_sort(low, low + run, low + forced);
            run = forced;
        }
        sort.runs.push((low, run));
        sort.merge_collapse();
        low += run;
        remaining -= run;
    }
    sort.merge_force_collapse();
    let TimSort { items, work, .. } = sort;
    apply_permutation(items, &work);
}

/// What TimSort does below 64 items, in place and without allocating (every children list and
/// cost table in practice): one run found by `CountAndMakeRun`, finished by binary insertion.
#[inline]
fn small_sort<T>(items: &mut [T], mut compare: impl FnMut(&T, &T) -> f64) {
    let mut call = |a: &T, b: &T| {
        let c = compare(a, b);
        if c.is_nan() { 0.0 } else { c }
    };
    let n = items.len();
    let descending = call(&items[1], &items[0]) < 0.0;
    let mut run = 2;
    for idx in 2..n {
        let order = call(&items[idx], &items[idx - 1]);
        if if descending { order >= 0.0 } else { order < 0.0 } {
            break;
        }
        run += 1;
    }
    if descending {
        items[..run].reverse();
    }
    for start in run..n {
        let (mut left, mut right) = (0, start);
        while left < right {
            let mid = left + ((right - left) >> 1);
            if call(&items[start], &items[mid]) < 0.0 {
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        items[left..=start].rotate_right(1);
    }
}

/// V8's `kMinGallopWins`: wins in a row before a merge starts galloping.
const MIN_GALLOP_WINS: usize = 7;

/// `ComputeMinRunLength`: `n` itself below 64, else between 32 and 64.
fn min_run_length(mut n: usize) -> usize {
    let mut r = 0;
    while n >= 64 {
        r |= n & 1;
        n >>= 1;
    }
    n + r
}

/// The sort's state: the items, the work array (positions of items), the comparator, the
/// pending runs (base, length) and the gallop threshold, which adapts across merges.
struct TimSort<'a, T, C> {
    items: &'a mut [T],
    work: Vec<usize>,
    compare: C,
    runs: Vec<(usize, usize)>,
    min_gallop: usize,
}

/// How a merge ended: all placed but what is left of the moved-out run, or one item of it
/// left to place after what is left of the other.
enum Ending {
    Succeed,
    CopyOther,
}

impl<T, C: FnMut(&T, &T) -> f64> TimSort<'_, T, C> {
    /// `CallCompare` on two items, given by position.
    fn call(&mut self, a: usize, b: usize) -> f64 {
        let c = (self.compare)(&self.items[a], &self.items[b]);
        if c.is_nan() { 0.0 } else { c }
    }

    /// `CountAndMakeRun(low, high)`: the length of the run at `low`, a strictly descending one
    /// reversed in place.
    fn count_and_make_run(&mut self, low: usize, high: usize) -> usize {
        if low + 1 == high {
            return 1;
        }
        let descending = self.call(self.work[low + 1], self.work[low]) < 0.0;
        let mut run = 2;
        for idx in low + 2..high {
            let order = self.call(self.work[idx], self.work[idx - 1]);
            if if descending { order >= 0.0 } else { order < 0.0 } {
                break;
            }
            run += 1;
        }
        if descending {
            self.work[low..low + run].reverse();
        }
        run
    }

    /// `BinaryInsertionSort(low, start, high)`: `low..start` is sorted; the rest is inserted.
    fn binary_insertion_sort(&mut self, low: usize, start: usize, high: usize) {
        let start = if low == start { start + 1 } else { start };
        for start in start..high {
            let pivot = self.work[start];
            let (mut left, mut right) = (low, start);
            while left < right {
                let mid = left + ((right - left) >> 1);
                if self.call(pivot, self.work[mid]) < 0.0 {
                    right = mid;
                } else {
                    left = mid + 1;
                }
            }
            self.work[left..=start].rotate_right(1);
        }
    }

    /// `MergeCollapse`: merges until the run lengths keep TimSort's invariants.
    fn merge_collapse(&mut self) {
        while self.runs.len() > 1 {
            let mut n = self.runs.len() - 2;
            let len = |k: usize| self.runs[k].1;
            let holds = |k: usize| k < 2 || len(k - 2) > len(k - 1) + len(k);
            if !holds(n + 1) || !holds(n) {
                if n > 0 && len(n - 1) < len(n + 1) {
                    n -= 1;
                }
                self.merge_at(n);
            } else if len(n) <= len(n + 1) {
                self.merge_at(n);
            } else {
                break;
            }
        }
    }

    /// `MergeForceCollapse`: merges every pending run.
    fn merge_force_collapse(&mut self) {
        while self.runs.len() > 1 {
            let mut n = self.runs.len() - 2;
            if n > 0 && self.runs[n - 1].1 < self.runs[n + 1].1 {
                n -= 1;
            }
            self.merge_at(n);
        }
    }

    /// `MergeAt(i)`: merges runs `i` and `i + 1`.
    fn merge_at(&mut self, i: usize) {
        let ((mut base_a, mut len_a), (base_b, mut len_b)) = (self.runs[i], self.runs[i + 1]);
        self.runs[i].1 = len_a + len_b;
        self.runs.remove(i + 1);
        // Where run B's first item goes in run A: the items before it are in place already.
        let work = std::mem::take(&mut self.work);
        let k = self.gallop_right(&work, work[base_b], base_a, len_a, 0);
        base_a += k;
        len_a -= k;
        if len_a != 0 {
            // Where run A's last item goes in run B: the items after it are in place already.
            len_b = self.gallop_left(&work, work[base_a + len_a - 1], base_b, len_b, len_b - 1);
        }
        self.work = work;
        if len_a == 0 || len_b == 0 {
            return;
        }
        if len_a <= len_b {
            self.merge_low(base_a, len_a, base_b, len_b);
        } else {
            self.merge_high(base_a, len_a, base_b, len_b);
        }
    }

    /// `MergeLow`: run A (the shorter) is moved to a temporary array, and the merge fills
    /// from the left.
    fn merge_low(&mut self, base_a: usize, mut len_a: usize, base_b: usize, mut len_b: usize) {
        let temp: Vec<usize> = self.work[base_a..base_a + len_a].to_vec();
        let mut work = std::mem::take(&mut self.work);
        let (mut dest, mut cursor_temp, mut cursor_b) = (base_a, 0, base_b);
        work[dest] = work[cursor_b];
        dest += 1;
        cursor_b += 1;
        let ending = 'merge: {
            len_b -= 1;
            if len_b == 0 {
                break 'merge Ending::Succeed;
            }
            if len_a == 1 {
                break 'merge Ending::CopyOther;
            }
            let mut min_gallop = self.min_gallop;
            loop {
                let (mut wins_a, mut wins_b) = (0, 0);
                loop {
                    if self.call(work[cursor_b], temp[cursor_temp]) < 0.0 {
                        work[dest] = work[cursor_b];
                        dest += 1;
                        cursor_b += 1;
                        wins_b += 1;
                        len_b -= 1;
                        wins_a = 0;
                        if len_b == 0 {
                            break 'merge Ending::Succeed;
                        }
                        if wins_b >= min_gallop {
                            break;
                        }
                    } else {
                        work[dest] = temp[cursor_temp];
                        dest += 1;
                        cursor_temp += 1;
                        wins_a += 1;
                        len_a -= 1;
                        wins_b = 0;
                        if len_a == 1 {
                            break 'merge Ending::CopyOther;
                        }
                        if wins_a >= min_gallop {
                            break;
                        }
                    }
                }
                min_gallop += 1;
                let mut first = true;
                while wins_a >= MIN_GALLOP_WINS || wins_b >= MIN_GALLOP_WINS || first {
                    first = false;
                    min_gallop = min_gallop.saturating_sub(1).max(1);
                    self.min_gallop = min_gallop;
                    wins_a = self.gallop_right(&temp, work[cursor_b], cursor_temp, len_a, 0);
                    if wins_a > 0 {
                        work[dest..dest + wins_a].copy_from_slice(&temp[cursor_temp..cursor_temp + wins_a]);
                        dest += wins_a;
                        cursor_temp += wins_a;
                        len_a -= wins_a;
                        if len_a == 1 {
                            break 'merge Ending::CopyOther;
                        }
                        // Only a comparator that is not consistent gets here.
                        if len_a == 0 {
                            break 'merge Ending::Succeed;
                        }
                    }
                    work[dest] = work[cursor_b];
                    dest += 1;
                    cursor_b += 1;
                    len_b -= 1;
                    if len_b == 0 {
                        break 'merge Ending::Succeed;
                    }
                    wins_b = self.gallop_left(&work, temp[cursor_temp], cursor_b, len_b, 0);
                    if wins_b > 0 {
                        work.copy_within(cursor_b..cursor_b + wins_b, dest);
                        dest += wins_b;
                        cursor_b += wins_b;
                        len_b -= wins_b;
                        if len_b == 0 {
                            break 'merge Ending::Succeed;
                        }
                    }
                    work[dest] = temp[cursor_temp];
                    dest += 1;
                    cursor_temp += 1;
                    len_a -= 1;
                    if len_a == 1 {
                        break 'merge Ending::CopyOther;
                    }
                }
                min_gallop += 1;
                self.min_gallop = min_gallop;
            }
        };
        match ending {
            Ending::Succeed => work[dest..dest + len_a].copy_from_slice(&temp[cursor_temp..cursor_temp + len_a]),
            Ending::CopyOther => {
                // The last item of run A belongs at the end of the merge.
                work.copy_within(cursor_b..cursor_b + len_b, dest);
                work[dest + len_b] = temp[cursor_temp];
            }
        }
        self.work = work;
    }

    /// `MergeHigh`: run B (the shorter) is moved to a temporary array, and the merge fills
    /// from the right. Cursors are one past the item they name, so that none goes below zero.
    fn merge_high(&mut self, base_a: usize, mut len_a: usize, base_b: usize, mut len_b: usize) {
        let temp: Vec<usize> = self.work[base_b..base_b + len_b].to_vec();
        let mut work = std::mem::take(&mut self.work);
        let (mut dest, mut cursor_temp, mut cursor_a) = (base_b + len_b, len_b, base_a + len_a);
        work[dest - 1] = work[cursor_a - 1];
        dest -= 1;
        cursor_a -= 1;
        let ending = 'merge: {
            len_a -= 1;
            if len_a == 0 {
                break 'merge Ending::Succeed;
            }
            if len_b == 1 {
                break 'merge Ending::CopyOther;
            }
            let mut min_gallop = self.min_gallop;
            loop {
                let (mut wins_a, mut wins_b) = (0, 0);
                loop {
                    if self.call(temp[cursor_temp - 1], work[cursor_a - 1]) < 0.0 {
                        work[dest - 1] = work[cursor_a - 1];
                        dest -= 1;
                        cursor_a -= 1;
                        wins_a += 1;
                        len_a -= 1;
                        wins_b = 0;
                        if len_a == 0 {
                            break 'merge Ending::Succeed;
                        }
                        if wins_a >= min_gallop {
                            break;
                        }
                    } else {
                        work[dest - 1] = temp[cursor_temp - 1];
                        dest -= 1;
                        cursor_temp -= 1;
                        wins_b += 1;
                        len_b -= 1;
                        wins_a = 0;
                        if len_b == 1 {
                            break 'merge Ending::CopyOther;
                        }
                        if wins_b >= min_gallop {
                            break;
                        }
                    }
                }
                min_gallop += 1;
                let mut first = true;
                while wins_a >= MIN_GALLOP_WINS || wins_b >= MIN_GALLOP_WINS || first {
                    first = false;
                    min_gallop = min_gallop.saturating_sub(1).max(1);
                    self.min_gallop = min_gallop;
                    let k = self.gallop_right(&work, temp[cursor_temp - 1], base_a, len_a, len_a - 1);
                    wins_a = len_a - k;
                    if wins_a > 0 {
                        dest -= wins_a;
                        cursor_a -= wins_a;
                        work.copy_within(cursor_a..cursor_a + wins_a, dest);
                        len_a -= wins_a;
                        if len_a == 0 {
                            break 'merge Ending::Succeed;
                        }
                    }
                    work[dest - 1] = temp[cursor_temp - 1];
                    dest -= 1;
                    cursor_temp -= 1;
                    len_b -= 1;
                    if len_b == 1 {
                        break 'merge Ending::CopyOther;
                    }
                    let k = self.gallop_left(&temp, work[cursor_a - 1], 0, len_b, len_b - 1);
                    wins_b = len_b - k;
                    if wins_b > 0 {
                        dest -= wins_b;
                        cursor_temp -= wins_b;
                        work[dest..dest + wins_b].copy_from_slice(&temp[cursor_temp..cursor_temp + wins_b]);
                        len_b -= wins_b;
                        if len_b == 1 {
                            break 'merge Ending::CopyOther;
                        }
                        // Only a comparator that is not consistent gets here.
                        if len_b == 0 {
                            break 'merge Ending::Succeed;
                        }
                    }
                    work[dest - 1] = work[cursor_a - 1];
                    dest -= 1;
                    cursor_a -= 1;
                    len_a -= 1;
                    if len_a == 0 {
                        break 'merge Ending::Succeed;
                    }
                }
                min_gallop += 1;
                self.min_gallop = min_gallop;
            }
        };
        match ending {
            Ending::Succeed => work[dest - len_b..dest].copy_from_slice(&temp[..len_b]),
            Ending::CopyOther => {
                // The first item of run B belongs at the start of the merge.
                dest -= len_a;
                cursor_a -= len_a;
                work.copy_within(cursor_a..cursor_a + len_a, dest);
                work[dest - 1] = temp[cursor_temp - 1];
            }
        }
        self.work = work;
    }

    /// `GallopLeft(key, base, length, hint)` over `run`: where `key` goes in
    /// `run[base..base + len]`, before any item equal to it.
    fn gallop_left(&mut self, run: &[usize], key: usize, base: usize, len: usize, hint: usize) -> usize {
        let (mut last, mut offset) = (0usize, 1usize);
        // `run[base + low] < key <= run[base + high]`, `low` possibly -1.
        let (low, mut high) = if self.call(run[base + hint], key) < 0.0 {
            let max = len - hint;
            while offset < max && self.call(run[base + hint + offset], key) < 0.0 {
                last = offset;
                offset = (offset << 1) + 1;
            }
            ((last + hint) as isize, offset.min(max) + hint)
        } else {
            let max = hint + 1;
            while offset < max && self.call(run[base + hint - offset], key) >= 0.0 {
                last = offset;
                offset = (offset << 1) + 1;
            }
            (hint as isize - offset.min(max) as isize, hint - last)
        };
        let mut low = (low + 1) as usize;
        while low < high {
            let m = low + ((high - low) >> 1);
            if self.call(run[base + m], key) < 0.0 {
                low = m + 1;
            } else {
                high = m;
            }
        }
        high
    }

    /// `GallopRight(key, base, length, hint)` over `run`: where `key` goes in
    /// `run[base..base + len]`, after any item equal to it.
    fn gallop_right(&mut self, run: &[usize], key: usize, base: usize, len: usize, hint: usize) -> usize {
        let (mut last, mut offset) = (0usize, 1usize);
        // `run[base + low] <= key < run[base + high]`, `low` possibly -1.
        let (low, mut high) = if self.call(key, run[base + hint]) < 0.0 {
            let max = hint + 1;
            while offset < max && self.call(key, run[base + hint - offset]) < 0.0 {
                last = offset;
                offset = (offset << 1) + 1;
            }
            (hint as isize - offset.min(max) as isize, hint - last)
        } else {
            let max = len - hint;
            while offset < max && self.call(key, run[base + hint + offset]) >= 0.0 {
                last = offset;
                offset = (offset << 1) + 1;
            }
            ((last + hint) as isize, offset.min(max) + hint)
        };
        let mut low = (low + 1) as usize;
        while low < high {
            let m = low + ((high - low) >> 1);
            if self.call(key, run[base + m]) < 0.0 {
                high = m;
            } else {
                low = m + 1;
            }
        }
        high
    }
}

/// Rearranges `items` so that slot `k` holds the item that was at `order[k]`, one cycle of the
/// permutation at a time.
fn apply_permutation<T>(items: &mut [T], order: &[usize]) {
    let mut done = vec![false; items.len()];
    for start in 0..items.len() {
        let mut k = start;
        while !done[k] {
            done[k] = true;
            let from = order[k];
            if from == start {
                break;
            }
            items.swap(k, from);
            k = from;
        }
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
        // Edge case 38 (spec format.md §6, format.md §5): Node 20 gives c0 c1 c4 c3 c2.
        let mut v = vec![(30.0, "c3"), (10.0, "c1"), (f64::NAN, "c2"), (10.0, "c4"), (5.0, "c0")];
        js_sort(&mut v, |a, b| a.0 - b.0);
        assert_eq!(v.iter().map(|x| x.1).collect::<Vec<_>>(), ["c0", "c1", "c4", "c3", "c2"]);
        let mut long: Vec<f64> = (0..100).rev().map(f64::from).collect();
        js_sort(&mut long, |a, b| a - b);
        assert!(long.windows(2).all(|w| w[0] <= w[1]));
    }
}
