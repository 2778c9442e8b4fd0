//! `omptarget-suite bench --gcc` end to end, with shell scripts standing in for the benchmark
//! (clang's build, told apart by the runtime folder first in LD_LIBRARY_PATH) and for GCC's
//! build (which "offloads", printing the nvptx plugin's launch lines under GOMP_DEBUG=1, only
//! when its libgomp folder comes first, as libgomp falls back to the host without its plugin);
//! then the CPU and beside tables and `--procs`, with scripts that print those lines and serve
//! gpu_scenarios.c's side of the start barrier.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn script(path: &Path, body: &str) {
    fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

struct Fixture {
    dir: PathBuf,
}

/// Every run appends `NAME GOMP_DEBUG ARGS` to `calls`. GCC's empty scenario launches one
/// kernel per region on the "GPU"; its map64B scenario launches none (runs on the host).
const GCC: &str = r#"d=$(dirname "$0")
echo "gcc ${GOMP_DEBUG:-} $*" >> "$d/calls"
[ -n "${HANG:-}" ] && [ -z "${GOMP_DEBUG:-}" ] && exec sleep 30
case ${LD_LIBRARY_PATH%%:*} in */gcclib) gpu=1 ;; *) gpu=0 ;; esac
n=$(( $2 * 10 ))
if [ "${GOMP_DEBUG:-}" = 1 ] && [ $gpu = 1 ]; then
  echo "CUDA Driver 13.0" >&2
  i=0; while [ $i -lt $n ]; do
    echo '  GOMP_OFFLOAD_run: kernel empty$_omp_fn$0: launch [(teams: 1), 1, 1] [(lanes: 32), (threads: 1), 1]' >&2
    i=$((i + 1)); done
fi
echo "scenario=empty median_us=15 min_us=14 reps=$2 iters=10"
echo "scenario=map64B median_us=1 min_us=1 reps=$2 iters=10"
"#;

const PROG: &str = r#"d=$(dirname "$0")
case ${LD_LIBRARY_PATH%%:*} in */ours) who=ours t=10 ;; *) who=llvm t=30 ;; esac
echo "$who $*" >> "$d/calls"
echo "scenario=empty median_us=$t min_us=1 reps=$2 iters=10"
echo "scenario=map64B median_us=$((t * 2)) min_us=1 reps=$2 iters=10"
"#;

impl Fixture {
    fn new(tag: &str) -> Fixture {
        let dir = std::env::temp_dir().join(format!(
            "omptarget-suite-bench-{}-{tag}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        for rt in ["ours", "llvm", "gcclib"] {
            fs::create_dir_all(dir.join(rt)).unwrap();
        }
        for rt in ["ours", "llvm"] {
            fs::write(dir.join(rt).join("libomptarget.so.19.1"), "").unwrap();
        }
        script(&dir.join("prog"), PROG);
        script(&dir.join("gcc"), GCC);
        Fixture { dir }
    }

    /// `omptarget-suite bench prog --gcc gcc ... --runs 2 -- all 5 1`: (exit code, stdout).
    fn bench(&self, extra: &[&str], env: &[(&str, &str)]) -> (i32, String) {
        let d = &self.dir;
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_omptarget-suite"));
        cmd.arg("bench")
            .arg(d.join("prog"))
            .arg("--ours")
            .arg(d.join("ours"))
            .arg("--llvm")
            .arg(d.join("llvm"))
            .arg("--gcc")
            .arg(d.join("gcc"))
            .args(["--extra-lib-path", "/driver", "--runs", "2"])
            .args(extra)
            .args(["--", "all", "5", "1"]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    /// `omptarget-suite bench prog ... EXTRA -- ARGS` without GCC, with `prog` replaced by `body`
    /// first: (exit code, stdout).
    fn bench_with(&self, body: &str, extra: &[&str], args: &[&str]) -> (i32, String) {
        let d = &self.dir;
        script(&d.join("prog"), body);
        let out = Command::new(env!("CARGO_BIN_EXE_omptarget-suite"))
            .arg("bench")
            .arg(d.join("prog"))
            .arg("--ours")
            .arg(d.join("ours"))
            .arg("--llvm")
            .arg(d.join("llvm"))
            .args(extra)
            .arg("--")
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    }

    fn calls(&self) -> String {
        fs::read_to_string(self.dir.join("calls")).unwrap_or_default()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn line_with<'a>(out: &'a str, start: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting with {start:?} in:\n{out}"))
}

fn cols(l: &str) -> Vec<&str> {
    l.split_whitespace().collect()
}

#[test]
fn gcc_times_count_where_its_kernels_were_launched() {
    let f = Fixture::new("gpu");
    let lib = f.dir.join("gcclib");
    let log = f.dir.join("gomp.log");
    let (code, out) = f.bench(
        &[
            "--gcc-lib",
            lib.to_str().unwrap(),
            "--gcc-log",
            log.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        cols(line_with(&out, "empty ")),
        ["empty", "30.000", "10.000", "3.00x", "15.000", "1.50x"]
    );
    assert!(
        line_with(&out, "map64B ").ends_with("3.00x              host fallback"),
        "{out}"
    );
    assert!(out.contains("GCC 12 on the GPU: 1 of 2 scenarios"), "{out}");
    assert!(out.contains(
        "gcc check empty                            gpu: 10 launches for 10 timed regions | GOMP_OFFLOAD_run: kernel empty$_omp_fn$0: launch"
    ), "{out}");
    assert!(out.contains(&format!("with LD_LIBRARY_PATH={}:/driver;", lib.display())));
    // The check first, then the runtimes alternating, GCC as often as the others.
    assert_eq!(
        f.calls(),
        "gcc 1 all 1 1000\nllvm all 5 1\nours all 5 1\ngcc  all 5 1\n\
         llvm all 5 1\nours all 5 1\ngcc  all 5 1\n"
    );
    // The check's log is kept, stderr and stdout in order.
    let kept = fs::read_to_string(&log).unwrap();
    assert!(kept.starts_with("CUDA Driver 13.0\n  GOMP_OFFLOAD_run: kernel"));
    assert!(
        kept.ends_with("reps=1 iters=10\nscenario=map64B median_us=1 min_us=1 reps=1 iters=10\n")
    );
}

#[test]
fn without_its_libgomp_gcc_falls_back_to_the_host_and_the_rows_say_so() {
    let f = Fixture::new("host");
    let (code, out) = f.bench(&[], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(line_with(&out, "empty ").ends_with("3.00x              host fallback"));
    assert!(line_with(&out, "map64B ").ends_with("3.00x              host fallback"));
    assert!(out.contains("GCC 12 on the GPU: 0 of 2 scenarios"), "{out}");
    assert!(out.contains("HOST FALLBACK: no kernel launch logged"));
}

#[test]
fn a_gcc_run_that_hangs_costs_its_column_not_the_table() {
    let f = Fixture::new("hang");
    let lib = f.dir.join("gcclib");
    let (code, out) = f.bench(
        &["--gcc-lib", lib.to_str().unwrap(), "--gcc-timeout-s", "1"],
        &[("HANG", "1")],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        line_with(&out, "empty ").ends_with("3.00x           failed (timeout)"),
        "{out}"
    );
    assert!(out.contains("gcc run 1: timeout: "), "{out}");
    assert!(out.contains("gcc run 2: timeout: "), "{out}");
}

#[test]
fn a_missing_gcc_build_is_an_error() {
    let f = Fixture::new("missing");
    fs::remove_file(f.dir.join("gcc")).unwrap();
    let (code, _) = f.bench(&[], &[]);
    assert_eq!(code, 1);
    assert_eq!(f.calls(), "");
}

/// Ours spins while a long kernel runs (kernel1s: a second of CPU per region), LLVM 19 sleeps;
/// ours takes a quarter of LLVM's CPU for an empty region. The beside row: the host loop is
/// 2% slower beside ours' regions, 12% beside LLVM's.
const PROG_CPU: &str = r#"d=$(dirname "$0")
case ${LD_LIBRARY_PATH%%:*} in */ours) who=ours ;; *) who=llvm ;; esac
echo "$who $*" >> "$d/calls"
n=$(grep -c "^$who" "$d/calls")
case $1 in
beside_nowait4MiB)
  if [ $who = ours ]; then p=2.$n; r=300; else p=1$n.0; r=0; fi
  echo "beside=beside_nowait4MiB alone_ms=90.000 beside_ms=9$n.000 slowdown_pct=$p regions_during=$r min_alone_ms=1 reps=$2 iters=1000 threads=16"
  ;;
*)
  if [ $who = ours ]; then c=5 k=1000000; else c=20 k=50; fi
  echo "scenario=empty median_us=10 min_us=1 reps=$2 iters=10 cpu_us=$c"
  echo "scenario=kernel1s median_us=1000000 min_us=1 reps=$2 iters=1 cpu_us=$k"
  echo "scenario=host_clock median_us=1.4 min_us=1 reps=$2 iters=10 cpu_us=1.4"
  ;;
esac
"#;

#[test]
fn the_cpu_table_compares_cpu_time_per_region_with_its_goals() {
    let f = Fixture::new("cpu");
    let (code, out) = f.bench_with(PROG_CPU, &["--runs", "2"], &["all", "5", "1"]);
    assert_eq!(code, 0, "{out}");
    // The time table first, as before; its footer ends it.
    assert_eq!(
        cols(line_with(&out, "empty ")),
        ["empty", "10.000", "10.000", "1.00x"]
    );
    let cpu = &out[out.find("CPU time per region").expect(&out)..];
    assert_eq!(
        cols(line_with(cpu, "empty ")),
        ["empty", "20.000", "5.000", "0.25x"]
    );
    assert_eq!(
        cols(line_with(cpu, "kernel1s ")),
        ["kernel1s", "50.000", "1000000.000", "20000.00x"]
    );
    assert!(!cpu.contains("host_clock "), "{out}");
    assert!(
        out.contains("goal cpu empty: ours/LLVM 0.25 (<= 1): met\n"),
        "{out}"
    );
    assert!(
        out.contains("goal cpu kernel1s: ours/LLVM 20000.00 (<= 1): MISSED\n"),
        "{out}"
    );
    assert!(!out.contains("Host loop"), "{out}");
}

#[test]
fn the_beside_table_gives_each_runtimes_slowdown_and_the_goal() {
    let f = Fixture::new("beside");
    let (code, out) = f.bench_with(PROG_CPU, &["--runs", "3"], &["beside_nowait4MiB", "5", "1"]);
    assert_eq!(code, 0, "{out}");
    // No scenario lines: no time table.
    assert!(!out.contains("LLVM/ours"), "{out}");
    let row = |rt: &str| {
        out.lines()
            .find(|l| l.starts_with("beside_nowait4MiB") && cols(l)[1] == rt)
            .map(cols)
            .unwrap_or_else(|| panic!("no {rt} row in:\n{out}"))
    };
    // Medians over the 3 runs: beside 92 ms, slowdowns 2.2% and 12%.
    assert_eq!(
        row("ours"),
        [
            "beside_nowait4MiB",
            "ours",
            "90.000",
            "92.000",
            "2.20%",
            "300"
        ]
    );
    assert_eq!(
        row("LLVM"),
        [
            "beside_nowait4MiB",
            "LLVM",
            "19",
            "90.000",
            "92.000",
            "12.00%",
            "0"
        ]
    );
    assert!(
        out.contains(
            "goal beside beside_nowait4MiB: ours 2.20% (<= 5% and <= LLVM 19's 12.00%): met"
        ),
        "{out}"
    );
    // LLVM's regions never completed during the loop: said so.
    assert!(
        out.contains("beside beside_nowait4MiB: under LLVM 19, no region completed during the loop in 3 of 3 runs"),
        "{out}"
    );
    assert!(
        out.contains("ours     slowdown per run (%): 2.10 2.20 2.30"),
        "{out}"
    );
}

/// A process of `--procs`: per scenario, a start that takes longer the higher its index, the
/// barrier (one byte out, one byte in), then the scenario line (ours 10 + index, LLVM 30 +
/// index) with the time it passed the barrier.
const PROG_PROCS: &str = r#"d=$(dirname "$0")
case ${LD_LIBRARY_PATH%%:*} in */ours) who=ours t=10 ;; *) who=llvm t=30 ;; esac
echo "$who $SCEN_PROC $*" >> "$d/calls"
for s in $(echo "$1" | tr , ' '); do
  sleep "0.$SCEN_PROC"
  printf r >&"$SCEN_READY_FD"
  dd bs=1 count=1 status=none <&"$SCEN_START_FD" >/dev/null
  echo "$who $s $(date +%s%N)" >> "$d/passed"
  echo "scenario=$s median_us=$((t + SCEN_PROC)) min_us=1 reps=$2 iters=10"
done
"#;

#[test]
fn procs_start_together_and_give_the_median_and_the_slowest_process() {
    let f = Fixture::new("procs");
    let (code, out) = f.bench_with(
        PROG_PROCS,
        &["--runs", "2", "--procs", "3"],
        &["map64B,alloc64MiB_kernel", "5", "10"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("3 processes at once per runtime"), "{out}");
    // Median process 31 / 11, slowest 32 / 12.
    assert_eq!(
        cols(line_with(&out, "map64B ")),
        [
            "map64B", "31.000", "32.000", "1.03x", "11.000", "12.000", "1.09x", "0.35x"
        ]
    );
    assert!(
        line_with(&out, "alloc64MiB_kernel ").ends_with("0.35x"),
        "{out}"
    );
    assert!(
        out.contains("goal procs3 map64B: ours slowest/median 1.09 (<= 1.5): met"),
        "{out}"
    );
    assert!(
        out.contains("goal procs3 alloc64MiB_kernel: ours/LLVM 0.35 (<= 1): met"),
        "{out}"
    );
    // Per run, all 3 under LLVM 19, then all 3 under ours.
    let calls = f.calls();
    let who: Vec<&str> = calls
        .lines()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(
        who,
        [
            "llvm", "llvm", "llvm", "ours", "ours", "ours", "llvm", "llvm", "llvm", "ours", "ours",
            "ours"
        ],
        "{calls}"
    );
    // Each group's processes reached each barrier 0.1 s apart and passed it together.
    let passed = fs::read_to_string(f.dir.join("passed")).unwrap();
    let lines: Vec<Vec<&str>> = passed.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), 2 * 2 * 2 * 3, "{passed}");
    for group in lines.chunks(6) {
        for s in ["map64B", "alloc64MiB_kernel"] {
            let t: Vec<u128> = group
                .iter()
                .filter(|l| l[1] == s)
                .map(|l| l[2].parse().unwrap())
                .collect();
            assert_eq!(t.len(), 3, "{passed}");
            let spread = t.iter().max().unwrap() - t.iter().min().unwrap();
            assert!(spread < 150_000_000, "{s}: {spread} ns\n{passed}");
        }
    }
}

#[test]
fn procs_take_no_gcc_column() {
    let f = Fixture::new("procs-gcc");
    let (code, out) = f.bench_with(
        PROG_PROCS,
        &["--procs", "2", "--gcc", f.dir.join("gcc").to_str().unwrap()],
        &["map64B", "5", "10"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("--procs takes neither --gcc nor --overhead"),
        "{out}"
    );
    assert_eq!(f.calls(), "");
}
