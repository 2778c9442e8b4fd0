//! A scriptable device backend for tests, a real backend like any other (wgpu's `noop`): the
//! core's tests and fuzz targets run whole offload programs on it. It depends only on
//! `omptarget-plugin`.
//!
//! It keeps device memory in host buffers at fake device addresses (so data really moves and
//! a stray address is caught), records every operation in order with its queue, runs kernels
//! registered as Rust closures, can order allocation on queues like a CUDA memory pool, and
//! fails the n-th operation of a kind, or the k-th faultable call of any kind, on request
//! (fault injection at every position).

mod clock;
mod device;
mod faults;
mod log;
mod memory;
mod state;

pub use clock::cost;
pub use faults::OpKind;
pub use log::Op;
pub use memory::Memory;
pub use state::{KernelFn, MockState};

use device::MockDevice;
use omptarget_plugin::{Device, Error, ErrorKind, ImageInfo, Plugin, Result};
use std::sync::{Arc, Mutex, MutexGuard};

/// The first bytes of an image this backend accepts.
pub const MAGIC: &[u8; 8] = b"MOCKIMG\0";

/// The mock plugin.
pub struct MockPlugin {
    devices: usize,
    pub state: Arc<MockState>,
}

impl MockPlugin {
    pub fn new(devices: usize, stream_ordered: bool, asynchronous: bool) -> Self {
        Self {
            devices,
            state: Arc::new(MockState::new(stream_ordered, asynchronous)),
        }
    }
}

impl Plugin for MockPlugin {
    fn name(&self) -> &'static str {
        "mock"
    }
    fn number_of_devices(&self) -> usize {
        self.devices
    }
    fn is_compatible(&self, image: &ImageInfo<'_>) -> bool {
        image.bytes.starts_with(MAGIC)
    }
    fn init_device(&self, index: usize) -> Result<Box<dyn Device>> {
        if index >= self.devices {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "no such mock device",
            ));
        }
        Ok(Box::new(MockDevice {
            index,
            state: self.state.clone(),
            record: std::sync::OnceLock::new(),
        }))
    }
}

/// Locks `m` even when a panic poisoned it: a test that failed an assertion while the mock
/// held a lock must not hide the mock's state from what runs next.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
