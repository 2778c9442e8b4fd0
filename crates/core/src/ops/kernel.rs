//! A target region: map the arguments, launch the kernel, unmap (LLVM's `target`).

use super::map_type as mt;
use super::{AsyncInfo, Constructs, MapArgs};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::message::{Addr, report};
use crate::trace::{self, Region, SourceLoc};
use omptarget_plugin::{CopyKind, LaunchConfig};

const WORD: usize = std::mem::size_of::<usize>();

/// What a region's entry took, given back if a foreign unwind leaves its launch: glibc's
/// forced unwind of a thread cancelled inside a region on the host device (the kernel runs
/// on the calling thread), or a C++ exception thrown out of one. The references go back, so
/// that the region's data does not stay mapped for ever (a later thread's stack at the same
/// address would find a stale mapping and skip its copy in), and the private copies are
/// freed; nothing is copied back, since the region did not complete. No lock is held across a
/// launch, so none is left held.
struct UnwindGuard<'g, 'c> {
    ops: &'g Constructs<'c>,
    dev: &'g Device,
    taken: &'g super::data::Taken,
    ai: *mut AsyncInfo,
    /// The launch's private copies, written by the launch through the same pointer (the
    /// words stay in the caller's frame: moving them out cost ~120 instructions a region).
    privates: *const omptarget_plugin::words::Words<usize>,
    armed: bool,
}

impl Drop for UnwindGuard<'_, '_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        // SAFETY: the AsyncInfo outlives the launch's frame (its owner is further up the
        // stack), and the reborrow the launch held ended with the unwind out of it.
        let ai = unsafe { &mut *self.ai };
        // SAFETY: as for `ai`: the words live in the launch's caller, whose reborrow ended.
        let privates = unsafe { &*self.privates };
        for &p in privates.as_slice() {
            let _ = ai.free_after_use(p);
        }
        self.ops.give_back(self.dev, self.taken, ai);
    }
}

impl Constructs<'_> {
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
        let Some(found) = dev.kernel(host_ptr) else {
            report(format_args!(
                "Host ptr {} does not have a matching target pointer.",
                Addr(host_ptr)
            ));
            return Err(Error::NoKernel { host_ptr });
        };
        if config.version < found.min_args_version && !args.is_empty() {
            // The kernel's first parameter is the launch environment: an older KernelArgs
            // layout passes no such word, and each argument would land in the parameter before
            // its own (LLVM 19 launches it so, and the kernel writes through the wrong pointer).
            report(format_args!(
                "a kernel launched with KernelArgs version {} takes the launch environment as its first parameter (version {} or later, as clang 18 and later emit): its {} arguments would each reach the wrong parameter; not launched ({})",
                config.version,
                found.min_args_version,
                args.len(),
                found.name
            ));
            return Err(Error::InvalidArgument(format!(
                "KernelArgs version {} for a kernel that needs version {}",
                config.version, found.min_args_version
            )));
        }
        // A launch through clang ≤ 16's entry points (version 1 or 2, without arguments, so
        // it passed the check above) of a kernel that takes the launch environment: every
        // backend passes it, as for the version the kernel was compiled for (without it the
        // kernel reads a parameter that is not there; LLVM 19's CUDA plugin fails the launch).
        // Version 0 launches (kernel languages) keep their parameters as they are.
        let upgraded;
        let config = if config.version > 0 && config.version < found.min_args_version {
            upgraded = LaunchConfig {
                version: found.min_args_version,
                ..*config
            };
            &upgraded
        } else {
            config
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
        // The launch needs the queue anyway: taken now, before the entry half locks the
        // mapping table, so that the queue pool's lock (or a new stream) is not waited for with
        // the table held. A failure is left to the first use, which reports it as before.
        let _ = ai.queue();
        let mut taken = super::data::Taken::default();
        let mut tgts = super::data::ItemTargets::default();
        if let Err(e) = self.enter_construct(dev, args, ai, &mut taken, Some(&mut tgts)) {
            self.give_back(dev, &taken, ai);
            report(format_args!(
                "Call to targetDataBegin failed, abort target."
            ));
            report(format_args!(
                "Failed to process data before launching the kernel."
            ));
            return Err(e);
        }
        // From here to the end of the launch only `ai_ptr` reaches the AsyncInfo, so that the
        // guard can use it if a foreign unwind leaves the launch.
        let ai_ptr: *mut AsyncInfo = ai;
        let mut privates: omptarget_plugin::words::Words<usize> = Default::default();
        let privates_ptr: *mut omptarget_plugin::words::Words<usize> = &mut privates;
        let mut guard = UnwindGuard {
            ops: self,
            dev,
            taken: &taken,
            ai: ai_ptr,
            privates: privates_ptr,
            armed: true,
        };
        let launched = self.launch_mapped(
            dev,
            host_ptr,
            args,
            tgts.as_slice(),
            found.id,
            found.name,
            config,
            // SAFETY: `ai_ptr` comes from the exclusive borrow `ai`, which is not used while
            // this reborrow lives.
            unsafe { &mut *ai_ptr },
            // SAFETY: likewise, `privates_ptr` comes from `privates`, unused while this lives.
            unsafe { &mut *privates_ptr },
        );
        guard.armed = false;
        drop(guard);
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
    /// into `privates`, which the caller frees whatever happens), then the launch. `tgts`:
    /// the device address each item was entered at (the entry half's lookups), 0 where the
    /// table must say.
    #[allow(clippy::too_many_arguments)]
    fn launch_mapped(
        &self,
        dev: &Device,
        host_ptr: usize,
        args: &MapArgs<'_>,
        tgts: &[usize],
        kernel: omptarget_plugin::KernelId,
        name: &'static str,
        config: &LaunchConfig,
        ai: &mut AsyncInfo,
        privates: &mut omptarget_plugin::words::Words<usize>,
    ) -> Result<()> {
        let info = self.info_level();
        let mut words: omptarget_plugin::words::Words<usize> = Default::default();
        let mut packed: omptarget_plugin::words::Words<PackedPrivate> = Default::default();
        let mut packed_size = 0;
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
            } else if ty & mt::PRIVATE != 0 && ty & mt::ATTACH != 0 {
                // A firstprivate pointer (clang 22, `base` is its address): its private copy
                // starts as the device address of its pointee (attach.rs).
                let value = self.corresponding_pointer(dev, base, begin);
                let ptr = ai.alloc(dev, size.max(WORD), base)?;
                privates.push(ptr);
                // Traced as LLVM 22 traces its buffer of firstprivate values: no name.
                ai.write_word(dev, ptr, value, Some(None))?;
                words.push(ptr);
            } else if ty & mt::PRIVATE != 0 {
                // (first-)private data: a device copy that lives until the region ends. As in
                // LLVM's PrivateArgumentManager, small first-private data is packed with the
                // region's other such data into one block filled by one copy (after the loop);
                // private data, large data and a lambda (whose captures follow as MEMBER_OF)
                // get a block of their own at once.
                let offset = base.wrapping_sub(begin);
                let first = ty & mt::TO != 0;
                let followed_by_member = args
                    .types
                    .get(i + 1)
                    .is_some_and(|&t| t as u64 & mt::MEMBER_OF != 0);
                if size > FIRSTPRIVATE_PACK_LIMIT || !first || followed_by_member {
                    let ptr = ai.alloc(dev, size.max(1), begin)?;
                    privates.push(ptr);
                    if first && size != 0 {
                        dev.trace_transfer(info, true, begin, ptr, size);
                        ai.copy(dev, CopyKind::HostToDevice, ptr, begin, size)?;
                    }
                    words.push(ptr.wrapping_add(offset));
                } else {
                    let (alignment, padding) = pack_position(packed.as_slice().last(), begin);
                    packed.push(PackedPrivate {
                        word: words.as_slice().len(),
                        begin,
                        size,
                        offset,
                        alignment,
                        padding,
                    });
                    packed_size += padding + size;
                    words.push(0);
                }
            } else if ty & mt::RETURN_PARAM != 0 {
                // The entry half already replaced this item's base by its device address
                // (use_device_ptr semantics): the host pointer is no longer in the array.
                words.push(base);
            } else {
                let mut base = base;
                if ty & mt::PTR_AND_OBJ != 0 {
                    // SAFETY: for PTR_AND_OBJ the base is the address of a host pointer.
                    base = unsafe { std::ptr::read_unaligned(base as *const usize) };
                }
                // The entry half found or made the item's mapping, and the construct's
                // reference keeps it (and its device address) until the exit half: its
                // address stands. The table is asked where it gave none, or to trace.
                let entered = tgts.get(i).copied().filter(|&t| t != 0 && info == 0);
                let tgt = match entered {
                    Some(t) => t,
                    None => self.looked_up_target(dev, begin, size, info),
                };
                words.push(tgt.wrapping_add(base.wrapping_sub(begin)));
            }
        }
        if packed_size > 0 {
            let block =
                self.pack_firstprivates(dev, packed.as_slice(), packed_size, privates, ai)?;
            let mut at = block;
            for p in packed.as_slice() {
                at += p.padding;
                words.as_mut_slice()[p.word] = at.wrapping_add(p.offset);
                at += p.size;
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
        // A region without `teams` (clang passes -1) runs one team, as LLVM reports it.
        let requested_teams = match config.num_teams[0] {
            u32::MAX => 1,
            n => n,
        };
        let submit = ai.submit_begin(backend, queue, requested_teams, name);
        // A recording device writes the launch's files around it: one atomic load when not,
        // and the recording path stays out of line (inlined here it slowed every region).
        if let Some(rr) = dev.record_replay() {
            return self.launch_maybe_recorded(
                dev,
                host_ptr,
                kernel,
                name,
                words.as_slice(),
                config,
                rr,
                ai,
                submit,
            );
        }
        let launched = backend.launch(kernel, words.as_slice(), config, queue);
        ai.submit_end(backend, queue, submit, || {
            backend.describe_launch(kernel, config).0
        });
        // Printed once the backend prepared the launch (its own lines, like the launch
        // environment's copy, come first, as in LLVM).
        if info & crate::config::info::KERNEL_GEOMETRY != 0 {
            let (blocks, threads, mode) = backend.describe_launch(kernel, config);
            let abi = self.abi_at(host_ptr);
            trace::launch(info, dev.id, abi, name, blocks, threads, mode, config);
        }
        if let Err(source) = launched {
            // The backend's reason first, in LLVM's words ("Error in cuLaunchKernel for ...").
            crate::message::plugin_error(format_args!(
                "Failure to run target region {} in device {}: {source}",
                crate::message::Addr(host_ptr),
                dev.id
            ));
            report(format_args!("Executing target region abort target."));
            return Err(Error::Device {
                device: dev.id,
                what: "launching a kernel",
                source,
            });
        }
        Ok(())
    }

    /// The device address of a kernel argument's host range `[begin, begin + size)`, from the
    /// table (traced as LLVM traces the lookup); `begin` itself when nothing is mapped there
    /// (a zero-length section: the pointer keeps its host value, OpenMP 5.2 §5.8.6, as LLVM
    /// 19 does).
    fn looked_up_target(&self, dev: &Device, begin: usize, size: usize, info: u32) -> usize {
        let table = dev.table.lock();
        let l = table.lookup(begin, size);
        match l.entry.filter(|_| l.contained || l.is_extension()) {
            Some(id) => {
                let e = table.get(id).expect("live entry");
                trace::mapping_looked_up(info, dev.id, e, begin, size);
                e.tgt_ptr(begin)
            }
            None => begin,
        }
    }

    /// The launch of a device that records or replays (`record.rs`): a recording writes its
    /// files around the launch; a replaying device launches as usual.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn launch_maybe_recorded(
        &self,
        dev: &Device,
        host_ptr: usize,
        kernel: omptarget_plugin::KernelId,
        name: &'static str,
        words: &[usize],
        config: &LaunchConfig,
        rr: &crate::device::RecordReplay,
        ai: &mut AsyncInfo,
        submit: Option<crate::tools::SubmitScope>,
    ) -> Result<()> {
        let info = self.info_level();
        let backend = dev.backend()?;
        let queue = ai.queue()?;
        let r = if rr.mode == crate::device::Mode::Record {
            dev.launch_recorded(host_ptr, kernel, name, words, config, rr, queue)
        } else {
            backend
                .launch(kernel, words, config, queue)
                .map_err(|source| Error::Device {
                    device: dev.id,
                    what: "launching a kernel",
                    source,
                })
        };
        ai.submit_end(backend, queue, submit, || {
            backend.describe_launch(kernel, config).0
        });
        if info & crate::config::info::KERNEL_GEOMETRY != 0 {
            let (blocks, threads, mode) = backend.describe_launch(kernel, config);
            let abi = self.abi_at(host_ptr);
            trace::launch(info, dev.id, abi, name, blocks, threads, mode, config);
        }
        if r.is_err() {
            report(format_args!("Executing target region abort target."));
        }
        r
    }

    /// Copies the packed first-private data of a region into one device block (LLVM's
    /// `packAndTransfer`): the host image is built in a buffer that lives until the
    /// construct's synchronisation. Returns the block (also recorded in `privates`).
    fn pack_firstprivates(
        &self,
        dev: &Device,
        packed: &[PackedPrivate],
        size: usize,
        privates: &mut omptarget_plugin::words::Words<usize>,
        ai: &mut AsyncInfo,
    ) -> Result<usize> {
        let mut buffer = vec![0u8; size];
        let mut at = 0;
        for p in packed {
            at += p.padding;
            // SAFETY: clang passes the first-private list item's host range, readable for the
            // call; the buffer has room for it (its size is the sum of the sizes and paddings).
            let host = unsafe { std::slice::from_raw_parts(p.begin as *const u8, p.size) };
            buffer[at..at + p.size].copy_from_slice(host);
            at += p.size;
        }
        // As LLVM, tools see the buffer as the host side of the allocation and the copy.
        let src = buffer.as_ptr() as usize;
        let block = ai.alloc(dev, size, src)?;
        privates.push(block);
        dev.trace_transfer(self.info_level(), true, src, block, size);
        let copied = ai.copy(dev, CopyKind::HostToDevice, block, src, size);
        ai.keep_until_synchronized(buffer);
        copied.map(|()| block)
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
        let (value, name) = {
            let table = dev.table.lock();
            let l = table.lookup(captured, args.size(i));
            match l
                .entry
                .filter(|_| l.contained || l.is_extension())
                .and_then(|id| table.get(id))
            {
                Some(e) => {
                    trace::mapping_looked_up(self.info_level(), dev.id, e, captured, args.size(i));
                    (e.tgt_ptr(captured), e.name)
                }
                // Not mapped: the capture keeps its host address.
                None => return Ok(()),
            }
        };
        ai.write_word(dev, field, value, Some(name))
    }
}

/// First-private data of at most this many bytes is packed (LLVM's
/// `FirstPrivateArgSizeThreshold`).
const FIRSTPRIVATE_PACK_LIMIT: usize = 1024;
/// The largest alignment the packing gives an item (LLVM's `MaxAlignment`).
const PACK_MAX_ALIGNMENT: usize = 16;

/// One first-private list item packed into the region's shared block.
#[derive(Clone, Copy, Default)]
struct PackedPrivate {
    /// Its kernel argument word (filled once the block exists).
    word: usize,
    begin: usize,
    size: usize,
    /// Base minus begin: what the kernel receives is the block address plus this.
    offset: usize,
    alignment: usize,
    padding: usize,
}

/// Where LLVM's `PrivateArgumentManagerTy::addArg` puts the next packed item (its start
/// alignment and the padding before it), after `last`: the first item starts at the maximum
/// alignment; a later one starts at what is left of the previous item's alignment after its
/// size, raised (with padding) to the alignment of its host address, at most 16. The block's
/// size, which LLVM's one copy traces, follows from it.
fn pack_position(last: Option<&PackedPrivate>, begin: usize) -> (usize, usize) {
    let Some(last) = last else {
        return (PACK_MAX_ALIGNMENT, 0);
    };
    let mut start = last.alignment;
    let rest = last.size % start;
    if rest != 0 {
        start = rest;
    }
    let required = PACK_MAX_ALIGNMENT.min(1usize << begin.trailing_zeros().min(63));
    if required > start {
        (required, required - start)
    } else {
        (start, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(begin: usize, size: usize, last: Option<&PackedPrivate>) -> PackedPrivate {
        let (alignment, padding) = pack_position(last, begin);
        PackedPrivate {
            begin,
            size,
            alignment,
            padding,
            ..Default::default()
        }
    }

    /// The layouts LLVM 19 traces (`LIBOMPTARGET_INFO=32`, `tests/c/info_firstprivate.c`):
    /// int[3] then double[2] (16-aligned) pack into 12 + 4 + 16 = 32 bytes.
    #[test]
    fn packing_follows_llvm_private_argument_manager() {
        let a = item(0x7000_0010, 12, None);
        assert_eq!((a.alignment, a.padding), (16, 0));
        let b = item(0x7000_0040, 16, Some(&a));
        assert_eq!((b.alignment, b.padding), (16, 4));
        // A 4-aligned int after a 16-byte item needs nothing more.
        let c = item(0x7000_0104, 4, Some(&b));
        assert_eq!((c.alignment, c.padding), (16, 0));
        // An 8-aligned double after a 4-byte item: 4 bytes of padding.
        let d = item(0x7000_0208, 8, Some(&c));
        assert_eq!((d.alignment, d.padding), (8, 4));
    }
}
