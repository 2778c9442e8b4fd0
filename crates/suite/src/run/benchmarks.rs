//! The bench mode (`omptarget-suite bench` on each scenario benchmark of bench/) and the perf mode
//! (the GPU performance table of docs/PERFORMANCE.md: gpu_scenarios under both runtimes with
//! the driver floors and the CPU time per region, the host loop beside GPU work, eight processes
//! on one GPU, then ours under other settings, driver-call profiles, kernel geometry and, with
//! ncu, kernel durations). Both write bench.log.

use super::Ctx;
use super::exec::{self, Job, Ran};
use super::manifest::Runtime;
use super::text::{cut, tail};
use std::fs;
use std::path::{Path, PathBuf};

/// Whether a bench/ program is a scenario benchmark (prints `scenario=NAME median_us=X`),
/// the only kind `omptarget-suite bench` can compare. Others (gpu_share: processes sharing a GPU)
/// take other arguments and are run by hand.
fn is_scenario_benchmark(bin: &Path) -> bool {
    fs::read(bin).is_ok_and(|b| b.windows(9).any(|w| w == b"scenario="))
}

/// The lines of `omptarget-suite bench`'s time table that carry a ratio (they end with `x`;
/// the table ends at its `(median over` line, before the CPU table).
pub fn ratio_lines(out: &str) -> Vec<&str> {
    out.lines()
        .take_while(|l| !l.starts_with("(median over"))
        .filter(|l| l.trim_end().ends_with('x'))
        .collect()
}

/// The goal lines of `omptarget-suite bench` (`goal cpu ...`, `goal beside ...`,
/// `goal procsN ...`), and the bounds beside them (`bound beside ...`).
pub fn goal_lines(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with("goal ") || l.starts_with("bound "))
        .collect()
}

/// One command with its output merged (stdout then stderr as they come), capped by the
/// deadline.
struct Step<'a> {
    ctx: &'a Ctx,
    scratch: PathBuf,
    n: usize,
}

impl Step<'_> {
    fn run(
        &mut self,
        program: &Path,
        args: &[&str],
        rt: Option<&Runtime>,
        env: &[(&str, &str)],
        limit_s: u64,
    ) -> Ran {
        self.n += 1;
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let lib_path = match rt {
            Some(rt) => self.ctx.lib_path(rt),
            None => self.ctx.o.extra_lib.clone(),
        };
        exec::run(&Job {
            program,
            args: &args,
            wrapper: &[],
            env: &env,
            lib_path,
            cwd: &self.ctx.cwd,
            limit: self.ctx.limit(limit_s),
            files: self.scratch.join(format!("step{:03}", self.n)),
            soname: None,
            merge_stderr: true,
        })
    }
}

fn bench_args(ctx: &Ctx, bin: &Path, oracle: &Runtime, ours: &Runtime) -> Vec<String> {
    let mut a = vec![
        "bench".into(),
        bin.display().to_string(),
        "--ours".into(),
        ours.dir.display().to_string(),
        "--llvm".into(),
        oracle.dir.display().to_string(),
    ];
    if !ctx.o.extra_lib.is_empty() {
        a.extend(["--extra-lib-path".into(), ctx.o.extra_lib.clone()]);
    }
    a
}

pub fn bench(ctx: &Ctx) {
    let suite = ctx.main_suite();
    let args: Vec<&str> = ctx.o.bench_args.split_whitespace().collect();
    ctx.say(format!(
        "== bench: omptarget-suite bench --runs {} -- {}",
        ctx.o.bench_runs,
        args.join(" ")
    ));
    let mut step = Step {
        ctx,
        scratch: ctx.scratch("bench"),
        n: 0,
    };
    for bin in super::files_in(&suite.dir.join("bench")) {
        let name = bin
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if !is_scenario_benchmark(&bin) {
            ctx.say(format!("-- {name}: not a scenario benchmark, not run"));
            continue;
        }
        if ctx.deadline.passed() {
            ctx.say(format!("{name}: SKIP(time)"));
            ctx.incomplete();
            continue;
        }
        ctx.say(format!("-- {name}"));
        let mut a = bench_args(ctx, &bin, &suite.oracle, &suite.ours);
        a.extend(["--runs".into(), ctx.o.bench_runs.to_string(), "--".into()]);
        a.extend(args.iter().map(|s| s.to_string()));
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let r = step.run(&ctx.exe, &a, None, &[], ctx.o.bench_timeout_s);
        ctx.append("bench.log", &format!("-- {name}\n{}", r.stdout));
        for l in tail(&r.stdout, 12) {
            ctx.say(cut(l, 200));
        }
        for l in ratio_lines(&r.stdout) {
            ctx.total(format!("bench {name}: {l}"));
        }
        if !r.status.success() {
            ctx.say(format!("bench {name}: FAIL({})", r.status));
            ctx.fail();
        }
    }
}

/// The bench options of the GCC column when the suite folder holds GCC's build of the scenarios
/// (`gcc/gpu_scenarios`, with libgomp and its nvptx plugin in `gcc/lib`): none otherwise. The
/// GOMP_DEBUG=1 log is kept in `scratch` (so in runs.tar.gz).
fn gcc_args(dir: &Path, scratch: &Path) -> Vec<String> {
    let exe = dir.join("gcc/gpu_scenarios");
    if !exe.is_file() {
        return Vec::new();
    }
    [
        "--gcc".into(),
        exe.display().to_string(),
        "--gcc-lib".into(),
        dir.join("gcc/lib").display().to_string(),
        "--gcc-log".into(),
        scratch.join("gcc-gomp-debug.log").display().to_string(),
    ]
    .into()
}

/// A row of the perf mode beside the main table: one `omptarget-suite bench` call on
/// gpu_scenarios with PERF_RUNS runs.
struct PerfRow {
    title: &'static str,
    /// `bench`'s options.
    bench: &'static [&'static str],
    /// The program's arguments.
    args: &'static [&'static str],
    limit_s: u64,
    /// What the row's goal lines are called beside the main table's ("": as they come).
    name: &'static str,
}

/// The host loop beside target nowait regions (~1 s a process) with its floor, as many as
/// complete and a fixed 32 (equal work under both runtimes); 8 processes at
/// once (a twentieth of the iterations: each process waits for the others' regions) with 8
/// floor processes; `kernel1s` alone in a process (~5 s a process), whose CPU in the main run
/// is mostly the threads libomp keeps from the scenarios before it. Together an estimated
/// 2 minutes on an H200 at 3 runs.
const PERF_ROWS: [PerfRow; 4] = [
    PerfRow {
        title: "-- host loop on all cores beside target nowait regions (beside_nowait4MiB), and its floor",
        bench: &["--floor"],
        args: &["beside_nowait4MiB", "5", "1"],
        limit_s: 150,
        name: "",
    },
    PerfRow {
        title: "-- the same loop beside a fixed 32 regions, equal work for both runtimes (beside_fixed4MiB), and its floor",
        bench: &["--floor"],
        args: &["beside_fixed4MiB", "5", "1"],
        limit_s: 150,
        name: "",
    },
    PerfRow {
        title: "-- 8 processes at once on the GPU (map64B, alloc64MiB_kernel at scale 20), and 8 floor processes",
        bench: &["--procs", "8", "--procs-timeout-s", "120", "--floor"],
        args: &["map64B,alloc64MiB_kernel", "5", "20"],
        limit_s: 300,
        name: "",
    },
    PerfRow {
        title: "-- kernel1s alone in a process (what waiting for a long kernel costs the host)",
        bench: &[],
        args: &["kernel1s", "5", "1"],
        limit_s: 120,
        name: "alone",
    },
];

/// A row's goal line under the row's name for its goals (`goal cpu kernel1s: ...` of the row
/// `alone` reads `goal cpu kernel1s (alone): ...`), so that it is not taken for the main
/// table's line of the same scenario.
fn named_goal(line: &str, name: &str) -> String {
    match line.split_once(':') {
        Some((what, rest)) if !name.is_empty() => format!("{what} ({name}):{rest}"),
        _ => line.to_string(),
    }
}

/// Up to `n` lines of a profile (`omptarget-rs profile` lines with ` calls `).
fn profile_lines(out: &str, n: usize) -> Vec<&str> {
    out.lines()
        .filter(|l| l.contains(" calls "))
        .take(n)
        .collect()
}

pub fn perf(ctx: &Ctx) {
    let suite = ctx.main_suite();
    let (ours, oracle) = (&suite.ours, &suite.oracle);
    let sc = suite.dir.join("bench/gpu_scenarios");
    if !sc.is_file() {
        ctx.say(format!("perf: no {}", sc.display()));
        ctx.fail();
        return;
    }
    let runs = ctx.o.perf_runs.to_string();
    let mut step = Step {
        ctx,
        scratch: ctx.scratch("perf"),
        n: 0,
    };
    // Shown in the summary and kept in bench.log.
    let show = |text: &str| {
        ctx.append("bench.log", &format!("{text}\n"));
        ctx.say(text);
    };
    let log = |text: &str| ctx.append("bench.log", &format!("{text}\n"));
    let one_line = |r: &Ran| r.stdout.lines().collect::<Vec<_>>().join(" ");

    let gcc = if ctx.o.perf_gcc {
        gcc_args(&suite.dir, &step.scratch)
    } else {
        Vec::new()
    };
    show(&format!(
        "== perf: gpu_scenarios under {}{} and ours ({runs} runs each, alternating) and the floors",
        oracle.label,
        if gcc.is_empty() { "" } else { ", GCC 12" }
    ));
    if !ctx.o.perf_gcc {
        show("perf: no GCC column (PERF_GCC=0)");
    } else if gcc.is_empty() {
        show("perf: no gcc/gpu_scenarios (gpu/build.sh builds it with gcc-12): no GCC column");
    }
    let mut a = bench_args(ctx, &sc, oracle, ours);
    a.extend(gcc);
    // host_clock first in every process: the CPU's speed there, listed per run below the
    // table (the latency rows follow it on the GPU machines' VMs).
    a.extend(
        [
            "--runs",
            &runs,
            "--overhead",
            "--",
            "host_clock,all",
            "5",
            "1",
        ]
        .map(String::from),
    );
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let r = step.run(&ctx.exe, &a, None, &[], 420);
    show(r.stdout.trim_end());
    if !r.status.success() {
        show("perf: bench failed");
        ctx.fail();
    }
    // Not a verdict on our runtime: a GCC row without a time is reported, not failed.
    if let Some(l) = r
        .stdout
        .lines()
        .find(|l| l.starts_with("GCC 12 on the GPU:"))
    {
        ctx.total(format!("perf {}", l.split(" (").next().unwrap_or(l)));
    }
    // The goals are reported among the totals, not failed: a measurement, not a check.
    for l in goal_lines(&r.stdout) {
        ctx.total(format!("perf {l}"));
    }

    for row in &PERF_ROWS {
        let args = row.args;
        show(row.title);
        if ctx.deadline.passed() {
            show(&format!("perf {}: SKIP(time)", args[0]));
            ctx.incomplete();
            continue;
        }
        let mut a = bench_args(ctx, &sc, oracle, ours);
        a.extend(["--runs", runs.as_str()].map(String::from));
        a.extend(row.bench.iter().map(|s| s.to_string()));
        a.push("--".into());
        a.extend(args.iter().map(|s| s.to_string()));
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let r = step.run(&ctx.exe, &a, None, &[], row.limit_s);
        show(r.stdout.trim_end());
        for l in goal_lines(&r.stdout) {
            ctx.total(format!("perf {}", named_goal(l, row.name)));
        }
        if !r.status.success() {
            show(&format!("perf: {} failed ({})", args[0], r.status));
            ctx.fail();
        }
    }

    show(
        "-- 16 x 1 KiB: the device work in each way through the driver (omptarget-suite probe small-copies)",
    );
    let r = step.run(&ctx.exe, &["probe", "small-copies"], None, &[], 120);
    show(r.stdout.trim_end());
    if !r.status.success() {
        show(&format!(
            "perf: probe small-copies failed: {}",
            tail(&r.stderr, 3).join(" ")
        ));
    }

    show("-- map64B with LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD=0");
    let mut a = bench_args(ctx, &sc, oracle, ours);
    a.extend(
        [
            "--runs",
            &runs,
            "--env",
            "LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD=0",
            "--tag",
            "mm_threshold0",
            "--",
            "map64B",
            "5",
            "2",
        ]
        .map(String::from),
    );
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let r = step.run(&ctx.exe, &a, None, &[], 200);
    show(r.stdout.trim_end());
    if !r.status.success() {
        show("perf: mm bench failed");
        ctx.fail();
    }

    show("-- ours with OMPTARGET_RS_CUDA_STAGING_LIMIT=0 (the driver's pageable path), one run");
    let r = step.run(
        &sc,
        &["all", "5", "1"],
        Some(ours),
        &[("OMPTARGET_RS_CUDA_STAGING_LIMIT", "0")],
        120,
    );
    show(r.stdout.trim_end());
    show("-- ours with OMPTARGET_RS_CUDA_BATCH_COPIES=0 (small copies one call each), one run");
    for s in ["map64B", "arrays16x1KiB"] {
        let r = step.run(
            &sc,
            &[s, "5", "1"],
            Some(ours),
            &[("OMPTARGET_RS_CUDA_BATCH_COPIES", "0")],
            60,
        );
        show(r.stdout.trim_end());
    }
    show("-- ours with LLVM's blocking-sync context (OMPTARGET_RS_CUDA_BLOCKING_SYNC=1), one run");
    let r = step.run(
        &sc,
        &["all", "5", "1"],
        Some(ours),
        &[("OMPTARGET_RS_CUDA_BLOCKING_SYNC", "1")],
        120,
    );
    show(r.stdout.trim_end());

    show("-- driver-call profiles under ours (OMPTARGET_RS_PROFILE=1, one rep, scale 5)");
    let mut shown = 0;
    for s in [
        "empty",
        "map64B",
        "alloc64MiB_kernel",
        "alloc1GiB_kernel",
        "threads8_alloc64MiB",
        "tofrom64MiB_pageable",
        "arrays16x1KiB",
        "nowait32x4MiB",
    ] {
        let r = step.run(
            &sc,
            &[s, "1", "5"],
            Some(ours),
            &[("OMPTARGET_RS_PROFILE", "1")],
            60,
        );
        log(&format!("--- {s}\n{}", r.stdout.trim_end()));
        if shown < 60 {
            ctx.say(format!("--- {s}"));
            for l in profile_lines(&r.stdout, 6) {
                ctx.say(cut(l, 110));
            }
            shown += 7;
        }
    }

    log("-- kernel geometry (LIBOMPTARGET_INFO=0x10, one region)");
    for s in ["alloc64MiB_kernel", "alloc1GiB_kernel"] {
        for (tag, rt) in [("ours", ours), ("llvm", oracle)] {
            let r = step.run(
                &sc,
                &[s, "1", "1000"],
                Some(rt),
                &[("LIBOMPTARGET_INFO", "16")],
                60,
            );
            let launching: Vec<&str> = r
                .stdout
                .lines()
                .filter(|l| l.to_lowercase().contains("launching"))
                .take(2)
                .collect();
            log(&format!("--- {s} {tag}\n{}", launching.join("\n")));
            ctx.say(format!("--- {s} {tag}"));
            if let Some(l) = launching.first() {
                ctx.say(cut(l, 200));
            }
        }
    }

    let bw = suite.dir.join("bin/memcpy_bw");
    if bw.is_file() {
        show("-- host memcpy bandwidth (bench/tools/memcpy_bw.c)");
        let r = step.run(&bw, &["16"], None, &[], 60);
        show(&one_line(&r));
    }

    show("-- nowait32x4MiB under ours, 5 reps, with the driver-call profile");
    let r = step.run(
        &sc,
        &["nowait32x4MiB", "5", "1"],
        Some(ours),
        &[("OMPTARGET_RS_PROFILE", "1")],
        60,
    );
    for l in r.stdout.lines().take(16) {
        show(&cut(l, 110));
    }
    show(&format!(
        "-- nowait32x4MiB under ours and {} with other settings (one run each)",
        oracle.label
    ));
    for (k, v) in [
        ("LIBOMP_NUM_HIDDEN_HELPER_THREADS", "16"),
        ("OMPTARGET_RS_CUDA_STAGING_LIMIT", "2147483648"),
        ("OMP_NUM_THREADS", "4"),
    ] {
        for (tag, rt) in [("ours", ours), ("llvm", oracle)] {
            let r = step.run(&sc, &["nowait32x4MiB", "5", "1"], Some(rt), &[(k, v)], 60);
            show(&format!("{k}={v} {tag}: {}", one_line(&r)));
        }
    }

    let Some(ncu) = find_ncu() else { return };
    let durations = |r: &Ran| -> Vec<String> {
        let lines: Vec<&str> = r
            .stdout
            .lines()
            .filter(|l| l.contains("gpu__time_duration") || l.contains("Error"))
            .collect();
        tail(&lines.join("\n"), 3)
            .into_iter()
            .map(String::from)
            .collect()
    };
    let ncu_args = |extra: &[&str], prog: &Path, args: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "--clock-control",
            "none",
            "--metrics",
            "gpu__time_duration.sum",
        ]
        .map(String::from)
        .to_vec();
        a.extend(extra.iter().map(|s| s.to_string()));
        a.push(prog.display().to_string());
        a.extend(args.iter().map(|s| s.to_string()));
        a
    };
    let exe = ctx.exe.clone();
    let mut ncu_run = |label: &str, rt: Option<&Runtime>, a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let r = step.run(&ncu, &a, rt, &[], 120);
        let d = durations(&r);
        log(&format!("--- {label}\n{}", d.join("\n")));
        ctx.say(format!("--- {label}"));
        for l in d {
            ctx.say(cut(&l, 160));
        }
    };
    ncu_run(
        "empty: clang's kernel under ours",
        Some(ours),
        ncu_args(&["-c", "3"], &sc, &["empty", "1", "10000"]),
    );
    ncu_run(
        "empty: the floor's kernel",
        None,
        ncu_args(
            &["-k", "empty", "-c", "3"],
            &exe,
            &["floor", "empty", "--reps", "1"],
        ),
    );
    show("-- kernel durations with ncu (gpu__time_duration.sum)");
    for s in ["alloc64MiB_kernel", "alloc1GiB_kernel"] {
        ncu_run(
            &format!("{s} ours (clang's kernel)"),
            Some(ours),
            ncu_args(&["-c", "3"], &sc, &[s, "1", "1000"]),
        );
        ncu_run(
            &format!("{s} floor (fill kernel)"),
            None,
            ncu_args(
                &["-k", "fill", "-c", "3"],
                &exe,
                &["floor", s, "--reps", "1"],
            ),
        );
    }
}

fn find_ncu() -> Option<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.join("ncu"))
        .chain([PathBuf::from("/usr/local/cuda/bin/ncu")])
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_lines_and_profiles() {
        let out = "scenario   LLVM 19 (us)   ours (us)   LLVM/ours\n\
                   empty          27.3          9.0        3.04x\n\
                   map64          59.3         18.5        3.21x \n\
                   (median over 3 runs of each run's per-region median; runs alternate)\n";
        assert_eq!(ratio_lines(out).len(), 2);
        // Only the time table's rows: the CPU table after it has ratios too.
        let both = format!(
            "{out}\nCPU time per region\nempty    1.0    0.5    0.50x\ngoal cpu empty: ours/LLVM 0.50 (<= 1): met\n  goal not at the start\nbound beside b: 15%\n"
        );
        assert_eq!(ratio_lines(&both).len(), 2);
        assert_eq!(
            goal_lines(&both),
            [
                "goal cpu empty: ours/LLVM 0.50 (<= 1): met",
                "bound beside b: 15%"
            ]
        );
        assert_eq!(
            named_goal("goal cpu kernel1s: ours/LLVM 1.13 (<= 1): MISSED", "alone"),
            "goal cpu kernel1s (alone): ours/LLVM 1.13 (<= 1): MISSED"
        );
        assert_eq!(
            named_goal("goal procs8 map64B: ours/LLVM 0.99 (<= 1): met", ""),
            "goal procs8 map64B: ours/LLVM 0.99 (<= 1): met"
        );
        let prof = "scenario=empty median_us=9\nomptarget-rs profile (host time in CUDA driver calls):\n  cuInit   1 calls  5 us total\n  cuLaunchKernel  9 calls 3 us total\n";
        assert_eq!(profile_lines(prof, 1), ["  cuInit   1 calls  5 us total"]);
    }

    #[test]
    fn the_gcc_column_comes_with_gccs_build() {
        let d = std::env::temp_dir().join(format!("omptarget-perf-gcc-{}", std::process::id()));
        fs::create_dir_all(d.join("gcc/lib")).unwrap();
        assert!(gcc_args(&d, Path::new("/s")).is_empty());
        fs::write(d.join("gcc/gpu_scenarios"), "").unwrap();
        let g = |p: &str| d.join(p).display().to_string();
        assert_eq!(
            gcc_args(&d, Path::new("/s")),
            [
                "--gcc",
                &g("gcc/gpu_scenarios"),
                "--gcc-lib",
                &g("gcc/lib"),
                "--gcc-log",
                "/s/gcc-gomp-debug.log"
            ]
        );
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn only_scenario_benchmarks_are_compared() {
        let d = std::env::temp_dir().join(format!("omptarget-bench-{}", std::process::id()));
        fs::create_dir_all(&d).unwrap();
        fs::write(
            d.join("a"),
            b"\x7fELF...printf(\"scenario=%s median_us=%.3f\")",
        )
        .unwrap();
        fs::write(d.join("b"), b"\x7fELF...share label=%s").unwrap();
        assert!(is_scenario_benchmark(&d.join("a")));
        assert!(!is_scenario_benchmark(&d.join("b")));
        assert!(!is_scenario_benchmark(&d.join("missing")));
        fs::remove_dir_all(d).unwrap();
    }
}
