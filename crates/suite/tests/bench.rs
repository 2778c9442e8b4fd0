//! `omptarget-suite bench --gcc` end to end, with shell scripts standing in for the benchmark
//! (clang's build, told apart by the runtime folder first in LD_LIBRARY_PATH) and for GCC's
//! build (which "offloads", printing the nvptx plugin's launch lines under GOMP_DEBUG=1, only
//! when its libgomp folder comes first, as libgomp falls back to the host without its plugin).

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
