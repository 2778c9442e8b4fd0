//! `#pragma omp requires unified_shared_memory` on the mock backend: the decision whether a
//! device can meet it, and what the requirement changes in mapping.

use omptarget_core::image::OffloadEntry;
use omptarget_core::ops::map_type as mt;
use omptarget_core::plugin::LaunchConfig;
use omptarget_core::requires::flags;
use omptarget_core::trace::SourceLoc;
use omptarget_core::{Config, Error, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockPlugin, MockState, Op};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

mod common;
use common::{construct, enter, entry, exit, leak};

struct Fixture {
    rt: Runtime,
    state: Arc<MockState>,
    region: usize,
    /// The host copy of a `declare target` variable's reference pointer (as clang emits it
    /// under unified shared memory: it holds the variable's host address).
    ref_ptr: usize,
    /// The variable's host address, which the reference pointer holds.
    variable: usize,
    /// The arguments the kernel `rec` received, launch by launch.
    seen: Arc<Mutex<Vec<Vec<usize>>>>,
}

/// A runtime over one mock device that can (or cannot) use host memory, with one binary
/// holding the kernel `rec`, a global and, when `usm`, clang's requires record.
fn fixture(unified_memory: bool, usm: bool) -> Fixture {
    let plugin = MockPlugin::new(1, false, false);
    let state = plugin.state.clone();
    state.unified_memory.store(unified_memory, Ordering::SeqCst);
    let seen: Arc<Mutex<Vec<Vec<usize>>>> = Arc::default();
    let seen_by_kernel = seen.clone();
    state.add_kernel("rec", move |_, args| {
        seen_by_kernel.lock().unwrap().push(args.to_vec())
    });
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    let region = leak(0u8) as *const u8 as usize;
    let variable = leak(0x1234u64) as *const u64 as usize;
    let ref_ptr = leak(variable) as *const usize as usize;
    let mut entries = vec![
        entry(c"rec", region, 0),
        entry(c"g_decl_tgt_ref_ptr", ref_ptr, 8),
    ];
    if usm {
        entries.push(OffloadEntry {
            addr: 0,
            name: c"",
            size: 0,
            flags: 0x10,
            data: flags::UNIFIED_SHARED_MEMORY,
        });
    }
    let key = leak(1u64) as *const u64 as usize;
    let image: &'static [u8] = MAGIC;
    rt.register(key, &[image], entries);
    Fixture {
        rt,
        state,
        region,
        ref_ptr,
        variable,
        seen,
    }
}

fn target(fx: &Fixture, items: &[(usize, i64, u64)]) -> Result<(), Error> {
    let config = LaunchConfig {
        version: 3,
        ..Default::default()
    };
    construct(&fx.rt, items, |rt, dev, args, ai| {
        rt.target(dev, fx.region, args, &config, &SourceLoc::default(), ai)
    })
}

fn allocs_and_copies(fx: &Fixture) -> usize {
    fx.state
        .log()
        .iter()
        .filter(|op| matches!(op, Op::Alloc { .. } | Op::Copy { .. }))
        .count()
}

#[test]
fn the_backend_decides_whether_unified_shared_memory_can_be_met() {
    // Without the requirement nothing is asked of the device.
    let fx = fixture(false, false);
    assert_eq!(fx.rt.unified_shared_memory_unmet(), None);
    // With it, a device that keeps its memory apart is named with the backend's reason
    // (registration makes that fatal).
    fx.rt
        .requirements()
        .try_add(flags::UNIFIED_SHARED_MEMORY)
        .unwrap();
    let (device, why) = fx.rt.unified_shared_memory_unmet().unwrap();
    assert_eq!(device, 0);
    assert!(why.contains("mock device 0"), "{why}");
    // A device that uses host memory meets it.
    fx.state.unified_memory.store(true, Ordering::SeqCst);
    assert_eq!(fx.rt.unified_shared_memory_unmet(), None);
}

#[test]
fn unified_shared_memory_maps_host_data_in_place_unless_close() {
    let fx = fixture(true, true);
    assert!(fx.rt.requirements().unified_shared_memory());
    let dev = fx.rt.device(0).unwrap();
    // Loading wrote the host reference pointer (the variable's host address) over the
    // device's.
    let device_ref = fx.rt.mapped_ptr(&dev, fx.ref_ptr).unwrap();
    let device_value = fx
        .state
        .memory
        .with_bytes(device_ref, 8, |b| {
            usize::from_ne_bytes(b.try_into().unwrap())
        })
        .unwrap();
    assert_eq!(device_value, fx.variable);

    let x = leak([0u32; 4]) as *const [u32; 4] as usize;
    fx.state.clear_log();
    // Enter data, a region and exit data: nothing allocated or copied, nothing mapped, and
    // the kernel gets the host address.
    enter(&fx.rt, &[(x, 16, mt::TO)]).unwrap();
    assert!(!fx.rt.is_present(&dev, x));
    target(&fx, &[(x, 16, mt::TO | mt::FROM | mt::TARGET_PARAM)]).unwrap();
    exit(&fx.rt, &[(x, 16, mt::FROM)]).unwrap();
    assert_eq!(allocs_and_copies(&fx), 0);
    assert_eq!(fx.seen.lock().unwrap().last().unwrap(), &vec![x]);
    // `present` finds nothing missing, at entry and at exit.
    enter(&fx.rt, &[(x, 16, mt::TO | mt::PRESENT)]).unwrap();
    exit(&fx.rt, &[(x, 16, mt::FROM | mt::PRESENT)]).unwrap();
    assert_eq!(allocs_and_copies(&fx), 0);

    // `close` asks for a device copy, mapped and copied by the ordinary rules; a later map
    // without `close` finds that mapping.
    enter(&fx.rt, &[(x, 16, mt::TO | mt::CLOSE)]).unwrap();
    assert!(fx.rt.is_present(&dev, x));
    let copy = fx.rt.mapped_ptr(&dev, x).unwrap();
    assert_ne!(copy, x);
    target(&fx, &[(x, 16, mt::TO | mt::FROM | mt::TARGET_PARAM)]).unwrap();
    assert_eq!(fx.seen.lock().unwrap().last().unwrap(), &vec![copy]);
    exit(&fx.rt, &[(x, 16, mt::FROM)]).unwrap();
    assert!(!fx.rt.is_present(&dev, x));
    assert!(allocs_and_copies(&fx) >= 3, "{:?}", fx.state.log());

    // `close` with `present` on unmapped data is the ordinary error.
    let e = enter(&fx.rt, &[(x, 16, mt::TO | mt::CLOSE | mt::PRESENT)]).unwrap_err();
    assert!(matches!(e, Error::NotPresent { .. }), "{e:?}");
}

#[test]
fn without_the_requirement_maps_copy_as_always() {
    let fx = fixture(true, false);
    let dev = fx.rt.device(0).unwrap();
    // No requires record: the device's reference pointer keeps the image's value.
    let device_ref = fx.rt.mapped_ptr(&dev, fx.ref_ptr).unwrap();
    let device_value = fx
        .state
        .memory
        .with_bytes(device_ref, 8, |b| {
            usize::from_ne_bytes(b.try_into().unwrap())
        })
        .unwrap();
    assert_eq!(device_value, 0);
    let x = leak([0u32; 4]) as *const [u32; 4] as usize;
    fx.state.clear_log();
    target(&fx, &[(x, 16, mt::TO | mt::FROM | mt::TARGET_PARAM)]).unwrap();
    assert_ne!(fx.seen.lock().unwrap().last().unwrap(), &vec![x]);
    assert!(allocs_and_copies(&fx) >= 3);
    let e = enter(&fx.rt, &[(x, 16, mt::TO | mt::PRESENT)]).unwrap_err();
    assert!(matches!(e, Error::NotPresent { .. }), "{e:?}");
}
