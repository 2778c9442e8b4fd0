//! A testing aid: `OMPTARGET_RS_HOST_LATE_COPIES=N` makes the host device land copies back
//! to the host as the CUDA device lands its staged ones, late: a copy from the device on a
//! queue takes its bytes when issued and writes them into host memory only when the queue is
//! found complete, and each queue reports "still running" to its first `N` polls. So `nowait`
//! constructs stay in their task's slot between libomp's polls, and the runtime's ordering of
//! later copies against copies not yet landed (the core's `ops/held.rs`) is exercised on the
//! host device (`crates/abi/tests/held_host.rs`). Unset or 0: copies land at once.

use omptarget_plugin::QueueId;
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Default)]
struct Queue {
    polls: u32,
    /// (destination, bytes) in issue order.
    copies: Vec<(usize, Vec<u8>)>,
}

pub(crate) struct Late {
    busy_polls: u32,
    queues: Mutex<HashMap<usize, Queue>>,
}

impl Late {
    /// The aid as the environment asks for it; `None` when off.
    pub(crate) fn from_env() -> Option<Late> {
        let busy_polls = std::env::var("OMPTARGET_RS_HOST_LATE_COPIES")
            .ok()?
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n > 0)?;
        Some(Late {
            busy_polls,
            queues: Mutex::new(HashMap::new()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Queue>> {
        self.queues.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the bytes of a copy from the device now; they land when `queue` completes.
    #[cold]
    #[inline(never)]
    pub(crate) fn copy_back(&self, queue: QueueId, dst: usize, src: usize, size: usize) {
        // SAFETY: the core passes a live device range (host memory on this device).
        let bytes = unsafe { std::slice::from_raw_parts(src as *const u8, size) }.to_vec();
        self.lock()
            .entry(queue.0)
            .or_default()
            .copies
            .push((dst, bytes));
    }

    /// A poll: "still running" to the queue's first polls, then its copies land.
    #[cold]
    #[inline(never)]
    pub(crate) fn query(&self, queue: QueueId) -> bool {
        let mut queues = self.lock();
        let q = queues.entry(queue.0).or_default();
        q.polls += 1;
        if q.polls <= self.busy_polls {
            return false;
        }
        let q = queues.remove(&(queue.0)).unwrap_or_default();
        drop(queues);
        land(q);
        true
    }

    /// A wait: the queue's copies land.
    #[cold]
    #[inline(never)]
    pub(crate) fn synchronize(&self, queue: QueueId) {
        let q = self.lock().remove(&(queue.0));
        if let Some(q) = q {
            land(q);
        }
    }
}

fn land(q: Queue) {
    for (dst, bytes) in q.copies {
        // SAFETY: the core keeps the destination (the program's memory) valid until the
        // construct that copies into it completes, which is now.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst as *mut u8, bytes.len()) };
    }
}
