//! The verdicts of the conformance mode: what one comparison looks at in a run (`Seen`) and
//! the rules that judge it: the first ABI's binary under the oracle against ours
//! (`primary_verdict`), another ABI's binary under ours against the first
//! (`secondary_verdict`).

use crate::run::exec::{self, Ran, Status};
use crate::run::manifest::{Program, Runtime};
use crate::run::text::{self, normalise_stderr};
use std::fmt;

/// The verdict of one comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    /// A DIVERGENCE program printed its `.expected`.
    OkDiv,
    /// A `GPU-UNCOMPARED` program ran under ours without a failure the suite can see (LLVM's
    /// run is no oracle for it).
    Uncompared,
    /// What differed, comma-separated.
    Fail(String),
    /// Why it was not compared (`time`: the deadline came first).
    Skip(String),
    /// Not compared because the row was not run at all (shown as `-`).
    NotRun,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Ok => f.write_str("ok"),
            Verdict::OkDiv => f.write_str("ok-div"),
            Verdict::Uncompared => f.write_str("ok-uncompared"),
            Verdict::Fail(w) => write!(f, "FAIL({w})"),
            Verdict::Skip(w) => write!(f, "SKIP({w})"),
            Verdict::NotRun => f.write_str("-"),
        }
    }
}

impl Verdict {
    pub fn is_ok(&self) -> bool {
        matches!(self, Verdict::Ok | Verdict::OkDiv | Verdict::Uncompared)
    }
    pub fn is_fail(&self) -> bool {
        matches!(self, Verdict::Fail(_))
    }
    pub fn out_of_time(&self) -> bool {
        *self == Verdict::Skip("time".into())
    }
}

/// What the verdicts look at in one run.
pub struct Seen<'a> {
    pub status: &'a Status,
    pub stdout: &'a str,
    pub stderr: &'a str,
    /// Where the library was initialised from, and whether that is the runtime's folder.
    pub loaded: &'a str,
    pub loaded_ok: bool,
}

impl<'a> Seen<'a> {
    pub fn of(r: &'a Ran, rt: &Runtime) -> Seen<'a> {
        Seen {
            status: &r.status,
            stdout: &r.stdout,
            stderr: &r.stderr,
            loaded: &r.loaded,
            loaded_ok: exec::loaded_from(&r.loaded, &rt.dir),
        }
    }
}

/// Whether our normalised stderr lacks one of the `OURS-STDERR` lines (a line ending in `...`
/// asks for a line that starts with what comes before it).
fn lacks_a_line(stderr: &str, required: &[String]) -> bool {
    let have = normalise_stderr(stderr);
    required.iter().any(|r| {
        !have.lines().any(|l| match r.strip_suffix("...") {
            Some(prefix) => l.starts_with(prefix),
            None => l.trim_end() == r,
        })
    })
}

/// The first ABI's binary: oracle against ours. `expected`: the `.expected` file of a
/// DIVERGENCE program; `ours_stderr`: the `OURS-STDERR` lines.
pub fn primary_verdict(
    p: &Program,
    oracle: &Seen,
    ours: &Seen,
    expected: Option<&str>,
    ours_stderr: &[String],
    deadline_passed: bool,
) -> Verdict {
    let mut why: Vec<String> = Vec::new();
    if !oracle.loaded_ok {
        why.push(format!("llvm-run-loaded:{}", oracle.loaded));
    }
    if !ours.loaded_ok {
        why.push(format!("ours-run-loaded:{}", ours.loaded));
    }
    if *ours.status == Status::Timeout {
        why.push("ours-timeout".into());
    }
    if (*ours.status == Status::Timeout || *oracle.status == Status::Timeout) && deadline_passed {
        // Cut short by the deadline, not by the program.
        return Verdict::Skip("time".into());
    }
    if lacks_a_line(ours.stderr, ours_stderr) {
        why.push("ours-stderr-lacks-line".into());
    }
    if p.uncompared {
        return if why.is_empty() {
            Verdict::Uncompared
        } else {
            Verdict::Fail(format!("uncompared:{}", why.join(",")))
        };
    }
    if p.divergence {
        let status = p.status.as_deref().unwrap_or("exit 0");
        match expected {
            None => why.push("no-expected".into()),
            Some(exp) => {
                if ours.status.to_string() != status {
                    why.push("ours-status".into());
                }
                if exp != ours.stdout {
                    why.push("ours-stdout-vs-expected".into());
                }
                if exp == oracle.stdout && oracle.status.to_string() == status {
                    why.push("llvm-now-agrees".into());
                }
            }
        }
        return if why.is_empty() {
            Verdict::OkDiv
        } else {
            Verdict::Fail(format!("div:{}", why.join(",")))
        };
    }
    if oracle.status != ours.status {
        why.push("status".into());
    }
    if oracle.stdout != ours.stdout {
        why.push("stdout".into());
    }
    if p.stderr && normalise_stderr(oracle.stderr) != normalise_stderr(ours.stderr) {
        why.push("stderr".into());
    }
    // Agreeing on a failure is not a pass: the program must end as it declares.
    if why.is_empty() && ours.status.to_string() != p.status.as_deref().unwrap_or("exit 0") {
        why.push("status-undeclared".into());
    }
    if why.is_empty() {
        Verdict::Ok
    } else {
        Verdict::Fail(why.join(","))
    }
}

/// Another ABI's binary under ours against the first ABI's under ours (and the
/// `OURS-STDERR` lines). A run that timed out once the deadline had passed was cut short by
/// the deadline, not by the program: SKIP(time), as in [`primary_verdict`].
pub fn secondary_verdict(
    p: &Program,
    first: &Seen,
    other: &Seen,
    ours_stderr: &[String],
    deadline_passed: bool,
) -> Verdict {
    if *other.status == Status::Timeout && deadline_passed {
        return Verdict::Skip("time".into());
    }
    let mut why = Vec::new();
    if !other.loaded_ok {
        why.push("loaded");
    }
    if first.status != other.status {
        why.push("status");
    }
    if first.stdout != other.stdout {
        why.push("stdout");
    }
    // Two builds of one program (ABI v7 and v8) may lay out its globals in another order, and
    // a mapping table dump lists entries by host address: its rows are compared as sets.
    if p.stderr
        && text::sort_table_rows(&normalise_stderr(first.stderr))
            != text::sort_table_rows(&normalise_stderr(other.stderr))
    {
        why.push("stderr");
    }
    if lacks_a_line(other.stderr, ours_stderr) {
        why.push("stderr-lacks-line");
    }
    if why.is_empty() {
        Verdict::Ok
    } else {
        Verdict::Fail(why.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(flags: &str) -> Program {
        crate::run::manifest::parse(&format!("p\t-\t-\t{flags}\t-\n")).unwrap()[0].clone()
    }

    fn seen<'a>(status: &'a Status, stdout: &'a str, stderr: &'a str) -> Seen<'a> {
        Seen {
            status,
            stdout,
            stderr,
            loaded: "/rt/libomptarget.so.19.1",
            loaded_ok: true,
        }
    }

    const OK: Status = Status::Exit(0);

    #[test]
    fn plain_programs_compare_status_and_stdout() {
        let p = program("-");
        let v = |a: &Seen, b: &Seen| primary_verdict(&p, a, b, None, &[], false);
        assert_eq!(
            v(&seen(&OK, "1\n", "x"), &seen(&OK, "1\n", "y")),
            Verdict::Ok
        );
        assert_eq!(
            v(&seen(&OK, "1\n", ""), &seen(&Status::Exit(1), "2\n", "")),
            Verdict::Fail("status,stdout".into())
        );
        // Both abort, and the program does not declare it: the agreement checks nothing.
        assert_eq!(
            v(
                &seen(&Status::Signal(6), "", ""),
                &seen(&Status::Signal(6), "", "")
            ),
            Verdict::Fail("status-undeclared".into())
        );
        let declared = crate::run::manifest::parse("p\t-\t-\t-\t-\tsignal 6\n").unwrap()[0].clone();
        assert_eq!(
            primary_verdict(
                &declared,
                &seen(&Status::Signal(6), "", ""),
                &seen(&Status::Signal(6), "", ""),
                None,
                &[],
                false
            ),
            Verdict::Ok
        );
        assert_eq!(
            v(&seen(&OK, "", ""), &seen(&Status::Timeout, "", "")).to_string(),
            "FAIL(ours-timeout,status)"
        );
    }

    #[test]
    fn ours_stderr_lines_match_whole_or_by_prefix() {
        let have = "omptarget error: a at 0x1234\nPluginInterface: out of memory on CUDA device 0 (H200)\n";
        let need = |lines: &[&str]| {
            lacks_a_line(
                have,
                &lines.iter().map(|l| l.to_string()).collect::<Vec<_>>(),
            )
        };
        assert!(!need(&["omptarget error: a at 0xADDR"]));
        assert!(need(&["omptarget error: a"]), "a whole line, not a prefix");
        assert!(!need(&["PluginInterface: out of memory on ..."]));
        assert!(need(&["PluginInterface: out of memory on host..."]));
    }

    #[test]
    fn stderr_counts_for_stderr_programs_after_normalising() {
        let p = program("STDERR");
        let v = |a: &str, b: &str| {
            primary_verdict(&p, &seen(&OK, "", a), &seen(&OK, "", b), None, &[], false)
        };
        assert_eq!(v("at 0x1234\n", "at 0xabcdef\n"), Verdict::Ok);
        assert_eq!(
            v(
                "x\n",
                "CUDA device 0 info: The primary context is inactive, keeping\nx\n"
            ),
            Verdict::Ok
        );
        assert_eq!(v("x\n", "y\n"), Verdict::Fail("stderr".into()));
        // Not a STDERR program: stderr is not compared.
        assert_eq!(
            primary_verdict(
                &program("-"),
                &seen(&OK, "", "x"),
                &seen(&OK, "", "y"),
                None,
                &[],
                false
            ),
            Verdict::Ok
        );
    }

    #[test]
    fn uncompared_programs_are_checked_against_ours_alone() {
        let p = program("STDERR,DIVERGENCE,GPU-UNCOMPARED");
        assert!(p.uncompared && p.divergence);
        let crash = Status::Signal(6);
        let v = |ours_status: &Status, required: &[String]| {
            primary_verdict(
                &p,
                &seen(&crash, "", "llvm faulted\n"),
                &seen(ours_status, "", "refused\n"),
                Some("spec\n"),
                required,
                false,
            )
            .to_string()
        };
        // LLVM's outcome and the .expected file are not what decides.
        assert_eq!(v(&crash, &[]), "ok-uncompared");
        assert_eq!(v(&OK, &[]), "ok-uncompared");
        // What ours must show still counts.
        assert_eq!(
            v(&OK, &["missing".into()]),
            "FAIL(uncompared:ours-stderr-lacks-line)"
        );
        assert_eq!(v(&Status::Timeout, &[]), "FAIL(uncompared:ours-timeout)");
        assert!(!program("STDERR").uncompared);
    }

    #[test]
    fn divergence_programs_compare_with_the_expected_file() {
        let p = program("STDERR,DIVERGENCE");
        let v = |llvm: &str, ours: &str, st: &Status, exp: Option<&str>| {
            primary_verdict(
                &p,
                &seen(&OK, llvm, ""),
                &seen(st, ours, ""),
                exp,
                &[],
                false,
            )
            .to_string()
        };
        assert_eq!(v("llvm\n", "spec\n", &OK, Some("spec\n")), "ok-div");
        assert_eq!(
            v("spec\n", "spec\n", &OK, Some("spec\n")),
            "FAIL(div:llvm-now-agrees)"
        );
        assert_eq!(
            v("llvm\n", "other\n", &Status::Exit(1), Some("spec\n")),
            "FAIL(div:ours-status,ours-stdout-vs-expected)"
        );
        assert_eq!(v("llvm\n", "spec\n", &OK, None), "FAIL(div:no-expected)");
    }

    #[test]
    fn required_status_and_stderr_lines() {
        // STATUS: a DIVERGENCE program whose specified outcome is a fatal error.
        let mut p = program("STDERR,DIVERGENCE");
        p.status = Some("exit 134".into());
        let abort = Status::Exit(134);
        let v = |llvm: &Seen, ours: &Seen| {
            primary_verdict(&p, llvm, ours, Some("spec\n"), &[], false).to_string()
        };
        let crash = Status::Signal(11);
        assert_eq!(
            v(&seen(&crash, "", ""), &seen(&abort, "spec\n", "")),
            "ok-div"
        );
        assert_eq!(
            v(&seen(&crash, "", ""), &seen(&OK, "spec\n", "")),
            "FAIL(div:ours-status)"
        );
        // LLVM agrees only with the same stdout and status.
        assert_eq!(
            v(&seen(&OK, "spec\n", ""), &seen(&abort, "spec\n", "")),
            "ok-div"
        );
        assert_eq!(
            v(&seen(&abort, "spec\n", ""), &seen(&abort, "spec\n", "")),
            "FAIL(div:llvm-now-agrees)"
        );
        // OURS-STDERR: each line must be in our stderr, addresses normalised.
        let need = ["omptarget error: item at 0xADDR has a negative size".to_owned()];
        let q = program("-");
        let with = "x\nomptarget error: item at 0x7ffd10 has a negative size  \n";
        assert_eq!(
            primary_verdict(
                &q,
                &seen(&OK, "", ""),
                &seen(&OK, "", with),
                None,
                &need,
                false
            ),
            Verdict::Ok
        );
        assert_eq!(
            primary_verdict(
                &q,
                &seen(&OK, "", with),
                &seen(&OK, "", "x\n"),
                None,
                &need,
                false
            )
            .to_string(),
            "FAIL(ours-stderr-lacks-line)"
        );
    }

    #[test]
    fn wrong_library_and_the_deadline() {
        let p = program("-");
        let mut wrong = seen(&OK, "", "");
        wrong.loaded = "/usr/lib/llvm-19/lib/libomptarget.so.19.1";
        wrong.loaded_ok = false;
        assert_eq!(
            primary_verdict(&p, &seen(&OK, "", ""), &wrong, None, &[], false).to_string(),
            "FAIL(ours-run-loaded:/usr/lib/llvm-19/lib/libomptarget.so.19.1)"
        );
        let mut none = seen(&OK, "", "");
        none.loaded = "";
        none.loaded_ok = false;
        assert_eq!(
            primary_verdict(&p, &none, &seen(&OK, "", ""), None, &[], false).to_string(),
            "FAIL(llvm-run-loaded:)"
        );
        // A timeout once the deadline has passed is the deadline's doing.
        let t = Status::Timeout;
        assert_eq!(
            primary_verdict(&p, &seen(&t, "", ""), &seen(&OK, "", ""), None, &[], true),
            Verdict::Skip("time".into())
        );
        assert_eq!(
            primary_verdict(&p, &seen(&t, "", ""), &seen(&OK, "", ""), None, &[], false),
            Verdict::Fail("status".into())
        );
    }

    #[test]
    fn other_abis_compare_with_our_first_run() {
        let p = program("STDERR");
        let first = seen(&OK, "1\n", "e 0x1\n");
        assert_eq!(
            secondary_verdict(&p, &first, &seen(&OK, "1\n", "e 0x2\n"), &[], false),
            Verdict::Ok
        );
        let mut other = seen(&Status::Exit(1), "2\n", "f\n");
        other.loaded_ok = false;
        assert_eq!(
            secondary_verdict(&p, &first, &other, &["need".into()], false).to_string(),
            "FAIL(loaded,status,stdout,stderr,stderr-lacks-line)"
        );
        // A timeout once the deadline has passed is the deadline's doing; before, the program's.
        let cut = seen(&Status::Timeout, "", "");
        assert_eq!(
            secondary_verdict(&p, &first, &cut, &[], true),
            Verdict::Skip("time".into())
        );
        assert!(matches!(
            secondary_verdict(&p, &first, &cut, &[], false),
            Verdict::Fail(_)
        ));
    }
}
