//! `omptarget-suite probe gated-copies [ITERS] [REPS] [WORK_US]`: whether launching a
//! region's copy kernel in ahead of the region, held back on the stream by a flag in pinned
//! memory (`cuStreamWaitValue32`), takes its launch off the region's critical path.
//!
//! The 16 × 1 KiB region of `small-copies` (zero-copy copy kernels through pinned memory
//! around the kernel), with `WORK_US` µs of host work before the copy kernel in and again
//! before the copy kernel back, standing in for a runtime's entry and exit halves. Two ways:
//!
//! - `launched`: as the runtime does today: work, the copy kernel in, the kernel, work, the
//!   copy kernel back, the wait.
//! - `gated`: the copy kernel in of region *i* + 1 is queued during region *i*'s wait, behind
//!   a `cuStreamWaitValue32` on a flag word; region *i* + 1's host writes its table and then
//!   the flag (a store, no driver call) where `launched` calls `cuLaunchKernel`. The region's
//!   wait is an event after its copy kernel back (the stream itself is never idle).
//!
//! - `graph`: the three kernels captured once into a CUDA graph, one `cuGraphLaunch` per
//!   region (the same tables and arguments every region: the least a graph can cost).
//! - `graph-update`: the copy kernel in and the kernel as a graph whose kernel node gets its
//!   arguments again each region (`cuGraphExecKernelNodeSetParams`, as a runtime would have
//!   to: each region's device addresses), launched after the entry's work; the copy kernel
//!   back launched after the exit's, as today (a runtime decides the copies back only there).
//! - `graph-update2`: `graph-update` with the copy kernel in's node given its table again each
//!   region too, as a runtime would have to (each region's staged table lies elsewhere): two
//!   `cuGraphExecKernelNodeSetParams` and a `cuGraphLaunch` where `launched` calls
//!   `cuLaunchKernel` twice.
//!
//! A `gated` region that needs no copy in would still run the queued kernel (on an empty table):
//! a runtime would queue one only for a queue whose last region had small copies in.

use crate::floor::{
    Gpu, alloc, blocking_event, ck, event_done, event_record, pinned, stream_new, sync,
};
use crate::probe::{report_times, shuttle, timed_regions};
use cudarc::driver::sys::{self, CUdeviceptr};
use std::sync::atomic::{Ordering, fence};
use std::time::{Duration, Instant};

const K: usize = 16;
const BYTES: usize = 1024;
const TABLE: usize = K * 24;

fn busy(us: u64) {
    let until = Instant::now() + Duration::from_micros(us);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

fn gate(s: sys::CUstream, flag: usize, value: u32) -> Result<(), String> {
    // SAFETY: the stream waits until the pinned word at `flag` (device-addressable under
    // unified addressing) is at least `value`; the word lives for the process.
    ck("cuStreamWaitValue32", unsafe {
        sys::cuStreamWaitValue32_v2(
            s,
            flag as CUdeviceptr,
            value,
            sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ as u32,
        )
    })
}

fn open(flag: usize, value: u32) {
    fence(Ordering::SeqCst);
    // SAFETY: `flag` is a live pinned word, written by this thread only.
    unsafe { std::ptr::write_volatile(flag as *mut u32, value) };
    fence(Ordering::SeqCst);
}

pub fn gated_copies(iters: usize, reps: usize, work_us: u64) -> Result<(), String> {
    let gpu = Gpu::new()?;
    let s = stream_new()?;
    // Pinned: table in, table out, the arrays; the flag on a page of its own.
    let data_off = 2 * TABLE;
    let host = pinned(data_off + K * BYTES)?;
    let flag = pinned(4096)?;
    open(flag, 0);
    let blocks: Vec<CUdeviceptr> = (0..K).map(|_| alloc(BYTES, s)).collect::<Result<_, _>>()?;
    sync(s)?;
    let words = (BYTES / 8) as u64;
    for (k, &b) in blocks.iter().enumerate() {
        let piece = (host + data_off + k * BYTES) as u64;
        // SAFETY: `host` is a live pinned buffer; each table is K triples.
        unsafe {
            std::ptr::copy_nonoverlapping(
                [piece, b, words].as_ptr(),
                (host + k * 24) as *mut u64,
                3,
            );
            std::ptr::copy_nonoverlapping(
                [b, piece, words].as_ptr(),
                (host + TABLE + k * 24) as *mut u64,
                3,
            );
        }
    }
    let spans = [(host + data_off, host + data_off, K * BYTES)];
    // Without timing; polled, so its blocking flag does not matter.
    let e = blocking_event()?;
    let mut arrays = vec![0f64; K * BYTES / 8];
    let mut round = 0u32;
    let mut ptrs: Vec<usize> = blocks.iter().map(|&b| b as usize).collect();
    for mode in [
        "launched",
        "gated",
        "graph",
        "graph-update",
        "graph-update2",
    ] {
        for a in arrays.iter_mut() {
            *a = 0.0;
        }
        let gated = mode == "gated";
        if gated {
            gate(s, flag, round + 1)?;
            gpu.launch(gpu.copyk, K as u32, 128, &mut [host], s)?;
        }
        // The graph of the mode (none for the first two), with the copy kernel back in it
        // (`graph`) or launched after the exit's work (`graph-update`).
        let back_in_graph = mode == "graph";
        let graph = if mode.starts_with("graph") {
            Some(Graph::capture(s, || {
                gpu.launch(gpu.copyk, K as u32, 128, &mut [host], s)?;
                gpu.launch(gpu.touch16, 1, 1, &mut ptrs.clone(), s)?;
                if back_in_graph {
                    gpu.launch(gpu.copyk, K as u32, 128, &mut [host + TABLE], s)?;
                }
                Ok(())
            })?)
        } else {
            None
        };
        // `graph-update`: the kernel node and its arguments, set again each region (the
        // same values: a runtime's would be the region's device addresses); `graph-update2`:
        // the copy kernel's node and its table too.
        let mut args = ptrs.clone();
        let mut slots: Vec<*mut std::ffi::c_void> =
            args.iter_mut().map(|p| (p as *mut usize).cast()).collect();
        let mut table = host;
        let mut table_slot: [*mut std::ffi::c_void; 1] = [(&mut table as *mut usize).cast()];
        let mut nodes = Vec::new();
        if let Some(g) = &graph
            && mode.starts_with("graph-update")
        {
            let (node, mut params) = g.kernel_node(gpu.touch16)?;
            params.kernelParams = slots.as_mut_ptr();
            nodes.push((node, params));
            if mode == "graph-update2" {
                let (node, mut params) = g.kernel_node(gpu.copyk)?;
                params.kernelParams = table_slot.as_mut_ptr();
                nodes.push((node, params));
            }
        }
        let mut region = |n: usize, arrays: &mut [f64]| -> Result<(), String> {
            for _ in 0..n {
                busy(work_us);
                shuttle(arrays, &spans, true);
                match &graph {
                    Some(g) => {
                        for (node, params) in &nodes {
                            g.set_params(*node, params)?;
                        }
                        g.launch(s)?;
                    }
                    None => {
                        if gated {
                            round += 1;
                            open(flag, round);
                        } else {
                            gpu.launch(gpu.copyk, K as u32, 128, &mut [host], s)?;
                        }
                        gpu.launch(gpu.touch16, 1, 1, &mut ptrs, s)?;
                    }
                }
                busy(work_us);
                if !back_in_graph {
                    gpu.launch(gpu.copyk, K as u32, 128, &mut [host + TABLE], s)?;
                }
                if gated {
                    event_record(e, s)?;
                    gate(s, flag, round + 1)?;
                    gpu.launch(gpu.copyk, K as u32, 128, &mut [host], s)?;
                    while !event_done(e)? {
                        std::hint::spin_loop();
                    }
                } else {
                    sync(s)?;
                }
                shuttle(arrays, &spans, false);
            }
            Ok(())
        };
        let (times, done) = timed_regions(iters, reps, |n| region(n, &mut arrays))?;
        if gated {
            // The last queued copy in runs on whatever the table says: the arrays' values,
            // which the next region would have copied anyway.
            round += 1;
            open(flag, round);
            sync(s)?;
        }
        let ok = (0..K).all(|k| arrays[k * BYTES / 8] == done as f64);
        let what = format!("gated-copies mode={mode} work_us={work_us} arrays={K} bytes={BYTES}");
        report_times(&what, &times, ok)?;
    }
    Ok(())
}

/// A captured CUDA graph and its executable form (destroyed when dropped).
struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
}

impl Graph {
    /// What `launches` queues on `s`, captured as a graph and instantiated.
    fn capture(
        s: sys::CUstream,
        launches: impl FnOnce() -> Result<(), String>,
    ) -> Result<Self, String> {
        // SAFETY: captures this thread's work on a live stream; the handles are written.
        ck("cuStreamBeginCapture", unsafe {
            sys::cuStreamBeginCapture_v2(
                s,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        })?;
        let queued = launches();
        let mut graph: sys::CUgraph = std::ptr::null_mut();
        // SAFETY: ends the capture begun above.
        let ended = ck("cuStreamEndCapture", unsafe {
            sys::cuStreamEndCapture(s, &mut graph)
        });
        queued.and(ended)?;
        let mut exec: sys::CUgraphExec = std::ptr::null_mut();
        // SAFETY: instantiates the live graph just captured.
        ck("cuGraphInstantiateWithFlags", unsafe {
            sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0)
        })?;
        Ok(Self { graph, exec })
    }

    /// The graph's kernel node that runs `f`, with its parameters.
    fn kernel_node(
        &self,
        f: sys::CUfunction,
    ) -> Result<(sys::CUgraphNode, sys::CUDA_KERNEL_NODE_PARAMS), String> {
        let mut n = 0usize;
        // SAFETY: asks for the count only.
        ck("cuGraphGetNodes", unsafe {
            sys::cuGraphGetNodes(self.graph, std::ptr::null_mut(), &mut n)
        })?;
        let mut nodes = vec![std::ptr::null_mut(); n];
        // SAFETY: `nodes` holds `n` handles.
        ck("cuGraphGetNodes", unsafe {
            sys::cuGraphGetNodes(self.graph, nodes.as_mut_ptr(), &mut n)
        })?;
        for node in nodes {
            let mut ty = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
            // SAFETY: a node of the live graph; writes its type.
            ck("cuGraphNodeGetType", unsafe {
                sys::cuGraphNodeGetType(node, &mut ty)
            })?;
            if ty != sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL {
                continue;
            }
            // SAFETY: a kernel node; the struct is written (all zero is a valid start).
            let mut params: sys::CUDA_KERNEL_NODE_PARAMS = unsafe { std::mem::zeroed() };
            ck("cuGraphKernelNodeGetParams", unsafe {
                sys::cuGraphKernelNodeGetParams_v2(node, &mut params)
            })?;
            if params.func == f {
                return Ok((node, params));
            }
        }
        Err("the captured graph has no node of that kernel".into())
    }

    /// Gives kernel node `node` of the executable graph the parameters `params`.
    fn set_params(
        &self,
        node: sys::CUgraphNode,
        params: &sys::CUDA_KERNEL_NODE_PARAMS,
    ) -> Result<(), String> {
        // SAFETY: a kernel node of this graph; `params` points at live argument slots.
        ck("cuGraphExecKernelNodeSetParams", unsafe {
            sys::cuGraphExecKernelNodeSetParams_v2(self.exec, node, params)
        })
    }

    fn launch(&self, s: sys::CUstream) -> Result<(), String> {
        // SAFETY: an instantiated graph on a live stream.
        ck("cuGraphLaunch", unsafe { sys::cuGraphLaunch(self.exec, s) })
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: destroyed once; the probe synchronised the stream first.
        unsafe {
            sys::cuGraphExecDestroy(self.exec);
            sys::cuGraphDestroy(self.graph);
        }
    }
}
