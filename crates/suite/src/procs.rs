//! Several processes on one device at once (`omptarget-suite bench --procs N`): N copies of the
//! benchmark start together under one runtime, then N under the other, alternating over the
//! runs (with `--floor`, then N `omptarget-suite floor` processes); per scenario, the median
//! process's and the slowest process's per-region time.
//!
//! The start: every process of a group gets two pipe ends, `SCEN_READY_FD` and `SCEN_START_FD`
//! (and its index in the group, `SCEN_PROC`). After each scenario's warm-up a process writes
//! one byte to the first and waits for one byte from the second (`start_barrier` here, its
//! twin in bench/gpu_scenarios.c); the harness sends the bytes once every process still
//! running is ready (`serve`). So each scenario's timed repetitions start together in all N
//! processes, whatever each one's start-up (CUDA initialisation, its host memory) or its
//! previous scenarios took.

use crate::bench::{Samples, median};
use std::fmt::Write as _;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const READY_FD: &str = "SCEN_READY_FD";
pub const START_FD: &str = "SCEN_START_FD";
pub const PROC: &str = "SCEN_PROC";

/// A process's side of the start barrier: nothing unless its harness gave it the two pipe ends.
pub fn start_barrier() {
    let fd = |k: &str| std::env::var(k).ok()?.parse::<i32>().ok();
    let (Some(ready), Some(start)) = (fd(READY_FD), fd(START_FD)) else {
        return;
    };
    let mut c = [b'r'];
    // SAFETY: one byte from and into a live buffer, on descriptors the harness passed down.
    while unsafe { libc::write(ready, c.as_ptr().cast(), 1) } < 0 && interrupted() {}
    // SAFETY: as above.
    while unsafe { libc::read(start, c.as_mut_ptr().cast(), 1) } < 0 && interrupted() {}
}

fn interrupted() -> bool {
    std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
}

/// A pipe (read end, write end), both closed on exec.
fn pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two new descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors are new and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Lets the children started after this inherit `fd` (clears close-on-exec).
fn inherit(fd: &OwnedFd) -> Result<(), String> {
    // SAFETY: changes the flags of a live descriptor.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, 0) } != 0 {
        return Err(format!("fcntl: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

fn kill_all(children: &mut [Child]) {
    for c in children.iter_mut() {
        let _ = c.kill();
        let _ = c.wait();
    }
}

/// One group: `n` processes of `cmd(i)` started at once, each with its stdout and stderr in
/// `dir` (`procI.out`, `procI.err`), the start barrier served until they end; all are killed when
/// `limit` passes first. Returns each process's stdout, in index order, or what went wrong (a
/// process that did not exit 0 is an error, with the end of its stderr).
pub fn group(
    mut cmd: impl FnMut(usize) -> Command,
    n: usize,
    dir: &Path,
    limit: Duration,
) -> Result<Vec<String>, String> {
    let deadline = Instant::now() + limit;
    let (ready_r, ready_w) = pipe()?;
    let (start_r, start_w) = pipe()?;
    inherit(&ready_w)?;
    inherit(&start_r)?;
    let file = |name: String| File::create(dir.join(&name)).map_err(|e| format!("{name}: {e}"));
    let mut children = Vec::with_capacity(n);
    for i in 0..n {
        let spawned = (|| {
            let mut c = cmd(i);
            c.env(READY_FD, ready_w.as_raw_fd().to_string())
                .env(START_FD, start_r.as_raw_fd().to_string())
                .env(PROC, i.to_string())
                .stdin(Stdio::null())
                .stdout(file(format!("proc{i}.out"))?)
                .stderr(file(format!("proc{i}.err"))?);
            c.spawn()
                .map_err(|e| format!("cannot run {:?}: {e}", c.get_program()))
        })();
        match spawned {
            Ok(child) => children.push(child),
            Err(e) => {
                kill_all(&mut children);
                return Err(e);
            }
        }
    }
    // Only the children hold these now: the ready pipe reads end of file once all have ended.
    drop(ready_w);
    drop(start_r);
    let served = serve(&mut children, &ready_r, &start_w, deadline);
    let mut statuses = Vec::with_capacity(n);
    for c in children.iter_mut() {
        let status = loop {
            match c.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => break None,
            }
        };
        statuses.push(status);
    }
    if statuses.iter().any(Option::is_none) {
        kill_all(&mut children);
        return Err(format!(
            "{n} processes at once: not all ended within {} s",
            limit.as_secs()
        ));
    }
    served?;
    let read = |name: String| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    let mut outs = Vec::with_capacity(n);
    for (i, s) in statuses.into_iter().flatten().enumerate() {
        if !s.success() {
            let err = read(format!("proc{i}.err"));
            let tail: Vec<&str> = err.lines().rev().take(5).collect();
            return Err(format!(
                "process {i} of {n} failed ({s}): {}",
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ));
        }
        outs.push(read(format!("proc{i}.out")));
    }
    Ok(outs)
}

/// The harness's side of the start barrier: round after round, waits until every process still
/// running has written its byte, then writes as many to the start pipe. Ends when the ready
/// pipe reads end of file (every process has ended); returns the rounds served.
fn serve(
    children: &mut [Child],
    ready: &OwnedFd,
    start: &OwnedFd,
    deadline: Instant,
) -> Result<usize, String> {
    let mut rounds = 0;
    loop {
        let mut got = 0usize;
        let ended = loop {
            if Instant::now() >= deadline {
                kill_all(children);
                return Err("time limit reached at the start barrier".into());
            }
            let running = children
                .iter_mut()
                .map(|c| matches!(c.try_wait(), Ok(None)))
                .filter(|&r| r)
                .count();
            if got > 0 && got >= running {
                break false;
            }
            let mut p = libc::pollfd {
                fd: ready.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: polls one live descriptor for at most 50 ms.
            if unsafe { libc::poll(&mut p, 1, 50) } <= 0 {
                continue;
            }
            let mut buf = [0u8; 256];
            // SAFETY: reads into a live buffer of its length.
            let k = unsafe { libc::read(ready.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            match k {
                0 => break true,
                k if k > 0 => got += k as usize,
                _ if interrupted() => {}
                _ => return Err(format!("read: {}", std::io::Error::last_os_error())),
            }
        };
        if got > 0 {
            let bytes = vec![b's'; got];
            let mut sent = 0;
            while sent < got {
                // SAFETY: writes from a live buffer of the given length.
                let k = unsafe {
                    libc::write(start.as_raw_fd(), bytes[sent..].as_ptr().cast(), got - sent)
                };
                if k > 0 {
                    sent += k as usize;
                } else if !interrupted() {
                    return Err(format!("write: {}", std::io::Error::last_os_error()));
                }
            }
            rounds += 1;
        }
        if ended {
            return Ok(rounds);
        }
    }
}

/// scenario → per run, each process's per-region median (µs).
pub type ProcRuns = std::collections::BTreeMap<String, Vec<Vec<f64>>>;

/// Adds one group's processes (each one's samples of one run) to `into`.
pub fn add_group(into: &mut ProcRuns, procs: &[Samples]) {
    let mut names: Vec<&String> = procs.iter().flat_map(|p| p.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let v: Vec<f64> = procs
            .iter()
            .filter_map(|p| p.get(name).and_then(|v| v.first().copied()))
            .collect();
        into.entry(name.clone()).or_default().push(v);
    }
}

/// Per run: (the median process's time, the slowest's).
fn per_run(runs: &[Vec<f64>]) -> Vec<(f64, f64)> {
    runs.iter()
        .map(|v| (median(v), v.iter().copied().fold(f64::NAN, f64::max)))
        .collect()
}

/// Over the runs: (median of the median process's, median of the slowest's, median of each
/// run's slowest/median).
fn summary(runs: &[Vec<f64>]) -> (f64, f64, f64) {
    let p = per_run(runs);
    let col = |f: &dyn Fn(&(f64, f64)) -> f64| median(&p.iter().map(f).collect::<Vec<_>>());
    (col(&|r| r.0), col(&|r| r.1), col(&|r| r.1 / r.0))
}

/// The goal of the slowest process over the median one.
pub const SPREAD_GOAL: f64 = 1.5;

/// The table of `bench --procs N`: per scenario both runtimes' median and slowest process,
/// their ratio and ours/LLVM (and the floor's processes with `floor`), then the goal lines and
/// each run's values.
pub fn table(
    n: usize,
    runs: usize,
    llvm: &ProcRuns,
    ours: &ProcRuns,
    floor: Option<&ProcRuns>,
) -> String {
    let mut t = format!(
        "{n} processes at once per runtime (us per region: the median process and the slowest; median over {runs} runs)\n"
    );
    let _ = write!(
        t,
        "{:<28} {:>14} {:>12} {:>9} {:>14} {:>12} {:>9} {:>10}",
        "scenario",
        "LLVM 19 median",
        "slowest",
        "slow/med",
        "ours median",
        "slowest",
        "slow/med",
        "ours/LLVM"
    );
    if floor.is_some() {
        let _ = write!(
            t,
            " {:>13} {:>12} {:>9}",
            "floor median", "slowest", "slow/med"
        );
    }
    t.push('\n');
    let mut goals = String::new();
    let rows: Vec<_> = llvm
        .iter()
        .filter_map(|(s, l)| Some((s, l, ours.get(s)?)))
        .filter(|(s, _, _)| !crate::bench::is_host_probe(s))
        .collect();
    for &(s, l, r) in &rows {
        let (lm, lx, lr) = summary(l);
        let (rm, rx, rr) = summary(r);
        let _ = write!(
            t,
            "{s:<28} {lm:>14.3} {lx:>12.3} {lr:>8.2}x {rm:>14.3} {rx:>12.3} {rr:>8.2}x {:>9.2}x",
            rm / lm
        );
        if let Some(f) = floor.and_then(|f| f.get(s)) {
            let (fm, fx, fr) = summary(f);
            let _ = write!(t, " {fm:>13.3} {fx:>12.3} {fr:>8.2}x");
        }
        t.push('\n');
        let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
        let _ = writeln!(
            goals,
            "goal procs{n} {s}: ours slowest/median {rr:.2} (<= {SPREAD_GOAL}): {}",
            verdict(rr <= SPREAD_GOAL)
        );
        let _ = writeln!(
            goals,
            "goal procs{n} {s}: ours/LLVM {:.2} (<= 1): {}",
            rm / lm,
            verdict(rm <= lm)
        );
    }
    let _ = writeln!(
        t,
        "(each process waits after each scenario's warm-up until all {n} are ready, so their timed repetitions start together)"
    );
    t.push_str(&goals);
    t.push_str("per run (us, median process / slowest, in run order):\n");
    let cells = |runs: &[Vec<f64>]| {
        per_run(runs)
            .iter()
            .map(|(m, x)| format!("{m:.1}/{x:.1}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for &(s, l, r) in &rows {
        let _ = write!(t, "  {s:<28} ours {} | LLVM 19 {}", cells(r), cells(l));
        if let Some(f) = floor.and_then(|f| f.get(s)) {
            let _ = write!(t, " | floor {}", cells(f));
        }
        t.push('\n');
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("omptarget-procs-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A process of the group as a shell script: for each of two "scenarios", it starts after
    /// a delay that grows with its index, waits at the barrier, then notes when it passed.
    const CHILD: &str = r#"
for s in a b; do
  sleep "0.$SCEN_PROC"
  printf r >&"$SCEN_READY_FD"
  dd bs=1 count=1 status=none <&"$SCEN_START_FD" >/dev/null
  echo "scenario=$s median_us=$((10 + SCEN_PROC)) passed=$(date +%s%N)"
done
"#;

    #[test]
    fn a_group_starts_each_scenario_together() {
        let d = tmp("group");
        let outs = group(
            |_| {
                let mut c = Command::new("sh");
                c.args(["-c", CHILD]);
                c
            },
            4,
            &d,
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!(outs.len(), 4);
        for s in ["a", "b"] {
            let passed: Vec<u128> = outs
                .iter()
                .map(|o| {
                    let l = o
                        .lines()
                        .find(|l| l.starts_with(&format!("scenario={s} ")))
                        .unwrap();
                    l.rsplit("passed=").next().unwrap().parse().unwrap()
                })
                .collect();
            let (lo, hi) = (passed.iter().min().unwrap(), passed.iter().max().unwrap());
            // The processes reach the barrier 0.1 s apart (0.3 s first to last); they pass it
            // together.
            assert!(hi - lo < 150_000_000, "{s}: {passed:?}");
        }
        let mut samples = Vec::new();
        for o in &outs {
            let mut s = Samples::new();
            crate::bench::parse_samples(o, None, &mut s);
            samples.push(s);
        }
        let mut runs = ProcRuns::new();
        add_group(&mut runs, &samples);
        assert_eq!(runs["a"], [vec![10.0, 11.0, 12.0, 13.0]]);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_failed_process_ends_the_group_with_its_error() {
        let d = tmp("fail");
        let e = group(
            |i| {
                let mut c = Command::new("sh");
                if i == 1 {
                    c.args(["-c", "echo broken >&2; exit 3"]);
                } else {
                    c.args(["-c", CHILD]);
                }
                c
            },
            3,
            &d,
            Duration::from_secs(30),
        )
        .unwrap_err();
        assert!(
            e.starts_with("process 1 of 3 failed (exit status: 3): broken"),
            "{e}"
        );
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_hung_group_is_killed_at_its_limit() {
        let d = tmp("hang");
        let t0 = Instant::now();
        let e = group(
            |_| {
                let mut c = Command::new("sh");
                c.args(["-c", "sleep 30"]);
                c
            },
            2,
            &d,
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert!(t0.elapsed() < Duration::from_secs(10), "{e}");
        assert!(e.contains("time limit"), "{e}");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn without_the_pipes_the_barrier_does_nothing() {
        // The test process has no SCEN_READY_FD: returns at once.
        start_barrier();
    }

    #[test]
    fn the_table_gives_median_slowest_and_both_ratios() {
        let llvm: ProcRuns = [(
            "map64B".to_string(),
            vec![vec![40.0, 60.0, 50.0, 100.0], vec![40.0, 40.0, 40.0, 80.0]],
        )]
        .into();
        let ours: ProcRuns = [(
            "map64B".to_string(),
            vec![vec![10.0, 12.0, 11.0, 12.0], vec![10.0, 10.0, 10.0, 20.0]],
        )]
        .into();
        let t = table(4, 2, &llvm, &ours, None);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[0].starts_with("4 processes at once per runtime"),
            "{t}"
        );
        let cols: Vec<&str> = lines[2].split_whitespace().collect();
        // LLVM: medians 55 and 40 (median 47.5), slowest 100 and 80 (90), ratios 1.82 and 2.0.
        // Ours: medians 11.5 and 10 (10.75), slowest 12 and 20 (16), ratios 1.04 and 2.0.
        assert_eq!(
            cols,
            [
                "map64B", "47.500", "90.000", "1.91x", "10.750", "16.000", "1.52x", "0.23x"
            ],
            "{t}"
        );
        assert_eq!(
            lines[4],
            "goal procs4 map64B: ours slowest/median 1.52 (<= 1.5): MISSED"
        );
        assert_eq!(lines[5], "goal procs4 map64B: ours/LLVM 0.23 (<= 1): met");
        assert_eq!(
            lines[7].split_whitespace().collect::<Vec<_>>().join(" "),
            "map64B ours 11.5/12.0 10.0/20.0 | LLVM 19 55.0/100.0 40.0/80.0"
        );
    }
}
