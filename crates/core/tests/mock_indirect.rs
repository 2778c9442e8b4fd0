//! `declare target indirect` on the mock backend: what loading an image maps, what a target
//! region's kernel receives for a host function pointer, and the table the backend gets.

use omptarget_core::image::OffloadEntry;
use omptarget_core::ops::map_type as mt;
use omptarget_core::plugin::LaunchConfig;
use omptarget_core::trace::SourceLoc;
use omptarget_core::{Config, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockPlugin, Op};
use std::sync::{Arc, Mutex};

mod common;
use common::{entry, flagged_entry, with_args};

fn leak<T>(v: T) -> &'static T {
    Box::leak(Box::new(v))
}

const INDIRECT: u32 = 0x08;

#[test]
fn indirect_functions_map_to_their_device_functions() {
    let plugin = MockPlugin::new(1, false, false);
    let state = plugin.state.clone();
    // The device globals clang emits for two indirect functions hold the device functions'
    // addresses.
    let (dev_lo, dev_hi) = (0xd0d0_0001usize, 0xd0d0_0002usize);
    state.set_global("__omp_offloading_f_lo", &dev_lo.to_ne_bytes());
    state.set_global("__omp_offloading_f_hi", &dev_hi.to_ne_bytes());
    let seen: Arc<Mutex<Vec<usize>>> = Arc::default();
    let seen_by_kernel = seen.clone();
    state.add_kernel("call", move |_, args| {
        seen_by_kernel.lock().unwrap().extend_from_slice(args)
    });
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    // Stand-ins for the host functions (distinct host addresses) and for a host function
    // that is not indirect.
    let functions = leak([0u8; 96]);
    let (host_lo, host_hi, plain) = (
        &functions[0] as *const u8 as usize,
        &functions[32] as *const u8 as usize,
        &functions[64] as *const u8 as usize,
    );
    let region = leak(0u8) as *const u8 as usize;
    // The higher host address comes first, so the table must be sorted.
    let entries = vec![
        entry(c"call", region, 0),
        flagged_entry(c"__omp_offloading_f_hi", host_hi, 8, INDIRECT),
        flagged_entry(c"__omp_offloading_f_lo", host_lo, 8, INDIRECT),
    ];
    let key = leak(1u64) as *const u64 as usize;
    let image: &'static [u8] = MAGIC;
    rt.register(key, &[image], entries);

    // A region gets three function pointers as clang passes them: zero-length maps.
    let dev = rt.device(0).unwrap();
    let items: Vec<_> = [host_hi, host_lo, plain]
        .iter()
        .map(|&f| (f, 0, mt::TARGET_PARAM))
        .collect();
    with_args(&items, |args| {
        let mut ai = rt.async_info(&dev);
        let config = LaunchConfig {
            version: 3,
            ..Default::default()
        };
        let r = rt.target(&dev, region, args, &config, &SourceLoc::default(), &mut ai);
        ai.synchronize().and(r).unwrap();
    });
    assert_eq!(
        *seen.lock().unwrap(),
        vec![dev_hi, dev_lo, plain],
        "indirect functions reach the kernel as device functions; others keep their value"
    );

    let tables: Vec<Vec<(u64, u64)>> = state
        .log()
        .into_iter()
        .filter_map(|op| match op {
            Op::IndirectCalls { table, .. } => Some(table),
            _ => None,
        })
        .collect();
    assert_eq!(
        tables,
        vec![vec![
            (host_lo as u64, dev_lo as u64),
            (host_hi as u64, dev_hi as u64)
        ]],
        "one table per loaded image, sorted by host address"
    );

    assert_eq!(rt.mapped_ptr(&dev, host_lo), Some(dev_lo));
    // Unloading the image removes the mappings with it.
    rt.unregister(key);
    assert_eq!(rt.mapped_ptr(&dev, host_lo), None);
}

#[test]
fn llvm22_vtables_translate_slot_by_slot_and_map_to_themselves() {
    const INDIRECT_VTABLE: u32 = 0x20;
    let plugin = MockPlugin::new(1, false, false);
    let state = plugin.state.clone();
    // clang 22's vtable entry: the host vtable (40 bytes), and a device global holding the
    // device vtable's address.
    let dev_vtable = 0xd0d0_1000usize;
    state.set_global(
        "__omp_offloading_x__ZTV1D_l4addr",
        &dev_vtable.to_ne_bytes(),
    );
    state.add_kernel("k", |_, _| {});
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    let host_vtable = leak([0usize; 5]).as_ptr() as usize;
    let region = leak(0u8) as *const u8 as usize;
    let entries = vec![
        entry(c"k", region, 0),
        flagged_entry(
            c"__omp_offloading_x__ZTV1D_l4addr",
            host_vtable,
            40,
            INDIRECT_VTABLE,
        ),
    ];
    let key = leak(2u64) as *const u64 as usize;
    let image: &'static [u8] = MAGIC;
    rt.register(key, &[image], entries);
    let dev = rt.device(0).unwrap();
    let tables: Vec<Vec<(u64, u64)>> = state
        .log()
        .into_iter()
        .filter_map(|op| match op {
            Op::IndirectCalls { table, .. } => Some(table),
            _ => None,
        })
        .collect();
    let slots: Vec<(u64, u64)> = (0..5u64)
        .map(|i| (host_vtable as u64 + 8 * i, dev_vtable as u64 + 8 * i))
        .collect();
    assert_eq!(tables, vec![slots], "every slot of the vtable translates");
    assert_eq!(
        rt.mapped_ptr(&dev, host_vtable + 16),
        Some(host_vtable + 16),
        "as in LLVM 22, the host vtable maps to itself"
    );
}

#[test]
fn a_vtable_entry_of_impossible_size_is_refused_without_building_its_table() {
    // Found by the entry_table fuzzer: a vtable entry of size ~2^64 made the runtime push one
    // table pair per slot until the host ran out of memory.
    const INDIRECT_VTABLE: u32 = 0x20;
    for size in [usize::MAX & !7, 12, (1 << 20) * 8 + 8] {
        let plugin = MockPlugin::new(1, false, false);
        let state = plugin.state.clone();
        state.set_global("vt", &0xd0d0_1000usize.to_ne_bytes());
        let rt = Runtime::new(
            Config::default(),
            vec![Arc::new(plugin)],
            Box::new(NoHostRuntime),
        );
        let host_vtable = leak([0usize; 5]).as_ptr() as usize;
        let entries = vec![OffloadEntry {
            addr: host_vtable,
            name: c"vt",
            size,
            flags: INDIRECT_VTABLE,
            data: 0,
        }];
        let key = leak(3u64) as *const u64 as usize;
        rt.register(key, &[MAGIC], entries);
        let Err(err) = rt.device(0) else {
            panic!("size {size}: the image must not load");
        };
        assert!(
            err.to_string().contains("indirect vtable entry 'vt'"),
            "size {size}: {err}"
        );
        assert!(
            !state
                .log()
                .iter()
                .any(|op| matches!(op, Op::IndirectCalls { .. })),
            "no table is published for a refused image"
        );
        rt.unregister(key);
        assert_eq!(state.memory.live(), 0);
    }
}
