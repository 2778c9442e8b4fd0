//! The conformance mode: each program's first-ABI binary under the suite's oracle runtime and
//! ours (exit status and stdout must agree; normalised stderr too for `STDERR` programs;
//! `DIVERGENCE` programs: ours prints the `.expected` file and exits 0, the oracle does not),
//! then each other ABI's binary under ours, which must behave as the first did under ours.
//! The rules are crates/abi/tests/conformance.rs's: `// STATUS:` is the exit status a
//! DIVERGENCE program must have under ours, `// OURS-STDERR:` lines must be in our stderr.

mod verdict;

use super::exec::{self, Job, Ran};
use super::manifest::{Program, Runtime, Suite};
use super::text::{self, cut, diff, normalise_stderr};
use super::{Ctx, jobs};
use std::fs;
use std::path::{Path, PathBuf};
use verdict::{Seen, Verdict, primary_verdict, secondary_verdict};

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
        limit: ctx.limit(p.timeout_s.unwrap_or(ctx.o.timeout_s)),
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
                ctx.deadline.passed(),
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
