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
    /// Also measure each scenario's runtime overhead: ours per region minus its kernels' mean
    /// device time (our profiler's CUDA events, one profiled run per scenario), against the
    /// floor's region minus its kernels (events around each launch). Implies --floor.
    #[arg(long)]
    pub overhead: bool,
    /// Arguments passed to the program.
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// scenario → per-run medians (µs per region).
type Samples = BTreeMap<String, Vec<f64>>;

/// The benchmark program with `args`, on the runtime in `lib` (and the extra library folders),
/// with the `--env` settings.
fn program(o: &Options, lib: &Path, args: &[impl AsRef<std::ffi::OsStr>]) -> Command {
    let mut path = lib.display().to_string();
    if let Some(extra) = &o.extra_lib_path {
        path = format!("{path}:{extra}");
    }
    let mut cmd = Command::new(&o.program);
    cmd.args(args).env("LD_LIBRARY_PATH", &path);
    for kv in &o.env {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        cmd.env(k, v);
    }
    cmd
}

fn run_once(o: &Options, lib: &Path, into: &mut Samples) -> Result<(), String> {
    let out = program(o, lib, &o.args)
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
    let floors: BTreeMap<String, crate::floor::Floor> = if o.floor || o.overhead {
        crate::floor::run("all", 5, false, o.overhead)?
            .into_iter()
            .map(|f| (f.name.clone(), f))
            .collect()
    } else {
        BTreeMap::new()
    };
    print!(
        "{:<32} {:>14} {:>14} {:>12}",
        "scenario", "LLVM 19 (us)", "ours (us)", "LLVM/ours"
    );
    if o.floor || o.overhead {
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
            print!(" {:>12.3} {:>10.2}x", f.median_us, rm / f.median_us);
        }
        println!();
    }
    println!(
        "(median over {} runs of each run's per-region median; runs alternate between runtimes)",
        o.runs
    );
    // The table above stands whatever happens to the overhead rows.
    if o.overhead
        && let Err(e) = print_overhead(o, &ours, &floors)
    {
        println!("overhead: not measured: {e}");
    }
    Ok(())
}

/// The mean device time of the kernels one scenario launches under ours, from our profiler's
/// summary (`OMPTARGET_RS_PROFILE_SUMMARY`: CUDA events on a GPU).
fn ours_kernel_us(o: &Options, scenario: &str) -> Result<Option<f64>, String> {
    let dir = std::env::temp_dir().join(format!("omptarget-overhead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (trace, summary) = (dir.join("trace.json"), dir.join("summary.tsv"));
    let _ = std::fs::remove_file(&summary);
    // One repetition at a fifth of the iterations: the kernels' mean, not the region's.
    let out = program(o, &o.ours, &[scenario, "1", "5"])
        .env("LIBOMPTARGET_PROFILE", &trace)
        .env("LIBOMPTARGET_PROFILE_GRANULARITY", "1000000")
        .env("OMPTARGET_RS_PROFILE_SUMMARY", &summary)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", o.program.display()))?;
    let text = std::fs::read_to_string(&summary).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    if !out.status.success() {
        return Err(format!(
            "{} {scenario} under ours with the profiler failed ({})",
            o.program.display(),
            out.status
        ));
    }
    Ok(kernel_mean_us(&omptarget_cli::summary::parse(&text)))
}

/// Mean µs of the summary's kernel rows (device section), all kernels together.
fn kernel_mean_us(rows: &[omptarget_cli::summary::Row]) -> Option<f64> {
    let (total, count) = rows
        .iter()
        .filter(|r| r.section == "device" && r.name.starts_with("kernel"))
        .fold((0u64, 0u64), |(t, c), r| (t + r.total_ns, c + r.count));
    (count > 0).then(|| total as f64 / count as f64 / 1e3)
}

/// The runtime's own cost per region: region time minus kernel time, ours against the floor.
/// Where regions overlap (several threads or streams) the difference is not a per-region cost
/// any more: those rows are marked.
fn print_overhead(
    o: &Options,
    ours: &Samples,
    floors: &BTreeMap<String, crate::floor::Floor>,
) -> Result<(), String> {
    println!(
        "\n{:<28} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>14}",
        "overhead: scenario",
        "ours",
        "kernel",
        "ours-k",
        "floor",
        "kernel",
        "floor-k",
        "(ours-k)/(fl-k)"
    );
    for (scenario, r) in ours {
        let Some(f) = floors.get(scenario) else {
            continue;
        };
        let region = median(r);
        let k = ours_kernel_us(o, scenario).unwrap_or_else(|e| {
            eprintln!("overhead: {e}");
            None
        });
        let cell = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        let ours_over = k.map(|k| region - k);
        let floor_over = f.kernel_us.map(|k| f.median_us - k);
        let ratio = match (ours_over, floor_over) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
            _ => "-".into(),
        };
        let overlapped = scenario.starts_with("threads") || scenario.starts_with("nowait");
        println!(
            "{:<28} {:>10.3} {:>10} {:>10} {:>10.3} {:>10} {:>10} {:>14}{}",
            scenario,
            region,
            cell(k),
            cell(ours_over),
            f.median_us,
            cell(f.kernel_us),
            cell(floor_over),
            ratio,
            if overlapped { " (overlapped)" } else { "" }
        );
    }
    println!(
        "(us per region; kernel: mean device time of the scenario's kernels, CUDA events; \
         overlapped rows run regions concurrently, so region minus kernel is not a per-region cost)"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{kernel_mean_us, median};

    #[test]
    fn kernel_means_come_from_the_device_rows() {
        let rows = omptarget_cli::summary::parse(
            "construct\ttarget\tp.c:3\t10\t99000\t1\t1\t0\t0\t0\t0\n\
             device\tkernel __omp_offloading_a\tdevice 0\t4\t8000\t1\t1\t0\t0\t0\t0\n\
             device\tkernel __omp_offloading_b\tdevice 0\t1\t7000\t1\t1\t0\t0\t0\t0\n\
             device\tcopy host to device\tdevice 0\t5\t50000\t1\t1\t64\t0\t0\t0\n",
        );
        assert_eq!(kernel_mean_us(&rows), Some(3.0));
        assert_eq!(kernel_mean_us(&rows[..1]), None);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }
}
