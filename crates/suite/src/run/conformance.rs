//! The conformance mode: each program's first-ABI binary under the suite's oracle runtime and
//! ours (exit status and stdout must agree; normalised stderr too for `STDERR` programs;
//! `DIVERGENCE` programs: ours prints the `.expected` file and exits 0, the oracle does not),
//! then each other ABI's binary under ours, which must behave as the first did under ours.
//! The rules are crates/abi/tests/conformance.rs's: `// STATUS:` is the exit status a
//! DIVERGENCE program must have under ours, `// OURS-STDERR:` lines must be in our stderr.

use super::exec::{self, Job, Ran, Status};
use super::manifest::{Program, Runtime, Suite};
use super::text::{self, cut, diff, normalise_stderr};
use super::{Ctx, jobs};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

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
    if why.is_empty() {
        Verdict::Ok
    } else {
        Verdict::Fail(why.join(","))
    }
}

/// Another ABI's binary under ours against the first ABI's under ours (and the
/// `OURS-STDERR` lines).
pub fn secondary_verdict(
    p: &Program,
    first: &Seen,
    other: &Seen,
    ours_stderr: &[String],
) -> Verdict {
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

/// One program's row.
struct Row<'s> {
    program: &'s Program,
    primary: Verdict,
    oracle_status: String,
    ours_status: String,
    secondary: Vec<Verdict>,
    /// The runs: oracle, ours, then one per other ABI (None: not run).
    runs: Option<(Ran, Ran, Vec<Option<Ran>>)>,
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn run_dir(ctx: &Ctx, suite: &Suite) -> PathBuf {
    if suite.label.is_empty() {
        ctx.scratch("r")
    } else {
        ctx.scratch(&format!("r-{}", suite.label))
    }
}

fn run_one(ctx: &Ctx, suite: &Suite, rt: &Runtime, bin: &Path, p: &Program, tag: &str) -> Ran {
    exec::run(&Job {
        program: bin,
        args: &p.args,
        wrapper: &[],
        env: &p.env,
        lib_path: ctx.lib_path(rt),
        cwd: &ctx.cwd,
        limit: ctx.limit(ctx.o.timeout_s),
        files: run_dir(ctx, suite).join(format!("{}.{tag}", p.name)),
        soname: Some(&suite.soname),
        merge_stderr: false,
    })
}

fn expected(suite: &Suite, p: &Program) -> Option<String> {
    fs::read_to_string(
        suite
            .dir
            .join("expected")
            .join(format!("{}.expected", p.name)),
    )
    .ok()
}

/// The `OURS-STDERR` lines (gpu/build.sh writes them to `expected/NAME.ours-stderr`).
fn required_stderr(suite: &Suite, p: &Program) -> Vec<String> {
    fs::read_to_string(
        suite
            .dir
            .join("expected")
            .join(format!("{}.ours-stderr", p.name)),
    )
    .map(|t| t.lines().map(str::to_owned).collect())
    .unwrap_or_default()
}

fn check<'s>(ctx: &Ctx, suite: &Suite, p: &'s Program) -> Row<'s> {
    let skip = |why: &str, n: usize| Row {
        program: p,
        primary: Verdict::Skip(why.into()),
        oracle_status: "-".into(),
        ours_status: "-".into(),
        secondary: vec![Verdict::NotRun; n],
        runs: None,
    };
    let others = suite.abis.len() - 1;
    if ctx.deadline.passed() {
        return skip("time", others);
    }
    let first = suite.dir.join(&suite.abis[0]).join(&p.name);
    if !is_executable(&first) {
        return skip(&format!("no-{}-binary", suite.abis[0]), others);
    }
    let oracle = run_one(ctx, suite, &suite.oracle, &first, p, "llvm");
    let ours = run_one(ctx, suite, &suite.ours, &first, p, "ours");
    let exp = expected(suite, p);
    let lines = required_stderr(suite, p);
    let primary = primary_verdict(
        p,
        &Seen::of(&oracle, &suite.oracle),
        &Seen::of(&ours, &suite.ours),
        exp.as_deref(),
        &lines,
        ctx.deadline.passed(),
    );
    let mut secondary = Vec::new();
    let mut other_runs = Vec::new();
    for abi in &suite.abis[1..] {
        let bin = suite.dir.join(abi).join(&p.name);
        if primary.out_of_time() {
            secondary.push(Verdict::NotRun);
            other_runs.push(None);
        } else if !is_executable(&bin) {
            secondary.push(Verdict::Skip(format!("no-{abi}-binary")));
            other_runs.push(None);
        } else if ctx.deadline.passed() {
            secondary.push(Verdict::Skip("time".into()));
            other_runs.push(None);
        } else {
            let r = run_one(ctx, suite, &suite.ours, &bin, p, abi);
            secondary.push(secondary_verdict(
                p,
                &Seen::of(&ours, &suite.ours),
                &Seen::of(&r, &suite.ours),
                &lines,
            ));
            other_runs.push(Some(r));
        }
    }
    Row {
        program: p,
        primary,
        oracle_status: oracle.status.to_string(),
        ours_status: ours.status.to_string(),
        secondary,
        runs: Some((oracle, ours, other_runs)),
    }
}

pub fn run(ctx: &Ctx) {
    for suite in &ctx.suites {
        run_suite(ctx, suite);
    }
}

fn prefixed(lines: &[String], n: usize, prefix: &str) -> Vec<String> {
    lines
        .iter()
        .take(n)
        .map(|l| format!("{prefix}{l}"))
        .collect()
}

/// `  | line` for each line of an output.
fn quoted(text: &str) -> String {
    text.lines().map(|l| format!("  | {l}\n")).collect()
}

fn show_run(label: &str, r: &Ran) -> String {
    format!(
        "--- {label}: {}  ({:.2} s, loaded: {})\nstdout:\n{}stderr:\n{}",
        r.status,
        r.wall.as_secs_f64(),
        r.loaded,
        quoted(&r.stdout),
        quoted(&r.stderr)
    )
}

fn run_suite(ctx: &Ctx, suite: &Suite) {
    let first = &suite.abis[0];
    let others = &suite.abis[1..];
    let name_of = |p: &Program| {
        if suite.label.is_empty() {
            p.name.clone()
        } else {
            format!("{}/{}", suite.label, p.name)
        }
    };
    let title = if suite.label.is_empty() {
        "conformance".to_owned()
    } else {
        format!("conformance {}", suite.label)
    };
    ctx.say(format!(
        "== {title}: {first} binaries under {} vs ours{} (timeout {}s, {} at once)",
        suite.oracle.label,
        if others.is_empty() {
            String::new()
        } else {
            format!(", then {} under ours", others.join(", "))
        },
        ctx.o.timeout_s,
        ctx.o.jobs
    ));
    let programs = ctx.selected(suite);
    let rows = jobs::map_parallel(&programs, ctx.o.jobs, |p| check(ctx, suite, p));

    // results.tsv, conformance.log
    let mut tsv = format!(
        "# {title}\n# name\t{first}: llvm-vs-ours\tllvm status\tours status{}\n",
        others
            .iter()
            .map(|a| format!("\t{a} vs {first} (ours)"))
            .collect::<String>()
    );
    let mut log = String::new();
    for r in &rows {
        let p = r.program;
        tsv.push_str(&format!(
            "{}\t{}\t{}\t{}{}\n",
            name_of(p),
            r.primary,
            r.oracle_status,
            r.ours_status,
            r.secondary
                .iter()
                .map(|v| format!("\t{v}"))
                .collect::<String>()
        ));
        log.push_str(&format!(
            "=================== {}  {first}: {}{}  (env: {}; args: {}; flags: {})\n",
            name_of(p),
            r.primary,
            others
                .iter()
                .zip(&r.secondary)
                .map(|(a, v)| format!("  {a}: {v}"))
                .collect::<String>(),
            p.raw_env,
            p.raw_args,
            p.raw_flags
        ));
        if let Some((oracle, ours, other_runs)) = &r.runs {
            log.push_str(&show_run(
                &format!("{} ({first})", suite.oracle.label),
                oracle,
            ));
            log.push_str(&show_run(&format!("ours ({first})"), ours));
            for ((abi, v), run) in others.iter().zip(&r.secondary).zip(other_runs) {
                match run {
                    Some(run) if v.is_fail() => {
                        log.push_str(&show_run(&format!("ours ({abi})"), run))
                    }
                    Some(_) => log.push_str(&format!("--- ours ({abi}): as ours ({first})\n")),
                    None => {}
                }
            }
            if let Some(e) = expected(suite, p) {
                log.push_str(&format!("--- expected:\n{}", quoted(&e)));
            }
        }
    }
    ctx.append("results.tsv", &tsv);
    ctx.append("conformance.log", &log);

    // Failures first (short), then the table, then the totals: the tail of the output is
    // what the device tool returns.
    let mut budget: usize = 4000;
    for r in rows
        .iter()
        .filter(|r| r.primary.is_fail() || r.secondary.iter().any(Verdict::is_fail))
    {
        let head = format!(
            "-- {}: {first} {}{}",
            name_of(r.program),
            r.primary,
            others
                .iter()
                .zip(&r.secondary)
                .map(|(a, v)| format!(", {a} {v}"))
                .collect::<String>()
        );
        let chunk: Vec<String> = std::iter::once(head.clone())
            .chain(failure_details(suite, r))
            .map(|l| cut(&l, 200))
            .collect();
        let chunk = chunk.join("\n");
        if chunk.chars().count() < budget {
            budget -= chunk.chars().count();
            ctx.say(chunk);
        } else {
            ctx.say(format!("{head} (details in conformance.log)"));
        }
    }

    ctx.say(format!(
        "== {title} table, rows not ok in {} (full table: results.tsv)",
        suite.abis.join(" or ")
    ));
    let all_ok = |r: &Row| r.primary.is_ok() && r.secondary.iter().all(|v| *v == Verdict::Ok);
    for r in rows.iter().filter(|r| !all_ok(r)) {
        ctx.say(format!(
            "{:<32} {:<26} {:<10} {:<10}{}",
            cut(&name_of(r.program), 32),
            r.primary.to_string(),
            r.oracle_status,
            r.ours_status,
            others
                .iter()
                .zip(&r.secondary)
                .map(|(a, v)| format!(" {a}:{v}"))
                .collect::<String>()
        ));
    }
    let ok: Vec<&str> = rows
        .iter()
        .filter(|r| all_ok(r))
        .map(|r| r.program.name.as_str())
        .collect();
    let ok_line = format!(
        "ok in {} ({}): {}",
        suite.abis.join(" and "),
        ok.len(),
        ok.join(" ")
    );
    for l in text::fold_words(ok_line.split(' '), 150) {
        ctx.say(l);
    }
    let n = rows.len();
    let nok = rows.iter().filter(|r| r.primary.is_ok()).count();
    let nskip = rows
        .iter()
        .filter(|r| matches!(r.primary, Verdict::Skip(_)))
        .count();
    let nfail = n - nok - nskip;
    let what = if suite.label.is_empty() {
        "conformance".to_owned()
    } else {
        format!("conformance {}", suite.label)
    };
    let line = format!(
        "{what} {first} ({} vs ours): {nok} agree, {nfail} FAIL, {nskip} skipped, of {n}",
        suite.oracle.label
    );
    ctx.say(&line);
    ctx.total(line);
    let mut failed = nfail > 0;
    for (k, abi) in others.iter().enumerate() {
        let ok = rows.iter().filter(|r| r.secondary[k].is_ok()).count();
        let bad = rows.iter().filter(|r| r.secondary[k].is_fail()).count();
        let line = format!("{what} {abi} (ours, vs {first} under ours): {ok} agree, {bad} FAIL");
        ctx.say(&line);
        ctx.total(line);
        failed |= bad > 0;
    }
    if failed {
        ctx.fail();
    }
    if rows
        .iter()
        .any(|r| r.primary.out_of_time() || r.secondary.iter().any(Verdict::out_of_time))
    {
        ctx.incomplete();
    }
}

/// A few diff lines for a failed row.
fn failure_details(suite: &Suite, r: &Row) -> Vec<String> {
    let mut out = Vec::new();
    let Some((oracle, ours, other_runs)) = &r.runs else {
        return out;
    };
    if r.primary.is_fail() {
        let have = normalise_stderr(&ours.stderr);
        for line in required_stderr(suite, r.program) {
            if !have.lines().any(|l| l.trim_end() == line) {
                out.push(format!("   ours stderr lacks: {line}"));
            }
        }
        if let Some(exp) = expected(suite, r.program) {
            out.extend(prefixed(&diff(&exp, &ours.stdout), 8, "   exp|ours "));
        } else {
            out.extend(prefixed(
                &diff(&oracle.stdout, &ours.stdout),
                8,
                "   llvm|ours ",
            ));
            out.extend(prefixed(
                &diff(
                    &normalise_stderr(&oracle.stderr),
                    &normalise_stderr(&ours.stderr),
                ),
                6,
                "   stderr llvm|ours ",
            ));
        }
    }
    let first = &suite.abis[0];
    for ((abi, v), run) in suite.abis[1..].iter().zip(&r.secondary).zip(other_runs) {
        if let (true, Some(run)) = (v.is_fail(), run) {
            out.extend(prefixed(
                &diff(&ours.stdout, &run.stdout),
                6,
                &format!("   {first}|{abi} "),
            ));
            out.extend(
                run.stderr
                    .lines()
                    .take(4)
                    .map(|l| format!("   {abi} stderr: {l}")),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(flags: &str) -> Program {
        super::super::manifest::parse(&format!("p\t-\t-\t{flags}\t-\n")).unwrap()[0].clone()
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
        assert_eq!(
            v(
                &seen(&Status::Signal(6), "", ""),
                &seen(&Status::Signal(6), "", "")
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
            secondary_verdict(&p, &first, &seen(&OK, "1\n", "e 0x2\n"), &[]),
            Verdict::Ok
        );
        let mut other = seen(&Status::Exit(1), "2\n", "f\n");
        other.loaded_ok = false;
        assert_eq!(
            secondary_verdict(&p, &first, &other, &["need".into()]).to_string(),
            "FAIL(loaded,status,stdout,stderr,stderr-lacks-line)"
        );
    }
}
