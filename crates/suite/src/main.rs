//! `omptarget-suite`: the project's GPU harness, shipped by gpu/build.sh beside the user's
//! `omptarget` and called by gpu/run.sh and scripts/bench-host.sh. Verbs: `run` (the
//! conformance suite, examples, benchmarks, compute-sanitizer and the tool interfaces on
//! what gpu/build.sh built), `bench` (one benchmark under LLVM 19's runtime and ours),
//! `floor` (each GPU scenario's raw driver-API floor) and `probe` (driver-API experiments).
//!
//! It may use the CUDA driver directly (cudarc, for floors and probes), the CUDA plugin's
//! few public checks, and `omptarget-cli`'s library part (running a program on our runtime,
//! its summary); it runs the user's `omptarget` as a child process, never links the runtime.

mod bench;
mod floor;
mod gated;
mod gomp;
mod probe;
mod procs;
mod run;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "omptarget-suite",
    version,
    about = "omptarget-rs's GPU harness: suite runs, benchmarks, driver-API floors and probes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The conformance suite, examples, benchmarks and compute-sanitizer on what gpu/build.sh
    /// built (gpu/run.sh calls this on the GPU machine; gpu/README.md). Runs the modes
    /// (conformance by default) and prints the summary; exit status 0 only when everything
    /// agreed.
    Run(run::Options),
    /// Runs one benchmark binary under LLVM 19's runtime and ours, alternating, and prints
    /// per-scenario medians and the ratio LLVM/ours.
    Bench(bench::Options),
    /// Measures the raw floor of each GPU scenario of bench/gpu_scenarios.c: the same device
    /// work done directly with the CUDA driver API (prints `floor=NAME median_us=X ...
    /// cpu_us=Y`; the CPU floors `NAME_blocking_sync` wait with blocking-sync events; the rows
    /// beside_nowait4MiB and beside_fixed4MiB print `floor=NAME alone_ms=... slowdown_pct=...`,
    /// then `floor=NAME_pageable ...`: the same regions from pageable arrays copied on the host).
    Floor {
        /// Scenario names, comma-separated, or "all" (every one but the beside_ rows).
        #[arg(default_value = "all")]
        scenario: String,
        /// Repetitions (the median is reported).
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// Also time each scenario's kernels with events (`kernel_us=`).
        #[arg(long)]
        kernels: bool,
        /// Divides each scenario's iterations (as gpu_scenarios.c's scale does).
        #[arg(long, default_value_t = 1)]
        scale: usize,
    },
    /// Driver-API experiments that settle hardware and tool questions (see probe.rs).
    Probe {
        #[command(subcommand)]
        which: Probe,
    },
}

#[derive(Subcommand)]
enum Probe {
    /// Small host-to-device copies in one cuMemcpyBatchAsync (or one call each with --plain),
    /// then a kernel reading them: run under compute-sanitizer initcheck.
    BatchCopy {
        #[arg(long)]
        plain: bool,
    },
    /// Whether the CUDA plugin would see compute-sanitizer attached (batching off).
    Sanitizer,
    /// 16 copies of 1 KiB each way around a kernel, seven ways (see probe.rs): per-region times.
    SmallCopies {
        #[arg(default_value_t = 1000)]
        iters: usize,
        #[arg(default_value_t = 5)]
        reps: usize,
    },
    /// The small-copies region with WORK_US of host work around its launches, its copy kernel
    /// in launched in the region, queued ahead behind a flag, or in a CUDA graph with the
    /// kernel (see gated.rs).
    GatedCopies {
        #[arg(default_value_t = 1000)]
        iters: usize,
        #[arg(default_value_t = 5)]
        reps: usize,
        #[arg(default_value_t = 0)]
        work_us: u64,
    },
    /// Where the driver puts address-space reservations and allocations, and whether it
    /// honours a requested address (HINT in hex), for record/replay.
    Va { hints: Vec<String> },
    /// A kernel launched with its parameters in one buffer, of the exact size and padded.
    ParamBuffer,
    /// Host copy bandwidth pageable <-> pinned on 1-8 threads, alone and beside DMA.
    HostCopies {
        #[arg(default_value_t = 3)]
        reps: usize,
    },
    /// Time for the default memory pool to give GIB GiB back to the device.
    PoolTrim {
        #[arg(default_value_t = 16)]
        gib: usize,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(options) => ExitCode::from(run::run(options) as u8),
        Command::Bench(options) => report("bench", bench::run(&options)),
        Command::Floor {
            scenario,
            reps,
            kernels,
            scale,
        } => report(
            "floor",
            floor::run(&scenario, reps.max(1), scale, true, kernels).and_then(|v| {
                if v.is_empty() {
                    Err(format!("no scenario named {scenario}"))
                } else {
                    Ok(())
                }
            }),
        ),
        Command::Probe { which } => report(
            "probe",
            match which {
                Probe::BatchCopy { plain } => probe::batch_copy(plain),
                Probe::PoolTrim { gib } => probe::pool_trim(gib),
                Probe::Sanitizer => probe::sanitizer(),
                Probe::Va { hints } => probe::va(&hints),
                Probe::ParamBuffer => probe::param_buffer(),
                Probe::SmallCopies { iters, reps } => probe::small_copies(iters, reps),
                Probe::GatedCopies {
                    iters,
                    reps,
                    work_us,
                } => gated::gated_copies(iters, reps, work_us),
                Probe::HostCopies { reps } => probe::host_copies(reps),
            },
        ),
    }
}

/// Success, or the error after the verb's name and a failing exit status.
fn report(verb: &str, r: Result<(), String>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("omptarget-suite {verb}: {e}");
            ExitCode::FAILURE
        }
    }
}
