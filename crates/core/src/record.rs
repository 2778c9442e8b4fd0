//! Record and replay of kernels, in LLVM 19's files, so that LLVM's `llvm-omp-kernel-replay`
//! replays what we record and we replay what LLVM records.
//!
//! Recording (`LIBOMPTARGET_RECORD=1`): when a device is initialised it reserves a region of
//! device memory from which every later allocation of the device comes (the backend's
//! [`omptarget_plugin::record::RecordRegion`]). Each kernel launch then writes, into the
//! current directory, named after the kernel:
//! - `NAME.image`: the device image the kernel came from (the raw cubin or ELF object);
//! - `NAME.memory`: the region's used bytes before the launch (`DeviceMemorySize` bytes from
//!   `BumpAllocVAStart`), so every pointer the kernel can follow points into it;
//! - `NAME.globals`: the image's globals, each as its name, a NUL, a 32-bit size and the
//!   device bytes (written as LLVM does; neither replay reads it);
//! - `NAME.json`: `Name`, `NumArgs`, `ArgPtrs` (every word the kernel receives, the hidden
//!   launch environment first for version-3 kernels), `ArgOffsets` (zeros),
//!   `NumTeamsClause`/`ThreadLimitClause` (the blocks and threads launched), `LoopTripCount`,
//!   `DeviceMemorySize`, `DeviceId`, `BumpAllocVAStart`; keys sorted, as `llvm::json` prints;
//! - with `LIBOMPTARGET_RR_SAVE_OUTPUT=1`, `NAME.original.output`: the region after the kernel.
//!
//! Replay (`__tgt_activate_record_replay`, then `__tgt_target_kernel_replay`, as the tool calls
//! them): the region is reserved at the recorded start, the memory copied into its first
//! allocation, and the kernel launched with the recorded words as they are;
//! `NAME.replay.output` is saved when asked.

use crate::device::Device;
use crate::error::{DeviceContext, Error, Result};
use crate::message::{plugin_error, report};
use crate::ops::AsyncInfo;
use crate::runtime::Runtime;
use omptarget_plugin::{AllocKind, CopyKind, KernelId, LaunchConfig};
use std::fmt::Write as _;
use std::path::PathBuf;

/// What a device does with its kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Record,
    Replay,
}

/// A device's record/replay state (set once, when it begins).
#[derive(Debug)]
pub struct RecordReplay {
    pub mode: Mode,
    /// Save the device memory after each kernel (`.original.output` / `.replay.output`).
    pub save_output: bool,
}

/// A kernel launch as LLVM's `saveKernelDescr` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelDescr {
    pub name: String,
    /// Every word the kernel receives.
    pub args: Vec<usize>,
    pub num_teams: u64,
    pub thread_limit: u32,
    pub tripcount: u64,
    pub memory_size: u64,
    pub device: usize,
    pub memory_start: usize,
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl KernelDescr {
    /// The `.json` file: one line, keys in sorted order, pointers as signed integers
    /// (`intptr_t`), as LLVM 19 writes it.
    pub fn to_json(&self) -> String {
        let words = |f: &dyn Fn(usize) -> String| {
            self.args
                .iter()
                .map(|&a| f(a))
                .collect::<Vec<_>>()
                .join(",")
        };
        format!(
            "{{\"ArgOffsets\":[{}],\"ArgPtrs\":[{}],\"BumpAllocVAStart\":{},\"DeviceId\":{},\"DeviceMemorySize\":{},\"LoopTripCount\":{},\"Name\":{},\"NumArgs\":{},\"NumTeamsClause\":{},\"ThreadLimitClause\":{}}}",
            words(&|_| "0".into()),
            words(&|a| (a as isize).to_string()),
            self.memory_start as isize,
            self.device,
            self.memory_size,
            self.tripcount,
            json_string(&self.name),
            self.args.len(),
            self.num_teams,
            self.thread_limit,
        )
    }
}

/// The `.globals` file: per global of size > 0, its name, a NUL, its size as a 32-bit
/// little-endian number and its bytes.
pub fn globals_file(globals: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, bytes) in globals.iter().filter(|(_, b)| !b.is_empty()) {
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    out
}

fn write_file(name: &str, bytes: &[u8]) -> bool {
    match std::fs::write(PathBuf::from(name), bytes) {
        Ok(()) => true,
        Err(e) => {
            report(format_args!("record/replay: cannot write {name}: {e}"));
            false
        }
    }
}

impl Device {
    /// The device's record/replay state, if any (one atomic load).
    #[inline]
    pub fn record_replay(&self) -> Option<&RecordReplay> {
        self.record.get()
    }

    /// Begins recording or replaying: the backend reserves the region (`size` bytes, at
    /// `at`). Returns the offset of `at` from where the region begins (0 when it begins
    /// there).
    pub(crate) fn begin_record_replay(
        &self,
        mode: Mode,
        save_output: bool,
        size: Option<usize>,
        at: Option<usize>,
        info: u32,
    ) -> Result<usize> {
        let backend = self.backend()?;
        let (start, offset) = backend
            .begin_record_replay(size, at)
            .on(self.id, "reserving record/replay memory")?;
        if offset != 0 {
            plugin_error(format_args!(
                "WARNING Failed to allocate replay memory at required location {:#x}, got {start:#x}, trying to offset argument pointers by {}",
                at.unwrap_or(0),
                offset as isize
            ));
        }
        let _ = self.record.set(RecordReplay { mode, save_output });
        if info & crate::config::info::KERNEL_GEOMETRY != 0 {
            let (_, total) = backend.record_region().unwrap_or((start, 0));
            eprintln!(
                "\"PluginInterface\" device {} info: Record Replay Initialized ({start:#x}) as starting address, {total} Memory Size and set on status {}",
                self.id,
                match mode {
                    Mode::Record => "Recording",
                    Mode::Replay => "Replaying",
                }
            );
        }
        Ok(offset)
    }

    /// The used part of the region, copied to the host.
    fn region_bytes(&self) -> Result<(usize, Vec<u8>)> {
        let backend = self.backend()?;
        let Some((start, used)) = backend.record_region() else {
            return Err(Error::InvalidArgument(
                "record/replay: the device has no region".into(),
            ));
        };
        let mut bytes = vec![0u8; used];
        if used > 0 {
            backend
                .copy(
                    CopyKind::DeviceToHost,
                    bytes.as_mut_ptr() as usize,
                    start,
                    used,
                    None,
                )
                .on(self.id, "reading record/replay memory")?;
        }
        Ok((start, bytes))
    }

    /// Writes the region's used part to `name` (`.memory`, `.original.output`,
    /// `.replay.output`).
    fn dump_region(&self, name: &str) -> Result<(usize, usize)> {
        let (start, bytes) = self.region_bytes()?;
        write_file(name, &bytes);
        Ok((start, bytes.len()))
    }
}

impl Runtime {
    /// `LIBOMPTARGET_RECORD`: a device just initialised starts recording. A device that
    /// cannot says so in LLVM 19's words (its host plugin cannot, ours can).
    pub(crate) fn start_recording(&self, device: &Device) {
        let size = self.config.record_memory_gib.map(|g| (g as usize) << 30);
        if let Err(e) = device.begin_record_replay(
            Mode::Record,
            self.config.record_save_output,
            size,
            None,
            self.info_level(),
        ) {
            plugin_error(format_args!(
                "WARNING RR did not intialize RR-properly with {} bytes(Error: {e})",
                size.unwrap_or(0)
            ));
        }
    }

    /// A recorded launch (the device records): the construct's work so far is waited for,
    /// the files are written, the kernel runs with every word it receives passed as a
    /// version-0 launch, and the region is saved after it when asked.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch_recorded(
        &self,
        dev: &Device,
        host_ptr: usize,
        kernel: KernelId,
        name: &str,
        words: &[usize],
        config: &LaunchConfig,
        rr: &RecordReplay,
        ai: &mut AsyncInfo,
    ) -> Result<()> {
        let backend = dev.backend()?;
        let queue = ai.queue()?;
        let sync = |what| backend.synchronize(queue).on(dev.id, what);
        let mut all = Vec::with_capacity(words.len() + 1);
        if config.version >= 3 {
            all.push(
                backend
                    .launch_environment(kernel, config, queue)
                    .on(dev.id, "preparing a kernel's launch environment")?,
            );
        }
        all.extend_from_slice(words);
        sync("waiting for a recorded kernel's data")?;
        let (blocks, threads, _) = backend.describe_launch(kernel, config);
        if let Some(image) = dev.kernel_image(host_ptr) {
            write_file(&format!("{name}.image"), &image.bytes);
            let globals: Vec<(String, Vec<u8>)> = image
                .globals
                .iter()
                .map(|(n, addr, size)| {
                    let mut b = vec![0u8; *size];
                    let read = backend.copy(
                        CopyKind::DeviceToHost,
                        b.as_mut_ptr() as usize,
                        *addr,
                        *size,
                        None,
                    );
                    if read.is_err() {
                        b.clear();
                    }
                    (n.clone(), b)
                })
                .collect();
            write_file(&format!("{name}.globals"), &globals_file(&globals));
        }
        let (start, size) = dev.dump_region(&format!("{name}.memory"))?;
        let descr = KernelDescr {
            name: name.to_owned(),
            args: all.clone(),
            num_teams: u64::from(blocks),
            thread_limit: threads,
            tripcount: config.tripcount,
            memory_size: size as u64,
            device: dev.id,
            memory_start: start,
        };
        write_file(&format!("{name}.json"), descr.to_json().as_bytes());
        let verbatim = LaunchConfig {
            version: 0,
            ..*config
        };
        backend
            .launch(kernel, &all, &verbatim, queue)
            .on(dev.id, "launching a kernel")?;
        sync("waiting for a recorded kernel")?;
        if rr.save_output {
            dev.dump_region(&format!("{name}.original.output"))?;
        }
        Ok(())
    }

    /// `__tgt_activate_record_replay`: device `device_id` records (`record`) or replays from
    /// now on, with `size` bytes at `at`. Returns LLVM's `ReqPtrArgOffset`.
    pub fn activate_record_replay(
        &self,
        device_id: i64,
        size: u64,
        at: usize,
        record: bool,
        save_output: bool,
    ) -> Result<u64> {
        let dev = self.device_unloaded(device_id)?;
        if dev.record_replay().is_some() {
            return Err(Error::InvalidArgument(format!(
                "record/replay is active on device {} already",
                dev.id
            )));
        }
        let mode = if record { Mode::Record } else { Mode::Replay };
        let offset = dev.begin_record_replay(
            mode,
            save_output,
            (size > 0).then_some(size as usize),
            (at != 0).then_some(at),
            self.info_level(),
        )?;
        Ok(offset as u64)
    }

    /// `__tgt_target_kernel_replay`: runs the kernel of host region `host_ptr` on device
    /// `device_id` with the recorded device memory in the region's first allocation and the
    /// recorded words (`args`, offsets added) as they are.
    #[allow(clippy::too_many_arguments)]
    pub fn replay_kernel(
        &self,
        device_id: i64,
        host_ptr: usize,
        memory: &[u8],
        args: &[usize],
        num_teams: u32,
        thread_limit: u32,
        tripcount: u64,
    ) -> Result<()> {
        let dev = self.device(device_id)?;
        let Some(crate::device::Kernel {
            id: kernel, name, ..
        }) = dev.kernel(host_ptr)
        else {
            report(format_args!(
                "Host ptr {} does not have a matching target pointer.",
                crate::message::Addr(host_ptr)
            ));
            return Err(Error::NoKernel { host_ptr });
        };
        let backend = dev.backend()?;
        let ptr = dev.alloc(memory.len().max(1), AllocKind::Device, None)?;
        if !memory.is_empty() {
            backend
                .copy(
                    CopyKind::HostToDevice,
                    ptr,
                    memory.as_ptr() as usize,
                    memory.len(),
                    None,
                )
                .on(dev.id, "copying the recorded device memory")?;
        }
        let config = LaunchConfig {
            version: 0,
            num_teams: [num_teams, 0, 0],
            thread_limit: [thread_limit, 0, 0],
            tripcount,
            info: self.info_level(),
            ..LaunchConfig::default()
        };
        let queue = dev.acquire_queue()?;
        let r = backend
            .launch(kernel, args, &config, queue)
            .and_then(|_| backend.synchronize(queue))
            .on(dev.id, "replaying a kernel");
        dev.release_queue(queue);
        if r.is_err() {
            report(format_args!("Executing target region abort target."));
        }
        r?;
        if dev.record_replay().is_some_and(|rr| rr.save_output) {
            dev.dump_region(&format!("{name}.replay.output"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_as_llvm_prints_it() {
        let d = KernelDescr {
            name: "__omp_offloading_fe00_1_main_l5".into(),
            args: vec![usize::MAX, 0x7000_0000_0010, 16],
            num_teams: 1,
            thread_limit: 1,
            tripcount: 16,
            memory_size: 144,
            device: 0,
            memory_start: 0x7000_0000_0000,
        };
        assert_eq!(
            d.to_json(),
            "{\"ArgOffsets\":[0,0,0],\"ArgPtrs\":[-1,123145302310928,16],\"BumpAllocVAStart\":123145302310912,\"DeviceId\":0,\"DeviceMemorySize\":144,\"LoopTripCount\":16,\"Name\":\"__omp_offloading_fe00_1_main_l5\",\"NumArgs\":3,\"NumTeamsClause\":1,\"ThreadLimitClause\":1}"
        );
        assert_eq!(json_string("a\"b\\\n"), "\"a\\\"b\\\\\\u000a\"");
    }

    #[test]
    fn globals_as_llvm_writes_them() {
        let g = vec![
            ("x".to_owned(), vec![1, 2, 3, 4]),
            ("empty".to_owned(), vec![]),
            ("yy".to_owned(), vec![9]),
        ];
        assert_eq!(
            globals_file(&g),
            vec![
                b'x', 0, 4, 0, 0, 0, 1, 2, 3, 4, b'y', b'y', 0, 1, 0, 0, 0, 9
            ]
        );
    }
}
