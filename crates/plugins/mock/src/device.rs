//! A mock device: the `Device` trait over the shared [`MockState`].

use crate::clock::cost;
use crate::faults::OpKind;
use crate::lock;
use crate::log::Op;
use crate::{MAGIC, MockState};
use omptarget_plugin::{
    AllocKind, CopyKind, Device, DeviceInfo, DevicePtr, Error, ErrorKind, EventId, ForeignRuntime,
    ImageInfo, KernelId, LaunchConfig, LoadEnv, ModuleId, QueueId, Result, Timestamp,
};
use std::sync::Arc;
use std::sync::atomic::Ordering;

pub(crate) struct MockDevice {
    pub(crate) index: usize,
    pub(crate) state: Arc<MockState>,
    /// Record and replay: one block of mock memory every allocation comes from.
    pub(crate) record: std::sync::OnceLock<omptarget_plugin::record::RecordRegion>,
}

impl MockDevice {
    fn token(&self) -> usize {
        self.state.next_token.fetch_add(1, Ordering::Relaxed)
    }
    fn host_bytes<'a>(addr: usize, size: usize) -> &'a mut [u8] {
        // SAFETY: the core only passes host ranges it owns or that the caller vouched for.
        unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, size) }
    }
}

impl Device for MockDevice {
    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            name: format!("mock device {}", self.index),
            properties: vec![(
                "Stream-ordered allocation".into(),
                self.state.stream_ordered.to_string(),
            )],
        }
    }
    fn load(&self, image: &ImageInfo<'_>, _env: &LoadEnv) -> Result<ModuleId> {
        self.state.check_fault(OpKind::Load)?;
        if !image.bytes.starts_with(MAGIC) {
            return Err(Error::new(ErrorKind::InvalidImage, "not a mock image"));
        }
        self.state.record(Op::Load { device: self.index });
        Ok(ModuleId(self.token()))
    }
    fn unload(&self, module: ModuleId) -> Result<()> {
        let globals = lock(&self.state.module_globals)
            .remove(&module.0)
            .unwrap_or_default();
        for g in globals {
            self.state.memory.blocks().remove(&g);
        }
        self.state.record(Op::Unload { device: self.index });
        Ok(())
    }
    fn kernel(&self, _module: ModuleId, name: &str) -> Result<KernelId> {
        self.state.check_fault(OpKind::Symbol)?;
        let mut names = lock(&self.state.kernel_names);
        let id = match names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                names.push(name.to_owned());
                names.len() - 1
            }
        };
        Ok(KernelId(id))
    }
    fn global(&self, module: ModuleId, name: &str) -> Result<(DevicePtr, usize)> {
        self.state.check_fault(OpKind::Symbol)?;
        // Each global of each loaded image gets its own 64-byte block, owned by the image.
        let p = self.state.fresh_addr(64);
        let mut block = vec![0; 64];
        if let Some(init) = lock(&self.state.global_init).get(name) {
            block[..init.len().min(64)].copy_from_slice(&init[..init.len().min(64)]);
        }
        self.state.memory.blocks().insert(p, block);
        lock(&self.state.module_globals)
            .entry(module.0)
            .or_default()
            .push(p);
        Ok((p, 64))
    }
    fn alloc(&self, size: usize, _kind: AllocKind, queue: Option<QueueId>) -> Result<DevicePtr> {
        self.state.check_fault(OpKind::Alloc)?;
        let size = size.max(1);
        let ptr = if let Some(r) = self.record.get() {
            r.alloc(size)
                .ok_or_else(|| Error::new(ErrorKind::OutOfMemory, "mock: record region full"))?
        } else {
            let ptr = self.state.fresh_addr(size);
            self.state.memory.blocks().insert(ptr, vec![0xAB; size]);
            ptr
        };
        self.state.tick(cost::ALLOC);
        self.state.record(Op::Alloc {
            device: self.index,
            ptr,
            size,
            queue,
        });
        Ok(ptr)
    }
    fn free(&self, ptr: DevicePtr, _kind: AllocKind, queue: Option<QueueId>) -> Result<()> {
        if let Err(e) = self.state.check_fault(OpKind::Free) {
            // The device refused: the block stays allocated (a real driver's failed free).
            if self.state.memory.blocks().contains_key(&ptr) {
                lock(&self.state.refused).push(ptr);
            }
            return Err(e);
        }
        let in_region = self.record.get().is_some_and(|r| r.contains(ptr));
        if !in_region && self.state.memory.blocks().remove(&ptr).is_none() {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("mock: double or invalid free of {ptr:#x}"),
            ));
        }
        self.state.tick(cost::FREE);
        self.state.record(Op::Free {
            device: self.index,
            ptr,
            queue,
        });
        Ok(())
    }
    /// One block of mock memory (1 MiB unless told), at `at` when no block is there.
    fn begin_record_replay(
        &self,
        size: Option<usize>,
        at: Option<usize>,
    ) -> Result<(usize, usize)> {
        let size = size.unwrap_or(1 << 20).max(1).next_multiple_of(256);
        let mut blocks = self.state.memory.blocks();
        let free = |a: usize| {
            blocks
                .range(..a.saturating_add(size))
                .next_back()
                .is_none_or(|(&b, v)| b + v.len() <= a)
        };
        let base = match at {
            Some(a) if a != 0 && free(a) => a,
            _ => self.state.fresh_addr(size),
        };
        blocks.insert(base, vec![0; size]);
        drop(blocks);
        let (start, offset) = omptarget_plugin::record::place(base, size, at, 0);
        self.record
            .set(omptarget_plugin::record::RecordRegion::new(
                start,
                size - (start - base),
            ))
            .map_err(|_| {
                Error::new(
                    ErrorKind::InvalidArgument,
                    "mock: record/replay active already",
                )
            })?;
        Ok((start, offset))
    }
    fn record_region(&self) -> Option<(usize, usize)> {
        self.record.get().map(|r| r.used())
    }
    fn lock_host_memory(&self, ptr: usize, _size: usize) -> Result<usize> {
        self.state.check_fault(OpKind::Lock)?;
        Ok(ptr)
    }
    fn orders_alloc_on_queue(&self) -> bool {
        self.state.stream_ordered
    }
    fn unified_shared_memory(&self) -> std::result::Result<(), String> {
        if self.state.unified_memory.load(Ordering::SeqCst) {
            Ok(())
        } else {
            Err(format!(
                "mock device {} keeps its memory apart from the host's",
                self.index
            ))
        }
    }
    fn takes_launch_environment(&self, _module: ModuleId, _name: &str) -> Option<bool> {
        Some(self.state.kernels_take_launch_env.load(Ordering::SeqCst))
    }
    fn foreign_runtime(&self) -> Option<ForeignRuntime> {
        self.state
            .foreign
            .load(Ordering::SeqCst)
            .then(|| ForeignRuntime {
                id: 1000,
                name: c"mock",
                vendor: 9,
                vendor_name: c"llvm",
                platform: None,
                device: Some(self.index as i64 + 100),
                device_context: Some(0xC0),
                platform_type: c"N/A",
                device_type: c"int",
                context_type: c"void *",
                queue_type: c"mock queue",
            })
    }
    /// The mock stands for a GPU: device code looks host addresses up in the table.
    fn uses_indirect_call_table(&self) -> bool {
        true
    }
    fn publish_indirect_calls(&self, _module: ModuleId, table: &[(u64, u64)]) -> Result<()> {
        // Part of loading an image (CUDA writes the table into the image's globals).
        self.state.check_fault(OpKind::Load)?;
        self.state.record(Op::IndirectCalls {
            device: self.index,
            table: table.to_vec(),
        });
        Ok(())
    }
    fn is_asynchronous(&self) -> bool {
        self.state.asynchronous
    }
    fn prestage_sizes(&self) -> (usize, usize) {
        (self.state.prestage_min.load(Ordering::Relaxed), usize::MAX)
    }

    fn prestage(&self, src: usize, size: usize) -> bool {
        if size < self.state.prestage_min.load(Ordering::Relaxed) {
            return false;
        }
        let bytes = Self::host_bytes(src, size).to_vec();
        let old =
            lock(&self.state.prestaged).insert(std::thread::current().id(), (src, size, bytes));
        assert!(old.is_none(), "a thread stages one copy ahead at a time");
        self.state.prestages.fetch_add(1, Ordering::Relaxed);
        let hook = lock(&self.state.on_prestage).clone();
        if let Some(hook) = hook {
            hook();
        }
        true
    }

    fn unstage(&self) {
        lock(&self.state.prestaged).remove(&std::thread::current().id());
    }

    fn copy(
        &self,
        kind: CopyKind,
        dst: usize,
        src: usize,
        size: usize,
        queue: Option<QueueId>,
    ) -> Result<()> {
        self.state.check_fault(match kind {
            CopyKind::HostToDevice => OpKind::CopyToDevice,
            CopyKind::DeviceToHost => OpKind::CopyFromDevice,
            CopyKind::DeviceToDevice => OpKind::CopyDeviceToDevice,
        })?;
        let mem = &self.state.memory;
        match kind {
            CopyKind::HostToDevice => {
                // A copy staged ahead moves the bytes as they were when staged.
                let me = std::thread::current().id();
                let staged = {
                    let mut p = lock(&self.state.prestaged);
                    match p.get(&me) {
                        Some(&(at, n, _)) if at == src && n == size => p.remove(&me),
                        _ => None,
                    }
                };
                let from = match staged {
                    Some((_, _, bytes)) => {
                        self.state.prestages_used.fetch_add(1, Ordering::Relaxed);
                        bytes
                    }
                    None => Self::host_bytes(src, size).to_vec(),
                };
                mem.with_bytes(dst, size, |d| d.copy_from_slice(&from))?;
            }
            CopyKind::DeviceToHost => {
                let hook = lock(&self.state.on_copy_from_device).clone();
                if let Some(hook) = hook {
                    hook();
                }
                let bytes = mem.with_bytes(src, size, |s| s.to_vec())?;
                Self::host_bytes(dst, size).copy_from_slice(&bytes);
            }
            CopyKind::DeviceToDevice => {
                mem.copy(dst, src, size)?;
            }
        }
        self.state.tick(cost::COPY + size as u64);
        if let Some(q) = queue
            && (kind == CopyKind::DeviceToHost
                || (kind == CopyKind::HostToDevice && self.state.host_dma.load(Ordering::Relaxed)))
        {
            crate::lock(&self.state.touching_host).insert(q);
        }
        self.state.record(Op::Copy {
            device: self.index,
            kind,
            dst,
            src,
            size,
            queue,
        });
        Ok(())
    }
    fn peer_id(&self) -> Option<usize> {
        Some(self.index)
    }

    fn copy_to_peer(
        &self,
        dst: DevicePtr,
        peer: usize,
        src: DevicePtr,
        size: usize,
        queue: QueueId,
    ) -> Result<bool> {
        if !self.state.peer_access.load(Ordering::Relaxed) || peer == self.index {
            return Ok(false);
        }
        self.state.check_fault(OpKind::Copy)?;
        // Every mock device's memory lives in one map: read the source, write the target.
        self.state.memory.copy(dst, src, size)?;
        self.state.record(Op::CopyPeer {
            device: self.index,
            peer,
            dst,
            src,
            size,
            queue,
        });
        Ok(true)
    }

    fn memset(
        &self,
        dst: DevicePtr,
        value: u8,
        size: usize,
        _queue: Option<QueueId>,
    ) -> Result<()> {
        self.state.check_fault(OpKind::Memset)?;
        self.state.memory.with_bytes(dst, size, |d| d.fill(value))?;
        self.state.record(Op::Memset {
            device: self.index,
            dst,
            size,
        });
        Ok(())
    }
    fn launch(
        &self,
        kernel: KernelId,
        args: &[usize],
        config: &LaunchConfig,
        queue: QueueId,
    ) -> Result<()> {
        self.state.check_fault(OpKind::Launch)?;
        self.state
            .last_launch_version
            .store(config.version, Ordering::SeqCst);
        let name = lock(&self.state.kernel_names)
            .get(kernel.0)
            .cloned()
            .unwrap_or_default();
        let f = lock(&self.state.kernels).get(&name).cloned();
        if let Some(lang) = config.language {
            let params = if lang.size == 0 {
                Vec::new()
            } else {
                // SAFETY: the caller's buffer of `size` bytes lives for the call.
                unsafe { std::slice::from_raw_parts(lang.data as *const u8, lang.size) }.to_vec()
            };
            self.state.tick(cost::LAUNCH);
            self.state.record(Op::LanguageLaunch {
                device: self.index,
                kernel: name,
                params,
                grid: config.num_teams,
                block: config.thread_limit,
                shared: config.dyn_cgroup_mem,
                queue,
            });
            return Ok(());
        }
        if let Some(f) = f {
            f(&self.state.memory, args);
        }
        self.state.tick(cost::LAUNCH);
        self.state.record(Op::Launch {
            device: self.index,
            kernel: name,
            args: args.to_vec(),
            queue,
        });
        Ok(())
    }
    fn create_queue(&self) -> Result<QueueId> {
        self.state.check_fault(OpKind::CreateQueue)?;
        let queue = QueueId(self.token());
        self.state.record(Op::CreateQueue {
            device: self.index,
            queue,
        });
        Ok(queue)
    }
    fn destroy_queue(&self, _queue: QueueId) -> Result<()> {
        Ok(())
    }
    fn synchronize(&self, queue: QueueId) -> Result<()> {
        let hook = lock(&self.state.on_synchronize).clone();
        if let Some(hook) = hook {
            hook();
        }
        self.state.check_fault(OpKind::Synchronize)?;
        self.state.record(Op::Synchronize {
            device: self.index,
            queue,
        });
        self.state.synchronized(queue);
        Ok(())
    }
    fn completion_releases_memory(&self) -> bool {
        self.state.pool_over_threshold.load(Ordering::Relaxed)
    }
    fn queue_touches_host(&self, queue: QueueId) -> bool {
        crate::lock(&self.state.touching_host).contains(&queue)
    }
    fn query(&self, queue: QueueId) -> Result<bool> {
        self.state.check_fault(OpKind::Query)?;
        let done = !self.state.busy.load(Ordering::SeqCst);
        if done {
            self.state.record(Op::Completed {
                device: self.index,
                queue,
            });
            self.state.synchronized(queue);
        }
        Ok(done)
    }
    /// A pending timestamp on a queue, like a CUDA event: it may only be resolved after the
    /// queue was synchronised (or found done), which catches a core that reads it too early.
    fn timestamp(&self, queue: Option<QueueId>) -> Result<Timestamp> {
        let at = self.state.clock.load(Ordering::Relaxed);
        let Some(queue) = queue else {
            return Ok(Timestamp::At(at));
        };
        let token = self.token();
        let syncs = self.state.sync_count(queue);
        lock(&self.state.stamps).insert(token, (queue, syncs, at));
        self.state.record(Op::Timestamp {
            device: self.index,
            queue,
            at,
        });
        Ok(Timestamp::Pending(token))
    }
    fn resolve_timestamp(&self, ts: Timestamp) -> Result<u64> {
        let token = match ts {
            Timestamp::At(t) => return Ok(t),
            Timestamp::Pending(token) => token,
        };
        let mut stamps = lock(&self.state.stamps);
        let Some(&(queue, syncs, at)) = stamps.get(&token) else {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("mock: unknown or already resolved timestamp {token}"),
            ));
        };
        let now = self.state.sync_count(queue);
        if now <= syncs {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("mock: timestamp {token} resolved before its queue was synchronised"),
            ));
        }
        stamps.remove(&token);
        Ok(at)
    }
    fn device_time(&self) -> u64 {
        self.state.clock.load(Ordering::Relaxed)
    }
    fn create_event(&self) -> Result<EventId> {
        self.state.check_fault(OpKind::CreateEvent)?;
        Ok(EventId(self.token()))
    }
    fn destroy_event(&self, _event: EventId) -> Result<()> {
        Ok(())
    }
    fn record_event(&self, event: EventId, queue: QueueId) -> Result<()> {
        self.state.check_fault(OpKind::RecordEvent)?;
        self.state.record(Op::RecordEvent {
            device: self.index,
            event,
            queue,
        });
        Ok(())
    }
    fn wait_event(&self, event: EventId, queue: QueueId) -> Result<()> {
        self.state.check_fault(OpKind::WaitEvent)?;
        self.state.record(Op::WaitEvent {
            device: self.index,
            event,
            queue,
        });
        Ok(())
    }
}
