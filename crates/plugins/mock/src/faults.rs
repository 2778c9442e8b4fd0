//! Fault injection: failing the n-th operation of a kind, or the k-th faultable call of any
//! kind.

use crate::MockState;
use crate::lock;
use omptarget_plugin::{Error, ErrorKind, Result};

/// The kinds of operation a fault can target. `Copy` counts copies of every direction; the
/// three direction kinds count only their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    Load,
    Alloc,
    Copy,
    Launch,
    Synchronize,
    CopyToDevice,
    CopyFromDevice,
    CopyDeviceToDevice,
    Free,
    Memset,
    Query,
    CreateEvent,
    RecordEvent,
    WaitEvent,
    CreateQueue,
    /// Kernel and global lookups in a loaded image.
    Symbol,
    /// `lock_host_memory` (`llvm_omp_target_lock_mem`).
    Lock,
}

#[derive(Default)]
pub(crate) struct CallFaults {
    seen: usize,
    fail_at: usize,
    failed: Vec<OpKind>,
}

impl MockState {
    /// Makes the `nth` (1-based, counted from now) operation of `kind` fail.
    pub fn fail_nth(&self, kind: OpKind, nth: usize) {
        lock(&self.counts).insert(kind, 0);
        lock(&self.faults).insert(kind, nth);
    }
    /// Makes the `k`-th (1-based, counted from now) faultable call of any kind fail once;
    /// `k = 0` only restarts the count. Faultable: load, symbol lookup, alloc, free, copies,
    /// memset, launch, queue creation, synchronize, query, event create/record/wait, lock.
    pub fn fail_call(&self, k: usize) {
        *lock(&self.calls) = CallFaults {
            seen: 0,
            fail_at: k,
            failed: Vec::new(),
        };
    }
    /// Faultable calls made since the last [`MockState::fail_call`].
    pub fn calls(&self) -> usize {
        lock(&self.calls).seen
    }
    /// The kinds of the calls failed through [`MockState::fail_call`] since it was set.
    pub fn failed_calls(&self) -> Vec<OpKind> {
        lock(&self.calls).failed.clone()
    }
    /// Blocks still allocated because an injected fault refused their free.
    pub fn refused_frees(&self) -> usize {
        lock(&self.refused).len()
    }
    fn injected(kind: OpKind) -> Error {
        Error::new(ErrorKind::Injected, format!("injected {kind:?} failure"))
    }
    pub(crate) fn check_fault(&self, kind: OpKind) -> Result<()> {
        {
            let mut calls = lock(&self.calls);
            calls.seen += 1;
            if calls.seen == calls.fail_at {
                calls.failed.push(kind);
                return Err(Self::injected(kind));
            }
        }
        let mut counts = lock(&self.counts);
        let faults = lock(&self.faults);
        // A copy also counts as `Copy`, so scripts written before the direction kinds keep
        // their positions.
        let kinds: &[OpKind] = match kind {
            OpKind::CopyToDevice | OpKind::CopyFromDevice | OpKind::CopyDeviceToDevice => {
                &[OpKind::Copy, kind]
            }
            _ => std::slice::from_ref(&kind),
        };
        let mut fail = None;
        for &k in kinds {
            let n = counts.entry(k).or_insert(0);
            *n += 1;
            if faults.get(&k) == Some(n) {
                fail = Some(k);
            }
        }
        match fail {
            Some(k) => Err(Self::injected(k)),
            None => Ok(()),
        }
    }
}
