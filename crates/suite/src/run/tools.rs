//! The tools mode: the tool interfaces on the GPU, with the programs of gpu/tools/ (built
//! into OUT/tools/). Details go to examples.log (the logs folder holds at most 8 files).
//!
//! - interop: `interop_stream` (a CUDA kernel on the interop stream between target regions)
//!   under ours must end with `interop_stream: all ok`; under the oracle it is reported only
//!   (LLVM 19 does not wait for the stream, so its results are expected to be wrong).
//! - record/replay: `record_kernels` (tests/record/) runs under each runtime with
//!   `LIBOMPTARGET_RECORD=1 LIBOMPTARGET_RR_SAVE_OUTPUT=1`, and LLVM's
//!   `llvm-omp-kernel-replay-19 --verify` replays each recording under each runtime. Every
//!   kernel recorded by ours must verify under ours and under LLVM 19, and every kernel
//!   recorded by LLVM 19 under ours; LLVM's own round trip is reported.
//! - profile: `overlap` (tests/profile/) under `omptarget run --summary --trace`: the run must
//!   succeed, and the trace must hold kernels, copies and stream-ordered frees on the device's
//!   queue lanes; whether operations of different queues overlapped is reported. The trace
//!   stays in runs.tar.gz (`tools/profile/overlap-trace.json`; scripts/trace_svg.py draws it).

use super::Ctx;
use super::exec::{self, Job, Ran};
use super::manifest::Runtime;
use std::path::Path;

/// The verdict of a self-checking tool program under ours: `ok` when it exited 0 and printed a
/// line starting with `expect`, else `FAIL(...)`.
pub fn tool_verdict(ours: &Ran, expect: &str) -> String {
    if !ours.status.success() {
        return format!("FAIL(ours {})", ours.status);
    }
    if !ours.stdout.lines().any(|l| l.starts_with(expect)) {
        return format!("FAIL(no '{expect}')");
    }
    "ok".into()
}

/// How many of the cases came out wrong (for the oracle's line).
pub fn wrong_results(r: &Ran) -> usize {
    r.stdout.lines().filter(|l| l.contains(": WRONG")).count()
}

/// One replay: a kernel recorded under `recorder`, replayed by LLVM's tool on `replayer`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    pub recorder: &'static str,
    pub replayer: &'static str,
    pub kernel: String,
    pub verified: bool,
}

/// `ok` when every kernel recorded under ours verified on ours, every kernel recorded under
/// LLVM 19 verified on ours (both recorders recorded something), and every kernel recorded
/// under ours verified on LLVM 19 where LLVM 19 verifies its own recording of that kernel
/// (its replay does not put the memory back at the recorded address: kernels that follow
/// pointers stored in device memory fail under it whoever recorded them). LLVM 19's own
/// round trip is reported, not required.
pub fn record_replay_verdict(replays: &[Replay]) -> String {
    let ok = |rec: &str, rep: &str, k: &str| {
        replays
            .iter()
            .any(|r| r.recorder == rec && r.replayer == rep && r.kernel == k && r.verified)
    };
    let mut bad = Vec::new();
    for rec in ["ours", "llvm"] {
        if !replays.iter().any(|r| r.recorder == rec) {
            bad.push(format!("nothing recorded under {rec}"));
        }
    }
    for r in replays.iter().filter(|r| !r.verified) {
        // Ours must replay its own recordings. Across runtimes a replay counts where the other
        // runtime replays its own recording of the kernel: LLVM 19's GPU recordings hold the
        // host addresses of its argument slots instead of the arguments (docs/RECORD-REPLAY.md),
        // and its replay places memory where the driver's allocation happens to land.
        let required = match (r.recorder, r.replayer) {
            ("ours", "ours") => true,
            ("llvm", "ours") | ("ours", "llvm") => ok("llvm", "llvm", &r.kernel),
            _ => false,
        };
        if required {
            bad.push(format!("{}->{} {}", r.recorder, r.replayer, r.kernel));
        }
    }
    if bad.is_empty() {
        "ok".into()
    } else {
        format!("FAIL({})", bad.join(", "))
    }
}

fn run_one(ctx: &Ctx, bin: &Path, args: &[String], rt: &Runtime, tag: &str) -> Ran {
    run_in(ctx, bin, args, &[], ctx.lib_path(rt), &ctx.cwd, tag)
}

fn run_in(
    ctx: &Ctx,
    bin: &Path,
    args: &[String],
    env: &[(String, String)],
    lib_path: String,
    cwd: &Path,
    tag: &str,
) -> Ran {
    let suite = ctx.main_suite();
    exec::run(&Job {
        program: bin,
        args,
        wrapper: &[],
        env,
        lib_path,
        cwd,
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
    self_checking(
        ctx,
        "interop",
        "interop_stream",
        "interop kernel on the targetsync stream between target regions (gpu/tools/interop_stream.c)",
        "interop_stream: all ok",
    );
    self_checking(
        ctx,
        "interop60",
        "interop60",
        "LLVM 22's interop interface: prefer_type, completion callbacks, implicit objects (gpu/tools/interop60.c)",
        "interop60: all ok",
    );
    self_checking(
        ctx,
        "cuda_via_llvm",
        "cuda_via_llvm",
        "a CUDA kernel with parameters through llvmLaunchKernel, clang 22 -foffload-via-llvm (gpu/tools/cuda_via_llvm.cu)",
        "axpy through llvmLaunchKernel: ok",
    );
    record_replay(ctx);
    profile(ctx);
}

/// A device event of a trace (one event per line, as the runtime writes it).
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceEvent {
    pub pid: u64,
    pub lane: u64,
    pub start: f64,
    pub end: f64,
    pub name: String,
}

fn number(line: &str, key: &str) -> Option<f64> {
    let at = line.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = &line[at..];
    rest[..rest.find([',', '}'])?].parse().ok()
}

pub fn device_events(trace: &str) -> Vec<DeviceEvent> {
    trace
        .lines()
        .filter(|l| l.contains("\"cat\":\"device\""))
        .filter_map(|l| {
            let at = l.find("\"name\":\"")? + 8;
            let ts = number(l, "ts")?;
            Some(DeviceEvent {
                pid: number(l, "pid")? as u64,
                lane: number(l, "tid")? as u64,
                start: ts,
                end: ts + number(l, "dur")?,
                name: l[at..at + l[at..].find('"')?].to_owned(),
            })
        })
        .collect()
}

/// Whether two events of one device on different lanes ran at the same time.
pub fn overlap(events: &[DeviceEvent]) -> bool {
    events.iter().any(|a| {
        events
            .iter()
            .any(|b| a.pid == b.pid && a.lane != b.lane && a.start < b.end && b.start < a.end)
    })
}

/// The lanes (per device) whose name says they are queues, from the trace's metadata.
fn queue_lanes(trace: &str) -> Vec<(u64, u64)> {
    trace
        .lines()
        .filter(|l| l.contains("\"name\":\"thread_name\",\"args\":{\"name\":\"queue "))
        .filter_map(|l| Some((number(l, "pid")? as u64, number(l, "tid")? as u64)))
        .collect()
}

fn profile(ctx: &Ctx) {
    let suite = ctx.main_suite();
    let bin = suite.dir.join("tools").join("overlap");
    ctx.say("== tools: profile (tests/profile/overlap.c under omptarget run --summary --trace)");
    if !bin.is_file() {
        ctx.say("tools: overlap not built");
        ctx.total("tools profile: FAIL(not built)");
        ctx.fail();
        return;
    }
    let d = ctx.scratch("profile");
    let trace = d.join("overlap-trace.json");
    let args = vec![
        "run".to_owned(),
        "--summary".to_owned(),
        "--trace".to_owned(),
        trace.display().to_string(),
        "--".to_owned(),
        bin.display().to_string(),
    ];
    let r = run_in(
        ctx,
        &ctx.cli,
        &args,
        &[],
        ctx.o.extra_lib.clone(),
        &d,
        "profile",
    );
    log(ctx, "overlap under omptarget run --summary --trace", &r);
    for l in r.stderr.lines().filter(|l| !l.is_empty()).take(24) {
        ctx.say(format!("   {}", super::text::cut(l, 170)));
    }
    let text = std::fs::read_to_string(&trace).unwrap_or_default();
    let events = device_events(&text);
    let queues = queue_lanes(&text);
    let on_queue = |name: &str| {
        events
            .iter()
            .any(|e| e.name.contains(name) && queues.contains(&(e.pid, e.lane)))
    };
    let mut why = Vec::new();
    if !r.status.success() {
        why.push(format!("exit {}", r.status));
    }
    if !r.stdout.contains("check: OK") {
        why.push("no 'check: OK'".into());
    }
    for (what, name) in [
        ("kernels", "__omp_offloading"),
        ("copies", "copy "),
        ("stream-ordered frees", "free"),
    ] {
        if !on_queue(name) {
            why.push(format!("no {what} on a queue lane"));
        }
    }
    let v = if why.is_empty() {
        "ok".to_owned()
    } else {
        format!("FAIL({})", why.join(", "))
    };
    if v != "ok" {
        ctx.fail();
    }
    ctx.total(format!(
        "tools profile: {v}; {} device events on {} queue lanes, operations of different queues overlap: {}",
        events.len(),
        queues.len(),
        if overlap(&events) { "yes" } else { "no" }
    ));
}

fn record_replay(ctx: &Ctx) {
    let suite = ctx.main_suite();
    let dir = suite.dir.join("tools");
    let (bin, tool) = (
        dir.join("record_kernels"),
        dir.join("llvm-omp-kernel-replay-19"),
    );
    ctx.say("== tools: record and replay (tests/record/record_kernels.c, llvm-omp-kernel-replay-19 --verify)");
    if !bin.is_file() || !tool.is_file() {
        ctx.say("tools: record_kernels or llvm-omp-kernel-replay-19 not built");
        ctx.total("tools record/replay: FAIL(not built)");
        ctx.fail();
        return;
    }
    let extra = |first: &Runtime| {
        // The tool needs libLLVM from LLVM's folder; the runtime's folder comes first.
        let mut p = format!("{}:{}", first.dir.display(), suite.oracle.dir.display());
        if !ctx.o.extra_lib.is_empty() {
            p = format!("{p}:{}", ctx.o.extra_lib);
        }
        p
    };
    let record_env = [
        ("LIBOMPTARGET_RECORD".to_owned(), "1".to_owned()),
        ("LIBOMPTARGET_RR_SAVE_OUTPUT".to_owned(), "1".to_owned()),
    ];
    let mut replays = Vec::new();
    let runtimes: [(&'static str, &Runtime); 2] = [("ours", &suite.ours), ("llvm", &suite.oracle)];
    for (rec, rec_rt) in runtimes {
        let d = ctx.scratch(&format!("rr-{rec}"));
        let ran = run_in(
            ctx,
            &bin,
            &[],
            &record_env,
            ctx.lib_path(rec_rt),
            &d,
            &format!("rr-{rec}.record"),
        );
        log(ctx, &format!("record_kernels recorded by {rec}"), &ran);
        let mut names: Vec<String> = std::fs::read_dir(&d)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_str()
                    .and_then(|n| n.strip_suffix(".json"))
                    .map(String::from)
            })
            .collect();
        names.sort();
        ctx.say(format!(
            "   recorded by {rec}: {} ({} kernels)",
            ran.status,
            names.len()
        ));
        for n in &names {
            // Where the recording lay and how much of it the kernel could reach: what a
            // replay has to get back.
            let json = std::fs::read_to_string(d.join(format!("{n}.json"))).unwrap_or_default();
            let field = |k: &str| {
                json.split_once(&format!("\"{k}\":"))
                    .map(|(_, v)| v.split([',', '}']).next().unwrap_or("").trim().to_owned())
                    .unwrap_or_else(|| "?".into())
            };
            let start = field("BumpAllocVAStart")
                .parse::<u64>()
                .map_or("?".into(), |v| format!("{v:#x}"));
            // LLVM 19's GPU recordings hold the addresses of the host slots its plugin kept
            // the arguments in (stack addresses, 0x7ff...), not the arguments.
            let words: Vec<i128> = json
                .split_once("\"ArgPtrs\":[")
                .and_then(|(_, v)| v.split_once(']'))
                .map(|(v, _)| v.split(',').filter_map(|w| w.trim().parse().ok()).collect())
                .unwrap_or_default();
            let stack = |w: &i128| (0x7ff0_0000_0000..0x8000_0000_0000).contains(w);
            let lost = !words.is_empty() && words.iter().all(stack);
            ctx.say(format!(
                "   {n}: BumpAllocVAStart={start} DeviceMemorySize={}{}",
                field("DeviceMemorySize"),
                if lost {
                    " (ArgPtrs are host stack addresses: the recording lost the kernel's arguments)"
                } else {
                    ""
                }
            ));
        }
        for (rep, rep_rt) in runtimes {
            for n in &names {
                let replay = |env: &[(String, String)], tag: &str| {
                    run_in(
                        ctx,
                        &tool,
                        &["--verify".to_owned(), format!("{n}.json")],
                        env,
                        extra(rep_rt),
                        &d,
                        &format!("rr-{rec}-{rep}-{n}{tag}"),
                    )
                };
                let verified = |r: &Ran| r.stdout.contains("Replay device memory verified!");
                let mut r = replay(&[], "");
                log(
                    ctx,
                    &format!("{n} recorded by {rec}, replayed on {rep}"),
                    &r,
                );
                if !verified(&r) && rep == "ours" {
                    // Our memory pool's first block may sit where the recording lay: once more
                    // without it, and say so.
                    let again = replay(
                        &[(
                            "OMPTARGET_RS_CUDA_POOL_PREALLOCATE".to_owned(),
                            "0".to_owned(),
                        )],
                        ".nopool",
                    );
                    log(
                        ctx,
                        &format!(
                            "{n} recorded by {rec}, replayed on {rep} without pool preallocation"
                        ),
                        &again,
                    );
                    ctx.say(format!(
                        "   {n}: {rec}->{rep} again with OMPTARGET_RS_CUDA_POOL_PREALLOCATE=0: {}",
                        if verified(&again) {
                            "verified"
                        } else {
                            "not verified"
                        }
                    ));
                    r = again;
                }
                if !verified(&r) {
                    let why = r
                        .stdout
                        .lines()
                        .chain(r.stderr.lines())
                        .next()
                        .unwrap_or("")
                        .to_owned();
                    ctx.say(format!(
                        "   {n}: {rec}->{rep} {}: {}",
                        r.status,
                        super::text::cut(&why, 140)
                    ));
                }
                replays.push(Replay {
                    recorder: rec,
                    replayer: rep,
                    kernel: n.clone(),
                    verified: verified(&r),
                });
            }
        }
    }
    for (rec, rep) in [
        ("ours", "ours"),
        ("ours", "llvm"),
        ("llvm", "ours"),
        ("llvm", "llvm"),
    ] {
        let cell: Vec<&Replay> = replays
            .iter()
            .filter(|r| r.recorder == rec && r.replayer == rep)
            .collect();
        ctx.say(format!(
            "   recorded by {rec:4} replayed on {rep:4}: {}/{} verified",
            cell.iter().filter(|r| r.verified).count(),
            cell.len()
        ));
    }
    let v = record_replay_verdict(&replays);
    if v.starts_with("FAIL") {
        ctx.fail();
    }
    ctx.total(format!("tools record/replay: {v}"));
}

/// A tool program that checks itself (`gpu/tools/NAME`), reported as `tools LABEL`: under ours
/// it must pass [`tool_verdict`] and the run must load our library; under the oracle it is
/// reported only (LLVM 19 lacks what these programs test, or orders them wrongly).
fn self_checking(ctx: &Ctx, label: &str, name: &str, what: &str, expect: &str) {
    let suite = ctx.main_suite();
    let bin = suite.dir.join("tools").join(name);
    ctx.say(format!("== tools: {what}"));
    if !bin.is_file() {
        ctx.say(format!("tools: no {}", bin.display()));
        ctx.total(format!("tools {label}: FAIL(not built)"));
        ctx.fail();
        return;
    }
    let ours = run_one(ctx, &bin, &[], &suite.ours, &format!("{name}.ours"));
    let oracle = run_one(ctx, &bin, &[], &suite.oracle, &format!("{name}.llvm"));
    log(ctx, &format!("{name} under ours"), &ours);
    log(ctx, &format!("{name} under the oracle"), &oracle);
    for (tag, r) in [("ours", &ours), ("llvm", &oracle)] {
        for l in r.stdout.lines().chain(r.stderr.lines()).take(12) {
            ctx.say(format!("   {tag}: {}", super::text::cut(l, 160)));
        }
    }
    let mut v = tool_verdict(&ours, expect);
    if v == "ok" && !exec::loaded_from(&ours.loaded, &suite.ours.dir) {
        v = format!("FAIL(ours-run-loaded:{})", ours.loaded);
    }
    if v.starts_with("FAIL") {
        ctx.fail();
    }
    ctx.total(format!("tools {label} (ours): {v}"));
    ctx.total(format!(
        "tools {label} ({}, reported only): {}, {} wrong results",
        suite.oracle.label,
        oracle.status,
        wrong_results(&oracle)
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::exec::Status;

    fn ran(status: Status, stdout: &str) -> Ran {
        Ran::ended(status, stdout)
    }

    #[test]
    fn interop_verdicts() {
        let interop_verdict = |r: &Ran| tool_verdict(r, "interop_stream: all ok");
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

    #[test]
    fn device_events_and_overlap() {
        let trace = "{\"traceEvents\":[\n\
{\"pid\":7,\"tid\":1,\"ts\":1.5,\"ph\":\"X\",\"dur\":2.0,\"name\":\"Runtime: target exe\"},\n\
{\"pid\":701,\"tid\":0,\"ts\":1.000,\"ph\":\"X\",\"dur\":2.000,\"name\":\"copy host to device\",\"cat\":\"device\",\"args\":{\"bytes\":8}},\n\
{\"pid\":701,\"tid\":1,\"ts\":2.500,\"ph\":\"X\",\"dur\":1.000,\"name\":\"k\",\"cat\":\"device\",\"args\":{}},\n\
{\"cat\":\"\",\"pid\":701,\"tid\":1,\"ts\":0,\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{\"name\":\"queue 0x5\"}}\n\
]}";
        let e = device_events(trace);
        assert_eq!(e.len(), 2);
        assert_eq!(
            (e[0].pid, e[0].lane, e[0].start, e[0].end),
            (701, 0, 1.0, 3.0)
        );
        assert!(overlap(&e), "2.5..3.5 overlaps 1..3 on another lane");
        assert!(!overlap(&e[..1]));
        assert_eq!(queue_lanes(trace), vec![(701, 1)]);
    }

    #[test]
    fn record_replay_verdicts() {
        let r = |recorder, replayer, kernel: &str, verified| Replay {
            recorder,
            replayer,
            kernel: kernel.into(),
            verified,
        };
        let mut all = Vec::new();
        for k in ["a", "b"] {
            all.push(r("ours", "ours", k, true));
            all.push(r("ours", "llvm", k, k == "a"));
            all.push(r("llvm", "ours", k, true));
            all.push(r("llvm", "llvm", k, k == "a"));
        }
        assert_eq!(
            record_replay_verdict(&all),
            "ok",
            "kernel b fails on LLVM 19 whoever recorded it: reported only"
        );
        let mut bad = all.clone();
        bad[1].verified = false; // ours->llvm a, which LLVM replays from its own recording
        bad[2].verified = false; // llvm->ours a, likewise
        bad[4].verified = false; // ours->ours b: always required
        bad[6].verified = false; // llvm->ours b: LLVM's recording of b does not replay anywhere
        assert_eq!(
            record_replay_verdict(&bad),
            "FAIL(ours->llvm a, llvm->ours a, ours->ours b)"
        );
        let ours_only: Vec<Replay> = all.into_iter().filter(|x| x.recorder == "ours").collect();
        assert_eq!(
            record_replay_verdict(&ours_only),
            "FAIL(nothing recorded under llvm)"
        );
    }
}
