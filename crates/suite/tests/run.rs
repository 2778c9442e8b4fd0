//! `omptarget-suite run` end to end on a made-up build folder: shell scripts stand in for the
//! programs (they write the loader-trace line the real loader would), two empty folders for
//! the runtimes, and a script for compute-sanitizer. Checks the verdicts, tables, totals,
//! logs and exit status a GPU run would give for the same outcomes.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn script(path: &Path, body: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// Which runtime a program runs under, and the trace line of the library it "loads".
const PRELUDE: &str = r#"rt=${LD_LIBRARY_PATH%%:*}
case $rt in */ours) who=ours ;; *) who=llvm ;; esac
lib=$rt
[ -n "${WRONG_LIB:-}" ] && [ $who = ours ] && lib=/elsewhere
[ -n "${LD_DEBUG_OUTPUT:-}" ] && echo "     1:	calling init: $lib/libomptarget.so.19.1" > "$LD_DEBUG_OUTPUT.fake$$"
"#;

const SANITIZER: &str = r#"# compute-sanitizer --tool T --print-limit N --target-processes all PROG ARGS...
tool=$2; shift 6
echo "========= COMPUTE-SANITIZER"
[ -n "${GVISOR:-}" ] && { echo "========= Error: Device not supported. Unable to initialize."; exit 1; }
"$@"; rc=$?
rt=${LD_LIBRARY_PATH%%:*}
case "$tool/$(basename "$1")/$(basename "$rt")" in
  initcheck/same/ours) echo "========= Uninitialized __global__ memory read of size 8 bytes"
    echo "========= ERROR SUMMARY: 1 error" ;;
  */errmsg/*) echo "========= Error: CUDA initialized before the Sanitizer. The Sanitizer will be disabled"
    echo "========= ERROR SUMMARY: 1 error" ;;
  *) echo "========= ERROR SUMMARY: 0 errors" ;;
esac
exit $rc
"#;

struct Fixture {
    dir: PathBuf,
}

impl Fixture {
    fn new(tag: &str) -> Fixture {
        let dir =
            std::env::temp_dir().join(format!("omptarget-suite-{}-{tag}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        for rt in ["ours", "llvm"] {
            fs::create_dir_all(dir.join(rt)).unwrap();
            fs::write(dir.join(rt).join("libomptarget.so.19.1"), "").unwrap();
        }
        fs::write(
            dir.join("manifest.tsv"),
            "# name\tenv\targs\tflags\tshared_lib\n\
             same\t-\t-\t-\t-\n\
             differs\t-\t-\t-\t-\n\
             errmsg\t-\t-\tSTDERR\t-\texit 1\n\
             div\t-\t-\tSTDERR,DIVERGENCE\t-\n\
             wrongload\tWRONG_LIB=1\t-\t-\t-\n\
             slow\t-\tfast\t-\t-\n\
             nobin\t-\t-\t-\t-\n",
        )
        .unwrap();
        fs::create_dir_all(dir.join("expected")).unwrap();
        fs::write(dir.join("expected/div.expected"), "spec\n").unwrap();
        let progs = [
            ("same", "echo result 42"),
            ("differs", "echo result $who"),
            (
                "errmsg",
                "[ $who = ours ] && echo 'bad pointer 0xdead' >&2 || echo 'bad pointer 0x7f00' >&2; exit 1",
            ),
            ("div", "[ $who = ours ] && echo spec || echo llvm"),
            ("wrongload", "echo fine"),
            (
                "slow",
                "[ $who = ours ] && [ \"$1\" = fast ] && sleep 4; echo done",
            ),
        ];
        for abi in ["v7", "v8"] {
            for (name, body) in progs {
                // The v8 build of `same` prints something else: a v8 failure.
                let body = if abi == "v8" && name == "same" {
                    "echo result 43"
                } else {
                    body
                };
                script(&dir.join(abi).join(name), &format!("{PRELUDE}{body}\n"));
            }
        }
        script(
            &dir.join("examples/ex"),
            &format!(
                "{PRELUDE}echo \"ran on: $who\" | sed 's/: .*/: device 0/'; echo \"time: $$ ms\"; echo 'check: OK'\n"
            ),
        );
        script(
            &dir.join("bench/scen"),
            &format!(
                "{PRELUDE}echo scenario=empty median_us=$([ $who = ours ] && echo 5 || echo 10)\n"
            ),
        );
        script(&dir.join("bench/other_tool"), "echo not a benchmark\n");
        script(&dir.join("fake-sanitizer"), SANITIZER);
        Fixture { dir }
    }

    /// Runs `omptarget-suite run` with the fixture's folders; (exit code, stdout).
    fn run(&self, extra: &[&str], env: &[(&str, &str)]) -> (i32, String) {
        let d = &self.dir;
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_omptarget-suite"));
        cmd.args(["run", "--out"])
            .arg(d)
            .arg("--llvm")
            .arg(d.join("llvm"))
            .arg("--logs")
            .arg(d.join("logs"))
            .args([
                "--extra-lib",
                "",
                "--timeout-s",
                "2",
                "--san-timeout-s",
                "2",
                "--jobs",
                "3",
            ])
            .arg("--sanitizer")
            .arg(d.join("fake-sanitizer"))
            .args(extra);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    fn log(&self, name: &str) -> String {
        fs::read_to_string(self.dir.join("logs").join(name)).unwrap_or_default()
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

#[test]
fn conformance_examples_bench_and_sanitizer_tables() {
    let f = Fixture::new("all");
    let (code, out) = f.run(&["--san-tools", "memcheck,initcheck", "--", "all"], &[]);
    assert_eq!(code, 1, "{out}");
    // Conformance rows that are not ok, with their reasons.
    let row = |name: &str| line_with(&out, &format!("{name:<32} ")).to_owned();
    assert!(row("differs").contains("FAIL(stdout)"), "{out}");
    assert!(row("wrongload").contains("FAIL(ours-run-loaded:/elsewhere/libomptarget.so.19.1)"));
    assert!(
        row("slow").contains("FAIL(ours-timeout,status,stdout)"),
        "{out}"
    );
    assert!(row("slow").contains("exit 0     timeout"));
    assert!(row("nobin").contains("SKIP(no-v7-binary)"));
    assert!(row("same").contains("v8:FAIL(stdout)"));
    // STDERR program: addresses differ, normalised they agree.
    assert!(line_with(&out, "ok in v7 and v8 (2):").contains("errmsg div"));
    assert!(out.contains("   llvm|ours < result llvm"));
    assert!(out.contains("   v7|v8 > result 43"));
    let v7 = line_with(&out, "conformance v7 (LLVM 19 vs ours)");
    // same, errmsg, div agree; differs, wrongload, slow fail; nobin skipped.
    assert_eq!(
        v7,
        "conformance v7 (LLVM 19 vs ours): 3 agree, 3 FAIL, 1 skipped, of 7"
    );
    assert_eq!(
        line_with(&out, "conformance v8 (ours"),
        "conformance v8 (ours, vs v7 under ours): 4 agree, 2 FAIL"
    );
    // Examples: time lines may differ.
    assert_eq!(line_with(&out, "ex: "), "ex: ok");
    // Bench: only the scenario benchmark, with its ratio.
    assert!(out.contains("-- other_tool: not a scenario benchmark, not run"));
    assert!(
        line_with(&out, "bench scen: empty").ends_with("2.00x"),
        "{out}"
    );
    // Sanitizer: ours vs LLVM per tool.
    assert!(out.contains("-- initcheck same: FAIL(ours 1 errors (exit 0), llvm clean (exit 0))"));
    assert!(
        out.contains("      ours| ========= Uninitialized __global__ memory read of size 8 bytes")
    );
    assert!(out.contains("-- memcheck slow: FAIL(ours timeout, llvm clean (exit 0))"));
    assert!(out.contains(
        "sanitizer disabled itself under both runtimes (CUDA initialised before it, in a library constructor; not checked): errmsg (memcheck, initcheck)"
    ));
    let memcheck = line_with(&out, "memcheck  ");
    let cols: Vec<&str> = memcheck.split_whitespace().collect();
    // ours: clean errors disabled none skip | llvm: ... | FAIL of
    assert_eq!(
        cols,
        [
            "memcheck", "4", "0", "1", "1", "1", "5", "0", "1", "0", "1", "2", "7"
        ]
    );
    assert_eq!(
        line_with(&out, "sanitize initcheck (ours vs LLVM 19):"),
        "sanitize initcheck (ours vs LLVM 19): ours 3 clean, 1 with errors, 1 disabled; LLVM 19 5 clean, 0 with errors, 1 disabled; 3 FAIL, 1 skipped, of 7"
    );
    assert!(out.trim_end().ends_with("RESULT: FAIL"));
    // Logs: the eight files at most, with every program's runs.
    let mut logs: Vec<String> = fs::read_dir(f.dir.join("logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    logs.sort();
    assert_eq!(
        logs,
        [
            "bench.log",
            "conformance.log",
            "examples.log",
            "machine.log",
            "results.tsv",
            "runs.tar.gz",
            "sanitize.log",
            "summary.txt"
        ]
    );
    assert!(f.log("summary.txt").ends_with("RESULT: FAIL\n"));
    let tsv = f.log("results.tsv");
    assert!(
        tsv.contains("differs\tFAIL(stdout)\texit 0\texit 0\tok\n"),
        "{tsv}"
    );
    assert!(tsv.contains("initcheck\tsame\tFAIL(ours 1 errors (exit 0), llvm clean (exit 0))\t"));
    assert!(f.log("conformance.log").contains("--- ours (v8):"));
    assert!(
        f.log("sanitize.log")
            .contains("=================== initcheck same: FAIL")
    );
}

#[test]
fn a_budget_that_runs_out_skips_and_says_what_to_rerun() {
    let f = Fixture::new("budget");
    let (code, out) = f.run(
        &[
            "--budget-s",
            "0",
            "--san-tools",
            "racecheck",
            "--",
            "conformance",
            "sanitize",
        ],
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(
        line_with(&out, "conformance v7 (LLVM 19"),
        "conformance v7 (LLVM 19 vs ours): 0 agree, 0 FAIL, 7 skipped, of 7"
    );
    assert!(out.contains("sanitize: not finished inside the budget: racecheck; run them in another call with SAN_TOOLS=racecheck"));
    assert!(
        out.trim_end()
            .ends_with("RESULT: INCOMPLETE (BUDGET_S ran out: see SKIP(time))")
    );
}

#[test]
fn a_sanitizer_that_refuses_the_device_is_reported_once() {
    let f = Fixture::new("gvisor");
    let (code, out) = f.run(&["--filter", "same", "--", "sanitize"], &[("GVISOR", "1")]);
    assert!(
        out.contains("compute-sanitizer cannot check this machine's GPU"),
        "{out}"
    );
    assert!(out.contains("   ========= Error: Device not supported. Unable to initialize."));
    assert!(out.contains("sanitize: compute-sanitizer unusable here, skipped"));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn setup_errors_stop_with_status_2() {
    let f = Fixture::new("setup");
    fs::remove_file(f.dir.join("manifest.tsv")).unwrap();
    let (code, _) = f.run(&[], &[]);
    assert_eq!(code, 2);
}

#[test]
fn a_second_suite_runs_against_its_own_oracle() {
    let f = Fixture::new("second");
    let s = f.dir.join("second");
    fs::create_dir_all(s.join("v7")).unwrap();
    for name in ["same", "differs"] {
        fs::copy(f.dir.join("v7").join(name), s.join("v7").join(name)).unwrap();
    }
    fs::write(
        s.join("manifest.tsv"),
        "# name\tenv\targs\tflags\tshared_lib\nsame\t-\t-\t-\t-\ndiffers\t-\t-\t-\t-\n",
    )
    .unwrap();
    fs::write(
        s.join("suite.conf"),
        "label = second\noracle = ../llvm   # a folder here\noracle_label = LLVM 22\nours = ../ours\nabis = v7\n",
    )
    .unwrap();
    let (code, out) = f.run(
        &[
            "--filter",
            "differs",
            "--suite",
            s.to_str().unwrap(),
            "--",
            "conformance",
        ],
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(
        line_with(&out, "conformance second v7"),
        "conformance second v7 (LLVM 22 vs ours): 0 agree, 1 FAIL, 0 skipped, of 1"
    );
    assert!(line_with(&out, "second/differs ").contains("FAIL(stdout)"));
    assert!(out.contains("suite second: ours: "));
    assert_eq!(
        line_with(&out, "conformance v7 (LLVM 19"),
        "conformance v7 (LLVM 19 vs ours): 0 agree, 1 FAIL, 0 skipped, of 1"
    );
}

/// gpu_scenarios as a script: its scenario lines (with cpu_us) per name of its comma list ("all":
/// empty and kernel1s), waiting at the start barrier when it has one, or the beside line of the
/// row named.
const SCENARIOS: &str = r#"case ${LD_LIBRARY_PATH%%:*} in */ours) t=10 c=5 ;; *) t=30 c=20 ;; esac
case $1 in
*beside*) echo "beside=$1 alone_ms=90.000 beside_ms=92.000 slowdown_pct=2.00 regions_during=200 reps=$2"; exit 0 ;;
esac
for s in $(echo ",$1," | sed 's/,all,/,empty,kernel1s,/' | tr , ' '); do
  if [ -n "${SCEN_READY_FD:-}" ]; then
    printf r >&"$SCEN_READY_FD"
    dd bs=1 count=1 status=none <&"$SCEN_START_FD" >/dev/null
  fi
  echo "scenario=$s median_us=$((t + ${SCEN_PROC:-0})) min_us=1 reps=$2 iters=10 cpu_us=$c"
done
"#;

#[test]
fn perf_gives_the_cpu_table_the_beside_rows_eight_processes_and_kernel1s_alone() {
    let f = Fixture::new("perf");
    script(&f.dir.join("bench/gpu_scenarios"), SCENARIOS);
    let (code, out) = f.run(&["--perf-runs", "1", "--", "perf"], &[]);
    // No GPU here: the floors are not measured, which fails the calls that ask for them; the
    // tables come first.
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("CPU time per region"), "{out}");
    assert!(
        out.contains("Host loop on all cores beside target nowait regions"),
        "{out}"
    );
    assert!(out.contains("8 processes at once per runtime"), "{out}");
    assert!(out.contains("-- kernel1s alone in a process"), "{out}");
    // Eight processes, indices 0-7: median 13.5 / 33.5, slowest 17 / 37.
    let procs = line_with(&out, "map64B                       ");
    assert_eq!(
        procs.split_whitespace().collect::<Vec<_>>(),
        [
            "map64B", "33.500", "37.000", "1.10x", "13.500", "17.000", "1.26x", "0.40x"
        ],
        "{out}"
    );
    // The goals among the totals.
    let totals = &out[out.find("== totals").expect(&out)..];
    for goal in [
        "perf goal cpu empty: ours/LLVM 0.25 (<= 1): met",
        "perf goal cpu kernel1s: ours/LLVM 0.25 (<= 1): met",
        "perf goal cpu kernel1s (alone): ours/LLVM 0.25 (<= 1): met",
        "perf goal beside beside_nowait4MiB: ours 2.00% (<= 5% and <= LLVM 19's 2.00%): met",
        "perf goal beside beside_fixed4MiB: ours 2.00% (<= 5% and <= LLVM 19's 2.00%): met",
        "perf goal procs8 map64B: ours slowest/median 1.26 (<= 1.5): met",
        "perf goal procs8 alloc64MiB_kernel: ours/LLVM 0.40 (<= 1): met",
    ] {
        assert!(totals.contains(goal), "{goal}\n{out}");
    }
    assert!(
        f.log("bench.log")
            .contains("8 processes at once per runtime")
    );
}
