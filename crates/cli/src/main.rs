//! `omptarget`: device information and benchmarks for omptarget-rs.

mod bench;

use clap::{Parser, Subcommand};
use omptarget_core::runtime::default_plugins;
use omptarget_core::{Config, NoHostRuntime, Runtime};
use std::path::PathBuf;
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
    /// Runs one benchmark binary under LLVM 19's runtime and ours, alternating, and prints
    /// per-scenario medians and the ratio LLVM/ours.
    Bench {
        /// The benchmark program (prints `scenario=NAME median_us=X` lines).
        program: PathBuf,
        /// Folder holding our libomptarget.so.19.1.
        #[arg(long)]
        ours: PathBuf,
        /// Folder holding LLVM 19's libomptarget.so.19.1.
        #[arg(long, default_value = "/usr/lib/llvm-19/lib")]
        llvm: PathBuf,
        /// Runs of the program under each runtime (the median is reported).
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Extra folders appended to LD_LIBRARY_PATH (e.g. the CUDA driver's).
        #[arg(long)]
        extra_lib_path: Option<String>,
        /// Arguments passed to the program.
        #[arg(last = true)]
        args: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Info => {
            info();
            ExitCode::SUCCESS
        }
        Command::Bench {
            program,
            ours,
            llvm,
            runs,
            extra_lib_path,
            args,
        } => match bench::run(&bench::Options {
            program,
            ours,
            llvm,
            runs,
            extra_lib_path,
            args,
        }) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("omptarget bench: {e}");
                ExitCode::FAILURE
            }
        },
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
