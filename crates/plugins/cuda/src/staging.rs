//! Pinned bounce buffers for copies from the device into pageable host memory.
//!
//! `cuMemcpyDtoHAsync` into pageable memory makes the calling thread wait for the stream (the
//! driver copies through its own staging), so a construct's copy-out would block and several
//! `nowait` regions would not overlap. Small copies instead go to a pinned buffer
//! asynchronously, and the bytes reach the program's memory when the stream is found complete
//! (`synchronize` or a successful `query`), before the construct's completion is reported.

use crate::driver::call;
use cudarc::driver::sys;
use omptarget_plugin::Result;
use std::collections::HashMap;
use std::sync::Mutex;

/// Copies up to this size are staged.
pub const MAX_STAGED: usize = 1 << 20;
const MIN_CLASS: usize = 4096;
const CLASSES: usize = (MAX_STAGED / MIN_CLASS).trailing_zeros() as usize + 1;

struct Pending {
    dst: usize,
    buf: usize,
    size: usize,
    class: usize,
}

#[derive(Default)]
pub struct Staging {
    free: Mutex<Vec<Vec<usize>>>,
    pending: Mutex<HashMap<usize, Vec<Pending>>>,
}

fn class_of(size: usize) -> usize {
    (size.max(MIN_CLASS).next_power_of_two() / MIN_CLASS).trailing_zeros() as usize
}

impl Staging {
    /// A pinned buffer of at least `size` bytes (`size <= MAX_STAGED`).
    pub fn take(&self, size: usize) -> Result<(usize, usize)> {
        let class = class_of(size);
        {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            if free.len() < CLASSES {
                free.resize(CLASSES, Vec::new());
            }
            if let Some(buf) = free[class].pop() {
                return Ok((buf, class));
            }
        }
        let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: a pinned host allocation, kept in the pool for the process's life.
        call("cuMemAllocHost", || unsafe {
            sys::cuMemAllocHost_v2(&mut p, MIN_CLASS << class)
        })?;
        Ok((p as usize, class))
    }

    /// Remembers that `size` bytes in `buf` belong at `dst` once `stream` completes.
    pub fn defer(&self, stream: usize, dst: usize, buf: usize, size: usize, class: usize) {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(stream)
            .or_default()
            .push(Pending {
                dst,
                buf,
                size,
                class,
            });
    }

    /// `stream` has completed: copies its staged bytes home, in the order they were issued.
    pub fn complete(&self, stream: usize) {
        let done = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&stream);
        let Some(done) = done else { return };
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        for p in done {
            // SAFETY: the stream completed, so the buffer holds the device's bytes; the
            // destination is the host range the core asked to fill, still alive because the
            // construct has not completed yet.
            unsafe { std::ptr::copy_nonoverlapping(p.buf as *const u8, p.dst as *mut u8, p.size) };
            free[p.class].push(p.buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(class_of(1), 0);
        assert_eq!(class_of(4096), 0);
        assert_eq!(class_of(4097), 1);
        assert_eq!(class_of(MAX_STAGED), CLASSES - 1);
    }
}
