//! Running one program: its environment, a time limit that ends its whole process group (as
//! `timeout -k 5` does), the deadline that keeps a device call inside its limit, and which
//! `libomptarget` the dynamic loader initialised (from an `LD_DEBUG=libs` trace, as
//! crates/abi/tests/conformance.rs checks).

use std::fmt;
use std::fs::{self, File};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Exit(i32),
    Signal(i32),
    /// Ended by its time limit.
    Timeout,
    /// Could not be started (the reason).
    NotStarted(String),
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Exit(c) => write!(f, "exit {c}"),
            Status::Signal(s) => write!(f, "signal {s}"),
            Status::Timeout => f.write_str("timeout"),
            Status::NotStarted(why) => write!(f, "not started ({why})"),
        }
    }
}

impl Status {
    pub fn success(&self) -> bool {
        *self == Status::Exit(0)
    }
}

/// The shortest time a run is given, even right before the deadline.
const MIN_RUN: Duration = Duration::from_secs(5);
/// After the time limit, how long a program has between SIGTERM and SIGKILL.
const KILL_AFTER: Duration = Duration::from_secs(5);

/// When work stops being started. A device call has 600 s; the budget (540 s by default)
/// leaves room for the machine information, the tables and the log archive.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    end: Instant,
}

impl Deadline {
    /// `budget` after `start`.
    pub fn after(start: Instant, budget: Duration) -> Self {
        Deadline {
            end: start + budget,
        }
    }

    pub fn passed(&self) -> bool {
        Instant::now() >= self.end
    }

    pub fn remaining(&self) -> Duration {
        self.end.saturating_duration_since(Instant::now())
    }

    /// The time limit for a run that wants `want`: no run outlives the deadline, except that
    /// every run gets at least 5 s.
    pub fn cap(&self, want: Duration) -> Duration {
        cap(want, self.remaining())
    }
}

fn cap(want: Duration, remaining: Duration) -> Duration {
    want.min(remaining.max(MIN_RUN))
}

/// One run of a program.
pub struct Job<'a> {
    pub program: &'a Path,
    pub args: &'a [String],
    /// A command the program runs under (compute-sanitizer and its options), or empty.
    pub wrapper: &'a [String],
    pub env: &'a [(String, String)],
    /// `LD_LIBRARY_PATH`: the runtime's folder first.
    pub lib_path: String,
    pub cwd: &'a Path,
    pub limit: Duration,
    /// Where the outputs go: `FILES.out`, `FILES.err` (and `FILES.trace.PID` while it runs).
    pub files: PathBuf,
    /// Trace the loader and report where this library was initialised from.
    pub soname: Option<&'a str>,
    /// stderr into `FILES.out` as well (as `2>&1`).
    pub merge_stderr: bool,
}

/// What a run left.
#[derive(Clone, Debug)]
pub struct Ran {
    pub status: Status,
    pub stdout: String,
    pub stderr: String,
    /// The path the loader initialised `soname` from (empty: none, or not traced).
    pub loaded: String,
    pub wall: Duration,
}

impl Ran {
    /// A run that ended with `status` and printed `stdout` (for tests of verdicts).
    #[cfg(test)]
    pub fn ended(status: Status, stdout: &str) -> Ran {
        Ran {
            status,
            stdout: stdout.into(),
            ..Ran::not_started("")
        }
    }

    /// A run that did not happen (for reporting).
    pub fn not_started(why: &str) -> Ran {
        Ran {
            status: Status::NotStarted(why.into()),
            stdout: String::new(),
            stderr: String::new(),
            loaded: String::new(),
            wall: Duration::ZERO,
        }
    }
}

fn with_suffix(p: &Path, suffix: &str) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

pub fn run(job: &Job) -> Ran {
    let out_path = with_suffix(&job.files, ".out");
    let err_path = with_suffix(&job.files, ".err");
    let trace_prefix = with_suffix(&job.files, ".trace");
    remove_traces(&trace_prefix);
    let files = File::create(&out_path).and_then(|o| {
        let e = if job.merge_stderr {
            o.try_clone()?
        } else {
            File::create(&err_path)?
        };
        Ok((o, e))
    });
    let (out, err) = match files {
        Ok(f) => f,
        Err(e) => return Ran::not_started(&format!("{}: {e}", out_path.display())),
    };
    let (exe, first_args) = match job.wrapper.split_first() {
        Some((w, rest)) => (Path::new(w), rest),
        None => (job.program, &[][..]),
    };
    let mut cmd = Command::new(exe);
    cmd.args(first_args);
    if !job.wrapper.is_empty() {
        cmd.arg(job.program);
    }
    cmd.args(job.args)
        .current_dir(job.cwd)
        .env_remove("LIBOMPTARGET_INFO")
        .env_remove("OMP_TARGET_OFFLOAD")
        .env("LD_LIBRARY_PATH", &job.lib_path)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        // Its own process group, so that the time limit ends the program's children too
        // (compute-sanitizer's target).
        .process_group(0);
    if job.soname.is_some() {
        cmd.env("LD_DEBUG", "libs")
            .env("LD_DEBUG_OUTPUT", &trace_prefix);
    }
    for (k, v) in job.env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let status = match cmd.spawn() {
        Ok(child) => wait_with_limit(child, job.limit),
        Err(e) => Status::NotStarted(format!("{}: {e}", exe.display())),
    };
    let wall = start.elapsed();
    let loaded = match job.soname {
        Some(soname) => initialised(&read_traces(&trace_prefix), soname),
        None => String::new(),
    };
    remove_traces(&trace_prefix);
    let read = |p: &Path| String::from_utf8_lossy(&fs::read(p).unwrap_or_default()).into_owned();
    Ran {
        status,
        stdout: read(&out_path),
        stderr: if job.merge_stderr {
            String::new()
        } else {
            read(&err_path)
        },
        loaded,
        wall,
    }
}

fn kill_group(pgid: u32, signal: i32) {
    // SAFETY: kill(2) with a negative pid signals the process group this function's caller
    // created for the child; it touches no memory of ours.
    unsafe {
        libc::kill(-(pgid as i32), signal);
    }
}

fn wait_with_limit(mut child: std::process::Child, limit: Duration) -> Status {
    let start = Instant::now();
    let pgid = child.id();
    let mut poll = Duration::from_millis(2);
    let mut term_sent: Option<Instant> = None;
    loop {
        match child.try_wait() {
            Ok(Some(s)) => {
                if term_sent.is_some() {
                    // Whatever of the group outlived the program.
                    kill_group(pgid, libc::SIGKILL);
                    return Status::Timeout;
                }
                return match (s.code(), s.signal()) {
                    (Some(c), _) => Status::Exit(c),
                    (None, Some(sig)) => Status::Signal(sig),
                    _ => Status::NotStarted("no exit status".into()),
                };
            }
            Ok(None) => {}
            Err(e) => return Status::NotStarted(format!("wait: {e}")),
        }
        match term_sent {
            None if start.elapsed() >= limit => {
                kill_group(pgid, libc::SIGTERM);
                term_sent = Some(Instant::now());
            }
            Some(t) if t.elapsed() >= KILL_AFTER => {
                kill_group(pgid, libc::SIGKILL);
                let _ = child.wait();
                return Status::Timeout;
            }
            _ => {}
        }
        std::thread::sleep(poll);
        poll = (poll * 2).min(Duration::from_millis(25));
    }
}

fn trace_files(prefix: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (prefix.parent(), prefix.file_name()) else {
        return Vec::new();
    };
    let mut start = name.to_os_string();
    start.push(".");
    let start = start.to_string_lossy().into_owned();
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&start))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

fn read_traces(prefix: &Path) -> String {
    trace_files(prefix)
        .iter()
        .map(|p| String::from_utf8_lossy(&fs::read(p).unwrap_or_default()).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

fn remove_traces(prefix: &Path) {
    for p in trace_files(prefix) {
        let _ = fs::remove_file(p);
    }
}

/// The last `calling init: PATH` line of an `LD_DEBUG=libs` trace whose PATH ends with
/// `soname`: where that library was initialised from (empty: it was not).
pub fn initialised(trace: &str, soname: &str) -> String {
    // Any version of the library counts (a clang-22 program NEEDs libomptarget.so.22.1,
    // which ours also provides), not libraries whose names merely start alike.
    let stem = soname.find(".so").map_or(soname, |i| &soname[..i + 3]);
    trace
        .lines()
        .filter_map(|l| l.split_once("calling init: ").map(|(_, p)| p.trim()))
        .rfind(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            name == stem || name.strip_prefix(stem).is_some_and(|v| v.starts_with('.'))
        })
        .unwrap_or("")
        .to_owned()
}

/// Whether the library at `loaded` lies in `dir` (both with links resolved).
pub fn loaded_from(loaded: &str, dir: &Path) -> bool {
    if loaded.is_empty() {
        return false;
    }
    let parent = fs::canonicalize(loaded)
        .ok()
        .and_then(|p| p.parent().map(Path::to_owned));
    match (parent, fs::canonicalize(dir)) {
        (Some(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("omptarget-exec-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn sh(dir: &Path, script: &str, limit: Duration) -> Ran {
        let args = vec!["-c".to_owned(), script.to_owned()];
        run(&Job {
            program: Path::new("/bin/sh"),
            args: &args,
            wrapper: &[],
            env: &[("GREETING".into(), "hi".into())],
            lib_path: "/nowhere".into(),
            cwd: dir,
            limit,
            files: dir.join("r"),
            soname: None,
            merge_stderr: false,
        })
    }

    #[test]
    fn caps_leave_at_least_five_seconds() {
        let s = Duration::from_secs;
        assert_eq!(cap(s(60), s(500)), s(60));
        assert_eq!(cap(s(60), s(20)), s(20));
        assert_eq!(cap(s(60), s(1)), s(5));
        assert_eq!(cap(s(3), s(0)), s(3));
    }

    #[test]
    fn statuses_outputs_and_environment() {
        let d = tmp("status");
        let r = sh(
            &d,
            "echo $GREETING $LD_LIBRARY_PATH; echo oops >&2; exit 3",
            Duration::from_secs(30),
        );
        assert_eq!(r.status, Status::Exit(3));
        assert_eq!(r.stdout, "hi /nowhere\n");
        assert_eq!(r.stderr, "oops\n");
        let r = sh(&d, "kill -SEGV $$", Duration::from_secs(30));
        assert_eq!(r.status, Status::Signal(11));
        assert_eq!(r.status.to_string(), "signal 11");
        let r = sh(&d, "exec /nonexistent/prog", Duration::from_secs(30));
        assert_eq!(r.status, Status::Exit(127));
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn the_time_limit_ends_the_whole_group() {
        let d = tmp("limit");
        let t = Instant::now();
        // A child that ignores SIGTERM: the group gets SIGKILL 5 s later.
        let r = sh(
            &d,
            "sh -c 'trap \"\" TERM; sleep 30' & echo started; wait",
            Duration::from_millis(300),
        );
        assert_eq!(r.status, Status::Timeout);
        assert_eq!(r.stdout, "started\n");
        assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn loader_trace() {
        let trace = "    100:\tfind library=libomptarget.so.19.1 [0]; searching\n\
                     \x20   100:\tcalling init: /usr/lib/x86_64-linux-gnu/libc.so.6\n\
                     \x20   100:\tcalling init: /opt/a/libomptarget.so.19.1\n\
                     \x20   101:\tcalling init: /opt/b/libomptarget.so.19.1 \n";
        assert_eq!(
            initialised(trace, "libomptarget.so.19.1"),
            "/opt/b/libomptarget.so.19.1"
        );
        // Any version of the library: a clang-22 program loads ours as libomptarget.so.22.1.
        assert_eq!(
            initialised(trace, "libomptarget.so.22.1"),
            "/opt/b/libomptarget.so.19.1"
        );
        let other = "    100:\tcalling init: /opt/a/libomptarget.so.19.1\n\
                     \x20   100:\tcalling init: /opt/c/libomptarget.sox\n\
                     \x20   100:\tcalling init: /opt/c/libomptarget-nvptx.so\n";
        assert_eq!(
            initialised(other, "libomptarget.so.19.1"),
            "/opt/a/libomptarget.so.19.1",
            "only the library itself, not names that start alike"
        );
        assert_eq!(initialised(trace, "libffi.so.8"), "");

        let d = tmp("loaded");
        fs::create_dir_all(d.join("rt")).unwrap();
        fs::write(d.join("rt/libomptarget.so.19.1"), "").unwrap();
        std::os::unix::fs::symlink(d.join("rt"), d.join("link")).unwrap();
        let lib = d.join("link/libomptarget.so.19.1");
        assert!(loaded_from(lib.to_str().unwrap(), &d.join("rt")));
        assert!(!loaded_from(lib.to_str().unwrap(), &d));
        assert!(!loaded_from("", &d.join("rt")));
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_traced_run_reports_the_library_it_initialised() {
        // The real loader, on a real program: /bin/sh loads libc, whose init the trace shows.
        let d = tmp("traced");
        let args = vec!["-c".to_owned(), "true".to_owned()];
        let r = run(&Job {
            program: Path::new("/bin/sh"),
            args: &args,
            wrapper: &[],
            env: &[],
            lib_path: String::new(),
            cwd: &d,
            limit: Duration::from_secs(30),
            files: d.join("t"),
            soname: Some("libc.so.6"),
            merge_stderr: false,
        });
        assert_eq!(r.status, Status::Exit(0));
        assert!(r.loaded.ends_with("libc.so.6"), "{:?}", r.loaded);
        // The trace files are gone, the outputs stay.
        let mut left: Vec<String> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["t.err", "t.out"]);
        fs::remove_dir_all(d).unwrap();
    }
}
