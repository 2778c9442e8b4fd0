//! The small-copy kernel: a batch of at least [`KERNEL_MIN`] small copies, none over
//! [`KERNEL_MAX`] bytes, is made by one launch of a kernel that reads and writes the pinned
//! staging buffers directly (they are device-addressable under unified addressing) instead of
//! one `cuMemcpyBatchAsync`. Measured on the H200 with a raw-driver probe, 16 copies of 1 KiB
//! each way: the batch call costs ~21.5 µs of host time per call (46.6 µs per region), the
//! kernel 24.9 µs per region.
//!
//! The kernel is hand-written PTX (`copy_kernel.ptx`, JIT-compiled by the driver) loaded once
//! per device, lazily, by the first thread that queues a small copy, before it takes any lock
//! of ours; copies queued meanwhile take the batch API. Its descriptors travel in the launch's
//! parameters (a table of [`ENTRIES`] `{src, dst, bytes}`), so a launch needs no memory of its
//! own; longer batches take several launches, in order. A failed load or launch turns the
//! kernel off for the device's life (the batch API takes over; never an error of a copy).
//! `OMPTARGET_RS_CUDA_COPY_KERNEL=0` never uses it.

use crate::driver::{CUcontext, CUdeviceptr, CUmodule, CUstream, call, make_current};
use cudarc::driver::sys;
use omptarget_plugin::Result;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// Batches of fewer copies take the batch API (one call for many copies is cheap already).
pub const KERNEL_MIN: usize = 4;
/// Batches with a copy over this many bytes take the batch API: reading mapped host memory
/// from a kernel waits for the bus, which DMA does better for large transfers.
pub const KERNEL_MAX: usize = 64 << 10;
/// Copies per launch: the kernel's parameter is a table of this many entries.
pub const ENTRIES: usize = 32;
/// Threads per block (one block per copy).
const THREADS: u32 = 256;
/// The kernel's name in [`PTX`].
const ENTRY: &str = "omptarget_rs_copy";
/// The kernel, NUL-terminated for `cuModuleLoadData`.
pub(super) const PTX: &str = concat!(include_str!("copy_kernel.ptx"), "\0");

/// One launch's parameter: `{src, dst, bytes}` per copy, the kernel's `.b8 t[768]`.
pub(super) type Table = [u64; ENTRIES * 3];

/// States of [`CopyKernel`]: loading starts once (from `UNLOADED`), and a kernel that failed
/// once is never tried again.
const UNLOADED: u8 = 0;
const LOADING: u8 = 1;
const READY: u8 = 2;
const OFF: u8 = 3;

pub(super) struct CopyKernel {
    state: AtomicU8,
    /// The kernel's `CUfunction`, set before the state becomes `READY`.
    func: AtomicUsize,
}

impl CopyKernel {
    /// `on`: batching and `OMPTARGET_RS_CUDA_COPY_KERNEL` are both on.
    pub(super) fn new(on: bool) -> Self {
        Self {
            state: AtomicU8::new(if on { UNLOADED } else { OFF }),
            func: AtomicUsize::new(0),
        }
    }

    /// Loads the kernel in `ctx` unless that was done or tried already (one atomic load
    /// then). Call with no lock of ours held: the driver JIT-compiles the PTX.
    #[inline]
    pub(super) fn prepare(&self, ctx: CUcontext) {
        if self.state.load(Ordering::Acquire) != UNLOADED {
            return;
        }
        self.load_once(ctx);
    }

    #[cold]
    fn load_once(&self, ctx: CUcontext) {
        if self
            .state
            .compare_exchange(UNLOADED, LOADING, Ordering::Acquire, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        match load(ctx) {
            Ok(func) => {
                self.func.store(func as usize, Ordering::Relaxed);
                self.state.store(READY, Ordering::Release);
            }
            Err(_) => self.state.store(OFF, Ordering::Release),
        }
    }

    /// The kernel, where it is loaded and `sizes` (a batch) is worth a launch.
    fn chosen(&self, sizes: &[usize]) -> Option<sys::CUfunction> {
        (self.state.load(Ordering::Acquire) == READY && worth_a_launch(sizes))
            .then(|| self.func.load(Ordering::Relaxed) as sys::CUfunction)
    }

    /// Queues the copies of a batch on `s` with the kernel when [`CopyKernel::chosen`] says
    /// so, [`ENTRIES`] per launch, in order. Returns how many copies were queued (0: the
    /// kernel is not used for this batch; fewer than all: a launch failed and the kernel is
    /// off from now on, the rest are the caller's).
    pub(super) fn issue(
        &self,
        srcs: &[CUdeviceptr],
        dsts: &[CUdeviceptr],
        sizes: &[usize],
        s: CUstream,
    ) -> usize {
        let Some(func) = self.chosen(sizes) else {
            return 0;
        };
        let mut done = 0;
        while done < sizes.len() {
            let mut table: Table = [0; ENTRIES * 3];
            let n = pack(&mut table, &srcs[done..], &dsts[done..], &sizes[done..]);
            let mut params = [(&raw mut table).cast::<std::ffi::c_void>()];
            // SAFETY: a function of our module, loaded in this stream's context; its one
            // parameter is the 768-byte table, which the driver copies before returning.
            // Every entry's ranges are a live device range and a pinned buffer of ours.
            let r = call("cuLaunchKernel(copy kernel)", || unsafe {
                sys::cuLaunchKernel(
                    func,
                    n as u32,
                    1,
                    1,
                    THREADS,
                    1,
                    1,
                    0,
                    s,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            });
            if r.is_err() {
                self.state.store(OFF, Ordering::Release);
                break;
            }
            done += n;
        }
        done
    }
}

/// Whether a batch of copies of these sizes goes to the kernel: at least [`KERNEL_MIN`]
/// copies, none over [`KERNEL_MAX`] bytes.
pub(super) fn worth_a_launch(sizes: &[usize]) -> bool {
    sizes.len() >= KERNEL_MIN && sizes.iter().all(|&n| n <= KERNEL_MAX)
}

/// Fills `table` with the first (up to) [`ENTRIES`] copies, in order, and returns how many.
pub(super) fn pack(
    table: &mut Table,
    srcs: &[CUdeviceptr],
    dsts: &[CUdeviceptr],
    sizes: &[usize],
) -> usize {
    let n = sizes.len().min(ENTRIES);
    for (i, e) in table.chunks_exact_mut(3).take(n).enumerate() {
        e.copy_from_slice(&[srcs[i], dsts[i], sizes[i] as u64]);
    }
    n
}

/// Loads the module in `ctx` and finds the kernel (the module stays for the process's life).
fn load(ctx: CUcontext) -> Result<sys::CUfunction> {
    make_current(ctx)?;
    let mut module: CUmodule = std::ptr::null_mut();
    // SAFETY: NUL-terminated PTX text of ours, loaded into the current context.
    call("cuModuleLoadData(copy kernel)", || unsafe {
        sys::cuModuleLoadData(&mut module, PTX.as_ptr().cast())
    })?;
    let mut func: sys::CUfunction = std::ptr::null_mut();
    let name = std::ffi::CString::new(ENTRY).expect("no NUL in the name");
    // SAFETY: looks a kernel up in the module just loaded, by a NUL-terminated name.
    call("cuModuleGetFunction(copy kernel)", || unsafe {
        sys::cuModuleGetFunction(&mut func, module, name.as_ptr())
    })?;
    Ok(func)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_hold_32_copies_in_order() {
        let srcs: Vec<u64> = (0..70).map(|i| 0x1000 + i).collect();
        let dsts: Vec<u64> = (0..70).map(|i| 0x9000 + i).collect();
        let sizes: Vec<usize> = (0..70).map(|i| 13 + i as usize).collect();
        let mut seen = Vec::new();
        let mut done = 0;
        let mut launches = 0;
        while done < sizes.len() {
            let mut t: Table = [0; ENTRIES * 3];
            let n = pack(&mut t, &srcs[done..], &dsts[done..], &sizes[done..]);
            assert_eq!(n, (sizes.len() - done).min(ENTRIES));
            for e in t.chunks_exact(3).take(n) {
                seen.push((e[0], e[1], e[2] as usize));
            }
            // Entries past the launch's grid stay zero.
            assert!(t[n * 3..].iter().all(|&w| w == 0));
            done += n;
            launches += 1;
        }
        assert_eq!(launches, 3, "32 + 32 + 6");
        let expected: Vec<_> = (0..70).map(|i| (srcs[i], dsts[i], sizes[i])).collect();
        assert_eq!(seen, expected);
        // The table is the kernel's 768-byte parameter.
        assert_eq!(std::mem::size_of::<Table>(), 768);
        assert!(PTX.contains(&format!("t[{}]", std::mem::size_of::<Table>())));
    }

    #[test]
    fn the_kernel_takes_batches_of_enough_small_copies() {
        assert!(!worth_a_launch(&[]));
        assert!(!worth_a_launch(&[1024; KERNEL_MIN - 1]));
        assert!(worth_a_launch(&[1024; KERNEL_MIN]));
        assert!(worth_a_launch(&vec![KERNEL_MAX; 100]));
        let mut sizes = vec![8; 16];
        sizes[7] = KERNEL_MAX + 1;
        assert!(!worth_a_launch(&sizes));
    }

    /// Off (the switch, or batching off), unloaded, or failed: no launch, no driver call.
    #[test]
    fn no_kernel_unless_loaded_and_on() {
        let sizes = [1024; 16];
        let ptrs = [0u64; 16];
        let s = std::ptr::null_mut();
        let off = CopyKernel::new(false);
        assert!(off.chosen(&sizes).is_none());
        assert_eq!(off.issue(&ptrs, &ptrs, &sizes, s), 0);
        // `prepare` does nothing when off (it would call the driver otherwise).
        off.prepare(std::ptr::null_mut());
        assert_eq!(off.state.load(Ordering::Relaxed), OFF);
        let unloaded = CopyKernel::new(true);
        assert!(unloaded.chosen(&sizes).is_none());
        assert_eq!(unloaded.issue(&ptrs, &ptrs, &sizes, s), 0);
        // Loaded (a stand-in handle): chosen by the rule.
        let ready = CopyKernel::new(true);
        ready.func.store(0x1234, Ordering::Relaxed);
        ready.state.store(READY, Ordering::Release);
        assert_eq!(ready.chosen(&sizes), Some(0x1234 as sys::CUfunction));
        assert!(ready.chosen(&sizes[..KERNEL_MIN - 1]).is_none());
        assert!(ready.chosen(&[KERNEL_MAX + 1; 8]).is_none());
    }

    /// What can be checked of the PTX without a GPU; ptxas validates it where it is found.
    #[test]
    fn the_ptx_is_well_formed() {
        assert!(PTX.ends_with('\0'));
        assert_eq!(PTX.matches('\0').count(), 1, "one NUL, at the end");
        assert!(PTX.contains(".version 7.8") && PTX.contains(".address_size 64"));
        assert!(PTX.contains(&format!(".visible .entry {ENTRY}(")));
        let mut depth = 0i32;
        for c in PTX.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            assert!(depth >= 0, "a closing brace before its opening one");
        }
        assert_eq!(depth, 0, "balanced braces");
        let (brackets, closing) = (PTX.matches('[').count(), PTX.matches(']').count());
        assert_eq!(brackets, closing, "balanced brackets");
    }

    /// `ptxas` from `PATH`, `$CUDA_HOME/bin`, `/usr/local/cuda/bin` or the CUDA toolchains
    /// the repository's tools download (`~/.cache/omptarget-cuda*/bin`).
    fn find_ptxas() -> Option<std::path::PathBuf> {
        let mut dirs: Vec<std::path::PathBuf> = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        if let Some(h) = std::env::var_os("CUDA_HOME") {
            dirs.push(std::path::Path::new(&h).join("bin"));
        }
        dirs.push("/usr/local/cuda/bin".into());
        if let Some(home) = std::env::var_os("HOME")
            && let Ok(entries) = std::fs::read_dir(std::path::Path::new(&home).join(".cache"))
        {
            let mut cached: Vec<_> = entries
                .flatten()
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("omptarget-cuda")
                })
                .map(|e| e.path().join("bin"))
                .collect();
            cached.sort();
            dirs.extend(cached);
        }
        dirs.into_iter()
            .map(|d| d.join("ptxas"))
            .find(|p| p.is_file())
    }

    #[test]
    fn ptxas_accepts_the_ptx() {
        let Some(ptxas) = find_ptxas() else {
            eprintln!(
                "skipped: no ptxas on this machine (PATH, CUDA_HOME, ~/.cache/omptarget-cuda*)"
            );
            return;
        };
        let dir = std::env::temp_dir().join(format!("omptarget-copyk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("copy_kernel.ptx");
        std::fs::write(&file, PTX.trim_end_matches('\0')).expect("write");
        let out = std::process::Command::new(&ptxas)
            .arg("-arch=sm_90")
            .arg(&file)
            .arg("-o")
            .arg(dir.join("copy_kernel.cubin"))
            .output()
            .expect("ptxas runs");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            out.status.success(),
            "{} -arch=sm_90 rejects the PTX:\n{}",
            ptxas.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("validated with {} -arch=sm_90", ptxas.display());
    }
}
