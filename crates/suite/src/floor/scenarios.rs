//! The scenario list of the floors: each row of `bench/gpu_scenarios.c` as the same device work
//! done with the driver API (the helpers are in floor.rs).

use super::beside::{BESIDE, BESIDE_FIXED_ROW, BESIDE_SLOTS, beside};
use super::*;

/// Measures the floors of the scenarios that `which` selects (`selected`); `scale` divides
/// their iterations; with `kernels`, also each scenario's mean kernel time.
pub fn run(
    which: &str,
    reps: usize,
    scale: usize,
    print: bool,
    kernels: bool,
) -> Result<Vec<Floor>, String> {
    let gpu = Gpu::new()?;
    let s = stream_new()?;
    // One blocking-sync event for the stream above, one per stream of the nowait floor.
    let blocking = blocking_event()?;
    let blocking32: Vec<sys::CUevent> = (0..32)
        .map(|_| blocking_event())
        .collect::<Result<_, _>>()?;
    let host64 = pinned(64)?;
    let host16 = pinned(16 * 1024)?;
    let big_in = pinned(64 * MIB)?;
    let big_out = pinned(64 * MIB)?;
    let nowait_in = pinned(32 * 4 * MIB)?;
    let nowait_out = pinned(32 * 4 * MIB)?;
    let pageable = vec![0u8; 64 * MIB];
    let mut pageable_out = vec![0u8; 64 * MIB];
    let pageable_out_ptr = pageable_out.as_mut_ptr() as usize;
    // One stream and one 64 B pinned buffer per host thread, for up to 128 threads.
    let streams: Vec<CUstream> = (0..128).map(|_| stream_new()).collect::<Result<_, _>>()?;
    let host64s = pinned(128 * 64)?;
    // T host threads, each with its own stream and 64 B buffer, each running `n` map64
    // regions (`threadsT_map64B`).
    let threads_map64 = |t: usize| {
        let gpu = &gpu;
        let streams = &streams;
        move |n: usize| -> Result<(), String> {
            on_threads(gpu, &streams[..t], |i, st| {
                (0..n).try_for_each(|_| map64_region(gpu, host64s + i * 64, st))
            })
        }
    };
    let alloc_kernel = |bytes: usize| {
        let gpu = &gpu;
        move |n: usize| -> Result<(), String> {
            for _ in 0..n {
                let a = alloc(bytes, s)?;
                gpu.fill(a, bytes, s)?;
                free(a, s)?;
                sync(s)?;
            }
            Ok(())
        }
    };
    // A 64 MiB region: in from `from`, a kernel, out to `to`.
    let tofrom64 = |from: usize, to: usize| {
        let gpu = &gpu;
        move |n: usize| -> Result<(), String> {
            for _ in 0..n {
                let a = alloc(64 * MIB, s)?;
                h2d(a, from, 64 * MIB, s)?;
                gpu.fill(a, 64 * MIB, s)?;
                d2h(to, a, 64 * MIB, s)?;
                free(a, s)?;
                sync(s)?;
            }
            Ok(())
        }
    };
    let map64 =
        |n: usize| -> Result<(), String> { (0..n).try_for_each(|_| map64_region(&gpu, host64, s)) };
    let scenarios = vec![
        Scenario {
            name: "empty",
            iters: 10000,
            per: 1,
            f: Box::new(|n| {
                for _ in 0..n {
                    gpu.launch(gpu.empty, 1, 1, &mut [], s)?;
                    sync(s)?;
                }
                Ok(())
            }),
        },
        Scenario {
            name: "map64B",
            iters: 10000,
            per: 1,
            f: Box::new(map64),
        },
        Scenario {
            name: "alloc64MiB_kernel",
            iters: 200,
            per: 1,
            f: Box::new(alloc_kernel(64 * MIB)),
        },
        Scenario {
            name: "alloc1GiB_kernel",
            iters: 20,
            per: 1,
            f: Box::new(alloc_kernel(1024 * MIB)),
        },
        Scenario {
            name: "enter_kernel_exit64MiB",
            iters: 200,
            per: 1,
            f: Box::new(alloc_kernel(64 * MIB)),
        },
        Scenario {
            name: "threads8_alloc64MiB",
            iters: 25,
            per: 8,
            f: Box::new(|n| {
                on_threads(&gpu, &streams[..8], |_, st| {
                    for _ in 0..n {
                        let a = alloc(64 * MIB, st)?;
                        gpu.fill(a, 64 * MIB, st)?;
                        free(a, st)?;
                        sync(st)?;
                    }
                    Ok(())
                })
            }),
        },
        Scenario {
            name: "tofrom64MiB_pageable",
            iters: 20,
            per: 1,
            // The floor moves pinned memory: what the copy engines can do.
            f: Box::new(tofrom64(big_in, big_out)),
        },
        Scenario {
            name: "tofrom64MiB_driver_pageable",
            iters: 20,
            per: 1,
            // For reference: the driver's own path from pageable memory.
            f: Box::new(tofrom64(pageable.as_ptr() as usize, pageable_out_ptr)),
        },
        Scenario {
            name: "arrays16x1KiB",
            iters: 1000,
            per: 1,
            f: Box::new(|n| {
                let mut d = [0usize; 16];
                for _ in 0..n {
                    for (k, dk) in d.iter_mut().enumerate() {
                        *dk = alloc(1024, s)? as usize;
                        h2d(*dk as CUdeviceptr, host16 + k * 1024, 1024, s)?;
                    }
                    gpu.launch(gpu.touch16, 1, 1, &mut d, s)?;
                    for (k, dk) in d.iter().enumerate() {
                        d2h(host16 + k * 1024, *dk as CUdeviceptr, 1024, s)?;
                        free(*dk as CUdeviceptr, s)?;
                    }
                    sync(s)?;
                }
                Ok(())
            }),
        },
        Scenario {
            name: "nowait32x4MiB",
            iters: 5,
            per: 32,
            f: Box::new(|n| {
                for _ in 0..n {
                    nowait_round(&gpu, &streams[..32], nowait_in, nowait_out, |_, _| Ok(()))?;
                    for &st in &streams[..32] {
                        sync(st)?;
                    }
                }
                Ok(())
            }),
        },
        Scenario {
            name: "kernel1s",
            iters: 1,
            per: 1,
            // One thread spinning a second on the device's clock, waited for with a
            // blocking-sync event: the host thread sleeps meanwhile.
            f: Box::new(|n| {
                for _ in 0..n {
                    gpu.launch(gpu.spin, 1, 1, &mut [1_000_000_000], s)?;
                    record_and_wait(blocking, s)?;
                }
                Ok(())
            }),
        },
        // The CPU floors: the work of `empty`, `map64B` and `nowait32x4MiB` waited for with
        // blocking-sync events (the waiting thread sleeps) instead of cuStreamSynchronize.
        Scenario {
            name: "empty_blocking_sync",
            iters: 10000,
            per: 1,
            f: Box::new(|n| {
                for _ in 0..n {
                    gpu.launch(gpu.empty, 1, 1, &mut [], s)?;
                    record_and_wait(blocking, s)?;
                }
                Ok(())
            }),
        },
        Scenario {
            name: "map64B_blocking_sync",
            iters: 10000,
            per: 1,
            f: Box::new(|n| {
                for _ in 0..n {
                    map64_work(&gpu, host64, s)?;
                    record_and_wait(blocking, s)?;
                }
                Ok(())
            }),
        },
        Scenario {
            name: "nowait32x4MiB_blocking_sync",
            iters: 5,
            per: 32,
            f: Box::new(|n| {
                for _ in 0..n {
                    nowait_round(&gpu, &streams[..32], nowait_in, nowait_out, |r, st| {
                        event_record(blocking32[r], st)
                    })?;
                    for &e in &blocking32 {
                        // SAFETY: waits for a recorded live event.
                        ck("cuEventSynchronize", unsafe { sys::cuEventSynchronize(e) })?;
                    }
                }
                Ok(())
            }),
        },
        Scenario {
            name: "threads16_map64B",
            iters: 1000,
            per: 16,
            f: Box::new(threads_map64(16)),
        },
        Scenario {
            name: "threads32_map64B",
            iters: 500,
            per: 32,
            f: Box::new(threads_map64(32)),
        },
        Scenario {
            name: "threads64_map64B",
            iters: 250,
            per: 64,
            f: Box::new(threads_map64(64)),
        },
        Scenario {
            name: "threads128_map64B",
            iters: 125,
            per: 128,
            f: Box::new(threads_map64(128)),
        },
    ];
    let mut out = Vec::new();
    for sc in &scenarios {
        if !selected(which, sc.name) {
            continue;
        }
        let t = measure(sc, reps, scale)?;
        let kernel_us = if kernels {
            gpu.kernel_us(|| (sc.f)(t.iters)).unwrap_or_else(|e| {
                eprintln!("floor {}: kernels not timed: {e}", sc.name);
                None
            })
        } else {
            None
        };
        if print {
            print!(
                "floor={} median_us={:.3} min_us={:.3} reps={} iters={} cpu_us={:.3}",
                sc.name, t.median, t.min, t.reps, t.iters, t.cpu_us
            );
            if let Some(k) = kernel_us {
                print!(" kernel_us={k:.3}");
            }
            println!();
        }
        out.push(Floor {
            name: sc.name.to_string(),
            median_us: t.median,
            kernel_us,
            cpu_us: Some(t.cpu_us),
            slowdown_pct: None,
        });
    }
    // A beside row brings its pageable floor along (`NAME_pageable`).
    for (row, fixed) in [(BESIDE, false), (BESIDE_FIXED_ROW, true)] {
        if selected(which, row) {
            for pageable in [false, true] {
                out.push(beside(
                    &gpu,
                    &streams[..BESIDE_SLOTS],
                    reps,
                    scale,
                    print,
                    fixed,
                    pageable,
                )?);
            }
        }
    }
    // The floor for the 64 B region does not depend on the runtime's memory manager.
    if let Some(f) = out.iter().find(|f| f.name == "map64B") {
        let copy = Floor {
            name: "map64B_mm_threshold0".into(),
            median_us: f.median_us,
            kernel_us: f.kernel_us,
            cpu_us: f.cpu_us,
            slowdown_pct: None,
        };
        out.push(copy);
    }
    Ok(out)
}
