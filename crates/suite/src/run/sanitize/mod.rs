//! The sanitize mode: every program's first-ABI binary under compute-sanitizer's tools
//! (memcheck, initcheck, synccheck, racecheck by default), once under ours and once under the
//! suite's oracle, and a table of the two side by side (users run the sanitizer on
//! their programs; under ours they must not get reports LLVM's runtime does not give).
//!
//! The work is one queue, tool after tool, each program's two runs next to each other, so
//! that a budget that runs out leaves whole tools done and both sides of every compared row.

mod findings;
mod report;

use super::exec::{self, Job};
use super::manifest::{Program, Suite};
use super::text::cut;
use super::{Ctx, jobs};
use findings::{Outcome, unusable};
use report::report;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_lists() {
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
    }
}
