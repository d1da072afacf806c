//! The one place that maps files into memory, and survives their truncation: the only `unsafe`
//! code in the workspace.
//!
//! A mapped file that another process truncates raises SIGBUS on the next read past its new end,
//! which would end the process. While a [`Mapped`] file is alive, its address range is recorded in
//! a fixed table; a SIGBUS handler that finds the faulting address in the table maps a page of
//! zeros over the missing page, marks the map as truncated and lets the read go on. The caller
//! then asks [`Mapped::truncated`] and throws away what it computed from those bytes. A fault at
//! any other address is handed back to the handler that was there before (Rust's own), so real
//! faults still end the process as they would without us.

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use memmap2::Mmap;

/// How many maps can be alive at once (one per worker thread is the most the commands use).
const SLOTS: usize = 256;

struct Slot {
    start: AtomicUsize,
    len: AtomicUsize,
    truncated: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot { start: AtomicUsize::new(0), len: AtomicUsize::new(0), truncated: AtomicBool::new(false) };
static TABLE: [Slot; SLOTS] = [FREE; SLOTS];

/// A read-only map of a whole file, whose reads past a new end read zeros instead of killing
/// the process.
pub struct Mapped {
    map: Mmap,
    slot: usize,
    file: File,
}

impl Mapped {
    /// True when the file shrank while it was mapped: the bytes read may hold zeros that the
    /// file never had, so anything computed from them must be recomputed from a fresh read.
    pub fn truncated(&self) -> bool {
        TABLE[self.slot].truncated.load(Ordering::Acquire)
            || self.file.metadata().map_or(true, |m| m.len() < self.map.len() as u64)
    }

    /// Gives the pages of `range` back to the kernel once they have been read (whole pages only),
    /// so that a pass over a large file keeps only what it is working on resident. Later reads of
    /// the range still see the file's bytes, read in again.
    pub fn release(&self, range: std::ops::Range<usize>) {
        let page = page_size();
        let start = range.start.div_ceil(page) * page;
        let end = (range.end.min(self.map.len()) / page) * page;
        if end > start {
            #[cfg(unix)]
            // SAFETY: the map is private and read-only; MADV_DONTNEED only drops its page table
            // entries for the range, which the kernel fills again from the file on the next read.
            // No reference to the bytes is invalidated: the memory stays mapped.
            let _ = unsafe { self.map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start) };
        }
    }
}

fn page_size() -> usize {
    #[cfg(unix)]
    {
        handler::page()
    }
    #[cfg(not(unix))]
    {
        4096
    }
}

impl std::ops::Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        let slot = &TABLE[self.slot];
        slot.len.store(0, Ordering::Release);
        slot.truncated.store(false, Ordering::Release);
        slot.start.store(0, Ordering::Release);
    }
}

/// Maps a whole, non-empty file read-only. Fails when the file is empty or all slots are taken,
/// in which case the caller reads the file instead.
pub fn map(file: &File) -> std::io::Result<Mapped> {
    install_handler()?;
    let file = file.try_clone()?;
    // SAFETY: the map is read-only and never handed out as `&mut`. The remaining hazard, a
    // truncation by another process, is caught by the SIGBUS handler below for as long as the
    // map is registered, which is its whole life: `Mapped` registers before handing out bytes
    // and unregisters in `drop`, before `Mmap`'s own drop unmaps it.
    let map = unsafe { Mmap::map(&file)? };
    if map.is_empty() {
        return Err(std::io::Error::other("empty file"));
    }
    let start = map.as_ptr() as usize;
    for (i, slot) in TABLE.iter().enumerate() {
        if slot.start.compare_exchange(0, start, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            slot.truncated.store(false, Ordering::Release);
            slot.len.store(map.len(), Ordering::Release);
            return Ok(Mapped { map, slot: i, file });
        }
    }
    Err(std::io::Error::other("too many files mapped at once"))
}

#[cfg(unix)]
mod handler {
    use super::{Ordering, TABLE};
    use std::sync::OnceLock;

    static PAGE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(4096);
    /// The SIGBUS action that was in place before ours.
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

    pub(super) fn page() -> usize {
        PAGE.load(Ordering::Relaxed)
    }

    pub(super) fn install() -> std::io::Result<()> {
        static INSTALLED: OnceLock<Result<(), i32>> = OnceLock::new();
        let result = INSTALLED.get_or_init(|| {
            // SAFETY: `sysconf` has no preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            if page > 0 {
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            // SAFETY: both structs are zeroed plain data, then filled in as sigaction(2) asks;
            // the handler only does what is safe in a signal handler (atomics, mmap, sigaction).
            unsafe {
                let mut previous: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
                    return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
                }
                let _ = PREVIOUS.set(previous);
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_sigbus as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                if libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) != 0 {
                    return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
                }
            }
            Ok(())
        });
        (*result).map_err(std::io::Error::from_raw_os_error)
    }

    extern "C" fn on_sigbus(_signal: libc::c_int, info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid `siginfo_t` to an SA_SIGINFO handler.
        let address = unsafe { (*info).si_addr() } as usize;
        for slot in &TABLE {
            let start = slot.start.load(Ordering::Acquire);
            let len = slot.len.load(Ordering::Acquire);
            if start != 0 && address >= start && address < start + len {
                let page = address & !(PAGE.load(Ordering::Relaxed) - 1);
                // SAFETY: the page lies inside a live read-only map that this module owns (the
                // slot is registered); replacing it with zeros changes only what that map reads.
                let replaced = unsafe {
                    libc::mmap(
                        page as *mut libc::c_void,
                        PAGE.load(Ordering::Relaxed),
                        libc::PROT_READ,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                        -1,
                        0,
                    )
                };
                if replaced != libc::MAP_FAILED {
                    slot.truncated.store(true, Ordering::Release);
                    return;
                }
            }
        }
        // Not ours: put the previous action back and return, so the fault happens again and is
        // handled as if we had never been here.
        if let Some(previous) = PREVIOUS.get() {
            // SAFETY: restores the action that `install` read from the kernel.
            unsafe { libc::sigaction(libc::SIGBUS, previous, std::ptr::null_mut()) };
        }
    }
}

#[cfg(unix)]
fn install_handler() -> std::io::Result<()> {
    handler::install()
}

#[cfg(not(unix))]
fn install_handler() -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_truncated_while_mapped_reads_zeros_and_says_so() {
        let dir = std::env::temp_dir().join(format!("session-scan-mmap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("shrinks.jsonl");
        let mut f = File::create(&path).unwrap();
        let content: Vec<u8> = (0..64 * 4096).map(|i| b'a' + (i % 26) as u8).collect();
        f.write_all(&content).unwrap();
        drop(f);
        let file = File::open(&path).unwrap();
        let mapped = map(&file).unwrap();
        assert!(!mapped.truncated());
        assert_eq!(&mapped[..4096], &content[..4096]);
        // Another writer cuts the file to one page: every later page would raise SIGBUS.
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(4096).unwrap();
        let sum: u64 = mapped.iter().map(|&b| u64::from(b)).sum();
        let expected: u64 = content[..4096].iter().map(|&b| u64::from(b)).sum();
        assert_eq!(sum, expected, "pages past the new end read as zeros");
        assert!(mapped.truncated());
        drop(mapped);
        // The slot is free again and a new map of the shorter file is whole.
        let again = map(&File::open(&path).unwrap()).unwrap();
        assert_eq!(again.len(), 4096);
        assert!(!again.truncated());
        drop(again);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn released_pages_read_the_file_again() {
        let dir = std::env::temp_dir().join(format!("session-scan-release-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("pages.jsonl");
        let content: Vec<u8> = (0..16 * 4096u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &content).unwrap();
        let mapped = map(&File::open(&path).unwrap()).unwrap();
        assert_eq!(&mapped[..], &content[..]);
        mapped.release(100..10 * 4096 + 7);
        mapped.release(0..mapped.len());
        assert_eq!(&mapped[..], &content[..]);
        assert!(!mapped.truncated());
        drop(mapped);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
