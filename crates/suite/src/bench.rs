//! Same binary, two runtimes, one run: the program is started alternately under LLVM 19's
//! `libomptarget.so.19.1` and ours, and each scenario's per-region medians are compared. With
//! `--gcc`, GCC's build of the same source on libgomp runs in turn with them (gomp.rs). Where
//! the program prints each scenario's CPU time per region (`cpu_us=`), a second table compares
//! those; `beside=` lines (a host loop beside GPU work) get a third. With `--procs N`, N copies
//! start at once under each runtime in turn (procs.rs).

use crate::gomp;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

mod node;
use node::{beside_table, cpu_table};

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
    /// A GCC build of the same benchmark (GCC's libgomp and its nvptx plugin), run alternately
    /// with the other two, the same number of times, for a GCC column. First, one run with
    /// `GOMP_DEBUG=1` (the first program argument, then reps 1 and scale 1000, as
    /// bench/gpu_scenarios.c takes them) checks from libgomp's log that each scenario's
    /// kernels were launched on the device: a row where they were not says so instead of a time.
    #[arg(long)]
    pub gcc: Option<PathBuf>,
    /// Folder put first in LD_LIBRARY_PATH for --gcc (its libgomp.so.1 and
    /// libgomp-plugin-nvptx.so.1), before --extra-lib-path.
    #[arg(long)]
    pub gcc_lib: Option<PathBuf>,
    /// Time limit of each --gcc run, in seconds: a GCC run that hangs costs its column, not the
    /// table.
    #[arg(long, default_value_t = 120)]
    pub gcc_timeout_s: u64,
    /// Where to keep the GOMP_DEBUG=1 run's output (merged stdout and stderr; default: not kept).
    #[arg(long)]
    pub gcc_log: Option<PathBuf>,
    /// Start N copies of the program at once, all under one runtime, then all under the other,
    /// alternating over --runs (with --floor, then N `omptarget-suite floor` processes of the
    /// same scenarios); per scenario, the median process's and the slowest process's time per
    /// region. Each process waits after each scenario's warm-up until all N are ready (a pipe
    /// barrier: procs.rs), so their timed repetitions start together.
    #[arg(long)]
    pub procs: Option<usize>,
    /// Time limit of one group of --procs processes, in seconds.
    #[arg(long, default_value_t = 300)]
    pub procs_timeout_s: u64,
    /// Arguments passed to the program.
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// The GCC column's name.
const GCC: &str = "GCC 12";

/// scenario → per-run medians (µs per region).
pub(crate) type Samples = BTreeMap<String, Vec<f64>>;

/// One run's `beside=` line: a host loop's time alone and beside GPU work.
#[derive(Clone, Debug, PartialEq)]
struct Beside {
    alone_ms: f64,
    beside_ms: f64,
    slowdown_pct: f64,
    /// Regions that completed while the loop ran (0: the GPU work did not overlap it).
    regions_during: f64,
}

/// row → its `beside=` line of each run.
type BesideRuns = BTreeMap<String, Vec<Beside>>;

/// What the runs under one runtime printed.
#[derive(Default)]
struct Measured {
    /// `median_us` per scenario.
    time: Samples,
    /// `cpu_us` per scenario.
    cpu: Samples,
    beside: BesideRuns,
}

/// The benchmark program with `args`, on the runtime in `lib` (and the extra library folders),
/// with the `--env` settings.
fn program(o: &Options, lib: &Path, args: &[impl AsRef<std::ffi::OsStr>]) -> Command {
    command(o, &o.program, Some(lib), args)
}

/// `exe` with `args`, `lib` (if any) then the extra library folders in LD_LIBRARY_PATH, and the
/// `--env` settings.
fn command(
    o: &Options,
    exe: &Path,
    lib: Option<&Path>,
    args: &[impl AsRef<std::ffi::OsStr>],
) -> Command {
    let path: Vec<String> = lib
        .map(|l| l.display().to_string())
        .into_iter()
        .chain(o.extra_lib_path.clone())
        .collect();
    let mut cmd = Command::new(exe);
    cmd.args(args).env("LD_LIBRARY_PATH", path.join(":"));
    for kv in &o.env {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        cmd.env(k, v);
    }
    cmd
}

fn run_once(o: &Options, lib: &Path, into: &mut Measured) -> Result<(), String> {
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
    let text = String::from_utf8_lossy(&out.stdout);
    let tag = o.tag.as_deref();
    parse_samples(&text, tag, &mut into.time);
    parse_field(&text, "scenario", "cpu_us", tag, &mut into.cpu);
    parse_beside(&text, tag, &mut into.beside);
    Ok(())
}

/// The `scenario=NAME median_us=X` lines of one run's output into `into` (as NAME_TAG with a
/// tag).
pub(crate) fn parse_samples(text: &str, tag: Option<&str>, into: &mut Samples) {
    parse_field(text, "scenario", "median_us", tag, into);
}

/// The value of `field` on each `KEY=NAME ...` line of `text` into `into` under NAME (as
/// NAME_TAG with a tag); lines without the field are skipped.
fn parse_field(text: &str, key: &str, field: &str, tag: Option<&str>, into: &mut Samples) {
    for line in text.lines() {
        if let Some((name, v)) = fields(line, key).and_then(|(name, f)| Some((name, f(field)?))) {
            into.entry(tagged(name, tag)).or_default().push(v);
        }
    }
}

/// The name of a line with a `KEY=NAME` word, and a lookup of the line's numeric `f=v` words.
fn fields<'a>(line: &'a str, key: &str) -> Option<(&'a str, impl Fn(&str) -> Option<f64> + 'a)> {
    let value = |w: &'a str, k: &str| w.strip_prefix(k)?.strip_prefix('=');
    let name = line.split_whitespace().find_map(|w| value(w, key))?;
    Some((name, move |f: &str| {
        line.split_whitespace()
            .find_map(|w| value(w, f)?.parse().ok())
    }))
}

fn tagged(name: &str, tag: Option<&str>) -> String {
    match tag {
        Some(t) => format!("{name}_{t}"),
        None => name.to_owned(),
    }
}

/// The `beside=NAME alone_ms= beside_ms= slowdown_pct= regions_during=` lines into `into`.
fn parse_beside(text: &str, tag: Option<&str>, into: &mut BesideRuns) {
    for line in text.lines() {
        let Some((name, f)) = fields(line, "beside") else {
            continue;
        };
        if let (Some(alone_ms), Some(beside_ms), Some(slowdown_pct), Some(regions_during)) = (
            f("alone_ms"),
            f("beside_ms"),
            f("slowdown_pct"),
            f("regions_during"),
        ) {
            into.entry(tagged(name, tag)).or_default().push(Beside {
                alone_ms,
                beside_ms,
                slowdown_pct,
                regions_during,
            });
        }
    }
}

/// What the GCC build gave: its times, the runs that failed, and the `GOMP_DEBUG=1` check
/// (per scenario, or why there is none).
#[derive(Default)]
struct GccRuns {
    samples: Samples,
    /// Each timing run that did not exit 0: (run number, how it ended, its last line).
    failures: Vec<(usize, String, String)>,
    checks: BTreeMap<String, gomp::Check>,
    /// How the check run ended when it did not exit 0.
    check_failed: Option<String>,
}

impl GccRuns {
    /// The table's GCC cells for one scenario: its median, or why there is none.
    fn cell(&self, scenario: &str) -> Result<f64, String> {
        match self.checks.get(scenario).map(|c| &c.offload) {
            Some(gomp::Offload::Host) => return Err("host fallback".into()),
            Some(gomp::Offload::Partly { launches, regions }) => {
                return Err(format!("partly host ({launches}/{regions})"));
            }
            Some(gomp::Offload::Gpu { .. }) => {}
            None => {
                return Err(match &self.check_failed {
                    Some(how) => format!("check failed ({how})"),
                    None => "not in check run".into(),
                });
            }
        }
        match self.samples.get(scenario) {
            Some(v) if !v.is_empty() => Ok(median(v)),
            _ => Err(match self.failures.first() {
                Some((_, how, _)) => format!("failed ({how})"),
                None => "no time printed".into(),
            }),
        }
    }
}

/// The `GOMP_DEBUG=1` run of the GCC build (see `--gcc`).
fn gcc_check(o: &Options, gcc: &Path, scratch: &Path, into: &mut GccRuns) {
    let which = o.args.first().map_or("all", String::as_str);
    let mut cmd = command(o, gcc, o.gcc_lib.as_deref(), &[which, "1", "1000"]);
    cmd.env("GOMP_DEBUG", "1");
    let limit = Duration::from_secs(o.gcc_timeout_s);
    let (log, keep) = match &o.gcc_log {
        Some(p) => (p.clone(), true),
        None => (scratch.join("check.log"), false),
    };
    match gomp::run_merged(&mut cmd, &log, limit, keep) {
        Ok((log, status)) => {
            into.checks = gomp::check(&log, o.tag.as_deref());
            if status.is_none_or(|s| !s.success()) {
                into.check_failed = Some(gomp::ended(status));
            }
        }
        Err(e) => into.check_failed = Some(format!("not started: {e}")),
    }
}

/// One timed run of the GCC build; a failure is noted, and what it printed before still counts.
fn gcc_once(o: &Options, gcc: &Path, scratch: &Path, run: usize, into: &mut GccRuns) {
    let mut cmd = command(o, gcc, o.gcc_lib.as_deref(), &o.args);
    let limit = Duration::from_secs(o.gcc_timeout_s);
    let (out, status) = match gomp::run_merged(&mut cmd, &scratch.join("run.log"), limit, false) {
        Ok(r) => r,
        Err(e) => {
            into.failures.push((run, "not started".into(), e));
            return;
        }
    };
    parse_samples(&out, o.tag.as_deref(), &mut into.samples);
    if status.is_none_or(|s| !s.success()) {
        let last = out
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        into.failures
            .push((run, gomp::ended(status), last.chars().take(160).collect()));
    }
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

/// The program's arguments as gpu_scenarios.c takes them: (which scenarios, repetitions,
/// scale), with its defaults.
fn program_args(o: &Options) -> (String, usize, usize) {
    let arg = |i: usize, default: usize| {
        o.args
            .get(i)
            .and_then(|a| a.parse().ok())
            .filter(|&v| v > 0)
            .unwrap_or(default)
    };
    let which = o.args.first().cloned().unwrap_or_else(|| "all".into());
    (which, arg(1, 5), arg(2, 1))
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
    if let Some(gcc) = &o.gcc
        && !gcc.is_file()
    {
        return Err(format!("--gcc: {} is not a file", gcc.display()));
    }
    if let Some(n) = o.procs {
        return run_procs(o, n);
    }
    let mut llvm = Measured::default();
    let mut ours = Measured::default();
    let scratch = std::env::temp_dir().join(format!("omptarget-gcc-{}", std::process::id()));
    let mut gcc = o.gcc.as_ref().map(|exe| {
        let _ = std::fs::create_dir_all(&scratch);
        let mut g = GccRuns::default();
        gcc_check(o, exe, &scratch, &mut g);
        (exe, g)
    });
    let timed = (|| {
        for run in 1..=o.runs {
            // Alternate so that drift of the machine affects the runtimes alike.
            run_once(o, &o.llvm, &mut llvm)?;
            run_once(o, &o.ours, &mut ours)?;
            if let Some((exe, g)) = &mut gcc {
                gcc_once(o, exe, &scratch, run, g);
            }
        }
        Ok::<(), String>(())
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    timed?;
    // The floors of the scenarios the program ran (with their CPU floors) are measured after
    // the runs, in this process, on the same GPU. Without them (no GPU) the tables still come,
    // and the error after them.
    let (floors, floor_err) = if o.floor || o.overhead {
        let (which, _, scale) = program_args(o);
        let which = crate::floor::with_cpu_floors(&which);
        match crate::floor::run(&which, 5, scale, false, o.overhead) {
            Ok(v) => (
                Some(v.into_iter().map(|f| (f.name.clone(), f)).collect()),
                None,
            ),
            Err(e) => (None, Some(e)),
        }
    } else {
        (None, None)
    };
    let gcc = gcc.map(|(_, g)| g);
    // A program that printed only `beside=` lines has no time table.
    let time_table = !llvm.time.is_empty() || ours.beside.is_empty();
    if time_table {
        print!(
            "{}",
            table(
                o.runs,
                &llvm.time,
                &ours.time,
                gcc.as_ref(),
                floors.as_ref()
            )
        );
        print!("{}", per_run(&llvm.time, &ours.time));
        if let Some(f) = &floors {
            print!("{}", floor_goals(&ours.time, f));
        }
    }
    if let Some(g) = &gcc {
        let path: Vec<String> = (o.gcc_lib.iter().map(|p| p.display().to_string()))
            .chain(o.extra_lib_path.clone())
            .collect();
        println!(
            "({GCC}: {} with LD_LIBRARY_PATH={}; check: one run with GOMP_DEBUG=1 at reps 1, scale 1000)",
            o.gcc.as_deref().unwrap_or(Path::new("")).display(),
            path.join(":")
        );
        print!("{}", gcc_report(&llvm.time, &ours.time, g));
    }
    // Each further table after a blank line.
    let mut gap = time_table;
    let mut more = |t: String| {
        print!("{}{t}", if gap { "\n" } else { "" });
        gap = true;
    };
    if rows(&llvm.cpu, &ours.cpu).next().is_some() {
        more(cpu_table(o.runs, &llvm.cpu, &ours.cpu, floors.as_ref()));
    }
    if !ours.beside.is_empty() || !llvm.beside.is_empty() {
        more(beside_table(
            o.runs,
            &llvm.beside,
            &ours.beside,
            floors.as_ref(),
        ));
    }
    if let Some(e) = floor_err {
        println!("floor: not measured: {e}");
        return Err(e);
    }
    // The tables above stand whatever happens to the overhead rows.
    let no_floors = BTreeMap::new();
    if o.overhead
        && let Err(e) = print_overhead(o, &ours.time, floors.as_ref().unwrap_or(&no_floors))
    {
        println!("overhead: not measured: {e}");
    }
    Ok(())
}

/// `--procs N`: per run, N processes at once under LLVM 19, then N under ours (then, with
/// --floor, N floor processes of the same scenarios); the table of procs.rs.
fn run_procs(o: &Options, n: usize) -> Result<(), String> {
    if n == 0 {
        return Err("--procs must be at least 1".into());
    }
    if o.gcc.is_some() || o.overhead {
        return Err("--procs takes neither --gcc nor --overhead".into());
    }
    let dir = std::env::temp_dir().join(format!("omptarget-procs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let limit = Duration::from_secs(o.procs_timeout_s);
    let (which, reps, scale) = program_args(o);
    let exe = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    let floor_args = [
        "floor".to_string(),
        which,
        "--reps".into(),
        reps.to_string(),
        "--scale".into(),
        scale.to_string(),
    ];
    let (mut llvm, mut ours, mut floor) = Default::default();
    // Without a GPU the floor processes fail: the table still comes, and the error after it.
    let mut floor_err = None;
    let groups = (|| {
        for _ in 0..o.runs {
            for (label, lib, into) in [
                ("LLVM 19", &o.llvm, &mut llvm),
                ("ours", &o.ours, &mut ours),
            ] {
                let outs = crate::procs::group(|_| program(o, lib, &o.args), n, &dir, limit)
                    .map_err(|e| format!("{} under {label}: {e}", o.program.display()))?;
                crate::procs::add_group(into, &parsed(&outs, "scenario", o.tag.as_deref()));
            }
            if o.floor && floor_err.is_none() {
                match crate::procs::group(|_| command(o, &exe, None, &floor_args), n, &dir, limit) {
                    Ok(outs) => crate::procs::add_group(
                        &mut floor,
                        &parsed(&outs, "floor", o.tag.as_deref()),
                    ),
                    Err(e) => floor_err = Some(e),
                }
            }
        }
        Ok::<(), String>(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    groups?;
    let with_floor = o.floor && floor_err.is_none();
    print!(
        "{}",
        crate::procs::table(n, o.runs, &llvm, &ours, with_floor.then_some(&floor))
    );
    if let Some(e) = floor_err {
        println!("floor: not measured: {e}");
        return Err(e);
    }
    Ok(())
}

/// Each process's `KEY=NAME median_us=X` lines.
fn parsed(outs: &[String], key: &str, tag: Option<&str>) -> Vec<Samples> {
    outs.iter()
        .map(|t| {
            let mut s = Samples::new();
            parse_field(t, key, "median_us", tag, &mut s);
            s
        })
        .collect()
}

/// The scenarios both runtimes timed, in name order, with their medians. The `host_` probes
/// (no offload: the machine, not a runtime) are no rows; `per_run` lists them.
fn rows<'a>(llvm: &'a Samples, ours: &'a Samples) -> impl Iterator<Item = (&'a str, f64, f64)> {
    llvm.iter().filter_map(|(s, l)| {
        let r = ours.get(s).filter(|_| !is_host_probe(s))?;
        Some((s.as_str(), median(l), median(r)))
    })
}

/// A `host_` probe of bench/gpu_scenarios.c: it measures the process's CPU or memory, not a
/// runtime.
pub(crate) fn is_host_probe(scenario: &str) -> bool {
    scenario.starts_with("host_")
}

/// The table: per scenario, LLVM 19, ours and their ratio; with `gcc`, GCC's median and the
/// ratio GCC/ours (or why GCC has no time); with `floors`, the floor and ours/floor.
fn table(
    runs: usize,
    llvm: &Samples,
    ours: &Samples,
    gcc: Option<&GccRuns>,
    floors: Option<&BTreeMap<String, crate::floor::Floor>>,
) -> String {
    let mut t = format!(
        "{:<32} {:>14} {:>14} {:>12}",
        "scenario", "LLVM 19 (us)", "ours (us)", "LLVM/ours"
    );
    if gcc.is_some() {
        let _ = write!(t, " {:>14} {:>11}", format!("{GCC} (us)"), "GCC/ours");
    }
    if floors.is_some() {
        let _ = write!(t, " {:>12} {:>11}", "floor (us)", "ours/floor");
    }
    t.push('\n');
    for (scenario, lm, rm) in rows(llvm, ours) {
        let _ = write!(t, "{scenario:<32} {lm:>14.3} {rm:>14.3} {:>11.2}x", lm / rm);
        match gcc.map(|g| g.cell(scenario)) {
            Some(Ok(gm)) => {
                let _ = write!(t, " {gm:>14.3} {:>10.2}x", gm / rm);
            }
            Some(Err(why)) => {
                let _ = write!(t, " {why:>26}");
            }
            None => {}
        }
        if let Some(f) = floors.and_then(|f| f.get(scenario)) {
            let _ = write!(t, " {:>12.3} {:>10.2}x", f.median_us, rm / f.median_us);
        }
        t.push('\n');
    }
    let _ = writeln!(
        t,
        "(median over {runs} runs of each run's per-region median; runs alternate between runtimes)"
    );
    t
}

/// Ours' spread over runs: the slowest run's time over the fastest's.
fn spread(runs: &[f64]) -> f64 {
    let lo = runs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = runs.iter().copied().fold(0.0, f64::max);
    hi / lo
}

/// The latency rows with a goal against their driver floor (docs/PERFORMANCE.md, "Goals"):
/// the scenario, the most ours/floor, and the most spread of ours' runs (slowest over fastest).
const FLOOR_GOALS: [(&str, f64, Option<f64>); 3] = [
    ("empty", 1.05, None),
    ("nowait32x4MiB", 2.0, Some(1.3)),
    ("tofrom64MiB_pageable", 1.15, None),
];

/// The goal lines of [`FLOOR_GOALS`] for the scenarios that ran and have a floor: ours' median
/// over the runs against the floor, and the spread where the goal has one.
fn floor_goals(ours: &Samples, floors: &BTreeMap<String, crate::floor::Floor>) -> String {
    let mut t = String::new();
    for (s, most, most_spread) in FLOOR_GOALS {
        let (Some(o), Some(f)) = (ours.get(s), floors.get(s)) else {
            continue;
        };
        if o.is_empty() || f.median_us <= 0.0 {
            continue;
        }
        let ratio = median(o) / f.median_us;
        let mut met = ratio <= most;
        let _ = write!(t, "goal floor {s}: ours/floor {ratio:.2} (<= {most})");
        if let Some(ms) = most_spread {
            let spread = spread(o);
            met &= spread <= ms;
            let _ = write!(t, ", spread {spread:.2} (<= {ms})");
        }
        let _ = writeln!(t, ": {}", if met { "met" } else { "MISSED" });
    }
    t
}

/// Below the table: each runtime's per-run medians in run order, with ours' spread (slowest
/// over fastest run). A scenario whose processes fall into two latency levels (seen on the
/// H200 and H100 machines, docs/PERFORMANCE.md) shows it here; the median hides it. Then the
/// `host_` probes of the same processes (`host_clock`: ns per step of a dependent multiply-add,
/// the speed of the CPU the process ran on, which the latency rows follow).
fn per_run(llvm: &Samples, ours: &Samples) -> String {
    // The host probes' values are ns, not tens of us: three decimals.
    let runs = |v: &[f64], digits: usize| {
        v.iter()
            .map(|x| format!("{x:.digits$}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut t = String::from("per run (us, in run order):\n");
    let probes = ours
        .keys()
        .filter(|s| is_host_probe(s) && llvm.contains_key(*s));
    for s in rows(llvm, ours)
        .map(|(s, _, _)| s)
        .chain(probes.map(String::as_str))
    {
        let o = &ours[s];
        let digits = if is_host_probe(s) { 3 } else { 1 };
        let _ = writeln!(
            t,
            "  {s:<32} ours {} (spread {:.2}) | LLVM 19 {}",
            runs(o, digits),
            spread(o),
            runs(&llvm[s], digits)
        );
    }
    if ours.contains_key("host_clock") {
        t.push_str(
            "(host_clock: ns per step of a dependent multiply-add in that process, the speed of \
             its CPU: the latency rows follow it on the GPU machines, docs/PERFORMANCE.md)\n",
        );
    }
    t
}

/// Below the table: how many scenarios GCC ran on the GPU, each scenario's check (with the
/// first kernel launch libgomp logged: the kernel's name and geometry), the failed runs.
fn gcc_report(llvm: &Samples, ours: &Samples, g: &GccRuns) -> String {
    let mut t = String::new();
    let names: Vec<&str> = rows(llvm, ours).map(|(s, _, _)| s).collect();
    let on_gpu = names
        .iter()
        .filter(|s| {
            matches!(
                g.checks.get(**s).map(|c| &c.offload),
                Some(gomp::Offload::Gpu { .. })
            )
        })
        .count();
    let _ = writeln!(
        t,
        "{GCC} on the GPU: {on_gpu} of {} scenarios (GOMP_DEBUG=1: a kernel launch logged for every timed region){}",
        names.len(),
        match &g.check_failed {
            Some(how) => format!("; the check run ended: {how}"),
            None => String::new(),
        }
    );
    for s in names {
        let verdict = match g.checks.get(s) {
            Some(c) => match &c.offload {
                gomp::Offload::Gpu { launches, regions } => {
                    format!("gpu: {launches} launches for {regions} timed regions")
                }
                gomp::Offload::Partly { launches, regions } => {
                    format!("PARTLY HOST: {launches} launches for {regions} timed regions")
                }
                gomp::Offload::Host => "HOST FALLBACK: no kernel launch logged".into(),
            },
            None => "not in the check run".into(),
        };
        let first = g
            .checks
            .get(s)
            .and_then(|c| c.first_launch.as_deref())
            .map(|l| format!(" | {l}"))
            .unwrap_or_default();
        let _ = writeln!(t, "gcc check {s:<32} {verdict}{first}");
    }
    for (run, how, last) in &g.failures {
        let _ = writeln!(t, "gcc run {run}: {how}: {last}");
    }
    t
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
mod tests;
