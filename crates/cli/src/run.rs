//! `omptarget run [--trace FILE] [--summary] -- PROG ARGS`: runs a program on our runtime
//! without any set-up by hand (the library is found beside this command and put first in
//! `LD_LIBRARY_PATH` under the name programs look for), optionally with a Chrome/Perfetto
//! trace (`LIBOMPTARGET_PROFILE`) and a summary table at exit, as `nsys stats` prints them.

use crate::summary;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(clap::Args, Clone, Debug)]
pub struct Options {
    /// Write a Chrome/Perfetto trace (JSON) of the run here (LIBOMPTARGET_PROFILE).
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Print a summary at exit: per construct kind and location (count, total and mean host
    /// time, bytes moved, allocations), and per device operation (device time).
    #[arg(long)]
    pub summary: bool,
    /// Our runtime library (default: next to this command, or OMPTARGET_RS_LIB).
    #[arg(long)]
    pub lib: Option<PathBuf>,
    /// The program and its arguments (after `--`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    pub command: Vec<String>,
}

/// Where our library may lie relative to this command: a cargo build folder
/// (`target/release/`), gpu/build.sh's `gpu/out/{bin,ours}`, an install prefix
/// (`bin/`, `lib/`).
pub fn candidates(exe_dir: &Path) -> Vec<PathBuf> {
    vec![
        exe_dir.join("libomptarget.so.19.1"),
        exe_dir.join("libomptarget.so"),
        exe_dir.join("../ours/libomptarget.so.19.1"),
        exe_dir.join("../lib/libomptarget.so.19.1"),
        exe_dir.join("../lib/omptarget-rs/libomptarget.so.19.1"),
    ]
}

fn find_library(o: &Options) -> Result<PathBuf, String> {
    if let Some(l) = o
        .lib
        .clone()
        .or_else(|| std::env::var_os("OMPTARGET_RS_LIB").map(PathBuf::from))
    {
        return if l.is_file() {
            Ok(l)
        } else {
            Err(format!("{} is not a file", l.display()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("where am I: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    candidates(dir)
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "no libomptarget.so next to {} (build it: cargo build --release -p omptarget-abi; or pass --lib)",
                exe.display()
            )
        })
}

/// A folder in which the library has the name programs load (`libomptarget.so.19.1`).
fn library_folder(lib: &Path, scratch: &Path) -> Result<PathBuf, String> {
    let lib = lib
        .canonicalize()
        .map_err(|e| format!("{}: {e}", lib.display()))?;
    if lib.file_name().is_some_and(|n| n == "libomptarget.so.19.1") {
        return Ok(lib.parent().unwrap_or(Path::new("/")).to_path_buf());
    }
    std::fs::create_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let link = scratch.join("libomptarget.so.19.1");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&lib, &link).map_err(|e| format!("{}: {e}", link.display()))?;
    Ok(scratch.to_path_buf())
}

/// `LD_LIBRARY_PATH` for the child: our folder first, then what the caller had, then the
/// CUDA driver's usual folder when it exists and is not named yet.
pub fn library_path(ours: &Path, existing: Option<&str>, driver_dir: Option<&Path>) -> String {
    let mut parts = vec![ours.display().to_string()];
    parts.extend(
        existing
            .unwrap_or("")
            .split(':')
            .filter(|p| !p.is_empty())
            .map(String::from),
    );
    if let Some(d) = driver_dir {
        let d = d.display().to_string();
        if !parts.contains(&d) {
            parts.push(d);
        }
    }
    parts.join(":")
}

/// Runs the program; returns its exit status (128 + signal when killed by one).
pub fn run(o: &Options) -> Result<i32, String> {
    let lib = find_library(o)?;
    let scratch = std::env::temp_dir().join(format!("omptarget-run-{}", std::process::id()));
    let folder = library_folder(&lib, &scratch)?;
    let driver = Path::new("/usr/local/nvidia/lib64");
    let path = library_path(
        &folder,
        std::env::var("LD_LIBRARY_PATH").ok().as_deref(),
        driver.is_dir().then_some(driver),
    );
    let mut cmd = Command::new(&o.command[0]);
    cmd.args(&o.command[1..]).env("LD_LIBRARY_PATH", &path);
    let trace = o
        .trace
        .clone()
        .or_else(|| o.summary.then(|| scratch.join("trace.json")));
    let summary_file = o.summary.then(|| scratch.join("summary.tsv"));
    if let Some(t) = &trace {
        if o.trace.is_some() {
            // The runtime writes it relative to the program's working directory, which is ours.
            let abs = std::path::absolute(t).map_err(|e| format!("{}: {e}", t.display()))?;
            cmd.env("LIBOMPTARGET_PROFILE", abs);
        } else {
            std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
            cmd.env("LIBOMPTARGET_PROFILE", t);
        }
    }
    if trace.is_some() && std::env::var_os("LIBOMPTARGET_PROFILE_GRANULARITY").is_none() {
        // Every event, as a timeline tool shows them (LLVM's default leaves out those under
        // 500 µs); set the variable to choose.
        cmd.env("LIBOMPTARGET_PROFILE_GRANULARITY", "0");
    }
    if let Some(s) = &summary_file {
        std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(s);
        cmd.env("OMPTARGET_RS_PROFILE_SUMMARY", s);
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {}: {e}", o.command[0]))?;
    let code = status.code().unwrap_or_else(|| {
        128 + std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0)
    });
    if let Some(s) = &summary_file {
        match std::fs::read_to_string(s) {
            Ok(text) => eprint!("{}", summary::tables(&summary::parse(&text))),
            Err(_) => eprintln!(
                "omptarget run: no summary was written: the program did not run on omptarget-rs ({}), or did not end normally",
                folder.display()
            ),
        }
    }
    if let Some(t) = &o.trace
        && !t.is_file()
    {
        eprintln!("omptarget run: no trace was written to {}", t.display());
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_path_puts_ours_first_and_keeps_the_rest() {
        assert_eq!(
            library_path(Path::new("/o"), Some("/a::/b"), Some(Path::new("/d"))),
            "/o:/a:/b:/d"
        );
        assert_eq!(
            library_path(Path::new("/o"), Some("/d"), Some(Path::new("/d"))),
            "/o:/d"
        );
        assert_eq!(library_path(Path::new("/o"), None, None), "/o");
    }
}
