//! The runtime's record/replay routines (`__tgt_activate_record_replay`,
//! `__tgt_target_kernel_replay`): finding the device; the work is `crate::record`'s.

use super::Runtime;
use crate::device::Mode;
use crate::error::{DeviceContext, Error, Result};
use crate::message::report;
use omptarget_plugin::{AllocKind, CopyKind, LaunchConfig};

impl Runtime {
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
