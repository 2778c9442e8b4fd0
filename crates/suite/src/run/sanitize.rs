//! The sanitize mode: every program's first-ABI binary under compute-sanitizer's tools
//! (memcheck, initcheck, synccheck, racecheck by default), once under ours and once under the
//! suite's oracle, and a table of the two side by side (issue #16: users run the sanitizer on
//! their programs; under ours they must not get reports LLVM's runtime does not give).
//!
//! The work is one queue, tool after tool, each program's two runs next to each other, so
//! that a budget that runs out leaves whole tools done and both sides of every compared row.

use super::exec::{self, Job, Ran, Status};
use super::manifest::{Program, Runtime, Suite};
use super::text::cut;
use super::{Ctx, jobs};
use std::fmt;
use std::path::PathBuf;

pub const TOOLS: [&str; 4] = ["memcheck", "initcheck", "synccheck", "racecheck"];

/// The tools a `--san-tools` list names, in its order, each once.
pub fn parse_tools(spec: &str) -> Result<Vec<&'static str>, String> {
    let mut out = Vec::new();
    for t in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let tool = TOOLS
            .iter()
            .find(|k| **k == t)
            .ok_or_else(|| format!("unknown sanitizer tool {t} (one of {})", TOOLS.join(", ")))?;
        if !out.contains(tool) {
            out.push(*tool);
        }
    }
    if out.is_empty() {
        return Err("no sanitizer tool named".into());
    }
    Ok(out)
}

/// Sanitizer runs at once: `--san-jobs`, else one per core, at most 16. Sanitizer runs are
/// mostly host work (instrumenting each module as it loads, checking on the way) and nothing
/// in them depends on timing, so they can use every core; the H200 has room for 16 small
/// processes' contexts and shadow memory many times over.
pub fn jobs(ctx: &Ctx) -> usize {
    ctx.o
        .san_jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(4, |n| n.get().min(16)))
        .max(1)
}

/// What the sanitizer said about one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    Clean,
    Errors(u64),
    /// The sanitizer disabled itself: CUDA was initialised before it could attach (a library
    /// constructor that registers offload images, as reg_shared_lib's does).
    Disabled,
    /// No summary line: the sanitizer or the program died first.
    NoSummary,
    Timeout,
    /// Not run (why).
    Skipped(String),
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Clean => f.write_str("clean"),
            Finding::Errors(n) => write!(f, "{n} errors"),
            Finding::Disabled => f.write_str("disabled"),
            Finding::NoSummary => f.write_str("no summary"),
            Finding::Timeout => f.write_str("timeout"),
            Finding::Skipped(why) => write!(f, "skipped ({why})"),
        }
    }
}

/// One run's result.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub finding: Finding,
    pub status: Status,
    /// The first report lines (at most two), for the table.
    pub first_errors: Vec<String>,
    pub loaded: String,
    pub loaded_ok: bool,
    /// The raw output (sanitizer and program, stdout then stderr).
    pub output: String,
    pub wall: std::time::Duration,
}

impl Outcome {
    fn skipped(why: &str) -> Outcome {
        Outcome {
            finding: Finding::Skipped(why.into()),
            status: Status::NotStarted(why.into()),
            first_errors: Vec::new(),
            loaded: String::new(),
            loaded_ok: true,
            output: String::new(),
            wall: std::time::Duration::ZERO,
        }
    }

    fn of(r: &Ran, rt: &Runtime) -> Outcome {
        let output = format!("{}{}", r.stdout, r.stderr);
        let (finding, first_errors) = parse(&output, &r.status);
        Outcome {
            finding,
            loaded_ok: exec::loaded_from(&r.loaded, &rt.dir),
            loaded: r.loaded.clone(),
            status: r.status.clone(),
            first_errors,
            output,
            wall: r.wall,
        }
    }

    /// `clean (exit 0)`, `3 errors (exit 1)`.
    fn describe(&self) -> String {
        match &self.finding {
            Finding::Skipped(_) | Finding::Timeout => self.finding.to_string(),
            f => format!("{f} ({})", self.status),
        }
    }
}

/// Whether the sanitizer refused this machine's GPU (gVisor machines: "Device not supported").
pub fn unusable(output: &str) -> bool {
    let l = output.to_lowercase();
    [
        "device not supported",
        "not supported on this",
        "error 999",
        "unable to initialize",
        "unable to launch",
    ]
    .iter()
    .any(|p| l.contains(p))
}

/// A report line: `========= Invalid __global__ read ...`, `========= Program hit ...`,
/// `========= Uninitialized ...`, `========= ERROR: Race reported ...`, `========= Barrier
/// error ...`; not the summary lines.
fn is_report_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("=========") else {
        return false;
    };
    let rest = rest.trim_start_matches('=');
    if !rest.starts_with(' ') {
        return false;
    }
    let rest = rest.trim_start();
    if rest.starts_with("ERROR SUMMARY") || rest.contains("SUMMARY:") {
        return false;
    }
    [
        "Invalid",
        "Program hit",
        "Leaked",
        "Error",
        "ERROR",
        "Uninitialized",
        "Race",
        "Barrier",
        "Hazard",
        "Warning",
        "WARN",
    ]
    .iter()
    .any(|k| rest.starts_with(k))
}

/// The number after `what` in `... (N errors, M warnings)` / `ERROR SUMMARY: N errors`.
fn count_after(line: &str, what: &str) -> Option<u64> {
    let rest = &line[line.find(what)? + what.len()..];
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The finding in a sanitizer's output, and its first two report lines.
pub fn parse(output: &str, status: &Status) -> (Finding, Vec<String>) {
    let first: Vec<String> = output
        .lines()
        .filter(|l| is_report_line(l) && !l.contains("CUDA initialized before the Sanitizer"))
        .take(2)
        .map(|l| cut(l, 200))
        .collect();
    if *status == Status::Timeout {
        return (Finding::Timeout, first);
    }
    if output.contains("CUDA initialized before the Sanitizer")
        || output.contains("The Sanitizer will be disabled")
    {
        return (Finding::Disabled, first);
    }
    let errors = output
        .lines()
        .rev()
        .find_map(|l| count_after(l, "ERROR SUMMARY:"))
        .or_else(|| {
            // racecheck: RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)
            output
                .lines()
                .rev()
                .filter(|l| l.contains("RACECHECK SUMMARY:"))
                .find_map(|l| count_after(l, "("))
        });
    match errors {
        Some(0) => (Finding::Clean, first),
        Some(n) => (Finding::Errors(n), first),
        None => (Finding::NoSummary, first),
    }
}

/// One (tool, program) row: ours against the oracle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowVerdict {
    /// Both clean.
    Ok,
    /// The sanitizer disabled itself under both runtimes (not a failure of either).
    Disabled,
    /// Ours clean, the oracle not (noted, not a failure of ours).
    OursBetter(String),
    Fail(String),
    Skip(String),
}

impl fmt::Display for RowVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowVerdict::Ok => f.write_str("ok"),
            RowVerdict::Disabled => f.write_str("disabled"),
            RowVerdict::OursBetter(w) => write!(f, "ok(llvm: {w})"),
            RowVerdict::Fail(w) => write!(f, "FAIL({w})"),
            RowVerdict::Skip(w) => write!(f, "SKIP({w})"),
        }
    }
}

impl RowVerdict {
    fn is_fail(&self) -> bool {
        matches!(self, RowVerdict::Fail(_))
    }
}

/// `statuses_may_differ`: the program's exit status under ours is meant to differ from LLVM's
/// (a `DIVERGENCE` or `GPU-UNCOMPARED` program): with both runs clean, that is no failure of
/// the sanitizer's comparison.
pub fn row_verdict(
    ours: &Outcome,
    oracle: &Outcome,
    deadline_passed: bool,
    statuses_may_differ: bool,
) -> RowVerdict {
    for o in [ours, oracle] {
        if let Finding::Skipped(why) = &o.finding {
            return RowVerdict::Skip(why.clone());
        }
    }
    let timed_out = ours.finding == Finding::Timeout || oracle.finding == Finding::Timeout;
    if timed_out && deadline_passed {
        return RowVerdict::Skip("time".into());
    }
    let mut why = Vec::new();
    if !ours.loaded_ok {
        why.push(format!("ours-run-loaded:{}", ours.loaded));
    }
    if !oracle.loaded_ok {
        why.push(format!("llvm-run-loaded:{}", oracle.loaded));
    }
    let same = ours.finding == oracle.finding;
    match (&ours.finding, &oracle.finding) {
        (Finding::Clean, Finding::Clean) | (Finding::Disabled, Finding::Disabled) => {
            if ours.status != oracle.status && !statuses_may_differ {
                why.push(format!(
                    "status: ours {}, llvm {}",
                    ours.status, oracle.status
                ));
            }
        }
        (Finding::Clean, _) => {}
        _ => why.push(format!(
            "ours {}, llvm {}",
            ours.describe(),
            oracle.describe()
        )),
    }
    if !why.is_empty() {
        return RowVerdict::Fail(why.join(", "));
    }
    match (&ours.finding, same) {
        (Finding::Disabled, _) => RowVerdict::Disabled,
        (_, true) => RowVerdict::Ok,
        _ => RowVerdict::OursBetter(oracle.describe()),
    }
}

/// Per tool and runtime: how many programs were clean, had errors, were not checked
/// (sanitizer disabled), gave no result (timeout, crash) or were skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub clean: usize,
    pub errors: usize,
    pub disabled: usize,
    pub none: usize,
    pub skipped: usize,
}

impl Counts {
    pub fn add(&mut self, f: &Finding) {
        match f {
            Finding::Clean => self.clean += 1,
            Finding::Errors(_) => self.errors += 1,
            Finding::Disabled => self.disabled += 1,
            Finding::NoSummary | Finding::Timeout => self.none += 1,
            Finding::Skipped(_) => self.skipped += 1,
        }
    }
}

struct Item<'s> {
    tool: &'static str,
    suite: &'s Suite,
    program: &'s Program,
    ours: bool,
}

fn suite_key(s: &Suite) -> &str {
    if s.label.is_empty() { "main" } else { &s.label }
}

fn run_item(ctx: &Ctx, sanitizer: &str, item: &Item) -> Outcome {
    if ctx.deadline.passed() {
        return Outcome::skipped("time");
    }
    let suite = item.suite;
    let bin = suite.dir.join(&suite.abis[0]).join(&item.program.name);
    if !bin.is_file() {
        return Outcome::skipped("no binary");
    }
    let rt = if item.ours {
        &suite.ours
    } else {
        &suite.oracle
    };
    let wrapper: Vec<String> = [
        sanitizer,
        "--tool",
        item.tool,
        "--print-limit",
        "20",
        "--target-processes",
        "all",
    ]
    .map(String::from)
    .to_vec();
    let dir: PathBuf = ctx.scratch(&format!("san/{}/{}", item.tool, suite_key(suite)));
    let r = exec::run(&Job {
        program: &bin,
        args: &item.program.args,
        wrapper: &wrapper,
        env: &item.program.env,
        lib_path: ctx.lib_path(rt),
        cwd: &ctx.cwd,
        limit: ctx.limit(ctx.o.san_timeout_s),
        files: dir.join(format!(
            "{}.{}",
            item.program.name,
            if item.ours { "ours" } else { "llvm" }
        )),
        soname: Some(&suite.soname),
        merge_stderr: false,
    });
    Outcome::of(&r, rt)
}

/// At most `n` lines of a run's output for sanitize.log.
fn capped(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut s: String = lines.iter().take(n).map(|l| format!("  | {l}\n")).collect();
    if lines.len() > n {
        s.push_str(&format!(
            "  | ... ({} more lines in runs.tar.gz)\n",
            lines.len() - n
        ));
    }
    s
}

pub fn run(ctx: &Ctx) {
    let Some(sanitizer) = ctx.sanitizer.as_ref().map(|p| p.display().to_string()) else {
        ctx.say("== sanitize: compute-sanitizer not found: skipped");
        ctx.total("sanitize: compute-sanitizer not found, skipped");
        return;
    };
    let tools = match parse_tools(&ctx.o.san_tools) {
        Ok(t) => t,
        Err(e) => {
            ctx.say(format!("== sanitize: {e}"));
            ctx.fail();
            return;
        }
    };
    let njobs = jobs(ctx);
    ctx.say(format!(
        "== sanitize: {} on the {} binaries under ours and {} with {sanitizer} (timeout {}s, {njobs} at once)",
        tools.join(", "),
        ctx.main_suite().abis[0],
        ctx.suites
            .iter()
            .map(|s| s.oracle.label.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        ctx.o.san_timeout_s
    ));
    let mut items = Vec::new();
    for &tool in &tools {
        for suite in &ctx.suites {
            for p in ctx.selected(suite) {
                for ours in [true, false] {
                    items.push(Item {
                        tool,
                        suite,
                        program: p,
                        ours,
                    });
                }
            }
        }
    }
    if items.is_empty() {
        ctx.say("sanitize: no programs selected");
        return;
    }
    let started = std::time::Instant::now();
    // Probe once: on gVisor machines compute-sanitizer refuses the device. Its run is the
    // first tool's run of reg_trivial (else of the first program) under ours.
    let probe_at = items
        .iter()
        .position(|i| i.program.name == "reg_trivial")
        .unwrap_or(0);
    let probe = run_item(ctx, &sanitizer, &items[probe_at]);
    if unusable(&probe.output) {
        ctx.say(format!(
            "compute-sanitizer cannot check this machine's GPU (gVisor runtime? kernel {}):",
            std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
        ));
        for l in probe
            .output
            .lines()
            .filter(|l| {
                let l = l.to_lowercase();
                l.contains("not supported") || l.contains("error") || l.contains("unable")
            })
            .take(3)
        {
            ctx.say(format!("   {}", cut(l, 200)));
        }
        ctx.total("sanitize: compute-sanitizer unusable here, skipped");
        return;
    }
    let indexed: Vec<usize> = (0..items.len()).collect();
    let outcomes = jobs::map_parallel(&indexed, njobs, |&i| {
        if i == probe_at {
            probe.clone()
        } else {
            run_item(ctx, &sanitizer, &items[i])
        }
    });
    report(ctx, &items, &outcomes, started);
}

/// Per (tool, suite): the counts under both runtimes and the rows' verdicts.
struct Group<'s> {
    tool: &'static str,
    suite: &'s Suite,
    ours: Counts,
    oracle: Counts,
    rows: Vec<(&'s Program, RowVerdict, usize)>,
}

fn report(ctx: &Ctx, items: &[Item], outcomes: &[Outcome], started: std::time::Instant) {
    let passed = ctx.deadline.passed();
    let mut groups: Vec<Group> = Vec::new();
    let mut tsv = String::from("# sanitize\n# tool\tname\tverdict\tours\tllvm\n");
    let mut log = String::new();
    for k in (0..items.len()).step_by(2) {
        let it = &items[k];
        let (ours, oracle) = (&outcomes[k], &outcomes[k + 1]);
        let v = row_verdict(
            ours,
            oracle,
            passed,
            it.program.divergence || it.program.uncompared,
        );
        let name = if it.suite.label.is_empty() {
            it.program.name.clone()
        } else {
            format!("{}/{}", it.suite.label, it.program.name)
        };
        tsv.push_str(&format!(
            "{}\t{name}\t{v}\t{}\t{}\n",
            it.tool,
            ours.describe(),
            oracle.describe()
        ));
        log.push_str(&format!(
            "=================== {} {name}: {v}  (ours {}; llvm {})\n",
            it.tool,
            ours.describe(),
            oracle.describe()
        ));
        if !matches!(v, RowVerdict::Ok | RowVerdict::Skip(_)) {
            for (label, o) in [("ours", ours), ("llvm", oracle)] {
                log.push_str(&format!("--- {label} (loaded: {}):\n", o.loaded));
                log.push_str(&capped(&o.output, 150));
            }
        }
        let at = match groups
            .iter()
            .position(|g| g.tool == it.tool && std::ptr::eq(g.suite, it.suite))
        {
            Some(i) => i,
            None => {
                groups.push(Group {
                    tool: it.tool,
                    suite: it.suite,
                    ours: Counts::default(),
                    oracle: Counts::default(),
                    rows: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let g = &mut groups[at];
        g.ours.add(&ours.finding);
        g.oracle.add(&oracle.finding);
        g.rows.push((it.program, v, k));
    }
    ctx.append("results.tsv", &tsv);
    ctx.append("sanitize.log", &log);

    let several = ctx.suites.len() > 1;
    let group_name = |g: &Group| {
        if g.suite.label.is_empty() {
            g.tool.to_owned()
        } else {
            format!("{}/{}", g.tool, g.suite.label)
        }
    };
    // Rows not ok first (short), then the table and the totals: the tail is what comes back.
    let mut budget: usize = 3500;
    for g in &groups {
        for (p, v, k) in &g.rows {
            if !matches!(v, RowVerdict::Fail(_) | RowVerdict::OursBetter(_)) {
                continue;
            }
            let mut chunk = vec![format!("-- {} {}: {v}", group_name(g), p.name)];
            for (label, o) in [("ours", &outcomes[*k]), ("llvm", &outcomes[*k + 1])] {
                chunk.extend(o.first_errors.iter().map(|l| format!("      {label}| {l}")));
            }
            let chunk = chunk.join("\n");
            if chunk.len() < budget {
                budget -= chunk.len();
                ctx.say(chunk);
            } else {
                ctx.say(format!(
                    "-- {} {}: {v} (details in sanitize.log)",
                    group_name(g),
                    p.name
                ));
            }
        }
    }
    let mut disabled: Vec<(String, Vec<&str>)> = Vec::new();
    for g in &groups {
        for (p, v, _) in &g.rows {
            if *v == RowVerdict::Disabled {
                match disabled.iter_mut().find(|(n, _)| *n == p.name) {
                    Some((_, tools)) => tools.push(g.tool),
                    None => disabled.push((p.name.clone(), vec![g.tool])),
                }
            }
        }
    }
    if !disabled.is_empty() {
        ctx.say(format!(
            "sanitizer disabled itself under both runtimes (CUDA initialised before it, in a library constructor; not checked): {}",
            disabled
                .iter()
                .map(|(n, t)| format!("{n} ({})", t.join(", ")))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    let oracle_label = if several {
        "oracle".to_owned()
    } else {
        ctx.main_suite().oracle.label.clone()
    };
    ctx.say(
        "== sanitize table: programs clean / with errors / sanitizer disabled / no result (timeout, crash) / skipped",
    );
    ctx.say(format!(
        "{:<18}{:-^35} {:-^35}  {:^9}",
        "",
        " ours ",
        format!(" {oracle_label} "),
        "rows"
    ));
    ctx.say(format!(
        "{:<18} {:>6} {:>6} {:>8} {:>5} {:>5}  {:>6} {:>6} {:>8} {:>5} {:>5}  {:>4} {:>4}",
        "tool",
        "clean",
        "errors",
        "disabled",
        "none",
        "skip",
        "clean",
        "errors",
        "disabled",
        "none",
        "skip",
        "FAIL",
        "of"
    ));
    let mut failed = false;
    let mut unfinished = Vec::new();
    for g in &groups {
        let fails = g.rows.iter().filter(|(_, v, _)| v.is_fail()).count();
        let (o, l) = (g.ours, g.oracle);
        ctx.say(format!(
            "{:<18} {:>6} {:>6} {:>8} {:>5} {:>5}  {:>6} {:>6} {:>8} {:>5} {:>5}  {:>4} {:>4}",
            group_name(g),
            o.clean,
            o.errors,
            o.disabled,
            o.none,
            o.skipped,
            l.clean,
            l.errors,
            l.disabled,
            l.none,
            l.skipped,
            fails,
            g.rows.len()
        ));
        ctx.total(format!(
            "sanitize {} (ours vs {}): ours {} clean, {} with errors, {} disabled; {} {} clean, {} with errors, {} disabled; {fails} FAIL, {} skipped, of {}",
            group_name(g),
            g.suite.oracle.label,
            o.clean, o.errors, o.disabled,
            g.suite.oracle.label,
            l.clean, l.errors, l.disabled,
            g.rows.iter().filter(|(_, v, _)| matches!(v, RowVerdict::Skip(_))).count(),
            g.rows.len()
        ));
        failed |= fails > 0;
        let late = g
            .rows
            .iter()
            .filter(|(_, v, _)| *v == RowVerdict::Skip("time".into()))
            .count();
        if late > 0 && !unfinished.contains(&g.tool) {
            unfinished.push(g.tool);
        }
    }
    // Measured cost, for budgeting the next call: seconds of runs per tool (both runtimes),
    // the slowest run, and the wall time of the whole mode.
    let mut cost = Vec::new();
    for g in &groups {
        let walls = g
            .rows
            .iter()
            .flat_map(|(p, _, k)| [(&outcomes[*k], p), (&outcomes[*k + 1], p)]);
        let total: f64 = walls.clone().map(|(o, _)| o.wall.as_secs_f64()).sum();
        let slowest = walls.max_by(|a, b| a.0.wall.cmp(&b.0.wall));
        cost.push(format!(
            "{} {total:.0} s{}",
            group_name(g),
            slowest.map_or(String::new(), |(o, p)| format!(
                " (slowest {} {:.1} s)",
                p.name,
                o.wall.as_secs_f64()
            ))
        ));
    }
    ctx.say(format!(
        "sanitize run time (sum over runs, {} at once; wall {:.0} s): {}",
        jobs(ctx),
        started.elapsed().as_secs_f64(),
        cost.join(", ")
    ));
    if failed {
        ctx.fail();
    }
    if !unfinished.is_empty() {
        ctx.incomplete();
        ctx.say(format!(
            "sanitize: not finished inside the budget: {}; run them in another call with SAN_TOOLS={}",
            unfinished.join(", "),
            unfinished.join(",")
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLEAN: &str =
        "========= COMPUTE-SANITIZER\nresult ok\n========= ERROR SUMMARY: 0 errors\n";
    /// legacy_launch_entry_points under memcheck (docs/results/gpu-2026-11-29b-summary.txt).
    const LAUNCH: &str = "========= COMPUTE-SANITIZER\n\
        ========= Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to \"invalid argument\" on CUDA API call to cuLaunchKernel.\n\
        =========     Saved host backtrace up to driver entry point at error\n\
        =========         Host Frame:  [0x34cb0] in libomptarget.so.19.1\n\
        ========= Error: process didn't terminate successfully\n\
        ========= Target application returned an error\n\
        ========= ERROR SUMMARY: 1 error\n";
    /// reg_shared_lib: CUDA initialised in a library constructor.
    const DISABLED: &str = "========= COMPUTE-SANITIZER\n\
        ========= Error: CUDA initialized before the Sanitizer. The Sanitizer will be disabled\n\
        result ok\n========= ERROR SUMMARY: 1 error\n";
    const INITCHECK: &str = "========= COMPUTE-SANITIZER\n\
        ========= Uninitialized __global__ memory read of size 8 bytes\n\
        =========     at __omp_offloading_fe00_1_main_l20+0x90\n\
        ========= Uninitialized __global__ memory read of size 8 bytes\n\
        ========= Uninitialized __global__ memory read of size 8 bytes\n\
        ========= ERROR SUMMARY: 14 errors\n";
    const RACE: &str = "========= COMPUTE-SANITIZER\n\
        ========= ERROR: Race reported between Read access at 0x6360 in k\n\
        =========     and Write access at 0x1fe0 in k [1088 hazards]\n\
        ========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n";
    const RACE_CLEAN: &str = "========= COMPUTE-SANITIZER\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n";

    fn outcome(text: &str, status: Status) -> Outcome {
        let (finding, first_errors) = parse(text, &status);
        Outcome {
            finding,
            status,
            first_errors,
            loaded: "/rt/libomptarget.so.19.1".into(),
            loaded_ok: true,
            output: text.into(),
            wall: std::time::Duration::ZERO,
        }
    }

    #[test]
    fn findings_of_each_tool() {
        let ok = Status::Exit(0);
        assert_eq!(parse(CLEAN, &ok), (Finding::Clean, vec![]));
        let (f, first) = parse(LAUNCH, &Status::Exit(6));
        assert_eq!(f, Finding::Errors(1));
        assert_eq!(first.len(), 2);
        assert!(first[0].contains("Program hit CUDA_ERROR_INVALID_VALUE"));
        assert!(first[1].contains("process didn't terminate"));
        // The sanitizer's own "1 error" for disabling itself is not a finding about the program.
        let (f, first) = parse(DISABLED, &ok);
        assert_eq!(f, Finding::Disabled);
        assert!(first.is_empty());
        let (f, first) = parse(INITCHECK, &ok);
        assert_eq!(f, Finding::Errors(14));
        assert_eq!(
            first,
            ["========= Uninitialized __global__ memory read of size 8 bytes"; 2]
        );
        let (f, first) = parse(RACE, &ok);
        assert_eq!(f, Finding::Errors(1));
        assert_eq!(first.len(), 1);
        assert!(first[0].contains("Race reported"));
        assert_eq!(parse(RACE_CLEAN, &ok).0, Finding::Clean);
        assert_eq!(
            parse("result ok\n", &Status::Signal(11)).0,
            Finding::NoSummary
        );
        assert_eq!(
            parse("========= COMPUTE", &Status::Timeout).0,
            Finding::Timeout
        );
    }

    #[test]
    fn a_refused_device_is_recognised() {
        assert!(unusable(
            "========= Error: Device not supported. Unable to initialize."
        ));
        assert!(unusable("========= Internal Sanitizer Error: error 999"));
        assert!(!unusable(CLEAN));
        assert!(!unusable(LAUNCH));
    }

    #[test]
    fn rows_compare_ours_with_the_oracle() {
        let ok = Status::Exit(0);
        let v = |a: &Outcome, b: &Outcome| row_verdict(a, b, false, false).to_string();
        assert_eq!(
            v(&outcome(CLEAN, ok.clone()), &outcome(CLEAN, ok.clone())),
            "ok"
        );
        assert_eq!(
            v(
                &outcome(DISABLED, ok.clone()),
                &outcome(DISABLED, ok.clone())
            ),
            "disabled"
        );
        assert_eq!(
            v(
                &outcome(LAUNCH, Status::Exit(6)),
                &outcome(CLEAN, ok.clone())
            ),
            "FAIL(ours 1 errors (exit 6), llvm clean (exit 0))"
        );
        // Errors under both runtimes are still errors.
        assert_eq!(
            v(
                &outcome(INITCHECK, ok.clone()),
                &outcome(INITCHECK, ok.clone())
            ),
            "FAIL(ours 14 errors (exit 0), llvm 14 errors (exit 0))"
        );
        assert_eq!(
            v(&outcome(CLEAN, ok.clone()), &outcome(INITCHECK, ok.clone())),
            "ok(llvm: 14 errors (exit 0))"
        );
        assert_eq!(
            v(&outcome(DISABLED, ok.clone()), &outcome(CLEAN, ok.clone())),
            "FAIL(ours disabled (exit 0), llvm clean (exit 0))"
        );
        assert_eq!(
            v(
                &outcome(CLEAN, Status::Exit(1)),
                &outcome(CLEAN, ok.clone())
            ),
            "FAIL(status: ours exit 1, llvm exit 0)"
        );
        // ... unless the program's status is meant to differ (DIVERGENCE, GPU-UNCOMPARED).
        assert_eq!(
            row_verdict(
                &outcome(CLEAN, Status::Exit(1)),
                &outcome(CLEAN, ok.clone()),
                false,
                true
            ),
            RowVerdict::Ok
        );
        let mut wrong = outcome(CLEAN, ok.clone());
        wrong.loaded_ok = false;
        assert_eq!(
            v(&outcome(CLEAN, ok.clone()), &wrong),
            "FAIL(llvm-run-loaded:/rt/libomptarget.so.19.1)"
        );
        assert_eq!(
            v(&outcome("", Status::Timeout), &outcome(CLEAN, ok.clone())),
            "FAIL(ours timeout, llvm clean (exit 0))"
        );
        assert_eq!(
            row_verdict(
                &outcome("", Status::Timeout),
                &outcome(CLEAN, ok.clone()),
                true,
                false
            ),
            RowVerdict::Skip("time".into())
        );
        assert_eq!(
            v(&Outcome::skipped("time"), &outcome(CLEAN, ok)),
            "SKIP(time)"
        );
    }

    #[test]
    fn tool_lists_and_counts() {
        assert_eq!(
            parse_tools("memcheck,initcheck,synccheck,racecheck").unwrap(),
            TOOLS
        );
        assert_eq!(
            parse_tools(" initcheck , memcheck,initcheck").unwrap(),
            ["initcheck", "memcheck"]
        );
        assert!(parse_tools("memcheck,leakcheck").is_err());
        assert!(parse_tools(",").is_err());
        let mut c = Counts::default();
        for f in [
            Finding::Clean,
            Finding::Errors(2),
            Finding::Disabled,
            Finding::Timeout,
            Finding::NoSummary,
            Finding::Skipped("time".into()),
            Finding::Clean,
        ] {
            c.add(&f);
        }
        assert_eq!(
            c,
            Counts {
                clean: 2,
                errors: 1,
                disabled: 1,
                none: 2,
                skipped: 1
            }
        );
    }
}
