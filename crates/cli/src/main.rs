//! `omptarget`: device information, benchmarks, driver probes and the GPU suite runner for
//! omptarget-rs.

mod bench;
mod floor;
mod probe;
mod run;
mod suite;

use clap::{Parser, Subcommand};
use omptarget::default_plugins;
use omptarget_core::{Config, NoHostRuntime, Runtime};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "omptarget",
    version,
    about = "omptarget-rs: OpenMP offload runtime tools"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Lists the plugins and the devices each one drives.
    Info,
    /// Runs a program on omptarget-rs (no LD_LIBRARY_PATH set-up needed), with a trace
    /// (--trace FILE, Chrome/Perfetto JSON) and a summary at exit (--summary):
    /// `omptarget run [--trace FILE] [--summary] -- PROG ARGS`.
    Run(run::Options),
    /// Runs one benchmark binary under LLVM 19's runtime and ours, alternating, and prints
    /// per-scenario medians and the ratio LLVM/ours.
    Bench(bench::Options),
    /// Measures the raw floor of each GPU scenario of bench/gpu_scenarios.c: the same device
    /// work done directly with the CUDA driver API (prints `floor=NAME median_us=X`).
    Floor {
        /// A scenario name, or "all".
        #[arg(default_value = "all")]
        scenario: String,
        /// Repetitions (the median is reported).
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// Also time each scenario's kernels with events (`kernel_us=`).
        #[arg(long)]
        kernels: bool,
    },
    /// Driver-API experiments that settle hardware and tool questions (see probe.rs).
    Probe {
        #[command(subcommand)]
        which: Probe,
    },
    /// The conformance suite, examples, benchmarks and compute-sanitizer on what gpu/build.sh
    /// built (gpu/run.sh calls this on the GPU machine; gpu/README.md).
    Suite {
        #[command(subcommand)]
        which: SuiteCommand,
    },
}

#[derive(Subcommand)]
enum SuiteCommand {
    /// Runs the modes (conformance by default) and prints the summary; exit status 0 only
    /// when everything agreed.
    Run(suite::Options),
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
    /// 16 copies of 1 KiB each way around a kernel, five ways (see probe.rs): per-region times.
    SmallCopies {
        #[arg(default_value_t = 1000)]
        iters: usize,
        #[arg(default_value_t = 5)]
        reps: usize,
    },
    /// Where the driver puts address-space reservations and allocations, and whether it
    /// honours a requested address (HINT in hex), for record/replay.
    Va { hints: Vec<String> },
    /// A kernel launched with its parameters in one buffer, of the exact size and padded.
    ParamBuffer,
    /// Time for the default memory pool to give GIB GiB back to the device.
    PoolTrim {
        #[arg(default_value_t = 16)]
        gib: usize,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Info => {
            info();
            ExitCode::SUCCESS
        }
        Command::Floor {
            scenario,
            reps,
            kernels,
        } => floor(&scenario, reps, kernels),
        Command::Run(options) => match run::run(&options) {
            Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
            Err(e) => {
                eprintln!("omptarget run: {e}");
                ExitCode::from(127)
            }
        },
        Command::Suite {
            which: SuiteCommand::Run(options),
        } => ExitCode::from(suite::run(options) as u8),
        Command::Probe { which } => {
            let r = match which {
                Probe::BatchCopy { plain } => probe::batch_copy(plain),
                Probe::PoolTrim { gib } => probe::pool_trim(gib),
                Probe::Sanitizer => probe::sanitizer(),
                Probe::Va { hints } => probe::va(&hints),
                Probe::ParamBuffer => probe::param_buffer(),
                Probe::SmallCopies { iters, reps } => probe::small_copies(iters, reps),
            };
            match r {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("omptarget probe: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Bench(options) => match bench::run(&options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("omptarget bench: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

fn floor(scenario: &str, reps: usize, kernels: bool) -> ExitCode {
    match floor::run(scenario, reps.max(1), true, kernels) {
        Ok(v) if v.is_empty() => {
            eprintln!("omptarget floor: no scenario named {scenario}");
            ExitCode::FAILURE
        }
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("omptarget floor: {e}");
            ExitCode::FAILURE
        }
    }
}

fn info() {
    let config = Config::from_env();
    let plugins = default_plugins(&config);
    let rt = Runtime::new(config, plugins, Box::new(NoHostRuntime));
    println!("omptarget-rs {}", env!("CARGO_PKG_VERSION"));
    if rt.plugins().is_empty() {
        println!("no plugins enabled");
    }
    for plugin in rt.plugins() {
        let n = plugin.number_of_devices();
        println!("plugin {}: {n} device(s)", plugin.name());
        for i in 0..n {
            match plugin.init_device(i) {
                Ok(dev) => {
                    let info = dev.info();
                    println!("  device {i}: {}", info.name);
                    for (k, v) in info.properties {
                        println!("    {k}: {v}");
                    }
                }
                Err(e) => println!("  device {i}: unavailable ({e})"),
            }
        }
    }
}
