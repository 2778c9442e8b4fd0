//! The devices' fake memory: host buffers at fake device addresses, so that data really
//! moves and a stray address is caught.

use crate::lock;
use omptarget_plugin::{Error, ErrorKind, Result};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// Device memory of every mock device: allocation base → bytes.
#[derive(Default)]
pub struct Memory {
    blocks: Mutex<BTreeMap<usize, Vec<u8>>>,
}

impl Memory {
    pub(crate) fn blocks(&self) -> MutexGuard<'_, BTreeMap<usize, Vec<u8>>> {
        lock(&self.blocks)
    }

    /// Runs `f` on the `size` bytes at device address `addr`, which must lie in one live
    /// allocation.
    pub fn with_bytes<R>(
        &self,
        addr: usize,
        size: usize,
        f: impl FnOnce(&mut [u8]) -> R,
    ) -> Result<R> {
        let mut blocks = self.blocks();
        let (&base, block) = blocks
            .range_mut(..=addr)
            .next_back()
            .ok_or_else(|| bad_addr(addr, size))?;
        let off = addr - base;
        if off + size > block.len() {
            return Err(bad_addr(addr, size));
        }
        Ok(f(&mut block[off..off + size]))
    }

    /// Copies `size` bytes from device address `src` to `dst` (of the same or another mock
    /// device: they all keep their memory here).
    pub(crate) fn copy(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        let bytes = self.with_bytes(src, size, |s| s.to_vec())?;
        self.with_bytes(dst, size, |d| d.copy_from_slice(&bytes))
    }

    /// Reads a little-endian `i32` at a device address.
    pub fn read_i32(&self, addr: usize) -> Result<i32> {
        self.with_bytes(addr, 4, |b| {
            i32::from_le_bytes(b.try_into().expect("4 bytes"))
        })
    }

    /// Writes a little-endian `i32` at a device address.
    pub fn write_i32(&self, addr: usize, v: i32) -> Result<()> {
        self.with_bytes(addr, 4, |b| b.copy_from_slice(&v.to_le_bytes()))
    }

    /// Live allocations.
    pub fn live(&self) -> usize {
        self.blocks().len()
    }
}

fn bad_addr(addr: usize, size: usize) -> Error {
    Error::new(
        ErrorKind::InvalidArgument,
        format!("mock: {size} bytes at {addr:#x} are not inside a live device allocation"),
    )
}
