//! The tools mode: the tool interfaces on the GPU, with the programs of gpu/tools/ (built
//! into OUT/tools/). Details go to examples.log (the logs folder holds at most 8 files).
//!
//! - interop: `interop_stream` (a CUDA kernel on the interop stream between target regions)
//!   under ours must end with `interop_stream: all ok`; under the oracle it is reported only
//!   (LLVM 19 does not wait for the stream, so its results are expected to be wrong).

use super::Ctx;
use super::exec::{self, Job, Ran};
use super::manifest::Runtime;
use std::path::Path;

/// The verdict of `interop_stream` under ours: `ok` or `FAIL(...)`.
pub fn interop_verdict(ours: &Ran) -> String {
    if !ours.status.success() {
        return format!("FAIL(ours {})", ours.status);
    }
    if !ours
        .stdout
        .lines()
        .any(|l| l.starts_with("interop_stream: all ok"))
    {
        return "FAIL(no 'interop_stream: all ok')".into();
    }
    "ok".into()
}

/// How many of the cases came out wrong (for the oracle's line).
pub fn wrong_results(r: &Ran) -> usize {
    r.stdout.lines().filter(|l| l.contains(": WRONG")).count()
}

fn run_one(ctx: &Ctx, bin: &Path, args: &[String], rt: &Runtime, tag: &str) -> Ran {
    let suite = ctx.main_suite();
    exec::run(&Job {
        program: bin,
        args,
        wrapper: &[],
        env: &[],
        lib_path: ctx.lib_path(rt),
        cwd: &ctx.cwd,
        limit: ctx.limit(ctx.o.timeout_s),
        files: ctx.scratch("tools").join(tag),
        soname: Some(&suite.soname),
        merge_stderr: false,
    })
}

fn log(ctx: &Ctx, what: &str, r: &Ran) {
    let mut text = format!(
        "--- tools {what}: {}  (loaded: {})\n{}",
        r.status, r.loaded, r.stdout
    );
    for l in r.stderr.lines() {
        text.push_str(&format!("stderr: {l}\n"));
    }
    ctx.append("examples.log", &text);
}

pub fn run(ctx: &Ctx) {
    let suite = ctx.main_suite();
    let dir = suite.dir.join("tools");
    ctx.say("== tools: interop kernel on the targetsync stream between target regions (gpu/tools/interop_stream.c)");
    let bin = dir.join("interop_stream");
    if !bin.is_file() {
        ctx.say(format!("tools: no {}", bin.display()));
        ctx.total("tools interop: FAIL(not built)");
        ctx.fail();
        return;
    }
    let ours = run_one(ctx, &bin, &[], &suite.ours, "interop.ours");
    let oracle = run_one(ctx, &bin, &[], &suite.oracle, "interop.llvm");
    log(ctx, "interop_stream under ours", &ours);
    log(ctx, "interop_stream under the oracle", &oracle);
    for (tag, r) in [("ours", &ours), ("llvm", &oracle)] {
        for l in r.stdout.lines().take(12) {
            ctx.say(format!("   {tag}: {}", super::text::cut(l, 160)));
        }
    }
    let mut v = interop_verdict(&ours);
    if v == "ok" && !exec::loaded_from(&ours.loaded, &suite.ours.dir) {
        v = format!("FAIL(ours-run-loaded:{})", ours.loaded);
    }
    if v.starts_with("FAIL") {
        ctx.fail();
    }
    ctx.total(format!("tools interop (ours): {v}"));
    ctx.total(format!(
        "tools interop ({}, reported only): {}, {} wrong results",
        suite.oracle.label,
        oracle.status,
        wrong_results(&oracle)
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::exec::Status;

    fn ran(status: Status, stdout: &str) -> Ran {
        let mut r = Ran::not_started("");
        r.status = status;
        r.stdout = stdout.into();
        r
    }

    #[test]
    fn interop_verdicts() {
        let good = "depend + nowait: ok\nblocking use: ok\nfreed then reused: ok\ninteropstream\ninterop_stream: all ok\n";
        assert_eq!(interop_verdict(&ran(Status::Exit(0), good)), "ok");
        assert_eq!(
            interop_verdict(&ran(Status::Exit(1), "interop_stream: FAILED\n")),
            "FAIL(ours exit 1)"
        );
        assert_eq!(
            interop_verdict(&ran(Status::Exit(0), "no CUDA driver: nothing to test\n")),
            "FAIL(no 'interop_stream: all ok')"
        );
        let bad = "depend + nowait: WRONG (element 1 is 4, expected 3)\nblocking use: ok\nfreed then reused: WRONG (element 0 is 7, expected 3)\n";
        assert_eq!(wrong_results(&ran(Status::Exit(1), bad)), 2);
    }
}
