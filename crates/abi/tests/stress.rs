//! Stress programs under `tests/stress/`, run under our library only, each with a deadline:
//! a run that does not finish in time is killed and the test fails (a hang is a failure, never
//! a stuck test run). LLVM 19 fails these programs (docs/DIVERGENCES.md), so there is nothing
//! to compare with; each program checks its own results.
//!
//! The default sizes keep `cargo test` short. `scripts/stress.sh` runs the long versions
//! (`OMPTARGET_STRESS_CYCLES`, `OMPTARGET_STRESS_RUNS`, `OMPTARGET_STRESS_TIMEOUT`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/abi sits two levels below the root")
        .to_path_buf()
}

/// `target/<profile>`, where our freshly built library lies.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

/// A folder holding our library under the name programs look for.
fn our_lib_dir() -> PathBuf {
    let lib = profile_dir().join("libomptarget.so");
    assert!(
        lib.exists(),
        "{} is missing: build it first (`cargo build -p omptarget-abi`; scripts/test.sh does)",
        lib.display()
    );
    let dir = profile_dir().join("stress-lib");
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("libomptarget.so.19.1");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&lib, &link).unwrap();
    dir
}

fn compile(src: &Path, out: &Path, extra: &[&str]) {
    let output = Command::new("clang-19")
        .args([
            "-fopenmp",
            "-fopenmp-targets=x86_64-pc-linux-gnu",
            "-O1",
            "-g0",
        ])
        .arg(src)
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .expect("clang-19 runs (scripts/deps.sh installs it)");
    assert!(
        output.status.success(),
        "compiling {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `exe` with `args` under our library, killing it at the deadline. Returns the exit
/// status and output, or an error saying it hung.
fn run_with_deadline(
    exe: &Path,
    args: &[String],
    lib_dir: &Path,
    deadline: Duration,
) -> Result<(i32, String, String), String> {
    let mut child = Command::new(exe)
        .args(args)
        .env("LD_LIBRARY_PATH", lib_dir)
        .env_remove("LIBOMPTARGET_INFO")
        .env_remove("OMP_TARGET_OFFLOAD")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let out = child.wait_with_output().map_err(|e| e.to_string())?;
            let code = status.code().unwrap_or_else(|| {
                128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0)
            });
            return Ok((
                code,
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            ));
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{} {} did not finish within {deadline:?}: a hang (deadlock?)",
                exe.display(),
                args.join(" ")
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Threads dlopen and dlclose a library with its own offload image (registration and
/// unregistration under the dynamic loader's lock) while other threads run target regions
/// that load images with dlopen: 8 threads, `OMPTARGET_STRESS_CYCLES` (default 1000)
/// dlopen/dlclose cycles, `OMPTARGET_STRESS_RUNS` (default 5) runs.
#[test]
fn registration_while_regions_run_never_hangs() {
    let root = repo_root();
    let build = profile_dir().join("stress-build");
    std::fs::create_dir_all(&build).unwrap();
    let lib = build.join("libdlopen_register_lib.so");
    compile(
        &root.join("tests/stress/dlopen_register_lib.c"),
        &lib,
        &["-shared", "-fPIC"],
    );
    let exe = build.join("dlopen_register");
    compile(
        &root.join("tests/stress/dlopen_register.c"),
        &exe,
        &["-lpthread", "-ldl"],
    );
    let lib_dir = our_lib_dir();
    let cycles = env_number("OMPTARGET_STRESS_CYCLES", 1000);
    let runs = env_number("OMPTARGET_STRESS_RUNS", 5);
    let deadline = Duration::from_secs(env_number("OMPTARGET_STRESS_TIMEOUT", 30));
    let args = [
        lib.display().to_string(),
        "8".to_owned(),
        cycles.to_string(),
    ];
    let started = Instant::now();
    for run in 1..=runs {
        let (code, stdout, stderr) = run_with_deadline(&exe, &args, &lib_dir, deadline)
            .unwrap_or_else(|e| panic!("run {run} of {runs}: {e}"));
        assert!(
            code == 0 && stdout.contains("errors=0"),
            "run {run} of {runs}: exit {code}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
    }
    println!(
        "dlopen_register: {runs} runs of {cycles} cycles on 8 threads in {:.1?}, no hang",
        started.elapsed()
    );
}
