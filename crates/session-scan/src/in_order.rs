//! Work on many files at once with results handed over in file order as soon as each is ready:
//! no batch waits for its slowest file, and memory holds a bounded window of results.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Runs `work` over `items` on as many threads as the rayon pool has (each thread with its own
/// `S`), and gives the results to `sink` in item order. At most `window` results wait to be
/// given; `sink` returning false stops the run (items not yet started are skipped). Returns
/// whether every result was given.
pub fn map_ordered<T: Sync, S: Default, R: Send>(
    items: &[T],
    window: usize,
    work: impl Fn(&mut S, &T) -> R + Sync,
    mut sink: impl FnMut(R) -> bool,
) -> bool {
    let threads = rayon::current_num_threads().clamp(1, items.len().max(1));
    let window = window.max(threads);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // How many results were given, for the workers to stay within the window.
    let given = Mutex::new(0usize);
    let moved = Condvar::new();
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, R)>(window);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, stop, given, moved, work) = (&next, &stop, &given, &moved, &work);
            scope.spawn(move || {
                // A worker that panics wakes the others, so that the run ends and the panic is
                // raised when the scope joins instead of every thread waiting forever.
                let _wake = WakeOnPanic { stop, given, moved };
                let mut state = S::default();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    {
                        let mut g = given.lock().unwrap_or_else(|e| e.into_inner());
                        while i >= *g + window && !stop.load(Ordering::Relaxed) {
                            g = moved.wait(g).unwrap_or_else(|e| e.into_inner());
                        }
                    }
                    if stop.load(Ordering::Relaxed) || tx.send((i, work(&mut state, item))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut pending = BTreeMap::new();
        let mut want = 0;
        let mut complete = true;
        for (i, r) in rx.iter() {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&want) {
                want += 1;
                if !sink(r) {
                    complete = false;
                    break;
                }
                *given.lock().unwrap_or_else(|e| e.into_inner()) = want;
                moved.notify_all();
            }
            if !complete {
                break;
            }
        }
        if !complete {
            stop.store(true, Ordering::Relaxed);
            // Wake the waiting workers, and let the sending ones fail, so that all finish.
            drop(rx);
            let _g = given.lock().unwrap_or_else(|e| e.into_inner());
            moved.notify_all();
        }
        complete
    })
}

/// On a panic, stops the run and wakes the workers waiting for the window.
struct WakeOnPanic<'a> {
    stop: &'a AtomicBool,
    given: &'a Mutex<usize>,
    moved: &'a Condvar,
}

impl Drop for WakeOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.stop.store(true, Ordering::Relaxed);
            let _g = self.given.lock().unwrap_or_else(|e| e.into_inner());
            self.moved.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_order_within_the_window() {
        let items: Vec<u64> = (0..500).collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let mut got = Vec::new();
        let ran = AtomicUsize::new(0);
        let complete = pool.install(|| {
            map_ordered(
                &items,
                8,
                |calls: &mut u64, &x| {
                    *calls += 1;
                    ran.fetch_add(1, Ordering::Relaxed);
                    // Uneven work: every seventh item is slow.
                    if x % 7 == 0 {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                    x * 2
                },
                |r| {
                    got.push(r);
                    true
                },
            )
        });
        assert!(complete);
        assert_eq!(got, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        assert_eq!(ran.load(Ordering::Relaxed), 500);
    }

    /// A panicking item ends the run with that panic (it does not leave the others waiting).
    #[test]
    fn a_panicking_item_ends_the_run() {
        let items: Vec<u64> = (0..1000).collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.install(|| {
                    map_ordered(
                        &items,
                        4,
                        |_: &mut (), &x| {
                            if x == 5 {
                                panic!("item 5");
                            }
                            std::thread::sleep(std::time::Duration::from_millis(1));
                            x
                        },
                        |_| true,
                    )
                })
            }));
            let _ = done.send(result.is_err());
        });
        let panicked = finished.recv_timeout(std::time::Duration::from_secs(20)).expect("the run ended");
        assert!(panicked);
    }

    #[test]
    fn a_sink_that_stops_ends_the_run() {
        let items: Vec<u64> = (0..10_000).collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let ran = AtomicUsize::new(0);
        let mut given = 0;
        let complete = pool.install(|| {
            map_ordered(
                &items,
                6,
                |_: &mut (), &x| {
                    ran.fetch_add(1, Ordering::Relaxed);
                    x
                },
                |_| {
                    given += 1;
                    given < 5
                },
            )
        });
        assert!(!complete);
        assert_eq!(given, 5);
        // Nothing far past the window was started.
        assert!(ran.load(Ordering::Relaxed) < 5 + 6 + 3 + 2, "{}", ran.load(Ordering::Relaxed));
    }
}
