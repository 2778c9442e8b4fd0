//! Regression tests for what the fuzz targets (`fuzz/`) found, outside the fuzzer.

use omptarget_core::image::OffloadEntry;
use omptarget_core::ops::map_type as mt;
use omptarget_core::plugin::LaunchConfig;
use omptarget_core::trace::SourceLoc;
use omptarget_core::{Config, MapArgs, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockPlugin};
use std::sync::{Arc, Mutex};

fn runtime(devices: usize) -> (Runtime, Arc<omptarget_plugin_mock::MockState>) {
    let plugin = MockPlugin::new(devices, false, false);
    let state = plugin.state.clone();
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    (rt, state)
}

fn global(addr: usize, size: usize) -> OffloadEntry {
    OffloadEntry {
        addr,
        name: c"g",
        size,
        flags: 0,
        data: 0,
    }
}

/// entry_table: a global whose address plus size wraps around the address space made the
/// load panic (an overflow computing its end); one that overlaps another global made two
/// overlapping mappings. Both are now reported and left unmapped.
#[test]
fn corrupt_global_entries_are_not_mapped() {
    let (rt, state) = runtime(1);
    let entries = vec![
        global(0x1000, 16),
        global(0x1008, 16),        // overlaps the first
        global(usize::MAX - 3, 8), // wraps
        global(0x2000, 8),
    ];
    rt.register(1, &[MAGIC], entries);
    let dev = rt.device(0).expect("the image still loads");
    dev.check_table().expect("no overlapping entries");
    let mapped: Vec<usize> = dev.mappings().iter().map(|e| e.host_begin).collect();
    assert_eq!(mapped, vec![0x1000, 0x2000]);
    rt.unregister(1);
    assert_eq!(state.memory.live(), 0);
}

/// entry_table: two empty indirect entries (flags INDIRECT | LINK, size 0: not kernels) at
/// one address, or a global at the address of one, were inserted under the same key of the mapping table (a debug assertion;
/// in a release build the first mapping was lost). The first entry wins; a global that starts
/// at an indirect function's address is reported and left unmapped.
#[test]
fn entries_at_an_indirect_functions_address_are_not_mapped_twice() {
    use omptarget_core::image::entry_flags;
    let (rt, state) = runtime(1);
    let indirect = |addr| OffloadEntry {
        flags: entry_flags::INDIRECT | entry_flags::LINK,
        ..global(addr, 0)
    };
    let entries = vec![indirect(0x1000), indirect(0x1000), global(0x1000, 8)];
    rt.register(1, &[MAGIC], entries);
    let dev = rt.device(0).expect("the image still loads");
    dev.check_table().expect("no entries under one key");
    let mapped: Vec<(usize, usize)> = dev
        .mappings()
        .iter()
        .map(|e| (e.host_begin, e.host_end))
        .collect();
    assert_eq!(mapped, vec![(0x1000, 0x1000)]);
    rt.unregister(1);
    assert_eq!(state.memory.live(), 0);
}

/// map_args: a RETURN_PARAM item in a target region had its base replaced by the device
/// address in the entry half, and the launch then read that device address as a host
/// pointer (PTR_AND_OBJ: SIGSEGV) or offset the kernel argument by it. The kernel now gets
/// the translated base.
#[test]
fn a_return_param_item_of_a_region_passes_its_device_base() {
    let (rt, state) = runtime(1);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    state.add_kernel("k", move |_, args| {
        seen2.lock().unwrap().extend_from_slice(args)
    });
    let region = Box::leak(Box::new(0u8)) as *const u8 as usize;
    rt.register(
        1,
        &[MAGIC],
        vec![OffloadEntry {
            addr: region,
            name: c"k",
            size: 0,
            flags: 0,
            data: 0,
        }],
    );
    let dev = rt.device(0).unwrap();
    let data = Box::new([0u64; 4]);
    let ptr = Box::new(data.as_ptr() as usize + 8); // points at data[1]
    let p = &*ptr as *const usize as usize;
    for extra in [0, mt::PTR_AND_OBJ] {
        seen.lock().unwrap().clear();
        state.clear_log();
        let ty = mt::TO | mt::FROM | mt::TARGET_PARAM | mt::RETURN_PARAM | extra;
        let (base, begin) = if extra != 0 {
            (p, *ptr)
        } else {
            (data.as_ptr() as usize, *ptr)
        };
        let mut bases = vec![base];
        let begins = vec![begin];
        let sizes = vec![8i64];
        let types = vec![ty as i64];
        let mut args = MapArgs {
            bases: &mut bases,
            begins: &begins,
            sizes: &sizes,
            types: &types,
            names: None,
            mappers: None,
        };
        let mut ai = rt.async_info(&dev);
        let config = LaunchConfig {
            version: 3,
            ..Default::default()
        };
        rt.target(
            &dev,
            region,
            &mut args,
            &config,
            &SourceLoc::default(),
            &mut ai,
        )
        .unwrap();
        ai.synchronize().unwrap();
        let words = seen.lock().unwrap().clone();
        // The device base: the device address of `begin` minus (begin - host base), where
        // the host base of a PTR_AND_OBJ item is the pointer's value.
        let host_base = if extra != 0 {
            *ptr
        } else {
            data.as_ptr() as usize
        };
        // The pointee's block is the last one allocated.
        let alloc = state
            .log()
            .iter()
            .rev()
            .find_map(|o| match o {
                omptarget_plugin_mock::Op::Alloc { ptr, .. } => Some(*ptr),
                _ => None,
            })
            .unwrap();
        assert_eq!(words, vec![alloc.wrapping_sub(begin - host_base)]);
        state.clear_log();
    }
    rt.unregister(1);
    assert_eq!(state.memory.live(), 0);
}
