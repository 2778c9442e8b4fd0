//! Experiments on the raw CUDA driver API that settle questions about the hardware and tools,
//! without any OpenMP runtime in between (`omptarget-suite probe NAME`):
//!
//! - `batch-copy [--plain]`: 16 small host-to-device copies into fresh stream-ordered
//!   allocations, in one `cuMemcpyBatchAsync` (or one `cuMemcpyHtoDAsync` each with
//!   `--plain`), then a kernel that reads and writes every copied word. Run under
//!   `compute-sanitizer --tool initcheck`: a report for the batched form only means the tool
//!   does not see what the batch writes, and a user's sanitizer run must not report one.
//! - `sanitizer`: whether the runtime's compute-sanitizer detection fires in this process.
//! - `small-copies [ITERS] [REPS]`: the 16 × 1 KiB region's copies done seven ways (see
//!   `small_copies`), per-region times: what the hardware allows for many small copies.
//! - `gated-copies [ITERS] [REPS] [WORK_US]` (gated.rs): the same region with host work around
//!   its launches, its copy kernel in launched in the region, queued a region ahead behind a
//!   flag in pinned memory, or launched with the kernel as one CUDA graph: what taking launches
//!   off the critical path would save.
//! - `va [HINT...]`: where the driver puts reservations and allocations in a fresh process and
//!   whether it honours a requested address (a replay needs its recording's addresses back).
//! - `param-buffer`: a kernel launched with its parameters in one buffer, of the kernel's size
//!   and padded, as kernel languages (`llvmLaunchKernel`) launch.
//! - `host-copies [REPS]`: host copy bandwidth between pageable and pinned memory on 1–16
//!   threads, alone and beside device DMA: what staging a pageable copy can reach; and what
//!   pinning the pageable memory in place for one copy costs instead (`cuMemHostRegister`).
//! - `pool-trim GIB`: how long the default memory pool takes to give `GIB` GiB back to the
//!   device (`cuMemPoolTrimTo`), and what `cuMemGetInfo` shows before and after: what another
//!   process sharing the GPU sees of memory we give back.

use crate::bench::median;
use crate::floor::{Gpu, alloc, ck, free, h2d, pinned, stream_new, sync};
use cudarc::driver::sys::{self, CUdeviceptr};
use std::time::Instant;

const WORDS: usize = 16;

pub fn batch_copy(plain: bool) -> Result<(), String> {
    let gpu = Gpu::new()?;
    let s = stream_new()?;
    let host = pinned(WORDS * 8)?;
    // SAFETY: `host` is a pinned buffer of WORDS doubles.
    let words = unsafe { std::slice::from_raw_parts_mut(host as *mut f64, WORDS) };
    for (i, w) in words.iter_mut().enumerate() {
        *w = i as f64;
    }
    let dsts: Vec<CUdeviceptr> = (0..WORDS)
        .map(|_| alloc(256, s))
        .collect::<Result<_, _>>()?;
    if plain {
        for (i, &d) in dsts.iter().enumerate() {
            crate::floor::h2d(d, host + 8 * i, 8, s)?;
        }
    } else {
        batch(&dsts, host, 8, true, s)?;
    }
    let mut args: Vec<usize> = dsts.iter().map(|&d| d as usize).collect();
    gpu.launch(gpu.touch16, 1, 1, &mut args, s)?;
    for (i, w) in words.iter_mut().enumerate() {
        *w = -1.0;
        crate::floor::d2h(host + 8 * i, dsts[i], 8, s)?;
    }
    for d in dsts {
        free(d, s)?;
    }
    sync(s)?;
    let ok = words.iter().enumerate().all(|(i, &w)| w == i as f64 + 1.0);
    println!(
        "probe=batch-copy mode={} words={WORDS} result={}",
        if plain { "plain" } else { "batch" },
        if ok { "ok" } else { "WRONG" }
    );
    if ok {
        Ok(())
    } else {
        Err("wrong values".into())
    }
}

fn mem_info() -> Result<(usize, usize), String> {
    let (mut free_b, mut total) = (0usize, 0usize);
    // SAFETY: writes two locals.
    ck("cuMemGetInfo", unsafe {
        sys::cuMemGetInfo_v2(&mut free_b, &mut total)
    })?;
    Ok((free_b, total))
}

fn pool_attr(pool: sys::CUmemoryPool, a: sys::CUmemPool_attribute) -> Result<u64, String> {
    let mut v = 0u64;
    // SAFETY: the attributes read here are 64-bit counters.
    ck("cuMemPoolGetAttribute", unsafe {
        sys::cuMemPoolGetAttribute(pool, a, (&raw mut v).cast())
    })?;
    Ok(v)
}

pub fn pool_trim(gib: usize) -> Result<(), String> {
    let _gpu = Gpu::new()?;
    let s = stream_new()?;
    let mut pool = std::ptr::null_mut();
    // SAFETY: device 0's default pool (Gpu::new made its context current).
    ck("cuDeviceGetDefaultMemPool", unsafe {
        sys::cuDeviceGetDefaultMemPool(&mut pool, 0)
    })?;
    use sys::CUmemPool_attribute as P;
    let show = |what: &str| -> Result<(), String> {
        let (f, t) = mem_info()?;
        println!(
            "probe=pool-trim at={what} device_free_gib={:.2} device_total_gib={:.2} pool_reserved_gib={:.2} pool_used_gib={:.2}",
            f as f64 / (1u64 << 30) as f64,
            t as f64 / (1u64 << 30) as f64,
            pool_attr(pool, P::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)? as f64 / (1u64 << 30) as f64,
            pool_attr(pool, P::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)? as f64 / (1u64 << 30) as f64,
        );
        Ok(())
    };
    show("start")?;
    let t0 = Instant::now();
    let p = alloc(gib << 30, s)?;
    sync(s)?;
    let t_alloc = t0.elapsed();
    show("allocated")?;
    free(p, s)?;
    sync(s)?;
    show("freed")?;
    let t1 = Instant::now();
    // SAFETY: trims a live pool to nothing.
    ck("cuMemPoolTrimTo", unsafe { sys::cuMemPoolTrimTo(pool, 0) })?;
    let t_trim = t1.elapsed();
    show("trimmed")?;
    let t2 = Instant::now();
    let p = alloc(gib << 30, s)?;
    sync(s)?;
    let t_realloc = t2.elapsed();
    free(p, s)?;
    sync(s)?;
    let t3 = Instant::now();
    let (f, _) = mem_info()?;
    let t_info = t3.elapsed();
    println!(
        "probe=pool-trim gib={gib} alloc_ms={:.3} trim_ms={:.3} realloc_after_trim_ms={:.3} mem_get_info_us={:.2} free_after_gib={:.2}",
        t_alloc.as_secs_f64() * 1e3,
        t_trim.as_secs_f64() * 1e3,
        t_realloc.as_secs_f64() * 1e3,
        t_info.as_secs_f64() * 1e6,
        f as f64 / (1u64 << 30) as f64
    );
    // A warm pool: the same allocation again, then the trim of a pool that holds it freed.
    let t4 = Instant::now();
    let p = alloc(gib << 30, s)?;
    sync(s)?;
    let t_warm = t4.elapsed();
    free(p, s)?;
    sync(s)?;
    println!(
        "probe=pool-trim gib={gib} warm_alloc_ms={:.3}",
        t_warm.as_secs_f64() * 1e3
    );
    Ok(())
}

/// Whether the runtime would see compute-sanitizer (and so turn batching off): the driver is
/// initialised first, as the plugin does, then the loaded libraries are checked.
pub fn sanitizer() -> Result<(), String> {
    let _gpu = Gpu::new()?;
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mut libs: Vec<&str> = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|p| {
            let p = p.to_ascii_lowercase();
            p.contains("sanit") || p.contains("inject") || p.contains("cupti")
        })
        .collect();
    libs.sort_unstable();
    libs.dedup();
    println!(
        "probe=sanitizer attached={} libs={}",
        omptarget_plugin_cuda::compute_sanitizer_attached(),
        if libs.is_empty() {
            "-".to_string()
        } else {
            libs.join(",")
        }
    );
    Ok(())
}

/// Copies the program's arrays into the pinned `spans` (their `in` ends, `to_pinned`) or back
/// from them (their `out` ends), in order.
pub(crate) fn shuttle(arrays: &mut [f64], spans: &[(usize, usize, usize)], to_pinned: bool) {
    let mut at = arrays.as_mut_ptr().cast::<u8>();
    for &(pin, pout, len) in spans {
        // SAFETY: the spans are live pinned ranges of `len` bytes and together as long as
        // `arrays`, which they do not overlap.
        unsafe {
            if to_pinned {
                std::ptr::copy_nonoverlapping(at, pin as *mut u8, len);
            } else {
                std::ptr::copy_nonoverlapping(pout as *const u8, at, len);
            }
            at = at.add(len);
        }
    }
}

/// `small-copies`: the `16 arrays × 1 KiB tofrom` region's device work, done seven
/// ways from a pinned staging buffer the program's arrays are first copied into, to find what
/// the hardware allows for many small copies per region: `none` (the kernel and the
/// synchronisation only), `plain` (one `cuMemcpy*Async` per array and direction), `batch`
/// (one `cuMemcpyBatchAsync` per direction, as the runtime does), `staged-kernel` (one copy of
/// the whole staging buffer with a table of the pieces, then a scatter kernel; a gather kernel
/// and one copy back), `zero-copy` (scatter and gather kernels that read and write the
/// mapped pinned buffer directly) and `zero-copy-scattered` (the same with each array in a
/// pinned page of its own each way, as the runtime's pool gives small copies), and
/// `contiguous` (the blocks adjacent in one device allocation, laid out as the staging
/// buffer: one `cuMemcpyHtoDAsync` and one `cuMemcpyDtoHAsync` of all 16 KiB, no copy
/// kernel). Each mode checks its result.
pub fn small_copies(iters: usize, reps: usize) -> Result<(), String> {
    const K: usize = 16;
    const BYTES: usize = 1024;
    const TABLE: usize = K * 24;
    let gpu = Gpu::new()?;
    let s = stream_new()?;
    // Staging layout: table in, table out, then the K arrays.
    let data_off = 2 * TABLE;
    let staging_len = data_off + K * BYTES;
    let host = pinned(staging_len)?;
    let dev_staging = alloc(staging_len, s)?;
    let separate: Vec<CUdeviceptr> = (0..K).map(|_| alloc(BYTES, s)).collect::<Result<_, _>>()?;
    // `contiguous`: the K blocks side by side in one allocation.
    let slab = alloc(K * BYTES, s)?;
    let adjacent: Vec<CUdeviceptr> = (0..K).map(|k| slab + (k * BYTES) as u64).collect();
    sync(s)?;
    // Where the pool put K blocks allocated one after another: how many follow the one
    // before at once (what a single copy of the lot would need).
    let follows = separate
        .windows(2)
        .filter(|w| w[1] == w[0] + BYTES as u64)
        .count();
    println!(
        "probe=small-copies separate-blocks={K} adjacent-pairs={follows} first={:#x} last={:#x}",
        separate[0],
        separate[K - 1]
    );
    // The program's arrays (pageable).
    let mut arrays = vec![0f64; K * BYTES / 8];
    // SAFETY: `host` is a live pinned buffer of `staging_len` bytes; each table is K triples.
    let table = |at: usize, k: usize, v: [u64; 3]| unsafe {
        std::ptr::copy_nonoverlapping(v.as_ptr(), (host + at + k * 24) as *mut u64, 3);
    };
    let words = (BYTES / 8) as u64;
    // `zero-copy-scattered`: as `zero-copy`, but each array in a pinned page of its own each
    // way (as the runtime's pool gives a small copy a 4 KiB buffer of its own), 2K pages.
    let pages: Vec<usize> = (0..2 * K).map(|_| pinned(4096)).collect::<Result<_, _>>()?;
    for mode in [
        "none",
        "plain",
        "batch",
        "staged-kernel",
        "zero-copy",
        "zero-copy-scattered",
        "contiguous",
    ] {
        let scattered = mode == "zero-copy-scattered";
        let blocks = if mode == "contiguous" {
            &adjacent
        } else {
            &separate
        };
        // The tables: through the device staging area, or the pinned buffer itself.
        let base = if mode.starts_with("zero-copy") {
            host as u64
        } else {
            dev_staging
        };
        for (k, &b) in blocks.iter().enumerate() {
            let piece = base + (data_off + k * BYTES) as u64;
            let (pin, pout) = if scattered {
                (pages[k] as u64, pages[K + k] as u64)
            } else {
                (piece, piece)
            };
            table(0, k, [pin, b, words]);
            table(TABLE, k, [b, pout, words]);
        }
        for a in arrays.iter_mut() {
            *a = 0.0;
        }
        // The pinned ranges the arrays travel through, in order, each way (in, out, bytes).
        let spans: Vec<(usize, usize, usize)> = if scattered {
            (0..K).map(|k| (pages[k], pages[K + k], BYTES)).collect()
        } else {
            vec![(host + data_off, host + data_off, K * BYTES)]
        };
        let region = |n: usize, arrays: &mut [f64]| -> Result<(), String> {
            for _ in 0..n {
                shuttle(arrays, &spans, true);
                let mut ptrs: Vec<usize> = blocks.iter().map(|&b| b as usize).collect();
                match mode {
                    "plain" => {
                        for (k, &b) in blocks.iter().enumerate() {
                            crate::floor::h2d(b, host + data_off + k * BYTES, BYTES, s)?;
                        }
                    }
                    "batch" => batch(blocks, host + data_off, BYTES, true, s)?,
                    "contiguous" => crate::floor::h2d(slab, host + data_off, K * BYTES, s)?,
                    "staged-kernel" => {
                        crate::floor::h2d(dev_staging, host, staging_len, s)?;
                        gpu.launch(gpu.copyk, K as u32, 128, &mut [dev_staging as usize], s)?;
                    }
                    "zero-copy" | "zero-copy-scattered" => {
                        gpu.launch(gpu.copyk, K as u32, 128, &mut [host], s)?
                    }
                    _ => {}
                }
                gpu.launch(gpu.touch16, 1, 1, &mut ptrs, s)?;
                match mode {
                    "plain" => {
                        for (k, &b) in blocks.iter().enumerate() {
                            crate::floor::d2h(host + data_off + k * BYTES, b, BYTES, s)?;
                        }
                    }
                    "batch" => batch(blocks, host + data_off, BYTES, false, s)?,
                    "contiguous" => crate::floor::d2h(host + data_off, slab, K * BYTES, s)?,
                    "staged-kernel" => {
                        let t = dev_staging as usize + TABLE;
                        gpu.launch(gpu.copyk, K as u32, 128, &mut [t], s)?;
                        crate::floor::d2h(
                            host + data_off,
                            dev_staging + data_off as u64,
                            K * BYTES,
                            s,
                        )?;
                    }
                    "zero-copy" | "zero-copy-scattered" => {
                        gpu.launch(gpu.copyk, K as u32, 128, &mut [host + TABLE], s)?
                    }
                    _ => {}
                }
                sync(s)?;
                shuttle(arrays, &spans, false);
            }
            Ok(())
        };
        let (times, done) = timed_regions(iters, reps, |n| region(n, &mut arrays))?;
        // Every mode but `none` moves each array's first word through touch16's increment.
        let want = if mode == "none" { 0.0 } else { done as f64 };
        let ok = (0..K).all(|k| arrays[k * BYTES / 8] == want);
        report_times(
            &format!("small-copies mode={mode} arrays={K} bytes={BYTES}"),
            &times,
            ok,
        )?;
    }
    Ok(())
}

/// Runs `region(n)` (n regions) 10 times for warm-up, then `reps` times `iters`: the times per
/// region in µs, sorted, and how many regions ran in all.
pub(crate) fn timed_regions(
    iters: usize,
    reps: usize,
    mut region: impl FnMut(usize) -> Result<(), String>,
) -> Result<(Vec<f64>, usize), String> {
    let mut times = Vec::with_capacity(reps);
    region(10)?;
    let mut done = 10usize;
    for _ in 0..reps {
        let t = Instant::now();
        region(iters)?;
        times.push(t.elapsed().as_secs_f64() * 1e6 / iters as f64);
        done += iters;
    }
    times.sort_by(f64::total_cmp);
    Ok((times, done))
}

/// Prints a probe's line for `what` (the probe and its settings): the median and the
/// fastest of the sorted per-region `times`, and whether its result was right (`ok`); an
/// error when it was not.
pub(crate) fn report_times(what: &str, times: &[f64], ok: bool) -> Result<(), String> {
    println!(
        "probe={what} median_us={:.2} min_us={:.2} result={}",
        times[times.len() / 2],
        times[0],
        if ok { "ok" } else { "WRONG" }
    );
    if ok {
        Ok(())
    } else {
        Err(format!("{what}: wrong values"))
    }
}

/// One `cuMemcpyBatchAsync` between `blocks` and consecutive pieces of `bytes` at `host`.
fn batch(
    blocks: &[CUdeviceptr],
    host: usize,
    bytes: usize,
    to_device: bool,
    s: sys::CUstream,
) -> Result<(), String> {
    let n = blocks.len();
    let pieces = (0..n).map(|k| (host + k * bytes) as CUdeviceptr);
    let (mut dsts, mut srcs): (Vec<CUdeviceptr>, Vec<CUdeviceptr>) = if to_device {
        (blocks.to_vec(), pieces.collect())
    } else {
        (pieces.collect(), blocks.to_vec())
    };
    let mut sizes = vec![bytes; n];
    let loc = |device: bool| sys::CUmemLocation {
        type_: if device {
            sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE
        } else {
            sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST
        },
        id: 0,
    };
    let mut attrs = sys::CUmemcpyAttributes {
        srcAccessOrder: sys::CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
        srcLocHint: loc(!to_device),
        dstLocHint: loc(to_device),
        flags: 0,
    };
    let (mut first, mut failed) = (0usize, 0usize);
    // SAFETY: n copies between live pinned memory and live device allocations, one attribute
    // set for all of them.
    ck("cuMemcpyBatchAsync", unsafe {
        sys::cuMemcpyBatchAsync(
            dsts.as_mut_ptr(),
            srcs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            n,
            &mut attrs,
            &mut first,
            1,
            &mut failed,
            s,
        )
    })
}

/// Reserves `size` bytes of device address space at `hint` (anywhere when 0) and gives it
/// back: the address the driver chose and the result code.
fn reserve_at(size: usize, hint: usize) -> (usize, String) {
    let mut p: CUdeviceptr = 0;
    // SAFETY: reserves address space only; freed below.
    let r = unsafe { sys::cuMemAddressReserve(&mut p, size, 0, hint as CUdeviceptr, 0) };
    if r == sys::CUresult::CUDA_SUCCESS {
        // SAFETY: the reservation just made.
        unsafe { sys::cuMemAddressFree(p, size) };
    }
    (p as usize, format!("{r:?}"))
}

/// What occupies `[at, at + size)` in this process's host address space (UVA shares it).
fn host_maps_over(at: usize, size: usize) -> String {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let hits: Vec<String> = maps
        .lines()
        .filter(|l| {
            let Some((a, b)) = l.split_whitespace().next().and_then(|r| r.split_once('-')) else {
                return false;
            };
            let (a, b) = (
                usize::from_str_radix(a, 16).unwrap_or(0),
                usize::from_str_radix(b, 16).unwrap_or(0),
            );
            a < at.saturating_add(size) && b > at
        })
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    if hits.is_empty() {
        "-".into()
    } else {
        hits.join(" | ")
    }
}

/// `va [HINT...]`: where the driver puts address-space reservations and allocations in a fresh
/// process, and whether it honours a requested address (a replay needs it): each hint
/// (hex) with 2 MiB and with 64 GiB, the usual candidates, reservations without a hint, and
/// `cuMemAlloc` of 2 MiB and of most of the device.
pub fn va(hints: &[String]) -> Result<(), String> {
    let _gpu = Gpu::new()?;
    const MIB2: usize = 2 << 20;
    const GIB: usize = 1 << 30;
    let mut list: Vec<usize> = Vec::new();
    for h in hints {
        list.push(
            usize::from_str_radix(h.trim_start_matches("0x"), 16)
                .map_err(|e| format!("hint {h}: {e}"))?,
        );
    }
    list.extend([
        0x6000_0000_0000,
        0x1000_0000_0000,
        0x100_0000_0000,
        0x7e00_0000_0000,
    ]);
    for &h in &list {
        for size in [MIB2, 64 * GIB] {
            let (got, r) = reserve_at(size, h);
            println!(
                "probe=va reserve hint={h:#x} size_gib={:.3} got={got:#x} honoured={} result={r} host_maps={}",
                size as f64 / GIB as f64,
                got == h,
                host_maps_over(h, size)
            );
        }
    }
    for size in [MIB2, 64 * GIB, 128 * GIB] {
        let (got, r) = reserve_at(size, 0);
        println!(
            "probe=va reserve hint=none size_gib={:.3} got={got:#x} result={r}",
            size as f64 / GIB as f64
        );
    }
    let (free_b, _) = mem_info()?;
    for size in [MIB2, free_b.saturating_sub(2 * GIB) & !(GIB - 1)] {
        let mut p: CUdeviceptr = 0;
        // SAFETY: writes the allocation's address; freed at once.
        let r = unsafe { sys::cuMemAlloc_v2(&mut p, size) };
        println!(
            "probe=va cuMemAlloc size_gib={:.3} got={:#x} result={r:?}",
            size as f64 / GIB as f64,
            p as usize
        );
        if r == sys::CUresult::CUDA_SUCCESS {
            // SAFETY: the allocation just made.
            unsafe { sys::cuMemFree_v2(p) };
        }
    }
    Ok(())
}

/// `param-buffer`: a kernel launched with its parameters in one buffer
/// (`CU_LAUNCH_PARAM_BUFFER_POINTER`, as kernel languages launch through `llvmLaunchKernel`):
/// with the buffer the size of the kernel's parameters, and with it padded by 8 bytes, as clang
/// pads a parameter struct to its alignment. Shows whether the driver takes a larger buffer.
pub fn param_buffer() -> Result<(), String> {
    let gpu = Gpu::new()?;
    let s = stream_new()?;
    let dsts: Vec<CUdeviceptr> = (0..WORDS)
        .map(|_| alloc(256, s))
        .collect::<Result<_, _>>()?;
    sync(s)?;
    // SAFETY: the probe's module is loaded and its function live.
    let reported = unsafe { omptarget_plugin_cuda::param_bytes(gpu.touch16) };
    let mut buf: Vec<u64> = dsts.clone();
    buf.push(0);
    for size in [WORDS * 8, WORDS * 8 + 8] {
        let mut sz = size;
        let mut extra =
            omptarget_plugin_cuda::launch_param_buffer(buf.as_mut_ptr() as usize, &mut sz);
        // SAFETY: the buffer holds 16 device pointers (and a spare word); `extra` lives for
        // the call.
        let r = unsafe {
            sys::cuLaunchKernel(
                gpu.touch16,
                1,
                1,
                1,
                1,
                1,
                1,
                0,
                s,
                std::ptr::null_mut(),
                extra.as_mut_ptr(),
            )
        };
        let synced = sync(s).map_or_else(|e| e, |_| "ok".to_string());
        println!(
            "probe=param-buffer kernel_params={} buffer_bytes={size} launch={r:?} sync={synced}",
            reported.map_or("?".to_string(), |p| p.to_string())
        );
    }
    for d in dsts {
        free(d, s)?;
    }
    sync(s)
}

/// Host copy bandwidth between pageable and pinned memory (what staging a pageable copy
/// costs), on 1–16 threads, alone and while the copy engine moves pinned memory to the device
/// (both share the host's memory bandwidth): the physical bound of a staged pageable copy.
pub fn host_copies(reps: usize) -> Result<(), String> {
    const SIZE: usize = 64 << 20;
    let _gpu = Gpu::new()?;
    let s = stream_new()?;
    let staging = pinned(SIZE)?;
    let dma_src = pinned(SIZE)?;
    let dev = alloc(SIZE, s)?;
    sync(s)?;
    let pageable = vec![1u8; SIZE];
    let gbps = |bytes: usize, t: std::time::Duration| bytes as f64 / t.as_secs_f64() / 1e9;
    let mut dma = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        h2d(dev, dma_src, SIZE, s)?;
        sync(s)?;
        dma.push(gbps(SIZE, t.elapsed()));
    }
    println!(
        "probe=host-copies what=dma_h2d_pinned GBps={:.1}",
        median(&dma)
    );
    let from = pageable.as_ptr() as usize;
    // The other way to DMA pageable memory: pin it where it is for the copy
    // (cuMemHostRegister), copy, unpin. What registering costs per region at 4 and 64 MiB.
    for size in [4 << 20, SIZE] {
        let (mut reg, mut copy, mut unreg) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..reps.max(1) {
            let t = Instant::now();
            // SAFETY: pins a live buffer of at least `size` bytes; unpinned below.
            ck("cuMemHostRegister", unsafe {
                sys::cuMemHostRegister_v2(from as *mut std::ffi::c_void, size, 0)
            })?;
            reg.push(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            h2d(dev, from, size, s)?;
            sync(s)?;
            copy.push(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            // SAFETY: unpins what the register above pinned; no copy from it is in flight.
            ck("cuMemHostUnregister", unsafe {
                sys::cuMemHostUnregister(from as *mut std::ffi::c_void)
            })?;
            unreg.push(t.elapsed().as_secs_f64() * 1e6);
        }
        println!(
            "probe=host-copies what=register_copy_unregister bytes={size} register_us={:.1} dma_us={:.1} unregister_us={:.1}",
            median(&reg),
            median(&copy),
            median(&unreg)
        );
    }
    for threads in [1usize, 2, 4, 8, 16] {
        for to_pinned in [true, false] {
            for with_dma in [false, true] {
                let mut rates = Vec::with_capacity(reps);
                for _ in 0..reps.max(1) {
                    if with_dma {
                        // Longer than the host copies take: they run beside DMA throughout.
                        for _ in 0..8 {
                            h2d(dev, dma_src, SIZE, s)?;
                        }
                    }
                    let part = SIZE / threads;
                    let t = Instant::now();
                    std::thread::scope(|sc| {
                        for k in 0..threads {
                            sc.spawn(move || {
                                let (a, b) = (from + k * part, staging + k * part);
                                let (src, dst) = if to_pinned { (a, b) } else { (b, a) };
                                // SAFETY: disjoint `part`-byte pieces of two live buffers of
                                // SIZE bytes (the pageable one only read by the others).
                                unsafe {
                                    std::ptr::copy_nonoverlapping(
                                        src as *const u8,
                                        dst as *mut u8,
                                        part,
                                    )
                                };
                            });
                        }
                    });
                    rates.push(gbps(SIZE, t.elapsed()));
                    sync(s)?;
                }
                println!(
                    "probe=host-copies what={} threads={threads} beside_dma={with_dma} GBps={:.1}",
                    if to_pinned {
                        "pageable_to_pinned"
                    } else {
                        "pinned_to_pageable"
                    },
                    median(&rates)
                );
            }
        }
    }
    drop(pageable);
    free(dev, s)?;
    sync(s)
}
