//! `target update` (`__tgt_target_data_update_mapper`): the motion clauses `to` and `from` of
//! OpenMP 5.2 §5.9 as LLVM 19 implements them (LLVM's `targetDataUpdate`), contiguous and
//! strided.

use super::data::{not_present, reattach};
use super::map_type as mt;
use super::mapper::with_components;
use super::{AsyncInfo, Constructs, MapArgs};
use crate::device::Device;
use crate::error::Result;
use crate::trace;
use omptarget_plugin::CopyKind;

impl Constructs<'_> {
    /// `__tgt_target_data_update_mapper`.
    pub fn data_update(&self, dev: &Device, args: &MapArgs<'_>, ai: &mut AsyncInfo) -> Result<()> {
        args.check_items(dev.id)?;
        super::held::before_reading(ai.cell(), |f| super::data::copied_in(args, f));
        for i in 0..args.len() {
            let ty = args.ty(i);
            if args.mapper(i) != 0 {
                with_components(args, i, |sub| self.data_update(dev, sub, ai))?;
                continue;
            }
            if ty & (mt::LITERAL | mt::PRIVATE) != 0 {
                continue;
            }
            if ty & mt::NON_CONTIG != 0 {
                // SAFETY: for NON_CONTIG clang passes, as the item's pointer, an array of
                // `sizes[i]` {offset, count, stride} descriptors that lives for the call.
                let dims = unsafe {
                    std::slice::from_raw_parts(
                        args.begins[i] as *const [u64; 3],
                        args.sizes[i].max(0) as usize,
                    )
                };
                self.update_strided(dev, args.bases[i], dims, ty, ai)?;
                continue;
            }
            self.update_run(dev, args.begins[i], args.size(i), ty, ai)?;
        }
        Ok(())
    }

    /// A non-contiguous `target update` (OpenMP 5.2 §5.9, array sections with strides): every
    /// element the sections name moves, and nothing else. `dims` are clang's descriptors,
    /// outermost first: element `k` of dimension `d` lies `(offset_d + k) * stride_d` bytes
    /// past `base`; the last dimension describes one contiguous run (`count * stride` bytes).
    fn update_strided(
        &self,
        dev: &Device,
        base: usize,
        dims: &[[u64; 3]],
        ty: u64,
        ai: &mut AsyncInfo,
    ) -> Result<()> {
        let Some((last, outer)) = dims.split_last() else {
            return Ok(());
        };
        let run = (last[1] * last[2]) as usize;
        let run_offset = (last[0] * last[2]) as usize;
        if run == 0 || outer.iter().any(|d| d[1] == 0) {
            return Ok(());
        }
        // Walk every combination of the outer indices, like an odometer.
        let mut index = vec![0u64; outer.len()];
        loop {
            let offset: u64 = outer
                .iter()
                .zip(&index)
                .map(|(d, k)| (d[0] + k) * d[2])
                .sum();
            let host = base + offset as usize + run_offset;
            self.update_run(dev, host, run, ty, ai)?;
            let mut d = outer.len();
            loop {
                if d == 0 {
                    return Ok(());
                }
                d -= 1;
                index[d] += 1;
                if index[d] < outer[d][1] {
                    break;
                }
                index[d] = 0;
            }
        }
    }

    /// `target update` of one contiguous range (a whole item, or one run of a strided item):
    /// nothing happens unless the range lies inside a mapping (a `present` motion modifier
    /// makes that an error); pointers attached inside it keep their device values on the
    /// device and their host values on the host.
    fn update_run(
        &self,
        dev: &Device,
        host: usize,
        size: usize,
        ty: u64,
        ai: &mut AsyncInfo,
    ) -> Result<()> {
        let info = self.info_level();
        let mut table = dev.table.lock();
        let Some(id) = table.containing(host, size) else {
            if ty & mt::PRESENT != 0 {
                return Err(not_present("motion", host, size));
            }
            return Ok(());
        };
        let e = table.get(id).expect("live entry");
        trace::mapping_looked_up(info, dev.id, e, host, size);
        ai.order_after(e.pending)?;
        let tgt = e.tgt_ptr(host);
        // LLVM names a copy after the mapping it goes to.
        let name = e.name;
        if size == 0 {
            // Nothing moves, but LLVM 19 issues (and traces) the empty copies.
            if ty & mt::TO != 0 {
                trace::transfer(info, dev.id, true, host, tgt, 0, name);
            }
            if ty & mt::FROM != 0 {
                trace::transfer(info, dev.id, false, host, tgt, 0, name);
            }
            return Ok(());
        }
        let shadows = e.shadows.copied_within(host, size);
        if ty & mt::TO != 0 {
            trace::transfer(info, dev.id, true, host, tgt, size, name);
            ai.copy(dev, CopyKind::HostToDevice, tgt, host, size)?;
            reattach(dev, &table, &shadows, ai)?;
        }
        let e = table.get_mut(id).expect("live entry");
        ai.mark_used(e, id, ty & mt::TO != 0)?;
        if ty & mt::FROM != 0 {
            trace::transfer(info, dev.id, false, host, tgt, size, name);
            // Marked used above: the copy may go after the lock (`guard_for_copy_back`).
            let held = ai.guard_for_copy_back(table);
            ai.copy(dev, CopyKind::DeviceToHost, host, tgt, size)?;
            drop(held);
            ai.restores
                .extend(shadows.iter().map(|s| (s.host_addr, s.host_value)));
        }
        Ok(())
    }
}
