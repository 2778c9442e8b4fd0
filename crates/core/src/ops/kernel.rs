//! A target region: map the arguments, launch the kernel, unmap (LLVM's `target`).

use super::map_type as mt;
use super::trace::{self, Region, SourceLoc};
use super::{AsyncInfo, MapArgs};
use crate::device::{Device, lock};
use crate::error::{Error, Result};
use crate::message::{Addr, report};
use crate::runtime::Runtime;
use omptarget_plugin::{AllocKind, CopyKind, LaunchConfig};

impl Runtime {
    /// Runs the region whose host id is `host_ptr` on `dev`. The caller synchronises `ai`.
    pub fn target(
        &self,
        dev: &Device,
        host_ptr: usize,
        args: &mut MapArgs<'_>,
        config: &LaunchConfig,
        loc: &SourceLoc,
        ai: &mut AsyncInfo,
    ) -> Result<()> {
        let info = self.info_level();
        if self.config.debug > 0 {
            eprintln!(
                "omptarget-rs debug: device {} kernel {host_ptr:#x} launch {config:?}",
                dev.id
            );
        }
        let Some((kernel, name)) = dev.kernel(host_ptr) else {
            report(format_args!(
                "Host ptr {} does not have a matching target pointer.",
                Addr(host_ptr)
            ));
            return Err(Error::NoKernel { host_ptr });
        };
        trace::arguments(
            info,
            dev.id,
            Region::Kernel,
            loc,
            args.sizes,
            args.types,
            args.names,
        );
        let mut taken = super::data::Taken::default();
        if let Err(e) = self.data_begin_items(dev, args, ai, &mut taken) {
            self.give_back(dev, &taken, ai);
            report(format_args!(
                "Call to targetDataBegin failed, abort target."
            ));
            report(format_args!(
                "Failed to process data before launching the kernel."
            ));
            return Err(e);
        }
        let mut privates: omptarget_plugin::words::Words<usize> = Default::default();
        let launched = self.launch_mapped(dev, args, kernel, name, config, ai, &mut privates);
        // Private copies are needed by the kernel only: free them behind it (also when the
        // launch failed, as the references the region took are given back).
        let mut freed = Ok(());
        for &p in privates.as_slice() {
            let r = ai.free_after_use(p);
            if freed.is_ok() {
                freed = r;
            }
        }
        if let Err(e) = launched.and(freed) {
            self.give_back(dev, &taken, ai);
            return Err(e);
        }
        if let Err(e) = self.data_end(dev, args, ai) {
            report(format_args!("Call to targetDataEnd failed, abort target."));
            report(format_args!(
                "Failed to process data after launching the kernel."
            ));
            return Err(e);
        }
        Ok(())
    }

    /// The launch half of a region whose data is mapped: kernel arguments (private copies go
    /// into `privates`, which the caller frees whatever happens), then the launch.
    #[allow(clippy::too_many_arguments)]
    fn launch_mapped(
        &self,
        dev: &Device,
        args: &MapArgs<'_>,
        kernel: omptarget_plugin::KernelId,
        name: &str,
        config: &LaunchConfig,
        ai: &mut AsyncInfo,
        privates: &mut omptarget_plugin::words::Words<usize>,
    ) -> Result<()> {
        let info = self.info_level();
        let mut words: omptarget_plugin::words::Words<usize> = Default::default();
        // (argument index, word index) of each kernel parameter, for lambda captures.
        let mut positions: omptarget_plugin::words::Words<(usize, usize)> = Default::default();
        for i in 0..args.len() {
            let ty = args.ty(i);
            if ty & mt::TARGET_PARAM == 0 {
                if ty & mt::LITERAL != 0 && ty & mt::PTR_AND_OBJ != 0 {
                    self.attach_lambda_capture(
                        dev,
                        args,
                        i,
                        positions.as_slice(),
                        words.as_slice(),
                        ai,
                    )?;
                }
                continue;
            }
            positions.push((i, words.as_slice().len()));
            let (base, begin, size) = (args.bases[i], args.begins[i], args.size(i));
            if ty & mt::LITERAL != 0 {
                words.push(base);
            } else if ty & mt::PRIVATE != 0 {
                // (first-)private data: a device copy that lives until the region ends.
                let offset = base.wrapping_sub(begin);
                let queue = ai.queue()?;
                let ptr = dev.alloc(size.max(1), AllocKind::Device, Some(queue))?;
                privates.push(ptr);
                if ty & mt::TO != 0 && size != 0 {
                    dev.copy(CopyKind::HostToDevice, ptr, begin, size, Some(queue))?;
                }
                words.push(ptr.wrapping_add(offset));
            } else {
                let mut base = base;
                if ty & mt::PTR_AND_OBJ != 0 {
                    // SAFETY: for PTR_AND_OBJ the base is the address of a host pointer.
                    base = unsafe { std::ptr::read_unaligned(base as *const usize) };
                }
                let table = lock(&dev.table);
                let l = table.lookup(begin, size);
                let tgt = match l.entry.filter(|_| l.contained || l.is_extension()) {
                    Some(id) => {
                        let e = table.get(id).expect("live entry");
                        trace::mapping_looked_up(info, dev.id, e, begin, size);
                        e.tgt_ptr(begin)
                    }
                    // Nothing mapped (a zero-length section): the pointer keeps its host
                    // value (OpenMP 5.2 §5.8.6), as LLVM 19 does.
                    None => begin,
                };
                words.push(tgt.wrapping_add(base.wrapping_sub(begin)));
            }
        }
        let queue = ai.queue()?;
        let backend = dev.backend()?;
        let traced;
        let config = if info != 0 {
            traced = LaunchConfig { info, ..*config };
            &traced
        } else {
            config
        };
        let launched = backend.launch(kernel, words.as_slice(), config, queue);
        // Printed once the backend prepared the launch (its own lines, like the launch
        // environment's copy, come first, as in LLVM).
        if info & crate::config::info::KERNEL_GEOMETRY != 0 {
            let (blocks, threads, mode) = backend.describe_launch(kernel, config);
            trace::launch(info, dev.id, name, blocks, threads, mode);
        }
        if let Err(source) = launched {
            report(format_args!("Executing target region abort target."));
            return Err(Error::Device {
                device: dev.id,
                what: "launching a kernel",
                source,
            });
        }
        Ok(())
    }

    /// A by-reference capture of a C++ lambda (LITERAL | PTR_AND_OBJ, MEMBER_OF the lambda):
    /// the pointer field inside the device copy of the lambda must point at the device copy of
    /// the captured variable (OpenMP 5.2 §5.8.3, lambdas).
    fn attach_lambda_capture(
        &self,
        dev: &Device,
        args: &MapArgs<'_>,
        i: usize,
        positions: &[(usize, usize)],
        words: &[usize],
        ai: &mut AsyncInfo,
    ) -> Result<()> {
        let Some(parent) = mt::member_of(args.ty(i)) else {
            return Ok(());
        };
        let Some(&(_, word)) = positions.iter().find(|(a, _)| *a == parent) else {
            return Ok(());
        };
        // The field's offset in the host lambda, applied to the device lambda.
        let field = words[word].wrapping_add(args.bases[i].wrapping_sub(args.begins[parent]));
        let captured = args.begins[i];
        let value = {
            let table = lock(&dev.table);
            let l = table.lookup(captured, args.size(i));
            match l
                .entry
                .filter(|_| l.contained || l.is_extension())
                .and_then(|id| table.get(id))
            {
                Some(e) => e.tgt_ptr(captured),
                // Not mapped: the capture keeps its host address.
                None => return Ok(()),
            }
        };
        ai.write_word(dev, field, value)
    }
}
