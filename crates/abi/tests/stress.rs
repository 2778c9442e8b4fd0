//! Stress programs under `tests/stress/`, run under our library only, each with a deadline:
//! a run that does not finish in time is killed and the test fails (a hang is a failure, never
//! a stuck test run). LLVM 19 fails these programs (docs/DIVERGENCES.md), so there is nothing
//! to compare with; each program checks its own results.
//!
//! The default sizes keep `cargo test` short. `scripts/stress.sh` runs the long versions
//! (`OMPTARGET_STRESS_CYCLES`, `OMPTARGET_STRESS_RUNS`, `OMPTARGET_STRESS_TIMEOUT`).

mod common;

use common::{compile, env_number, our_lib_dir, profile_dir, repo_root, run_with_deadline};
use std::time::{Duration, Instant};

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
    let lib_dir = our_lib_dir("stress-lib");
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
        let (code, stdout, stderr) = run_with_deadline(&exe, &args, &[], &lib_dir, deadline)
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

/// A fresh thread's first mapping meets a `dlclose` of a library with its own image, with the
/// schedule that once hung forced by the program: when the runtime registers a
/// thread-local destructor (which takes the dynamic loader's lock), the program first lets
/// another thread run into `dlclose` and reach the runtime. A runtime lock held across that
/// registration deadlocks, which the program reports (exit 3) before the deadline.
#[test]
fn a_first_mapping_beside_a_dlclose_never_hangs() {
    let root = repo_root();
    let build = profile_dir().join("stress-build");
    std::fs::create_dir_all(&build).unwrap();
    let lib = build.join("libfirst_mapping_lib.so");
    compile(
        &root.join("tests/stress/dlopen_register_lib.c"),
        &lib,
        &["-shared", "-fPIC"],
    );
    let exe = build.join("first_mapping_dlclose");
    compile(
        &root.join("tests/stress/first_mapping_dlclose.c"),
        &exe,
        &["-rdynamic", "-lpthread", "-ldl"],
    );
    let lib_dir = our_lib_dir("stress-lib");
    for run in 1..=3 {
        let (code, stdout, stderr) = run_with_deadline(
            &exe,
            &[lib.display().to_string(), "4".to_owned()],
            &[],
            &lib_dir,
            Duration::from_secs(60),
        )
        .unwrap_or_else(|e| panic!("run {run}: {e}"));
        assert!(
            code == 0 && stdout.contains("errors=0 ok"),
            "run {run}: exit {code}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
    }
}

/// The program exits while `target nowait` regions run, by returning from
/// `main`, by `exit()` from `main`, and by `exit()` from another thread: the runtime lets the
/// running constructs finish before it unloads the images, and the program ends cleanly
/// (LLVM 19 crashes in every mode; before the fix ours stopped every run with "Host ptr ...
/// does not have a matching target pointer" or a crash).
#[test]
fn exit_while_nowait_regions_run_ends_cleanly() {
    let build = profile_dir().join("stress-build");
    std::fs::create_dir_all(&build).unwrap();
    let exe = build.join("exit_with_nowait");
    compile(
        &repo_root().join("tests/stress/exit_with_nowait.c"),
        &exe,
        &["-lpthread"],
    );
    let lib_dir = our_lib_dir("stress-lib");
    for mode in ["return", "exit", "thread"] {
        for run in 1..=4 {
            let (code, stdout, stderr) = run_with_deadline(
                &exe,
                &[mode.to_owned()],
                &[],
                &lib_dir,
                Duration::from_secs(60),
            )
            .unwrap_or_else(|e| panic!("{mode} run {run}: {e}"));
            assert!(
                code == 0 && stdout.contains("issued") && stderr.is_empty(),
                "{mode} run {run}: exit {code}\nstdout:\n{stdout}\nstderr:\n{stderr}"
            );
        }
    }
}

/// The program exits with a construct of its own in flight that nothing can finish: `exit()`
/// called inside a region on the host device or by a signal handler that interrupted one, a
/// region left by `longjmp`, a `fork()`ed child
/// of a process whose other thread is inside a region. The exit waits for none of them
/// (LLVM 19 exits at once; the runtime used to wait 10 s, then blame other threads).
#[test]
fn exit_never_waits_for_its_own_or_absent_threads() {
    let build = profile_dir().join("stress-build");
    std::fs::create_dir_all(&build).unwrap();
    let exe = build.join("exit_from_region");
    compile(
        &repo_root().join("tests/stress/exit_from_region.c"),
        &exe,
        &["-lpthread"],
    );
    let lib_dir = our_lib_dir("stress-lib");
    for mode in ["inside", "signal", "longjmp", "fork"] {
        let started = Instant::now();
        let (code, stdout, stderr) = run_with_deadline(
            &exe,
            &[mode.to_owned()],
            &[],
            &lib_dir,
            Duration::from_secs(30),
        )
        .unwrap_or_else(|e| panic!("{mode}: {e}"));
        let took = started.elapsed();
        assert!(
            code == 0 && stdout.contains("checked") && stderr.is_empty(),
            "{mode}: exit {code}\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
        // The fork mode's parent waits about 1 s for its own region.
        assert!(
            took < Duration::from_secs(5),
            "{mode}: the exit took {took:?}\nstderr:\n{stderr}"
        );
    }
}

/// A child forked while another thread is inside a region (a kernel on a GPU, where the child
/// inherits the parent's driver state) exits at once with status 0, and the parent's region
/// completes correctly (`tests/stress/fork_during_region.c`; gpu/exit-checks.sh runs it on a
/// GPU).
#[test]
fn a_child_forked_during_a_region_exits_at_once() {
    let build = profile_dir().join("stress-build");
    std::fs::create_dir_all(&build).unwrap();
    let exe = build.join("fork_during_region");
    compile(
        &repo_root().join("tests/stress/fork_during_region.c"),
        &exe,
        &["-lpthread"],
    );
    let lib_dir = our_lib_dir("stress-lib");
    let (code, stdout, stderr) =
        run_with_deadline(&exe, &[], &[], &lib_dir, Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        code == 0
            && stdout.contains("child exited 0 after under 500 ms; region ok")
            && stderr.is_empty(),
        "exit {code}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

/// A deep copy of N structs whose pointer members are attached inside one mapped array
/// (`tests/stress/deep_copy.c`, by hand and through a `declare mapper`): 4x the structs take
/// well under 16x the time (linear: about 4x; the linear searches of attached pointers made
/// it quadratic), and the exit's memory stays far below the N^2 restores that the copy backs
/// queued (6.3 GB at N = 20,000 through the mapper).
#[test]
fn pointer_attach_in_one_array_scales_linearly() {
    let build = profile_dir().join("stress-build");
    std::fs::create_dir_all(&build).unwrap();
    let exe = build.join("deep_copy");
    compile(&repo_root().join("tests/stress/deep_copy.c"), &exe, &[]);
    let lib_dir = our_lib_dir("stress-lib");
    // (enter + exit seconds, max RSS in KiB) of the best of three runs.
    let measure = |mode: &str, n: usize| -> (f64, u64) {
        (0..3)
            .map(|_| {
                let (code, stdout, stderr) = run_with_deadline(
                    &exe,
                    &[mode.to_owned(), n.to_string()],
                    &[],
                    &lib_dir,
                    Duration::from_secs(120),
                )
                .unwrap_or_else(|e| panic!("{mode} {n}: {e}"));
                assert!(
                    code == 0 && stdout.contains("bad 0"),
                    "{mode} {n}: exit {code}\nstdout:\n{stdout}\nstderr:\n{stderr}"
                );
                let words: Vec<&str> = stdout.split_whitespace().collect();
                let field = |name: &str| {
                    let i = words.iter().position(|w| *w == name).unwrap();
                    words[i + 1].parse::<f64>().unwrap()
                };
                (field("enter") + field("exit"), field("maxrss") as u64)
            })
            .fold((f64::MAX, u64::MAX), |(t, m), (t1, m1)| {
                (t.min(t1), m.min(m1))
            })
    };
    for mode in ["manual", "mapper"] {
        let (small, _) = measure(mode, 5_000);
        let (large, rss) = measure(mode, 20_000);
        let ratio = large / small.max(1e-4);
        println!(
            "{mode}: 5,000 structs {small:.4} s, 20,000 {large:.4} s ({ratio:.1}x), {rss} KiB"
        );
        assert!(
            ratio < 10.0,
            "{mode}: 4x the structs took {ratio:.1}x the time ({small:.4} s -> {large:.4} s): quadratic"
        );
        assert!(
            rss < 1024 * 1024,
            "{mode}: {rss} KiB at the exit of 20,000 structs: the restores grow as N^2"
        );
    }
}
