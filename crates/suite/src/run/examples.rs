//! The examples mode: each examples/ program under ours and the oracle with
//! `OMP_TARGET_OFFLOAD=MANDATORY`. `ok` needs exit 0 under ours, `check: OK`, and the same
//! stdout as the oracle apart from `time:` lines.

use super::Ctx;
use super::exec::{self, Job, Ran};
use super::manifest::Runtime;

/// The verdict of one example: `ok`, or `FAIL(...)` (with the oracle's exit status when that
/// failed too).
pub fn verdict(ours: &Ran, ours_ok_lib: bool, oracle: &Ran, oracle_ok_lib: bool) -> String {
    let mut v = if ours.status.success() {
        "ok".to_owned()
    } else {
        format!("FAIL(ours {})", ours.status)
    };
    if !oracle.status.success() {
        v.push_str(&format!(" (llvm {})", oracle.status));
    }
    let failed = v.starts_with("FAIL");
    if !failed && !ours.stdout.lines().any(|l| l.contains("check: OK")) {
        v = "FAIL(no 'check: OK')".into();
    } else if !failed && !ours_ok_lib {
        v = format!("FAIL(ours-run-loaded:{})", ours.loaded);
    } else if !failed && !oracle_ok_lib {
        v = format!("FAIL(llvm-run-loaded:{})", oracle.loaded);
    }
    let untimed = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| !l.starts_with("time:"))
            .map(String::from)
            .collect()
    };
    if v == "ok" && untimed(&ours.stdout) != untimed(&oracle.stdout) {
        v = "FAIL(stdout differs)".into();
    }
    v
}

pub fn run(ctx: &Ctx) {
    let suite = ctx.main_suite();
    ctx.say(format!(
        "== examples (OMP_TARGET_OFFLOAD=MANDATORY), ours vs {}",
        suite.oracle.label
    ));
    let scratch = ctx.scratch("ex");
    let env = [("OMP_TARGET_OFFLOAD".to_owned(), "MANDATORY".to_owned())];
    for bin in super::files_in(&suite.dir.join("examples")) {
        let name = bin
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if ctx.deadline.passed() {
            ctx.say(format!("{name}: SKIP(time)"));
            ctx.incomplete();
            continue;
        }
        let go = |rt: &Runtime, tag: &str| {
            exec::run(&Job {
                program: &bin,
                args: &[],
                wrapper: &[],
                env: &env,
                lib_path: ctx.lib_path(rt),
                cwd: &ctx.cwd,
                limit: ctx.limit(ctx.o.timeout_s),
                files: scratch.join(format!("{name}.{tag}")),
                soname: Some(&suite.soname),
                merge_stderr: false,
            })
        };
        let ours = go(&suite.ours, "ours");
        let oracle = go(&suite.oracle, "llvm");
        let mut log = String::new();
        for (rt, r) in [("ours", &ours), ("llvm", &oracle)] {
            log.push_str(&format!(
                "--- {name} under {rt}: {}  (loaded: {})\n{}",
                r.status, r.loaded, r.stdout
            ));
            for l in r.stderr.lines() {
                log.push_str(&format!("stderr: {l}\n"));
            }
        }
        ctx.append("examples.log", &log);
        let v = verdict(
            &ours,
            exec::loaded_from(&ours.loaded, &suite.ours.dir),
            &oracle,
            exec::loaded_from(&oracle.loaded, &suite.oracle.dir),
        );
        if v.starts_with("FAIL") {
            ctx.fail();
        }
        ctx.total(format!("example {name}: {v}"));
        ctx.say(format!("{name}: {v}"));
        let timing = |r: &Ran| {
            r.stdout
                .lines()
                .filter(|l| l.starts_with("ran on") || l.starts_with("time"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        ctx.say(format!("   ours: {}", timing(&ours)));
        ctx.say(format!("   llvm: {}", timing(&oracle)));
        if v != "ok" {
            for l in ours.stderr.lines().take(4) {
                ctx.say(format!("   ours stderr: {}", super::text::cut(l, 200)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::exec::Status;

    fn ran(status: Status, stdout: &str) -> Ran {
        let mut r = Ran::ended(status, stdout);
        r.loaded = "/x/libomptarget.so.19.1".into();
        r
    }

    #[test]
    fn example_verdicts() {
        let good = "ran on: device 0\ntime: 1.0 ms\ncheck: OK\n";
        let other_time = "ran on: device 0\ntime: 2.5 ms\ncheck: OK\n";
        let ok = Status::Exit(0);
        assert_eq!(
            verdict(
                &ran(ok.clone(), good),
                true,
                &ran(ok.clone(), other_time),
                true
            ),
            "ok"
        );
        assert_eq!(
            verdict(
                &ran(Status::Exit(1), good),
                true,
                &ran(ok.clone(), good),
                true
            ),
            "FAIL(ours exit 1)"
        );
        assert_eq!(
            verdict(
                &ran(Status::Timeout, ""),
                true,
                &ran(Status::Exit(2), good),
                true
            ),
            "FAIL(ours timeout) (llvm exit 2)"
        );
        // LLVM failing alone is noted, not a failure of ours.
        assert_eq!(
            verdict(
                &ran(ok.clone(), good),
                true,
                &ran(Status::Signal(11), ""),
                true
            ),
            "ok (llvm signal 11)"
        );
        assert_eq!(
            verdict(
                &ran(ok.clone(), "check: WRONG\n"),
                true,
                &ran(ok.clone(), good),
                true
            ),
            "FAIL(no 'check: OK')"
        );
        assert_eq!(
            verdict(
                &ran(ok.clone(), good),
                true,
                &ran(ok.clone(), "ran on: host\ncheck: OK\n"),
                true
            ),
            "FAIL(stdout differs)"
        );
        assert_eq!(
            verdict(&ran(ok.clone(), good), false, &ran(ok.clone(), good), true),
            "FAIL(ours-run-loaded:/x/libomptarget.so.19.1)"
        );
        assert_eq!(
            verdict(&ran(ok.clone(), good), true, &ran(ok, good), false),
            "FAIL(llvm-run-loaded:/x/libomptarget.so.19.1)"
        );
    }
}
