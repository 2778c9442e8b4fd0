//! The GCC column of `omptarget-suite bench --gcc`: a GCC build of the same benchmark on GCC's
//! libgomp and its nvptx plugin. libgomp runs a target region on the host, without a word,
//! whenever it cannot offload it (plugin or driver not found, no device, no image for the
//! device), and `OMP_TARGET_OFFLOAD=MANDATORY` does not stop GCC 12 when it finds no device. So
//! a GCC time counts only where a run with `GOMP_DEBUG=1` shows the nvptx plugin launching a
//! kernel for every timed region of the scenario.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

/// Where one scenario's regions ran under libgomp, from its `GOMP_DEBUG=1` log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Offload {
    /// At least one kernel launch per timed region.
    Gpu { launches: u64, regions: u64 },
    /// No kernel launched: libgomp ran the regions on the host.
    Host,
    /// Fewer kernel launches than timed regions: some regions ran on the host.
    Partly { launches: u64, regions: u64 },
}

/// One scenario's verdict and the first launch line the plugin printed for it (the kernel's
/// name and geometry).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    pub offload: Offload,
    pub first_launch: Option<String>,
}

/// A kernel launch as libgomp's nvptx plugin logs it under `GOMP_DEBUG=1`, from
/// `GOMP_OFFLOAD_run` (libgomp/plugin/plugin-nvptx.c):
/// `  GOMP_OFFLOAD_run: kernel main._omp_fn.0: launch [(teams: 132), 1, 1] [(lanes: 32), (threads: 8), 1]`.
/// Nothing else in the log proves that a region ran on the device: the plugin also loads and
/// logs at start-up when every region then runs on the host.
pub fn is_launch(line: &str) -> bool {
    line.contains("GOMP_OFFLOAD_run: kernel ") && line.contains(": launch")
}

/// The `field=VALUE` of a `scenario=` line.
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
}

/// Verdicts per scenario (named as `bench` names them: NAME, or NAME_TAG with a tag) from the
/// merged stdout and stderr of one `GOMP_DEBUG=1` run. The benchmark flushes each
/// `scenario=NAME ... reps=R iters=N` line after the scenario's regions and the plugin writes
/// to unbuffered stderr, so the launch lines between two scenario lines belong to the second
/// (those before the first, with the start-up log, to the first). A scenario times R x N
/// iterations of at least one region each, so it ran on the GPU when it launched at least
/// R x N kernels (its warm-up launches more); a line without reps and iters needs one.
pub fn check(log: &str, tag: Option<&str>) -> BTreeMap<String, Check> {
    let mut out = BTreeMap::new();
    let (mut launches, mut first): (u64, Option<&str>) = (0, None);
    for line in log.lines() {
        if is_launch(line) {
            launches += 1;
            first.get_or_insert(line);
            continue;
        }
        let Some(name) = field(line, "scenario") else {
            continue;
        };
        let num = |f: &str| field(line, f).and_then(|v| v.parse::<u64>().ok());
        let regions = match (num("reps"), num("iters")) {
            (Some(r), Some(i)) => (r * i).max(1),
            _ => 1,
        };
        let offload = if launches == 0 {
            Offload::Host
        } else if launches < regions {
            Offload::Partly { launches, regions }
        } else {
            Offload::Gpu { launches, regions }
        };
        let name = match tag {
            Some(t) => format!("{name}_{t}"),
            None => name.to_owned(),
        };
        out.insert(
            name,
            Check {
                offload,
                first_launch: first.map(|l| l.trim().to_owned()),
            },
        );
        (launches, first) = (0, None);
    }
    out
}

/// How a run ended: its exit status, or killed at its time limit (None).
pub fn ended(status: Option<ExitStatus>) -> String {
    match status {
        None => "timeout".into(),
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(sig)) => format!("signal {sig}"),
            _ => s.to_string(),
        },
    }
}

/// Runs `cmd` with stdout and stderr into the file `log`, in the order written, for at most
/// `limit` (then kills it); returns what it wrote and how it ended (None: killed at the limit).
/// The file is removed unless `keep`.
pub fn run_merged(
    cmd: &mut Command,
    log: &Path,
    limit: Duration,
    keep: bool,
) -> Result<(String, Option<ExitStatus>), String> {
    let file = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = file
        .try_clone()
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let mut child = cmd
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(s);
        }
        if start.elapsed() >= limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let text = String::from_utf8_lossy(&fs::read(log).unwrap_or_default()).into_owned();
    if !keep {
        let _ = fs::remove_file(log);
    }
    Ok((text, status))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as GCC 12's plugin prints them (its format strings), around three scenarios.
    const GPU_LOG: &str = "\
CUDA Driver 13.0
Loading:
---
.version 7.0
.target sm_80
---
  GOMP_OFFLOAD_run: kernel empty$_omp_fn$0: launch [(teams: 1), 1, 1] [(lanes: 32), (threads: 1), 1]
  GOMP_OFFLOAD_run: kernel empty$_omp_fn$0: launch [(teams: 1), 1, 1] [(lanes: 32), (threads: 1), 1]
  GOMP_OFFLOAD_run: kernel empty$_omp_fn$0: launch [(teams: 1), 1, 1] [(lanes: 32), (threads: 1), 1]
scenario=empty median_us=12.000 min_us=11.000 reps=1 iters=2
  GOMP_OFFLOAD_run: kernel map64$_omp_fn$0: launch [(teams: 1), 1, 1] [(lanes: 32), (threads: 1), 1]
  GOMP_OFFLOAD_run: kernel map64$_omp_fn$0: launch [(teams: 1), 1, 1] [(lanes: 32), (threads: 1), 1]
scenario=map64B median_us=30.000 min_us=29.000 reps=1 iters=4
scenario=alloc64MiB_kernel median_us=300.000 min_us=290.000 reps=1 iters=1
";

    #[test]
    fn launches_per_scenario_decide_gpu_partly_or_host() {
        let c = check(GPU_LOG, None);
        assert_eq!(c.len(), 3);
        assert_eq!(
            c["empty"].offload,
            Offload::Gpu {
                launches: 3,
                regions: 2
            }
        );
        assert_eq!(
            c["empty"].first_launch.as_deref(),
            Some(
                "GOMP_OFFLOAD_run: kernel empty$_omp_fn$0: launch [(teams: 1), 1, 1] [(lanes: 32), (threads: 1), 1]"
            )
        );
        assert_eq!(
            c["map64B"].offload,
            Offload::Partly {
                launches: 2,
                regions: 4
            }
        );
        assert_eq!(c["alloc64MiB_kernel"].offload, Offload::Host);
        assert_eq!(c["alloc64MiB_kernel"].first_launch, None);
        // A tag names the scenarios as bench does.
        assert!(check(GPU_LOG, Some("t")).contains_key("map64B_t"));
    }

    #[test]
    fn a_host_fallback_log_has_no_launch() {
        // What GOMP_DEBUG=1 gives on a machine without libcuda.so.1 (gpu/build.sh's binary on
        // the 2-core build machine): the plugin loads, finds no device, says nothing.
        let c = check(
            "scenario=empty median_us=0.059 min_us=0.059 reps=1 iters=10\n",
            None,
        );
        assert_eq!(c["empty"].offload, Offload::Host);
        // Other debug lines, even the plugin's, are no launch; nor is OpenACC's launch line.
        for l in [
            "CUDA Driver 13.0",
            "  nvptx_exec: prepare mappings",
            "  nvptx_exec: kernel main$_omp_fn$0: launch gangs=1, workers=1, vectors=32",
            "scenario=empty median_us=1 reps=1 iters=1",
        ] {
            assert!(!is_launch(l), "{l}");
        }
        // Without reps and iters, one launch is enough.
        let c = check(
            "  GOMP_OFFLOAD_run: kernel f: launch [(teams: 1), 1, 1] [(lanes: 32), (threads: 1), 1]\nscenario=x median_us=1\n",
            None,
        );
        assert_eq!(
            c["x"].offload,
            Offload::Gpu {
                launches: 1,
                regions: 1
            }
        );
    }

    #[test]
    fn merged_output_and_time_limit() {
        let log = std::env::temp_dir().join(format!("omptarget-gomp-{}", std::process::id()));
        let (text, status) = run_merged(
            Command::new("sh").args(["-c", "echo a; echo b >&2; echo c; exit 3"]),
            &log,
            Duration::from_secs(20),
            true,
        )
        .unwrap();
        assert_eq!(text, "a\nb\nc\n");
        assert_eq!(fs::read_to_string(&log).unwrap(), text);
        assert_eq!(ended(status), "exit 3");
        let (_, status) = run_merged(
            Command::new("sh").args(["-c", "exec sleep 20"]),
            &log,
            Duration::from_millis(200),
            false,
        )
        .unwrap();
        assert_eq!(ended(status), "timeout");
        assert!(!log.exists());
    }
}
