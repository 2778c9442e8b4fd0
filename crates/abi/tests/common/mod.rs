//! What the tests that run C programs under our library only share: the repository, our
//! freshly built library under the name programs look for, clang-19, and runs with a deadline.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/abi sits two levels below the root")
        .to_path_buf()
}

/// `target/<profile>`, where our freshly built library lies.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

/// Our freshly built library (`target/<profile>/libomptarget.so`).
pub fn our_lib() -> PathBuf {
    let lib = profile_dir().join("libomptarget.so");
    assert!(
        lib.exists(),
        "{} is missing: build it first (`cargo build -p omptarget-abi`; scripts/test.sh does)",
        lib.display()
    );
    lib
}

/// A folder holding our library under the name programs look for.
pub fn our_lib_dir(name: &str) -> PathBuf {
    link_dir(&our_lib(), name, &["libomptarget.so.19.1"])
}

/// `target/<profile>/<name>`, holding `lib` under each of `sonames` (one file under several
/// names: a process whose program and libraries need different names loads it once). Safe
/// to call from tests running at once: each link is made aside and renamed into place.
pub fn link_dir(lib: &Path, name: &str, sonames: &[&str]) -> PathBuf {
    let dir = profile_dir().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for soname in sonames {
        let aside = dir.join(format!(
            ".{soname}.{}.{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_file(&aside);
        std::os::unix::fs::symlink(lib, &aside).unwrap();
        std::fs::rename(&aside, dir.join(soname)).unwrap();
    }
    dir
}

pub fn compile(src: &Path, out: &Path, extra: &[&str]) {
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

pub fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `exe` with `args` under our library, killing it at the deadline. Returns the exit
/// status and output, or an error saying it hung.
pub fn run_with_deadline(
    exe: &Path,
    args: &[String],
    envs: &[(&str, &str)],
    lib_dir: &Path,
    deadline: Duration,
) -> Result<(i32, String, String), String> {
    let mut child = Command::new(exe)
        .args(args)
        .envs(envs.iter().copied())
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
