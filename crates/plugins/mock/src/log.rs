//! The operation log: every device operation, in order, with its device and queue.

use crate::MockState;
use crate::lock;
use omptarget_plugin::{CopyKind, DevicePtr, EventId, QueueId};

/// One recorded operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Load {
        device: usize,
    },
    Unload {
        device: usize,
    },
    Alloc {
        device: usize,
        ptr: DevicePtr,
        size: usize,
        queue: Option<QueueId>,
    },
    Free {
        device: usize,
        ptr: DevicePtr,
        queue: Option<QueueId>,
    },
    Copy {
        device: usize,
        kind: CopyKind,
        dst: usize,
        src: usize,
        size: usize,
        queue: Option<QueueId>,
    },
    /// A direct copy to another mock device (`Device::copy_to_peer`).
    CopyPeer {
        device: usize,
        peer: usize,
        dst: usize,
        src: usize,
        size: usize,
        queue: QueueId,
    },
    Memset {
        device: usize,
        dst: DevicePtr,
        size: usize,
    },
    Launch {
        device: usize,
        kernel: String,
        args: Vec<usize>,
        queue: QueueId,
    },
    /// A kernel language's launch (`LaunchConfig::language`): the parameter bytes and the
    /// grid and blocks as the backend received them.
    LanguageLaunch {
        device: usize,
        kernel: String,
        params: Vec<u8>,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        queue: QueueId,
    },
    CreateQueue {
        device: usize,
        queue: QueueId,
    },
    Synchronize {
        device: usize,
        queue: QueueId,
    },
    /// A query that found the queue's work complete (as `Synchronize` for ordering).
    Completed {
        device: usize,
        queue: QueueId,
    },
    RecordEvent {
        device: usize,
        event: EventId,
        queue: QueueId,
    },
    /// A tracing timestamp taken on a queue (resolved only after the queue is synchronised).
    Timestamp {
        device: usize,
        queue: QueueId,
        at: u64,
    },
    WaitEvent {
        device: usize,
        event: EventId,
        queue: QueueId,
    },
    /// An image's indirect-call table, as the core handed it over.
    IndirectCalls {
        device: usize,
        table: Vec<(u64, u64)>,
    },
}

impl MockState {
    pub fn log(&self) -> Vec<Op> {
        lock(&self.log).clone()
    }
    pub fn clear_log(&self) {
        lock(&self.log).clear();
    }
    pub(crate) fn record(&self, op: Op) {
        lock(&self.log).push(op);
    }
}
