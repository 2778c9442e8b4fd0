//! What compute-sanitizer said about one run (`Finding`, `Outcome`, from its output), the
//! verdict of a program's row (ours against the oracle) and the counts per tool and runtime.

use crate::run::exec::{self, Ran, Status};
use crate::run::manifest::Runtime;
use crate::run::text::cut;
use std::fmt;

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
    pub fn skipped(why: &str) -> Outcome {
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

    pub fn of(r: &Ran, rt: &Runtime) -> Outcome {
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
    pub fn describe(&self) -> String {
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
    pub fn is_fail(&self) -> bool {
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
    fn counts_per_finding() {
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
