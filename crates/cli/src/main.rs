//! `omptarget`: the command a user of omptarget-rs runs: `info` (the plugins and their
//! devices), `run` (a program on our runtime without set-up, with a trace and a summary),
//! `install` (the runtime into a prefix, with a modulefile) and `doctor` (why offloading does
//! not do what one expects).
//!
//! It may use `omptarget-core` (for `info` and `doctor`) and this crate's library part (`run`,
//! `summary`, `install`).
//! The project's own tooling (the GPU suite runner, benchmarks against LLVM, driver-API
//! floors and probes) is `omptarget-suite` (crates/suite), not a verb here.

use clap::{Parser, Subcommand};
use omptarget::default_plugins;
use omptarget_cli::{install, run};

mod doctor;
use omptarget_core::{Config, NoHostRuntime, Runtime};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "omptarget",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("OMPTARGET_COMMIT"), ")"),
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
    /// Installs the runtime into a prefix: DIR/lib/libomptarget.so.19.1 (and .22.1, a link to
    /// it), DIR/bin/omptarget, the documentation and an Lmod modulefile. Re-run to upgrade.
    Install(install::Options),
    /// Says which runtime and devices a program would get, and why offloading may not happen,
    /// each problem with the line that fixes it: `omptarget doctor [PROGRAM]`.
    Doctor(doctor::Options),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Info => {
            info();
            ExitCode::SUCCESS
        }
        Command::Run(options) => match run::run(&options) {
            Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
            Err(e) => {
                eprintln!("omptarget run: {e}");
                ExitCode::from(127)
            }
        },
        Command::Install(options) => match install::install(&options) {
            Ok(text) => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("omptarget install: {e}");
                ExitCode::FAILURE
            }
        },
        Command::Doctor(options) => {
            let report = doctor::doctor(&options);
            print!("{}", report.render());
            if report.problems() == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
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
        if n == 0 && plugin.name() == "cuda" {
            // The same words as `omptarget doctor`'s.
            println!("  why: {}", doctor::why_no_gpu());
        }
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
