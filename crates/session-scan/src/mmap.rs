//! The one place that maps files into memory: the only `unsafe` code in the workspace.

use std::fs::File;

use memmap2::Mmap;

/// Maps a whole file read-only.
pub fn map(file: &File) -> std::io::Result<Mmap> {
    // SAFETY: the map is read-only and never handed out as `&mut`. The one remaining hazard is
    // another process truncating the file while it is mapped, which makes reads past the new end
    // raise SIGBUS; maps are therefore only made when asked for (`--mmap`), and then only for
    // files of `MMAP_THRESHOLD` or more.
    unsafe { Mmap::map(file) }
}
