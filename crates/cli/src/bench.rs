//! Same binary, two runtimes, one run: the program is started alternately under LLVM 19's
//! `libomptarget.so.19.1` and ours, and each scenario's per-region medians are compared.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(clap::Args)]
pub struct Options {
    /// The benchmark program (prints `scenario=NAME median_us=X` lines).
    pub program: PathBuf,
    /// Folder holding our libomptarget.so.19.1.
    #[arg(long)]
    pub ours: PathBuf,
    /// Folder holding LLVM 19's libomptarget.so.19.1.
    #[arg(long, default_value = "/usr/lib/llvm-19/lib")]
    pub llvm: PathBuf,
    /// Runs of the program under each runtime (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Extra folders appended to LD_LIBRARY_PATH (e.g. the CUDA driver's).
    #[arg(long)]
    pub extra_lib_path: Option<String>,
    /// NAME=VALUE set in the environment of both runtimes' runs (repeatable).
    #[arg(long)]
    pub env: Vec<String>,
    /// Appended to every scenario name as NAME_TAG (for runs under another setting).
    #[arg(long)]
    pub tag: Option<String>,
    /// Also measure each scenario's raw floor with the CUDA driver (see `floor`).
    #[arg(long)]
    pub floor: bool,
    /// Arguments passed to the program.
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// scenario → per-run medians (µs per region).
type Samples = BTreeMap<String, Vec<f64>>;

fn run_once(o: &Options, lib: &Path, into: &mut Samples) -> Result<(), String> {
    let mut path = lib.display().to_string();
    if let Some(extra) = &o.extra_lib_path {
        path = format!("{path}:{extra}");
    }
    let mut cmd = Command::new(&o.program);
    cmd.args(&o.args).env("LD_LIBRARY_PATH", &path);
    for kv in &o.env {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", o.program.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} under {} failed ({}):\n{}",
            o.program.display(),
            lib.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut scenario = None;
        let mut median = None;
        for field in line.split_whitespace() {
            if let Some(v) = field.strip_prefix("scenario=") {
                scenario = Some(v.to_owned());
            } else if let Some(v) = field.strip_prefix("median_us=") {
                median = v.parse::<f64>().ok();
            }
        }
        if let (Some(s), Some(m)) = (scenario, median) {
            let s = match &o.tag {
                Some(t) => format!("{s}_{t}"),
                None => s,
            };
            into.entry(s).or_default().push(m);
        }
    }
    Ok(())
}

pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

pub fn run(o: &Options) -> Result<(), String> {
    if o.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    for kv in &o.env {
        if !kv.contains('=') {
            return Err(format!("--env {kv}: expected NAME=VALUE"));
        }
    }
    for (what, dir) in [("ours", &o.ours), ("llvm", &o.llvm)] {
        if !dir.join("libomptarget.so.19.1").exists() {
            return Err(format!(
                "--{what}: {} has no libomptarget.so.19.1",
                dir.display()
            ));
        }
    }
    let mut llvm = Samples::new();
    let mut ours = Samples::new();
    for _ in 0..o.runs {
        // Alternate so that drift of the machine affects both runtimes alike.
        run_once(o, &o.llvm, &mut llvm)?;
        run_once(o, &o.ours, &mut ours)?;
    }
    // The floors are measured after the runs, in this process, on the same GPU.
    let floors: BTreeMap<String, f64> = if o.floor {
        crate::floor::run("all", 5, false)?.into_iter().collect()
    } else {
        BTreeMap::new()
    };
    print!(
        "{:<32} {:>14} {:>14} {:>12}",
        "scenario", "LLVM 19 (us)", "ours (us)", "LLVM/ours"
    );
    if o.floor {
        print!(" {:>12} {:>11}", "floor (us)", "ours/floor");
    }
    println!();
    for (scenario, l) in &llvm {
        let Some(r) = ours.get(scenario) else {
            continue;
        };
        let (lm, rm) = (median(l), median(r));
        print!("{scenario:<32} {lm:>14.3} {rm:>14.3} {:>11.2}x", lm / rm);
        if let Some(f) = floors.get(scenario) {
            print!(" {f:>12.3} {:>10.2}x", rm / f);
        }
        println!();
    }
    println!(
        "(median over {} runs of each run's per-region median; runs alternate between runtimes)",
        o.runs
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }
}
