//! `omptarget run` on the host device: `tests/profile/overlap.c` runs on our library with no
//! set-up (the library is found beside the command, as `cargo build` leaves them), the trace
//! holds LLVM 19's event names (compared with LLVM 19's own profile of the same binary), every
//! thread's events and the device's queue lanes, and `--summary` prints the tables.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// The runtime library cargo built for this test (`cargo test -p omptarget-cli` leaves it in
/// `deps/`; a workspace build also beside the command).
fn library() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_omptarget"));
    let dir = exe.parent().unwrap();
    [
        dir.join("deps/libomptarget.so"),
        dir.join("libomptarget.so"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .expect("cargo builds libomptarget.so (omptarget-abi) for the command")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("omptarget-run-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn program(dir: &Path) -> PathBuf {
    let exe = dir.join("overlap");
    let o = Command::new("clang-19")
        .args([
            "-fopenmp",
            "-fopenmp-targets=x86_64-pc-linux-gnu",
            "-O1",
            "-g",
        ])
        .arg(repo_root().join("tests/profile/overlap.c"))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("clang-19 runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    exe
}

/// The `"name":` of each event line of a trace written one event per line.
fn event_names(trace: &str) -> std::collections::BTreeSet<String> {
    trace
        .lines()
        .filter(|l| l.contains("\"ph\":\"X\""))
        .filter_map(|l| {
            let at = l.find("\"name\":\"")? + 8;
            Some(l[at..at + l[at..].find('"')?].to_owned())
        })
        .collect()
}

#[test]
fn a_program_runs_on_our_library_with_a_trace_and_a_summary() {
    let dir = scratch("ours");
    let exe = program(&dir);
    let trace = dir.join("trace.json");
    let o = Command::new(env!("CARGO_BIN_EXE_omptarget"))
        .env("OMPTARGET_RS_LIB", library())
        .current_dir(&dir)
        .env_remove("LD_LIBRARY_PATH")
        .env("LIBOMPTARGET_PROFILE_GRANULARITY", "0")
        .args(["run", "--summary", "--trace", "trace.json", "--"])
        .arg(&exe)
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{out}\n{err}");
    assert_eq!(out, "check: OK\n");
    // The summary: each construct at its line, with the bytes it moved.
    let row = |what: &str| {
        err.lines()
            .find(|l| l.ends_with(what))
            .unwrap_or_else(|| panic!("no row ending '{what}' in:\n{err}"))
            .to_owned()
    };
    let enter = row("target enter data  overlap.c:21");
    assert!(
        enter.contains("50,331,648"),
        "6 copies of 8 MiB in: {enter}"
    );
    row("target  overlap.c:22");
    row("target exit data  overlap.c:25");
    row("target nowait  overlap.c:29");
    assert!(err.contains(" ** Device operations"), "{err}");
    assert!(
        err.lines()
            .any(|l| l.contains("copy host to device  device 0"))
    );
    // The trace.
    let text = std::fs::read_to_string(&trace).expect("the trace was written");
    let names = event_names(&text);
    for n in [
        "Runtime: target exe",
        "Runtime: Data Copy",
        "Kernel Target",
        "HostToDev",
        "DevToHost",
    ] {
        assert!(names.contains(n), "{n} missing: {names:?}");
    }
    assert!(text.contains("\"beginningOfTime\":"));
    assert!(text.contains("\"name\":\"process_name\",\"args\":{\"name\":\"libomptarget\"}"));
    // The two OpenMP threads (and libomp's for `nowait`) each have events.
    let host_tids: std::collections::BTreeSet<&str> = text
        .lines()
        .filter(|l| l.contains("\"name\":\"Runtime: target exe\""))
        .filter_map(|l| l.split("\"tid\":").nth(1)?.split(',').next())
        .collect();
    assert!(
        host_tids.len() >= 2,
        "constructs of several threads: {host_tids:?}"
    );
    assert!(text.contains("\"args\":{\"name\":\"device 0 (generic-64bit)\"}"));
    assert!(text.contains("\"name\":\"queue 0x"), "a lane per queue");
}

/// The construct events LLVM 19's profile of the same binary has, ours has too.
#[test]
fn the_event_names_llvm_19_writes() {
    let dir = scratch("llvm");
    let exe = program(&dir);
    let llvm = dir.join("llvm.json");
    let o = Command::new(&exe)
        .env("LD_LIBRARY_PATH", "/usr/lib/llvm-19/lib")
        .env("LIBOMPTARGET_PROFILE", &llvm)
        .env("LIBOMPTARGET_PROFILE_GRANULARITY", "0")
        .output()
        .unwrap();
    assert!(o.status.success());
    let ours = dir.join("ours.json");
    let o = Command::new(env!("CARGO_BIN_EXE_omptarget"))
        .env("OMPTARGET_RS_LIB", library())
        .env("LIBOMPTARGET_PROFILE_GRANULARITY", "0")
        .args(["run", "--trace"])
        .arg(&ours)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success());
    // LLVM's file is one long line: split its events.
    let llvm_text = std::fs::read_to_string(&llvm)
        .unwrap()
        .replace("},{", "},\n{");
    let theirs: std::collections::BTreeSet<String> = event_names(&llvm_text)
        .into_iter()
        .filter(|n| {
            n.starts_with("Runtime: ")
                || ["Kernel Target", "HostToDev", "DevToHost"].contains(&n.as_str())
        })
        .collect();
    assert!(theirs.contains("Runtime: Data Copy"), "{theirs:?}");
    let mine = event_names(&std::fs::read_to_string(&ours).unwrap());
    let missing: Vec<&String> = theirs
        .iter()
        .filter(|n| !mine.contains(*n) && n.as_str() != "Runtime: syncronize")
        .collect();
    assert!(
        missing.is_empty(),
        "LLVM 19 has {missing:?}, ours not: {mine:?}"
    );
}
