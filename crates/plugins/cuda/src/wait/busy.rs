//! Whether the machine's CPUs are all taken: then a wait that polls takes a CPU from a thread
//! that could run (the program's own loop beside its `nowait` regions, a neighbour's process
//! on a shared node), and it sleeps instead.
//!
//! The count is the kernel's number of runnable threads, machine-wide, at the moment of
//! reading (the fourth field of `/proc/loadavg`, "running/total"), against the CPUs online.
//! A reading is kept for [`FRESH_NS`]: one `pread` per millisecond at most, and only by waits
//! that have polled for a while already (wait.rs), so the short waits of the latency rows never
//! read it. Where the file cannot be read, the CPUs count as free (the waits poll as before).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// How long a reading is trusted, in ns.
pub const FRESH_NS: u64 = 1_000_000;

/// The runnable threads in the text of `/proc/loadavg` ("0.50 0.61 0.70 17/1234 5678": 17).
pub fn runnable(text: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(text).ok()?;
    let (running, _total) = text.split_ascii_whitespace().nth(3)?.split_once('/')?;
    running.parse().ok()
}

/// Whether `runnable` threads (the reader among them) are more than `cpus` can run at once:
/// some thread is waiting for a CPU.
pub fn oversubscribed(runnable: u64, cpus: u64) -> bool {
    runnable > cpus
}

struct Source {
    file: File,
    cpus: u64,
    epoch: Instant,
}

static SOURCE: OnceLock<Option<Source>> = OnceLock::new();
/// When the last reading was taken (ns since the source's epoch, plus one; 0: never).
static READ_AT: AtomicU64 = AtomicU64::new(0);
static BUSY: AtomicBool = AtomicBool::new(false);

fn open() -> Option<Source> {
    // SAFETY: sysconf reads a system constant.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    Some(Source {
        file: File::open("/proc/loadavg").ok()?,
        cpus: u64::try_from(cpus).ok().filter(|&n| n > 0)?,
        epoch: Instant::now(),
    })
}

/// Whether every CPU of the machine has a runnable thread now (a reading at most
/// [`FRESH_NS`] old; one thread at a time takes a new one, the others use the last).
pub fn cpus_busy() -> bool {
    let Some(src) = SOURCE.get_or_init(open) else {
        return false;
    };
    let now = src.epoch.elapsed().as_nanos() as u64 + 1;
    let at = READ_AT.load(Ordering::Relaxed);
    if (at != 0 && now.saturating_sub(at) < FRESH_NS)
        || READ_AT
            .compare_exchange(at, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return BUSY.load(Ordering::Relaxed);
    }
    let mut buf = [0u8; 128];
    let busy = match src.file.read_at(&mut buf, 0) {
        Ok(n) => runnable(&buf[..n]).is_some_and(|r| oversubscribed(r, src.cpus)),
        Err(_) => false,
    };
    BUSY.store(busy, Ordering::Relaxed);
    busy
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runnable_count_is_the_fourth_field() {
        assert_eq!(runnable(b"0.50 0.61 0.70 17/1234 5678\n"), Some(17));
        assert_eq!(runnable(b"12.00 8.00 4.00 1/90 1"), Some(1));
        for bad in [
            &b""[..],
            b"0.50 0.61 0.70",
            b"0.50 0.61 0.70 17 5678",
            b"0.50 0.61 0.70 x/12 5678",
            b"0.50 0.61 0.70 -1/12 5678",
            b"\xff\xfe 1 2 3/4 5",
        ] {
            assert_eq!(runnable(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn busy_means_a_thread_waits_for_a_cpu() {
        assert!(!oversubscribed(16, 16), "one runnable thread per CPU");
        assert!(oversubscribed(17, 16));
        assert!(!oversubscribed(1, 2));
    }

    #[test]
    fn this_machine_can_be_read() {
        // The reader itself is runnable: at least 1, and the reading stays fresh.
        let text = std::fs::read("/proc/loadavg").unwrap();
        assert!(
            runnable(&text).unwrap() >= 1,
            "{:?}",
            String::from_utf8_lossy(&text)
        );
        let first = cpus_busy();
        let at = READ_AT.load(Ordering::Relaxed);
        assert_ne!(at, 0);
        let _ = cpus_busy();
        let again = READ_AT.load(Ordering::Relaxed);
        let src = SOURCE.get().unwrap().as_ref().unwrap();
        if (src.epoch.elapsed().as_nanos() as u64 + 1).saturating_sub(at) < FRESH_NS / 2 {
            assert_eq!(again, at, "read again within the fresh time");
        }
        let _ = first;
    }
}
