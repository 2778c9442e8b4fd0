//! Experiments on the raw CUDA driver API that settle questions about the hardware and tools,
//! without any OpenMP runtime in between (`omptarget probe NAME`):
//!
//! - `batch-copy [--plain]`: 16 small host-to-device copies into fresh stream-ordered
//!   allocations, in one `cuMemcpyBatchAsync` (or one `cuMemcpyHtoDAsync` each with
//!   `--plain`), then a kernel that reads and writes every copied word. Run under
//!   `compute-sanitizer --tool initcheck`: a report for the batched form only means the tool
//!   does not see what the batch writes (issue #16).
//! - `sanitizer`: whether the runtime's compute-sanitizer detection fires in this process.
//! - `pool-trim GIB`: how long the default memory pool takes to give `GIB` GiB back to the
//!   device (`cuMemPoolTrimTo`), and what `cuMemGetInfo` shows before and after (issue #14).

use crate::floor::{Gpu, alloc, ck, free, pinned, stream_new, sync};
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
    let mut dsts: Vec<CUdeviceptr> = (0..WORDS)
        .map(|_| alloc(256, s))
        .collect::<Result<_, _>>()?;
    let mut srcs: Vec<CUdeviceptr> = (0..WORDS).map(|i| (host + 8 * i) as CUdeviceptr).collect();
    let mut sizes = vec![8usize; WORDS];
    if plain {
        for i in 0..WORDS {
            crate::floor::h2d(dsts[i], srcs[i] as usize, 8, s)?;
        }
    } else {
        let mut attrs = sys::CUmemcpyAttributes {
            srcAccessOrder: sys::CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
            srcLocHint: sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
                id: 0,
            },
            dstLocHint: sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                id: 0,
            },
            flags: 0,
        };
        let (mut first, mut failed) = (0usize, 0usize);
        // SAFETY: WORDS copies from a live pinned buffer into live device allocations, one
        // attribute set for all of them.
        ck("cuMemcpyBatchAsync", unsafe {
            sys::cuMemcpyBatchAsync(
                dsts.as_mut_ptr(),
                srcs.as_mut_ptr(),
                sizes.as_mut_ptr(),
                WORDS,
                &mut attrs,
                &mut first,
                1,
                &mut failed,
                s,
            )
        })?;
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
