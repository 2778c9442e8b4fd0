//! MPI ranks on the runtime: `examples/mpi/mpi_stencil.c` (a row-decomposed Jacobi stencil
//! whose ranks offload their blocks and exchange halo rows through `target update` and MPI) is
//! built with Open MPI's `mpicc` around clang-19 and run with 1, 2 and 4 ranks on the host
//! device under our library and under LLVM 19's. Every run must check against the serial
//! result, the outputs must agree, and the loader trace of every rank must show the intended
//! `libomptarget.so.19.1`.

mod common;

use common::repo_root;
use std::path::{Path, PathBuf};
use std::process::Command;

const LLVM_LIB: &str = "/usr/lib/llvm-19/lib";

fn build(work: &Path) -> PathBuf {
    let exe = work.join("mpi_stencil");
    let out = Command::new("mpicc")
        .env("OMPI_CC", "clang-19")
        .args(["-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-O2"])
        .arg(repo_root().join("examples/mpi/mpi_stencil.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-lm")
        .output()
        .expect("mpicc runs (Open MPI: apt-get install openmpi-bin libopenmpi-dev; scripts/deps.sh does)");
    assert!(
        out.status.success(),
        "mpicc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Runs `exe` with `ranks` ranks under the library in `lib`; returns stdout without the
/// timing line, after checking every rank's loader trace.
fn run(exe: &Path, ranks: usize, lib: &Path, work: &Path) -> String {
    let trace = work.join(format!("trace-{ranks}-{}", lib.display().to_string().len()));
    let _ = std::fs::remove_dir_all(&trace);
    std::fs::create_dir_all(&trace).unwrap();
    let out = Command::new("mpirun")
        .args(["--oversubscribe", "--allow-run-as-root", "-np"])
        .arg(ranks.to_string())
        .args([
            "-x",
            "LD_LIBRARY_PATH",
            "-x",
            "LD_DEBUG",
            "-x",
            "LD_DEBUG_OUTPUT",
        ])
        .arg(exe)
        .args(["128", "60"])
        .env("LD_LIBRARY_PATH", lib)
        .env("LD_DEBUG", "libs")
        .env("LD_DEBUG_OUTPUT", trace.join("ld"))
        .env("OMPI_MCA_plm_rsh_agent", "")
        .output()
        .expect("mpirun runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{ranks} ranks under {}: {}\n{stdout}\n{}",
        lib.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // Every rank's trace: the libomptarget it initialised lies in `lib`.
    let mut ranks_seen = 0;
    for f in std::fs::read_dir(&trace).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap_or_default();
        let Some(loaded) = text
            .lines()
            .filter_map(|l| l.split("calling init: ").nth(1))
            .map(str::trim)
            .rfind(|p| p.ends_with("libomptarget.so.19.1"))
        else {
            continue; // mpirun's own processes load no libomptarget
        };
        let dir = std::fs::canonicalize(Path::new(loaded).parent().unwrap()).unwrap();
        assert_eq!(
            dir,
            std::fs::canonicalize(lib).unwrap(),
            "a rank loaded {loaded}"
        );
        ranks_seen += 1;
    }
    assert_eq!(ranks_seen, ranks, "loader traces of the ranks");
    assert!(
        stdout.contains("check: OK"),
        "{ranks} ranks under {}:\n{stdout}",
        lib.display()
    );
    stdout
        .lines()
        .filter(|l| !l.starts_with("time:"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_mpi_stencil_agrees_with_llvm_19_on_1_2_and_4_ranks() {
    let work = common::profile_dir().join("mpi-work");
    std::fs::create_dir_all(&work).unwrap();
    let exe = build(&work);
    let ours = common::our_lib_dir("mpi-lib");
    for ranks in [1, 2, 4] {
        let a = run(&exe, ranks, &ours, &work);
        let b = run(&exe, ranks, Path::new(LLVM_LIB), &work);
        assert_eq!(a, b, "{ranks} ranks: ours vs LLVM 19");
        assert!(a.contains(&format!("ranks: {ranks},")), "{a}");
    }
}
