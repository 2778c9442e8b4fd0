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

use crate::config::Config;
use crate::device::{Device, Mode, RecordReplay};
use crate::error::{DeviceContext, Error, Result};
use crate::message::{json_string, plugin_error, report};
use omptarget_plugin::{CopyKind, KernelId, LaunchConfig, QueueId};
use std::path::PathBuf;

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
    pub(crate) fn dump_region(&self, name: &str) -> Result<(usize, usize)> {
        let (start, bytes) = self.region_bytes()?;
        write_file(name, &bytes);
        Ok((start, bytes.len()))
    }
}

/// Record and replay at work on one device.
impl Device {
    /// `LIBOMPTARGET_RECORD`: a device just initialised starts recording. A device that
    /// cannot says so in LLVM 19's words (its host plugin cannot, ours can).
    pub(crate) fn start_recording(&self, config: &Config, info: u32) {
        let size = config.record_memory_gib.map(|g| (g as usize) << 30);
        if let Err(e) =
            self.begin_record_replay(Mode::Record, config.record_save_output, size, None, info)
        {
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
        host_ptr: usize,
        kernel: KernelId,
        name: &str,
        words: &[usize],
        config: &LaunchConfig,
        rr: &RecordReplay,
        queue: QueueId,
    ) -> Result<()> {
        let backend = self.backend()?;
        let sync = |what| backend.synchronize(queue).on(self.id, what);
        let mut all = Vec::with_capacity(words.len() + 1);
        if config.version >= 3 {
            all.push(
                backend
                    .launch_environment(kernel, config, queue)
                    .on(self.id, "preparing a kernel's launch environment")?,
            );
        }
        all.extend_from_slice(words);
        sync("waiting for a recorded kernel's data")?;
        let (blocks, threads, _) = backend.describe_launch(kernel, config);
        if let Some(image) = self.kernel_image(host_ptr) {
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
        let (start, size) = self.dump_region(&format!("{name}.memory"))?;
        let descr = KernelDescr {
            name: name.to_owned(),
            args: all.clone(),
            num_teams: u64::from(blocks),
            thread_limit: threads,
            tripcount: config.tripcount,
            memory_size: size as u64,
            device: self.id,
            memory_start: start,
        };
        write_file(&format!("{name}.json"), descr.to_json().as_bytes());
        let verbatim = LaunchConfig {
            version: 0,
            ..*config
        };
        backend
            .launch(kernel, &all, &verbatim, queue)
            .on(self.id, "launching a kernel")?;
        sync("waiting for a recorded kernel")?;
        if rr.save_output {
            self.dump_region(&format!("{name}.original.output"))?;
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
