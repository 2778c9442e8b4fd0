//! Copies between host and device, device and device, and GPU and GPU (peer), and fills:
//! pageable host memory goes through pinned staging buffers (staging.rs), copies without a
//! queue run on an internal stream and are waited for.

use super::CudaDevice;
use super::queue::stream;
use crate::driver::{self, CUcontext, CUdevice, CUdeviceptr, CUstream, call};
use crate::staging;
use cudarc::driver::sys;
use omptarget_plugin::{CopyKind, DevicePtr, QueueId, Result};

impl CudaDevice {
    pub(super) fn memcpy(
        &self,
        kind: CopyKind,
        dst: usize,
        src: usize,
        size: usize,
        queue: Option<QueueId>,
    ) -> Result<()> {
        if size == 0 {
            return Ok(());
        }
        self.current()?;
        let issue = |s: CUstream| -> Result<()> {
            // SAFETY: the core passes ranges inside live allocations (device) and live host
            // memory; an asynchronous copy's host side stays alive until the construct's
            // synchronisation.
            match kind {
                CopyKind::HostToDevice => call("cuMemcpyHtoDAsync", || unsafe {
                    sys::cuMemcpyHtoDAsync_v2(
                        dst as CUdeviceptr,
                        src as *const std::ffi::c_void,
                        size,
                        s,
                    )
                }),
                CopyKind::DeviceToHost => call("cuMemcpyDtoHAsync", || unsafe {
                    sys::cuMemcpyDtoHAsync_v2(
                        dst as *mut std::ffi::c_void,
                        src as CUdeviceptr,
                        size,
                        s,
                    )
                }),
                CopyKind::DeviceToDevice => call("cuMemcpyDtoDAsync", || unsafe {
                    sys::cuMemcpyDtoDAsync_v2(dst as CUdeviceptr, src as CUdeviceptr, size, s)
                }),
            }
        };
        // Copies that do not go through staging.rs go behind the stream's batched copies
        // (staging.rs flushes them itself before anything it does not batch).
        match queue {
            Some(q) if kind != CopyKind::DeviceToDevice && self.staging.enabled() => {
                // Pageable host memory goes through pinned staging buffers (staging.rs).
                let host = if kind == CopyKind::HostToDevice {
                    src
                } else {
                    dst
                };
                let prestaged =
                    kind == CopyKind::HostToDevice && self.staging.is_prestaged(src, size);
                if prestaged {
                    // Known pageable; counted as moved, as `worth_it` would have.
                    let _ = self.staging.worth_it(size);
                    self.staging.to_device(dst, src, size, stream(q))
                } else if size > staging::UNASKED
                    && (!driver::is_pageable(host) || !self.staging.worth_it(size))
                {
                    self.staging.note_direct(q.0);
                    issue(self.submit(q)?)
                } else if kind == CopyKind::HostToDevice {
                    self.staging.to_device(dst, src, size, stream(q))
                } else {
                    self.staging.to_host(dst, src, size, stream(q))
                }
            }
            Some(q) => {
                if kind != CopyKind::DeviceToDevice {
                    self.staging.note_direct(q.0);
                }
                issue(self.submit(q)?)
            }
            None => self.on_internal_stream(issue),
        }
    }

    /// `cuMemcpyPeerAsync` when `cuDeviceCanAccessPeer` says the two GPUs reach each other
    /// (peer access enabled once per pair); otherwise `Ok(false)` and the core stages the copy.
    pub(super) fn memcpy_peer(
        &self,
        dst: DevicePtr,
        peer: usize,
        src: DevicePtr,
        size: usize,
        queue: QueueId,
    ) -> Result<bool> {
        let peer = peer as CUdevice;
        if peer == self.dev {
            return Ok(false);
        }
        self.current()?;
        let peer_ctx = {
            let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
            match peers.get(&peer) {
                Some(known) => *known,
                None => {
                    let mut can = 0;
                    // SAFETY: writes one int.
                    call("cuDeviceCanAccessPeer", || unsafe {
                        sys::cuDeviceCanAccessPeer(&mut can, self.dev, peer)
                    })?;
                    let ctx = if can != 0 {
                        let mut ctx: CUcontext = std::ptr::null_mut();
                        // SAFETY: retains the peer's primary context (kept for the process).
                        call("cuDevicePrimaryCtxRetain", || unsafe {
                            sys::cuDevicePrimaryCtxRetain(&mut ctx, peer)
                        })?;
                        // SAFETY: our context is current; enabling twice is reported, not harmful.
                        let enabled = call("cuCtxEnablePeerAccess", || unsafe {
                            sys::cuCtxEnablePeerAccess(ctx, 0)
                        });
                        if let Err(e) = enabled
                            && !e.message.contains("PEER_ACCESS_ALREADY_ENABLED")
                        {
                            return Err(e);
                        }
                        Some(ctx)
                    } else {
                        None
                    };
                    peers.insert(peer, ctx);
                    ctx
                }
            }
        };
        let Some(peer_ctx) = peer_ctx else {
            return Ok(false);
        };
        let s = self.submit(queue)?;
        // SAFETY: both ranges are live device allocations of their contexts; ordered on `s`.
        call("cuMemcpyPeerAsync", || unsafe {
            sys::cuMemcpyPeerAsync(
                dst as CUdeviceptr,
                peer_ctx,
                src as CUdeviceptr,
                self.ctx,
                size,
                s,
            )
        })?;
        Ok(true)
    }

    pub(super) fn memset_d8(
        &self,
        dst: DevicePtr,
        value: u8,
        size: usize,
        queue: Option<QueueId>,
    ) -> Result<()> {
        self.current()?;
        // SAFETY: fills a range of a live allocation on a stream.
        let issue = |s: CUstream| {
            call("cuMemsetD8Async", || unsafe {
                sys::cuMemsetD8Async(dst as CUdeviceptr, value, size, s)
            })
        };
        match queue {
            Some(q) => issue(self.submit(q)?),
            None => self.on_internal_stream(issue),
        }
    }
}
