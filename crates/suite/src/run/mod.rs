//! `omptarget-suite run`: runs, on the GPU machine, what gpu/build.sh built (no compiler
//! there) and reports. gpu/run.sh is a short recipe around it; gpu/README.md says how to read
//! the result.
//!
//! Modes: `conformance` (each program under the oracle runtime and ours, outputs compared;
//! the other ABI builds under ours against our first run), `examples`, `bench`, `perf` (the
//! GPU performance table with its CPU table, the host loop beside target nowait regions and
//! eight processes on one GPU), `sanitize` (compute-sanitizer's four tools under both runtimes),
//! `tools` (the tool interfaces: gpu/tools/ programs, see `tools.rs`),
//! `all` (= conformance examples bench sanitize). Work not started before the deadline is
//! reported as `SKIP(time)` and every run is capped so that none outlives it: one device call
//! (600 s) ends inside its limit.

mod benchmarks;
mod conformance;
mod examples;
mod exec;
mod jobs;
mod manifest;
mod sanitize;
mod text;
mod tools;

use exec::Deadline;
use manifest::{Program, Runtime, Suite};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(clap::Args, Clone, Debug)]
pub struct Options {
    /// What gpu/build.sh made (manifest.tsv, v7/, v8/, ours/, examples/, bench/, bin/).
    #[arg(long, default_value = "gpu/out")]
    pub out: PathBuf,
    /// Another suite folder (manifest.tsv, ABI folders, suite.conf naming its oracle), run
    /// after the default one in the conformance and sanitize modes. Repeatable.
    #[arg(long)]
    pub suite: Vec<PathBuf>,
    /// Folder for the logs (at most 8 files).
    #[arg(long, default_value = "/tmp/gpu-run")]
    pub logs: PathBuf,
    /// LLVM 19's runtime for the default suite: a folder holding libomptarget.so.19.1 or a
    /// .tar.xz of one (default: OUT/llvm19.tar.xz, else /usr/lib/llvm-19/lib).
    #[arg(long)]
    pub llvm: Option<PathBuf>,
    /// Folder(s) after the runtime's in LD_LIBRARY_PATH (the CUDA driver's).
    #[arg(long, default_value = "/usr/local/nvidia/lib64")]
    pub extra_lib: String,
    /// Time limit of one program run, in seconds.
    #[arg(long, default_value_t = 60)]
    pub timeout_s: u64,
    /// Programs at once.
    #[arg(long, default_value_t = 4)]
    pub jobs: usize,
    /// Seconds after which no more work is started (the device call has 600).
    #[arg(long, default_value_t = 540)]
    pub budget_s: u64,
    /// Only programs whose name contains one of these comma-separated parts.
    #[arg(long, default_value = "")]
    pub filter: String,
    /// No program whose name contains one of these comma-separated parts (empty: none).
    #[arg(long, default_value = "")]
    pub exclude: String,
    /// Arguments of each bench/ program.
    #[arg(long, default_value = "all 5 10000")]
    pub bench_args: String,
    #[arg(long, default_value_t = 3)]
    pub bench_runs: usize,
    #[arg(long, default_value_t = 300)]
    pub bench_timeout_s: u64,
    /// Runs of gpu_scenarios under each runtime in the perf mode.
    #[arg(long, default_value_t = 3)]
    pub perf_runs: usize,
    /// Whether the perf mode adds the GCC 12 column when OUT/gcc/gpu_scenarios exists
    /// (1/0, true/false; it costs as many GCC runs as --perf-runs, and a GOMP_DEBUG=1 run).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub perf_gcc: bool,
    /// compute-sanitizer tools, in the order they are run.
    #[arg(long, default_value = "memcheck,initcheck,synccheck,racecheck")]
    pub san_tools: String,
    /// Sanitizer runs at once (default: one per core, at most 16).
    #[arg(long)]
    pub san_jobs: Option<usize>,
    /// Time limit of one run under the sanitizer, in seconds.
    #[arg(long, default_value_t = 180)]
    pub san_timeout_s: u64,
    /// The compute-sanitizer executable (default: found in PATH or /usr/local/cuda*).
    #[arg(long)]
    pub sanitizer: Option<PathBuf>,
    /// The user's `omptarget` command, for `info` and `run` (default: `omptarget` beside this
    /// program, where gpu/build.sh puts it).
    #[arg(long)]
    pub cli: Option<PathBuf>,
    /// conformance (default), examples, bench, sanitize, perf, tools, all.
    pub modes: Vec<String>,
}

/// The files the logs folder may hold (a device call brings back at most 8).
pub const LOG_FILES: [&str; 8] = [
    "summary.txt",
    "machine.log",
    "results.tsv",
    "conformance.log",
    "examples.log",
    "bench.log",
    "sanitize.log",
    "runs.tar.gz",
];

/// One `omptarget-suite run`: settings, the deadline, where things go, and what was found so far.
pub struct Ctx {
    pub o: Options,
    pub deadline: Deadline,
    start: Instant,
    /// Scratch folder: raw outputs of every run (archived as runs.tar.gz), `cwd/`.
    pub work: PathBuf,
    pub cwd: PathBuf,
    pub logs: PathBuf,
    summary: Mutex<File>,
    pub suites: Vec<Suite>,
    pub sanitizer: Option<PathBuf>,
    /// This program (for `bench`, `floor` and `probe` in a child process with a time limit).
    pub exe: PathBuf,
    /// The user's `omptarget` command (`info`, and `run` in the tools mode).
    pub cli: PathBuf,
    totals: Mutex<Vec<String>>,
    failed: AtomicBool,
    incomplete: AtomicBool,
}

impl Ctx {
    /// Prints a line and adds it to summary.txt.
    pub fn say(&self, line: impl AsRef<str>) {
        let line = line.as_ref();
        println!("{line}");
        let mut f = self.summary.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(f, "{line}");
    }

    /// A line for the `== totals` block at the end.
    pub fn total(&self, line: impl Into<String>) {
        self.totals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(line.into());
    }

    pub fn fail(&self) {
        self.failed.store(true, Ordering::Relaxed);
    }

    pub fn incomplete(&self) {
        self.incomplete.store(true, Ordering::Relaxed);
    }

    /// A log file's path; only the names of LOG_FILES.
    pub fn log(&self, name: &str) -> PathBuf {
        assert!(LOG_FILES.contains(&name), "{name} is not one of LOG_FILES");
        self.logs.join(name)
    }

    /// Appends text to a log file.
    pub fn append(&self, name: &str, text: &str) {
        let r = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log(name))
            .and_then(|mut f| f.write_all(text.as_bytes()));
        if let Err(e) = r {
            eprintln!("omptarget-suite: cannot write {name}: {e}");
        }
    }

    pub fn lib_path(&self, rt: &Runtime) -> String {
        if self.o.extra_lib.is_empty() {
            rt.dir.display().to_string()
        } else {
            format!("{}:{}", rt.dir.display(), self.o.extra_lib)
        }
    }

    /// The programs of a suite that FILTER selects and EXCLUDE does not.
    pub fn selected<'s>(&self, suite: &'s Suite) -> Vec<&'s Program> {
        suite
            .programs
            .iter()
            .filter(|p| selects(&self.o.filter, &self.o.exclude, &p.name))
            .collect()
    }

    /// The default suite (gpu/out): examples, bench and perf use its runtimes.
    pub fn main_suite(&self) -> &Suite {
        &self.suites[0]
    }

    pub fn limit(&self, seconds: u64) -> Duration {
        self.deadline.cap(Duration::from_secs(seconds))
    }

    /// A scratch subfolder (made on first use).
    pub fn scratch(&self, name: &str) -> PathBuf {
        let d = self.work.join(name);
        let _ = fs::create_dir_all(&d);
        d
    }
}

/// `all` and the default, expanded; unknown names are kept for the caller to report.
pub fn expand_modes(modes: &[String]) -> Vec<String> {
    if modes.is_empty() {
        return vec!["conformance".into()];
    }
    let mut out = Vec::new();
    for m in modes {
        for m in m.split(',').filter(|m| !m.is_empty()) {
            if m == "all" {
                out.extend(["conformance", "examples", "bench", "sanitize"].map(String::from));
            } else {
                out.push(m.to_owned());
            }
        }
    }
    out
}

/// Runs the modes; the exit status is 0 only when every comparison agreed and all work was
/// done, 2 when the set-up failed.
pub fn run(o: Options) -> i32 {
    let start = Instant::now();
    let ctx = match set_up(o, start) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("omptarget-suite: {e}");
            return 2;
        }
    };
    let modes = expand_modes(&ctx.o.modes);
    machine(&ctx, &modes);
    for m in &modes {
        match m.as_str() {
            "conformance" => conformance::run(&ctx),
            "examples" => examples::run(&ctx),
            "bench" => benchmarks::bench(&ctx),
            "perf" => benchmarks::perf(&ctx),
            "sanitize" => sanitize::run(&ctx),
            "tools" => tools::run(&ctx),
            other => {
                ctx.say(format!(
                    "omptarget-suite: unknown mode {other} (conformance, examples, bench, sanitize, perf, tools, all)"
                ));
                ctx.fail();
            }
        }
    }
    finish(&ctx)
}

fn set_up(o: Options, start: Instant) -> Result<Ctx, String> {
    let out = fs::canonicalize(&o.out).map_err(|e| format!("{}: {e}", o.out.display()))?;
    if !out.join("manifest.tsv").is_file() {
        return Err(format!(
            "{}/manifest.tsv is missing: run gpu/build.sh first (and carry gpu/out)",
            out.display()
        ));
    }
    fs::create_dir_all(&o.logs).map_err(|e| format!("{}: {e}", o.logs.display()))?;
    let logs = fs::canonicalize(&o.logs).map_err(|e| e.to_string())?;
    for name in LOG_FILES {
        let _ = fs::remove_file(logs.join(name));
    }
    let summary = File::create(logs.join("summary.txt")).map_err(|e| e.to_string())?;
    let work = make_scratch()?;
    let cwd = work.join("cwd");
    fs::create_dir_all(&cwd).map_err(|e| e.to_string())?;
    let mut suites = vec![load_suite(&out, o.llvm.as_deref())?];
    for dir in &o.suite {
        let dir = fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        suites.push(load_suite(&dir, None)?);
    }
    let sanitizer = o.sanitizer.clone().or_else(find_sanitizer);
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let cli = o
        .cli
        .clone()
        .unwrap_or_else(|| exe.with_file_name("omptarget"));
    Ok(Ctx {
        // From the start: unpacking LLVM's runtime (~10 s) counts against the budget.
        deadline: Deadline::after(start, Duration::from_secs(o.budget_s)),
        start,
        o,
        work,
        cwd,
        logs,
        summary: Mutex::new(summary),
        suites,
        sanitizer,
        exe,
        cli,
        totals: Mutex::new(Vec::new()),
        failed: AtomicBool::new(false),
        incomplete: AtomicBool::new(false),
    })
}

fn make_scratch() -> Result<PathBuf, String> {
    let base = std::env::temp_dir();
    for i in 0..1000 {
        let d = base.join(format!("gpu-run.{}.{i}", std::process::id()));
        if fs::create_dir(&d).is_ok() {
            return Ok(d);
        }
    }
    Err(format!(
        "cannot make a scratch folder in {}",
        base.display()
    ))
}

fn load_suite(dir: &Path, oracle_override: Option<&Path>) -> Result<Suite, String> {
    let conf = match fs::read_to_string(dir.join("suite.conf")) {
        Ok(t) => manifest::parse_conf(&t)?,
        Err(_) => manifest::SuiteConf::default(),
    };
    let text = fs::read_to_string(dir.join("manifest.tsv"))
        .map_err(|e| format!("{}/manifest.tsv: {e}", dir.display()))?;
    let mut programs = manifest::parse(&text)?;
    manifest::place_tools(&mut programs, &dir.join("bin"));
    let candidates: Vec<PathBuf> = match oracle_override {
        Some(p) => vec![p.to_owned()],
        None => conf
            .oracle
            .iter()
            .map(|p| manifest::resolve(dir, p))
            .collect(),
    };
    let oracle_dir = candidates
        .iter()
        .find(|p| p.exists())
        .ok_or_else(|| {
            format!(
                "no oracle runtime for {}: none of {candidates:?} exists",
                dir.display()
            )
        })
        .and_then(|p| runtime_folder(p, &conf.soname))?;
    let ours_dir = manifest::resolve(dir, &conf.ours);
    // In case a transfer dropped the execute bits.
    for sub in conf
        .abis
        .iter()
        .map(String::as_str)
        .chain(["examples", "bench", "bin", "tools"])
    {
        make_executable(&dir.join(sub));
    }
    Ok(Suite {
        label: conf.label,
        dir: dir.to_owned(),
        programs,
        abis: conf.abis,
        soname: conf.soname,
        ours: Runtime {
            label: "ours".into(),
            dir: fs::canonicalize(&ours_dir).map_err(|e| format!("{}: {e}", ours_dir.display()))?,
        },
        oracle: Runtime {
            label: conf.oracle_label,
            dir: oracle_dir,
        },
    })
}

/// The files of a folder, sorted by name (none when it cannot be read).
pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

fn make_executable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        if let Ok(m) = e.metadata()
            && m.is_file()
            && m.permissions().mode() & 0o100 == 0
        {
            let mut p = m.permissions();
            p.set_mode(p.mode() | 0o100);
            let _ = fs::set_permissions(e.path(), p);
        }
    }
}

/// A runtime folder from a folder or a `.tar.xz` of one. A tarball NAME.tar.xz is unpacked
/// once into /tmp/omptarget-NAME (LLVM 19's is ~190 MB unpacked: over what a device call
/// carries, so it travels packed), and again when the tarball changes.
fn runtime_folder(p: &Path, soname: &str) -> Result<PathBuf, String> {
    let name = p.file_name().unwrap_or_default().to_string_lossy();
    let Some(stem) = name.strip_suffix(".tar.xz") else {
        if p.join(soname).exists() {
            return fs::canonicalize(p).map_err(|e| e.to_string());
        }
        return Err(format!("no {soname} in {}", p.display()));
    };
    let m = fs::metadata(p).map_err(|e| e.to_string())?;
    let stamp = format!("{} {:?}", m.len(), m.modified().ok());
    let into = std::env::temp_dir().join(format!("omptarget-{stem}"));
    let found = |d: &Path| -> Option<PathBuf> {
        [d.join(stem), d.to_owned()]
            .into_iter()
            .find(|c| c.join(soname).exists())
    };
    if fs::read_to_string(into.join("stamp")).ok().as_deref() != Some(stamp.as_str())
        || found(&into).is_none()
    {
        let _ = fs::remove_dir_all(&into);
        fs::create_dir_all(&into).map_err(|e| e.to_string())?;
        let ok = Command::new("tar")
            .arg("-C")
            .arg(&into)
            .arg("-xJf")
            .arg(p)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            return Err(format!("cannot unpack {}", p.display()));
        }
        fs::write(into.join("stamp"), &stamp).map_err(|e| e.to_string())?;
    }
    found(&into)
        .ok_or_else(|| format!("{} holds no {soname}", p.display()))
        .and_then(|d| fs::canonicalize(d).map_err(|e| e.to_string()))
}

fn find_sanitizer() -> Option<PathBuf> {
    let in_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.join("compute-sanitizer"));
    let mut cuda: Vec<PathBuf> = fs::read_dir("/usr/local")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("cuda"))
        .flat_map(|e| {
            [
                e.path().join("bin/compute-sanitizer"),
                e.path().join("compute-sanitizer/compute-sanitizer"),
            ]
        })
        .collect();
    cuda.sort();
    let nvidia = fs::read_dir("/opt/nvidia")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("compute-sanitizer"));
    in_path
        .chain([PathBuf::from("/usr/local/cuda/bin/compute-sanitizer")])
        .chain(cuda)
        .chain(nvidia)
        .find(|p| p.is_file())
}

/// stdout and stderr of a command, or why it did not start.
fn command_output(program: &str, args: &[&str]) -> Result<String, String> {
    let o = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    let mut s = String::from_utf8_lossy(&o.stdout).into_owned();
    s.push_str(&String::from_utf8_lossy(&o.stderr));
    Ok(s)
}

fn machine(ctx: &Ctx, modes: &[String]) {
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let main = ctx.main_suite();
    let mut lines = vec![format!(
        "== machine ({}, kernel {}, {cores} cores)",
        command_output("date", &["-u", "+%FT%TZ"])
            .unwrap_or_default()
            .trim(),
        kernel.trim()
    )];
    if let Ok(smi) = command_output("nvidia-smi", &["-L"]) {
        lines.extend(smi.lines().map(String::from));
        let q = command_output(
            "nvidia-smi",
            &[
                "--query-gpu=driver_version,memory.total,compute_cap",
                "--format=csv,noheader",
            ],
        )
        .unwrap_or_default();
        lines.extend(q.lines().map(|l| format!("driver, memory, cc: {l}")));
    } else {
        lines.push("nvidia-smi: not found (no GPU here)".into());
    }
    let info = fs::read_to_string(main.dir.join("BUILD-INFO.txt")).unwrap_or_default();
    lines.push(format!("build: {}", info.replace('\n', ";")));
    lines.push(format!("GPU_OUT={}", main.dir.display()));
    for s in &ctx.suites {
        let label = if s.label.is_empty() {
            String::new()
        } else {
            format!("suite {}: ", s.label)
        };
        lines.push(format!(
            "{label}ours: {}  {}: {}  extra: {}",
            s.ours.dir.display(),
            s.oracle.label,
            s.oracle.dir.display(),
            ctx.o.extra_lib
        ));
    }
    lines.push(format!(
        "compute-sanitizer: {}   modes: {}   jobs: {}   sanitizer jobs: {}   tools: {}",
        ctx.sanitizer
            .as_ref()
            .map_or("none".into(), |p| p.display().to_string()),
        modes.join(" "),
        ctx.o.jobs,
        sanitize::jobs(ctx),
        ctx.o.san_tools
    ));
    let fails = fs::read_to_string(main.dir.join("compile-failures.txt")).unwrap_or_default();
    let failed: Vec<&str> = fails.lines().filter(|l| l.starts_with("== ")).collect();
    if !failed.is_empty() {
        lines.push(format!("compile failures at build time: {}", failed.len()));
        lines.extend(failed.iter().map(|l| text::cut(l, 160)));
    }
    lines.push("== omptarget info (ours)".into());
    let args = ["info".to_owned()];
    let r = exec::run(&exec::Job {
        program: &ctx.cli,
        args: &args,
        wrapper: &[],
        env: &[],
        lib_path: ctx.lib_path(&main.ours),
        cwd: &ctx.cwd,
        limit: Duration::from_secs(60),
        files: ctx.work.join("info"),
        soname: None,
        merge_stderr: true,
    });
    lines.extend(r.stdout.lines().take(30).map(String::from));
    if !r.status.success() {
        lines.push(format!("omptarget info: {}", r.status));
    }
    let text = lines.join("\n") + "\n";
    let _ = fs::write(ctx.log("machine.log"), &text);
    for l in lines {
        ctx.say(l);
    }
}

fn finish(ctx: &Ctx) -> i32 {
    // Raw outputs of every run, for later reading (the loader traces are already gone).
    let mut parts: Vec<String> = fs::read_dir(&ctx.work)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "cwd")
        .collect();
    parts.sort();
    if !parts.is_empty() {
        let archive = ctx.log("runs.tar.gz");
        let _ = Command::new("tar")
            .arg("-C")
            .arg(&ctx.work)
            .arg("-czf")
            .arg(&archive)
            .args(&parts)
            .status();
        // A device call brings back files of at most 16 MiB.
        if fs::metadata(&archive).is_ok_and(|m| m.len() > 16 << 20) {
            let _ = fs::remove_file(&archive);
            ctx.say("runs.tar.gz: over 16 MiB, not kept");
        }
    }
    let totals = ctx.totals.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if !totals.is_empty() {
        ctx.say("== totals");
        for t in totals {
            ctx.say(t);
        }
    }
    let mut kept: Vec<&str> = LOG_FILES
        .iter()
        .copied()
        .filter(|n| ctx.logs.join(n).exists())
        .collect();
    kept.sort();
    ctx.say(format!(
        "== done in {} s; logs in {}: {}",
        ctx.start.elapsed().as_secs(),
        ctx.logs.display(),
        kept.join(" ")
    ));
    let _ = fs::remove_dir_all(&ctx.work);
    if ctx.failed.load(Ordering::Relaxed) {
        ctx.say("RESULT: FAIL");
        1
    } else if ctx.incomplete.load(Ordering::Relaxed) {
        ctx.say("RESULT: INCOMPLETE (BUDGET_S ran out: see SKIP(time))");
        1
    } else {
        ctx.say("RESULT: all agree");
        0
    }
}

/// Whether a program `name` is selected: it contains one of `filter`'s comma-separated parts
/// (empty: every name does) and none of `exclude`'s non-empty parts.
fn selects(filter: &str, exclude: &str, name: &str) -> bool {
    filter.split(',').any(|f| name.contains(f))
        && !exclude
            .split(',')
            .any(|x| !x.is_empty() && name.contains(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_and_exclude_take_comma_separated_name_parts() {
        assert!(selects("", "", "map_matrix_data"));
        assert!(selects("matrix,usm", "", "usm_present"));
        assert!(!selects("matrix,usm", "", "api_alloc"));
        assert!(!selects("", "map_matrix", "map_matrix_data"));
        assert!(selects("", "map_matrix,", "map_update"));
        assert!(!selects("map", "matrix", "map_matrix_exit"));
    }

    #[test]
    fn a_packed_runtime_is_unpacked_once() {
        let stem = format!("rt-test-{}", std::process::id());
        let d = std::env::temp_dir().join(format!("omptarget-pack-{stem}"));
        fs::create_dir_all(d.join(&stem)).unwrap();
        fs::write(d.join(&stem).join("libomptarget.so.19.1"), "").unwrap();
        let tarball = d.join(format!("{stem}.tar.xz"));
        let pack = || {
            Command::new("tar")
                .arg("-C")
                .arg(&d)
                .arg("-cJf")
                .arg(&tarball)
                .arg(&stem)
                .status()
                .unwrap()
                .success()
        };
        assert!(pack());
        let into = std::env::temp_dir().join(format!("omptarget-{stem}"));
        let got = runtime_folder(&tarball, "libomptarget.so.19.1").unwrap();
        assert_eq!(got, fs::canonicalize(into.join(&stem)).unwrap());
        // Kept while the tarball is unchanged (a marker survives), remade when it changes.
        fs::write(got.join("marker"), "").unwrap();
        runtime_folder(&tarball, "libomptarget.so.19.1").unwrap();
        assert!(got.join("marker").exists());
        fs::write(d.join(&stem).join("more"), "x").unwrap();
        assert!(pack());
        runtime_folder(&tarball, "libomptarget.so.19.1").unwrap();
        assert!(!got.join("marker").exists() && got.join("more").exists());
        // A folder is used as it is; one without the library is refused.
        assert_eq!(
            runtime_folder(&d.join(&stem), "libomptarget.so.19.1").unwrap(),
            fs::canonicalize(d.join(&stem)).unwrap()
        );
        assert!(runtime_folder(&d, "libomptarget.so.19.1").is_err());
        fs::remove_dir_all(&d).unwrap();
        fs::remove_dir_all(&into).unwrap();
    }

    #[test]
    fn modes_expand() {
        let m = |v: &[&str]| expand_modes(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(m(&[]), ["conformance"]);
        assert_eq!(
            m(&["all"]),
            ["conformance", "examples", "bench", "sanitize"]
        );
        assert_eq!(m(&["perf,conformance", "x"]), ["perf", "conformance", "x"]);
    }
}
