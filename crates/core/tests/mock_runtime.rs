//! The core driven through the mock backend: data movement, reference counts, bad input and
//! failure injection, with the device's memory inspected directly.

use omptarget_core::MapArgs;
use omptarget_core::ops::map_type as mt;
use omptarget_core::plugin::LaunchConfig;
use omptarget_core::trace::SourceLoc;
use omptarget_core::{AsyncInfo, Config, Device, Error, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockPlugin, MockState, Op, OpKind};
use std::sync::Arc;

mod common;
use common::{addr, construct, enter, entry, exit, inc_plugin, leak, with_args};

/// A runtime with one mock plugin of `devices` devices, and one registered binary holding the
/// kernel `inc` (adds 1 to the i32 its first argument points at) and a 4-byte global.
struct Fixture {
    rt: Runtime,
    state: Arc<MockState>,
    key: usize,
    region: usize,
}

fn fixture(devices: usize, stream_ordered: bool, asynchronous: bool) -> Fixture {
    fixture_with(devices, stream_ordered, asynchronous, Config::default())
}

fn fixture_with(
    devices: usize,
    stream_ordered: bool,
    asynchronous: bool,
    config: Config,
) -> Fixture {
    let (plugin, state) = inc_plugin(devices, stream_ordered, asynchronous);
    let rt = Runtime::new(config, vec![Arc::new(plugin)], Box::new(NoHostRuntime));
    let region = leak(0u8) as *const u8 as usize;
    let global = leak(0u32) as *const u32 as usize;
    let image: &'static [u8] = MAGIC;
    let entries = vec![entry(c"inc", region, 0), entry(c"g", global, 4)];
    let key = leak(1u64) as *const u64 as usize;
    rt.register(key, &[image], entries);
    Fixture {
        rt,
        state,
        key,
        region,
    }
}

fn target(fx: &Fixture, items: &[(usize, i64, u64)]) -> Result<(), Error> {
    target_with(fx, items, &region_config())
}

/// How clang 19 launches a region (KernelArgs version 3).
fn region_config() -> LaunchConfig {
    LaunchConfig {
        version: 3,
        ..Default::default()
    }
}

/// A blocking target region of the fixture's kernel on device 0, launched with `config`.
fn target_with(
    fx: &Fixture,
    items: &[(usize, i64, u64)],
    config: &LaunchConfig,
) -> Result<(), Error> {
    construct(&fx.rt, items, |rt, dev, args, ai| {
        rt.target(dev, fx.region, args, config, &SourceLoc::default(), ai)
    })
}

/// Issues a target region with the `inc` kernel on `ai`, without synchronising.
fn issue_target(
    fx: &Fixture,
    dev: &Device,
    args: &mut MapArgs<'_>,
    ai: &mut AsyncInfo,
) -> Result<(), Error> {
    fx.rt.target(
        dev,
        fx.region,
        args,
        &region_config(),
        &SourceLoc::default(),
        ai,
    )
}

/// Whether the mock logged an event record or wait (a cross-queue ordering).
fn logged_an_event(fx: &Fixture) -> bool {
    fx.state
        .log()
        .iter()
        .any(|o| matches!(o, Op::RecordEvent { .. } | Op::WaitEvent { .. }))
}

/// Blocks device 0's memory manager keeps for reuse.
fn cached(fx: &Fixture) -> usize {
    fx.rt.device(0).unwrap().cached_blocks()
}

#[test]
fn tofrom_region_moves_data_and_frees_everything_at_unregistration() {
    let fx = fixture(2, false, false);
    let x = Box::new(41i32);
    target(&fx, &[(addr(&*x), 4, mt::TO | mt::FROM | mt::TARGET_PARAM)]).unwrap();
    assert_eq!(*x, 42, "the kernel's write came back");
    assert!(
        !fx.rt.target_is_present(addr(&*x), 0),
        "the region's mapping is gone"
    );
    // Only the global's block is left on the device (besides the block the memory manager
    // keeps for reuse); unregistration releases both.
    assert_eq!(fx.state.memory.live(), 1 + cached(&fx));
    fx.rt.unregister(fx.key);
    assert_eq!(fx.state.memory.live(), 0, "nothing stays allocated");
}

#[test]
fn reference_counts_decide_when_data_moves() {
    let fx = fixture(1, false, false);
    let mut a = Box::new([1i32, 2, 3, 4]);
    let item = (addr(&*a), 16, 0);
    enter(&fx.rt, &[(item.0, item.1, mt::TO)]).unwrap();
    enter(&fx.rt, &[(item.0, item.1, mt::TO)]).unwrap();
    a[0] = 100; // the device copy keeps 1: `to` of a present item copies nothing
    // One release: still present, nothing copied back.
    exit(&fx.rt, &[(item.0, item.1, mt::FROM)]).unwrap();
    assert!(fx.rt.target_is_present(item.0, 0));
    assert_eq!(a[0], 100);
    // The last release copies back the device's value.
    exit(&fx.rt, &[(item.0, item.1, mt::FROM)]).unwrap();
    assert_eq!(a[0], 1);
    assert!(!fx.rt.target_is_present(item.0, 0));
    // `delete` removes whatever the count, `always` copies whatever the count.
    for _ in 0..3 {
        enter(&fx.rt, &[(item.0, item.1, mt::TO)]).unwrap();
    }
    a[1] = 7;
    enter(&fx.rt, &[(item.0, item.1, mt::TO | mt::ALWAYS)]).unwrap();
    a[1] = 0;
    exit(&fx.rt, &[(item.0, item.1, mt::FROM | mt::ALWAYS)]).unwrap();
    assert_eq!(a[1], 7);
    exit(&fx.rt, &[(item.0, item.1, mt::DELETE)]).unwrap();
    assert!(!fx.rt.target_is_present(item.0, 0));
    assert_eq!(
        fx.state.memory.live(),
        1 + cached(&fx),
        "only the global remains"
    );
}

#[test]
fn hold_references_survive_delete() {
    let fx = fixture(1, false, false);
    let a = Box::new([0u8; 8]);
    enter(&fx.rt, &[(addr(&*a), 8, mt::TO | mt::OMPX_HOLD)]).unwrap();
    enter(&fx.rt, &[(addr(&*a), 8, mt::TO)]).unwrap();
    exit(&fx.rt, &[(addr(&*a), 8, mt::DELETE)]).unwrap();
    assert!(
        fx.rt.target_is_present(addr(&*a), 0),
        "the hold reference keeps it"
    );
    exit(&fx.rt, &[(addr(&*a), 8, mt::OMPX_HOLD)]).unwrap();
    assert!(!fx.rt.target_is_present(addr(&*a), 0));
}

/// `use_device_ptr` / `use_device_addr` (a zero-size RETURN_PARAM item): the base becomes the
/// device address when the lookup finds a mapping (also below a sub-section, from the
/// mapping's base), and stays the host address when it finds none (OpenMP 5.2 §5.4.8,
/// §5.4.10; LLVM 19 made it null).
#[test]
fn use_device_ptr_translates_found_data_and_keeps_other_addresses() {
    let fx = fixture(1, false, false);
    let a = Box::new([0i32; 8]);
    let dev = fx.rt.device(0).unwrap();
    let translate = |p: usize| {
        with_args(&[(p, 0, mt::RETURN_PARAM)], |args| {
            let mut ai = fx.rt.async_info(&dev);
            fx.rt.data_begin(&dev, args, &mut ai).unwrap();
            fx.rt.data_end(&dev, args, &mut ai).unwrap();
            ai.synchronize().unwrap();
            args.bases[0]
        })
    };
    let at = |i: usize| addr(&a[i]);
    assert_eq!(translate(at(4)), at(4), "nothing mapped: the address stays");
    enter(&fx.rt, &[(at(4), 8, mt::TO)]).unwrap();
    let d4 = fx.rt.mapped_ptr(&dev, at(4)).expect("mapped");
    assert_eq!(translate(at(5)), d4 + 4, "inside the mapping");
    assert_eq!(translate(at(6)), at(6), "at its end: not found, kept");
    exit(&fx.rt, &[(at(4), 8, mt::DELETE)]).unwrap();
    assert!(!fx.rt.target_is_present(at(4), 0));
}

/// A struct member's `delete` (MEMBER_OF, no reference of its own) leaves the struct one
/// reference, which the struct's own item (processed after its members) releases: `exit data
/// map(delete: s.b[1:2])` removes `s` whatever its count, as LLVM does. On a held entry
/// without dynamic references it adds none: the hold's end removes it.
#[test]
fn a_member_delete_removes_its_struct_and_never_adds_a_reference() {
    let fx = fixture(1, false, false);
    let s = Box::new([0i32; 12]);
    let (whole, member) = ((addr(&*s), 48), (addr(&s[6]), 8));
    let member_of_1 = 1u64 << 48;
    let delete_member = [
        (member.0, member.1, 0),
        (member.0, member.1, member_of_1 | mt::DELETE),
    ];
    for _ in 0..3 {
        enter(&fx.rt, &[(whole.0, whole.1, mt::TO)]).unwrap();
    }
    exit(&fx.rt, &delete_member).unwrap();
    assert!(!fx.rt.target_is_present(whole.0, 0), "count 3, yet gone");
    // Held, no dynamic reference; the struct's item (here s itself) extends the entry.
    enter(&fx.rt, &[(member.0, member.1, mt::TO | mt::OMPX_HOLD)]).unwrap();
    exit(
        &fx.rt,
        &[
            (whole.0, whole.1, 0),
            (member.0, member.1, member_of_1 | mt::DELETE),
        ],
    )
    .unwrap();
    assert!(fx.rt.target_is_present(member.0, 0), "the hold keeps it");
    exit(&fx.rt, &[(member.0, member.1, mt::OMPX_HOLD)]).unwrap();
    assert!(
        !fx.rt.target_is_present(member.0, 0),
        "no dynamic reference was added"
    );
}

#[test]
fn present_on_unmapped_data_is_an_error_that_changes_nothing() {
    let fx = fixture(1, false, false);
    let x = Box::new(5i32);
    fx.rt.device(0).unwrap(); // loads the image (and its global) first
    let live = fx.state.memory.live();
    let err = enter(&fx.rt, &[(addr(&*x), 4, mt::TO | mt::PRESENT)]).unwrap_err();
    assert!(matches!(err, Error::NotPresent { size: 4, .. }), "{err:?}");
    assert_eq!(fx.state.memory.live(), live, "nothing was allocated");
    assert!(!fx.rt.target_is_present(addr(&*x), 0));
}

#[test]
fn extending_a_mapping_is_an_error_that_keeps_the_table() {
    let fx = fixture(1, false, false);
    let a = Box::new([0i32; 8]);
    enter(&fx.rt, &[(addr(&*a), 16, mt::TO)]).unwrap();
    let live = fx.state.memory.live();
    let err = enter(&fx.rt, &[(addr(&*a), 32, mt::TO)]).unwrap_err();
    assert!(matches!(err, Error::Extension { size: 32, .. }), "{err:?}");
    assert_eq!(fx.state.memory.live(), live);
    // The original entry's count is still 1: one release removes it.
    exit(&fx.rt, &[(addr(&*a), 16, 0)]).unwrap();
    assert!(!fx.rt.target_is_present(addr(&*a), 0));
}

#[test]
fn a_device_number_out_of_range_is_an_error() {
    let fx = fixture(2, false, false);
    assert_eq!(fx.rt.num_devices(), 2);
    let err = fx.rt.device(5).unwrap_err();
    assert_eq!(err, Error::InvalidDevice { id: 5, count: 2 });
    assert!(fx.rt.device(-3).is_err());
    // The initial device (2) means "run on the host".
    assert!(fx.rt.device_for_construct(2).unwrap().is_none());
}

#[test]
fn corrupt_and_foreign_images_add_no_devices() {
    let plugin = MockPlugin::new(2, false, false);
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    // An OffloadBinary whose header claims more bytes than there are.
    let mut corrupt = vec![0x10u8, 0xFF, 0x10, 0xAD, 1, 0, 0, 0];
    corrupt.extend_from_slice(&u64::MAX.to_le_bytes());
    corrupt.extend_from_slice(&[0; 16]);
    let corrupt: &'static [u8] = Box::leak(corrupt.into_boxed_slice());
    // An ELF image for a machine no plugin drives (EM_CUDA).
    let mut elf = vec![0u8; 64];
    elf[..4].copy_from_slice(b"\x7fELF");
    elf[4] = 2;
    elf[5] = 1;
    elf[18] = 190;
    let elf: &'static [u8] = Box::leak(elf.into_boxed_slice());
    rt.register(1, &[corrupt, elf], Vec::new());
    assert_eq!(rt.num_devices(), 0);
    // With no device the default policy falls back to the host.
    assert!(rt.device_for_construct(0).unwrap().is_none());
    rt.unregister(1);
    rt.unregister(1); // unknown keys are ignored
}

#[test]
fn a_kernel_with_no_image_entry_is_an_error() {
    let fx = fixture(1, false, false);
    let dev = fx.rt.device(0).unwrap();
    let mut ai = fx.rt.async_info(&dev);
    let err = with_args(&[], |args| {
        fx.rt.target(
            &dev,
            0xdead,
            args,
            &LaunchConfig::default(),
            &SourceLoc::default(),
            &mut ai,
        )
    })
    .unwrap_err();
    assert_eq!(err, Error::NoKernel { host_ptr: 0xdead });
    ai.synchronize().unwrap();
}

#[test]
fn injected_failures_leave_no_leak_and_a_consistent_table() {
    for (kind, nth) in [
        (OpKind::Alloc, 2),
        (OpKind::Copy, 1),
        (OpKind::Copy, 2),
        (OpKind::Launch, 1),
    ] {
        // Without the memory manager, whose retry after a failed allocation would hide the
        // injected failure (see the next test).
        let fx = fixture_with(
            1,
            false,
            false,
            Config {
                memory_manager_threshold: 0,
                ..Config::default()
            },
        );
        let x = Box::new(1i32);
        let y = Box::new(2i32);
        fx.rt.device(0).unwrap();
        let base = fx.state.memory.live();
        fx.state.fail_nth(kind, nth);
        let items = [
            (addr(&*x), 4, mt::TO | mt::FROM | mt::TARGET_PARAM),
            (addr(&*y), 4, mt::TO | mt::FROM | mt::TARGET_PARAM),
        ];
        let r = target(&fx, &items);
        assert!(r.is_err(), "{kind:?} #{nth} must fail the region");
        // Whatever was mapped before the failure is still consistently mapped: releasing the
        // mapped items brings the device back to its baseline.
        for (p, size, _) in items {
            if fx.rt.target_is_present(p, 0) {
                exit(&fx.rt, &[(p, size, 0)]).unwrap();
            }
        }
        assert_eq!(
            fx.state.memory.live(),
            base,
            "{kind:?} #{nth} leaked device memory"
        );
        fx.rt.unregister(fx.key);
        assert_eq!(fx.state.memory.live(), 0);
    }
}

/// The memory manager (devices without stream-ordered allocation, the host device among them)
/// reuses a freed block for a request of the same size only, the block freed first first, and
/// answers a failed allocation by giving its blocks back and trying once more, as LLVM 19's
/// `MemoryManagerTy` does.
#[test]
fn the_memory_manager_reuses_blocks_as_llvm_does() {
    let fx = fixture(1, false, false);
    let dev = fx.rt.device(0).unwrap();
    let a = Box::new([0u8; 64]);
    let b = Box::new([0u8; 64]);
    let c = Box::new([0u8; 64]);
    let d = Box::new([0u8; 48]);
    enter(&fx.rt, &[(addr(&*a), 64, mt::TO), (addr(&*b), 64, mt::TO)]).unwrap();
    let (pa, pb) = (
        fx.rt.mapped_ptr(&dev, addr(&*a)).unwrap(),
        fx.rt.mapped_ptr(&dev, addr(&*b)).unwrap(),
    );
    exit(&fx.rt, &[(addr(&*a), 64, mt::DELETE)]).unwrap();
    exit(&fx.rt, &[(addr(&*b), 64, mt::DELETE)]).unwrap();
    assert_eq!(dev.cached_blocks(), 2);
    enter(&fx.rt, &[(addr(&*d), 48, mt::TO)]).unwrap();
    assert_ne!(fx.rt.mapped_ptr(&dev, addr(&*d)), Some(pa), "no other size");
    assert_ne!(fx.rt.mapped_ptr(&dev, addr(&*d)), Some(pb));
    enter(&fx.rt, &[(addr(&*c), 64, mt::TO)]).unwrap();
    assert_eq!(
        fx.rt.mapped_ptr(&dev, addr(&*c)),
        Some(pa),
        "the block freed first"
    );
    // A failed allocation empties the cache (b's block goes back) and is tried again.
    let live = fx.state.memory.live();
    fx.state.fail_nth(OpKind::Alloc, 1);
    enter(&fx.rt, &[(addr(&*a), 64, mt::TO)]).unwrap();
    assert_ne!(fx.rt.mapped_ptr(&dev, addr(&*a)), Some(pa));
    let _ = b;
    exit(&fx.rt, &[(addr(&*a), 64, mt::DELETE)]).unwrap();
    assert_eq!(dev.cached_blocks(), 1);
    assert_eq!(
        fx.state.memory.live(),
        live,
        "b's block was freed, a's is kept"
    );
}

#[test]
fn one_synchronisation_per_blocking_construct() {
    let fx = fixture(1, true, true);
    let x = Box::new(1i32);
    let _ = fx.rt.device(0).unwrap(); // load images first
    fx.state.clear_log();
    target(&fx, &[(addr(&*x), 4, mt::TO | mt::FROM | mt::TARGET_PARAM)]).unwrap();
    let log = fx.state.log();
    let syncs = log
        .iter()
        .filter(|op| matches!(op, Op::Synchronize { .. }))
        .count();
    assert_eq!(syncs, 1, "{log:#?}");
    assert_eq!(*x, 2);
}

/// The position of the first operation matching `f`.
fn position(log: &[Op], f: impl Fn(&Op) -> bool) -> usize {
    log.iter()
        .position(f)
        .unwrap_or_else(|| panic!("operation missing from {log:#?}"))
}

#[test]
fn stream_ordered_frees_follow_the_last_use_on_the_same_queue_without_waiting() {
    let fx = fixture(1, true, true);
    let x = Box::new(1i32);
    fx.rt.device(0).unwrap();
    fx.state.clear_log();
    target(&fx, &[(addr(&*x), 4, mt::TO | mt::FROM | mt::TARGET_PARAM)]).unwrap();
    let log = fx.state.log();
    let (ptr, queue) = match &log[position(&log, |o| matches!(o, Op::Alloc { .. }))] {
        Op::Alloc { ptr, queue, .. } => (*ptr, *queue),
        _ => unreachable!(),
    };
    assert!(
        queue.is_some(),
        "the allocation is ordered on the construct's queue"
    );
    let launch = position(&log, |o| matches!(o, Op::Launch { .. }));
    let copy_out = position(&log, |o| matches!(o, Op::Copy { src, .. } if *src == ptr));
    let free = position(&log, |o| matches!(o, Op::Free { ptr: p, .. } if *p == ptr));
    let sync = position(&log, |o| matches!(o, Op::Synchronize { .. }));
    assert!(
        launch < copy_out && copy_out < free,
        "free after the last use: {log:#?}"
    );
    assert!(free < sync, "the free is queued, not waited for: {log:#?}");
    assert!(
        matches!(log[free], Op::Free { queue: q, .. } if q == queue),
        "same queue"
    );
    assert_eq!(*x, 2);
}

#[test]
fn without_stream_ordering_frees_wait_for_the_synchronisation() {
    let fx = fixture(1, false, true);
    let x = Box::new(1i32);
    fx.rt.device(0).unwrap();
    fx.state.clear_log();
    target(&fx, &[(addr(&*x), 4, mt::TO | mt::FROM | mt::TARGET_PARAM)]).unwrap();
    let log = fx.state.log();
    let sync = position(&log, |o| matches!(o, Op::Synchronize { .. }));
    for (i, op) in log.iter().enumerate() {
        if let Op::Free { .. } = op {
            assert!(i > sync, "free before the synchronisation: {log:#?}");
        }
    }
    assert_eq!(*x, 2);
}

#[test]
fn a_second_queue_waits_for_the_creating_queue_through_an_event() {
    let fx = fixture(1, true, true);
    let a = Box::new([0i32; 4]);
    let dev = fx.rt.device(0).unwrap();
    fx.state.clear_log();
    with_args(&[(addr(&*a), 16, mt::TO)], |args| {
        let mut first = fx.rt.async_info(&dev);
        fx.rt.data_begin(&dev, args, &mut first).unwrap();
        // A second construct finds the entry while the first has not synchronised.
        let mut second = fx.rt.async_info(&dev);
        fx.rt.data_begin(&dev, args, &mut second).unwrap();
        let log = fx.state.log();
        let q1 = match &log[position(&log, |o| matches!(o, Op::Alloc { .. }))] {
            Op::Alloc { queue, .. } => queue.unwrap(),
            _ => unreachable!(),
        };
        let record = position(&log, |o| matches!(o, Op::RecordEvent { .. }));
        let wait = position(&log, |o| matches!(o, Op::WaitEvent { .. }));
        match (&log[record], &log[wait]) {
            (
                Op::RecordEvent {
                    event: e1,
                    queue: rq,
                    ..
                },
                Op::WaitEvent {
                    event: e2,
                    queue: wq,
                    ..
                },
            ) => {
                assert_eq!(e1, e2);
                assert_eq!(*rq, q1, "the event is recorded on the creating queue");
                assert_ne!(*wq, q1, "and waited for on the other one");
            }
            _ => unreachable!(),
        }
        assert!(
            record > position(&log, |o| matches!(o, Op::Copy { .. })),
            "after the copy-in"
        );
        first.synchronize().unwrap();
        second.synchronize().unwrap();
        // Once the creator synchronised, nobody waits any more.
        fx.state.clear_log();
        let mut third = fx.rt.async_info(&dev);
        fx.rt.data_begin(&dev, args, &mut third).unwrap();
        third.synchronize().unwrap();
        assert!(!logged_an_event(&fx));
    });
}

#[test]
fn map_force_atomic_false_skips_the_events() {
    let config = Config {
        map_force_atomic: false,
        ..Config::default()
    };
    let fx = fixture_with(1, true, true, config);
    let a = Box::new([0i32; 4]);
    let dev = fx.rt.device(0).unwrap();
    fx.state.clear_log();
    with_args(&[(addr(&*a), 16, mt::TO)], |args| {
        let mut first = fx.rt.async_info(&dev);
        fx.rt.data_begin(&dev, args, &mut first).unwrap();
        let mut second = fx.rt.async_info(&dev);
        fx.rt.data_begin(&dev, args, &mut second).unwrap();
        first.synchronize().unwrap();
        second.synchronize().unwrap();
    });
    assert!(!logged_an_event(&fx));
}

#[test]
fn a_nowait_construct_completes_on_another_thread_without_leaks() {
    let fx = fixture(1, true, true);
    let x = Box::new(1i32);
    let dev = fx.rt.device(0).unwrap();
    let base = fx.state.memory.live();
    fx.state
        .busy
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let mut ai = fx.rt.async_info(&dev);
    with_args(
        &[(addr(&*x), 4, mt::TO | mt::FROM | mt::TARGET_PARAM)],
        |args| issue_target(&fx, &dev, args, &mut ai).unwrap(),
    );
    assert!(!ai.is_done().unwrap(), "the work is still in flight");
    // libomp may poll from any thread: the construct moves there and completes.
    let state = fx.state.clone();
    let done = std::thread::spawn(move || {
        let mut ai = ai;
        let mut polls = 0;
        while !ai.is_done().unwrap() {
            polls += 1;
            if polls == 3 {
                state.busy.store(false, std::sync::atomic::Ordering::SeqCst);
            }
        }
        polls
    })
    .join()
    .unwrap();
    assert!(done >= 3);
    assert_eq!(*x, 2, "the copy-out is visible once the construct is done");
    assert_eq!(fx.state.memory.live(), base, "its memory was freed");
    assert!(!fx.rt.target_is_present(addr(&*x), 0));
}

/// Every interleaving of two constructs (enter, exit, synchronise each) that map the same
/// data on two queues: reference counts end at zero with no leak or double free, and the
/// second construct waits for the first through an event exactly when it used the first's
/// entry before the first synchronised. (An exhaustive check at the granularity of the
/// runtime's atomic steps: each step takes the table lock once.)
#[test]
fn every_interleaving_of_two_constructs_keeps_counts_and_order() {
    // All orders of A0 A1 A2 and B0 B1 B2 that keep each construct's own order.
    let mut orders: Vec<Vec<(usize, usize)>> = Vec::new();
    for mask in 0u32..64 {
        if mask.count_ones() != 3 {
            continue;
        }
        let (mut a, mut b) = (0, 0);
        let order: Vec<(usize, usize)> = (0..6)
            .map(|slot| {
                if mask & (1 << slot) != 0 {
                    a += 1;
                    (0, a - 1)
                } else {
                    b += 1;
                    (1, b - 1)
                }
            })
            .collect();
        orders.push(order);
    }
    assert_eq!(orders.len(), 20);
    for order in orders {
        let fx = fixture(1, true, true);
        let x = Box::new([0i32; 4]);
        let dev = fx.rt.device(0).unwrap();
        let base = fx.state.memory.live();
        fx.state.clear_log();
        let item = [(addr(&*x), 16, mt::TO | mt::FROM)];
        let mut ais = [Some(fx.rt.async_info(&dev)), Some(fx.rt.async_info(&dev))];
        for &(c, step) in &order {
            with_args(&item, |args| match step {
                0 => fx
                    .rt
                    .data_begin(&dev, args, ais[c].as_mut().unwrap())
                    .unwrap(),
                1 => fx
                    .rt
                    .data_end(&dev, args, ais[c].as_mut().unwrap())
                    .unwrap(),
                _ => ais[c].take().unwrap().synchronize().unwrap(),
            });
        }
        let ctx = format!("order {order:?}");
        assert!(!fx.rt.target_is_present(addr(&*x), 0), "{ctx}");
        assert_eq!(fx.state.memory.live(), base, "leak in {ctx}");
        // Which construct entered first, and did the other enter before the first exited?
        let pos = |c: usize, s: usize| order.iter().position(|&o| o == (c, s)).unwrap();
        let first = if pos(0, 0) < pos(1, 0) { 0 } else { 1 };
        let second = 1 - first;
        let overlapped = pos(second, 0) < pos(first, 1);
        let log = fx.state.log();
        let records: Vec<_> = log
            .iter()
            .filter_map(|o| match o {
                Op::RecordEvent { event, queue, .. } => Some((*event, *queue)),
                _ => None,
            })
            .collect();
        let waits: Vec<_> = log
            .iter()
            .filter_map(|o| match o {
                Op::WaitEvent { event, queue, .. } => Some((*event, *queue)),
                _ => None,
            })
            .collect();
        if overlapped {
            assert!(!waits.is_empty(), "no wait in {ctx}: {log:#?}");
        } else {
            assert!(
                waits.is_empty() && records.is_empty(),
                "needless event in {ctx}"
            );
        }
        for (w, (e, q)) in waits.iter().enumerate() {
            let (re, rq) = records[w];
            assert_eq!(re, *e, "{ctx}");
            assert_ne!(rq, *q, "the event is recorded on the other queue ({ctx})");
        }
    }
}

/// `target exit data map(always, from: x) map(delete: x)` on a count-2 entry: clang passes the
/// items in clause order and the runtime processes them last to first, so the delete comes
/// first. The entry must stay findable for the `from` until the construct ends, also on
/// devices that free on the queue (the bug: those removed it at once, so the copy was lost).
#[test]
fn always_from_and_delete_of_one_item_in_one_construct_copies_then_removes() {
    for (stream_ordered, asynchronous) in [(false, false), (true, false), (true, true)] {
        let fx = fixture(1, stream_ordered, asynchronous);
        let x = Box::new(41i32);
        let item = |ty| (addr(&*x), 4, ty);
        enter(&fx.rt, &[item(mt::TO)]).unwrap();
        enter(&fx.rt, &[item(mt::TO)]).unwrap();
        target(&fx, &[item(mt::TO | mt::FROM | mt::TARGET_PARAM)]).unwrap();
        assert_eq!(*x, 41, "count 2: nothing came back yet");
        exit(&fx.rt, &[item(mt::FROM | mt::ALWAYS), item(mt::DELETE)]).unwrap();
        assert_eq!(
            *x, 42,
            "the always-from copy happened (stream_ordered={stream_ordered})"
        );
        assert!(
            !fx.rt.target_is_present(addr(&*x), 0),
            "and the entry is gone"
        );
        assert_eq!(
            fx.state.memory.live(),
            1 + cached(&fx),
            "only the global's block is left"
        );
    }
}

/// One construct of a model-checking script: what it does with the shared variable.
#[derive(Clone, Copy, Debug)]
enum Step {
    Enter,
    Target,
    Exit,
}

/// A happens-before checker over the mock's operation log, with CUDA's stream semantics: the
/// operations of one queue run in order; an operation without a queue runs on the host when
/// issued; `Synchronize(q)`, or a query that found q complete, orders q's earlier operations
/// before everything issued after it;
/// `RecordEvent(e, p)` + `WaitEvent(e, q)` order p's operations before the record ahead of
/// q's after the wait. On one device block (one allocation's lifetime) the orderings the
/// runtime owns must hold: a copy into the block comes before every later kernel and copy out
/// of it (readiness), and every use of the block comes before its free. (Two concurrent
/// constructs' kernels on one variable, or one's copy-out while the other's kernel runs, are
/// races of the program, which OpenMP leaves to it.) Returns the first pair not ordered.
fn unordered_conflict(log: &[Op]) -> Option<(usize, usize)> {
    use omptarget_core::plugin::CopyKind;
    let n = log.len();
    let queue_of = |o: &Op| match o {
        Op::Alloc { queue, .. } | Op::Free { queue, .. } | Op::Copy { queue, .. } => *queue,
        Op::Launch { queue, .. } | Op::RecordEvent { queue, .. } | Op::WaitEvent { queue, .. } => {
            Some(*queue)
        }
        _ => None,
    };
    // Edges i -> j (i < j).
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut last_on: std::collections::HashMap<usize, usize> = Default::default();
    let mut recorded: std::collections::HashMap<usize, usize> = Default::default();
    for (j, op) in log.iter().enumerate() {
        match (op, queue_of(op)) {
            (Op::Synchronize { queue, .. } | Op::Completed { queue, .. }, _) => {
                if let Some(&i) = last_on.get(&queue.0) {
                    succ[i].push(j);
                }
                // The host waited: everything issued later comes after.
                for k in j + 1..n {
                    succ[j].push(k);
                }
            }
            (_, Some(q)) => {
                if let Some(&i) = last_on.get(&q.0) {
                    succ[i].push(j);
                }
                last_on.insert(q.0, j);
                if let Op::RecordEvent { event, .. } = op {
                    recorded.insert(event.0, j);
                }
                if let Op::WaitEvent { event, .. } = op
                    && let Some(&r) = recorded.get(&event.0)
                {
                    succ[r].push(j);
                }
            }
            (_, None) => {
                // Done on the host when issued: before everything issued later.
                for k in j + 1..n {
                    succ[j].push(k);
                }
            }
        }
    }
    let reach = |from: usize, to: usize| {
        let mut seen = vec![false; n];
        let mut stack = vec![from];
        while let Some(i) = stack.pop() {
            if i == to {
                return true;
            }
            for &k in &succ[i] {
                if !seen[k] && k <= to {
                    seen[k] = true;
                    stack.push(k);
                }
            }
        }
        false
    };
    // Device accesses: (op index, block generation, kind).
    #[derive(Clone, Copy, PartialEq)]
    enum Access {
        Fill,
        Read,
        Kernel,
        Free,
    }
    let mut live: Vec<(usize, usize, usize)> = Vec::new(); // (base, size, generation)
    let mut accesses: Vec<(usize, usize, Access)> = Vec::new();
    let block_of = |live: &Vec<(usize, usize, usize)>, addr: usize| {
        live.iter()
            .find(|&&(b, s, _)| addr >= b && addr < b + s.max(1))
            .map(|&(_, _, g)| g)
    };
    for (j, op) in log.iter().enumerate() {
        match op {
            Op::Alloc { ptr, size, .. } => live.push((*ptr, *size, j)),
            Op::Free { ptr, .. } => {
                if let Some(pos) = live.iter().position(|&(b, _, _)| b == *ptr) {
                    accesses.push((j, live[pos].2, Access::Free));
                    live.remove(pos);
                }
            }
            Op::Copy { kind, dst, src, .. } => {
                let (addr, access) = match kind {
                    CopyKind::HostToDevice | CopyKind::DeviceToDevice => (*dst, Access::Fill),
                    CopyKind::DeviceToHost => (*src, Access::Read),
                };
                if let Some(g) = block_of(&live, addr) {
                    accesses.push((j, g, access));
                }
            }
            Op::Launch { args, .. } => {
                for &a in args {
                    if let Some(g) = block_of(&live, a) {
                        accesses.push((j, g, Access::Kernel));
                    }
                }
            }
            _ => {}
        }
    }
    for (x, &(i, gi, ai)) in accesses.iter().enumerate() {
        for &(j, gj, aj) in &accesses[x + 1..] {
            let owned = aj == Access::Free
                || (ai == Access::Fill && matches!(aj, Access::Kernel | Access::Read));
            if gi == gj && owned && i != j && !reach(i, j) {
                return Some((i, j));
            }
        }
    }
    None
}

/// Model check: two host threads' scripts of constructs on one variable, each construct
/// issued and then completed (the first thread synchronises, the second polls, as a `nowait`
/// construct is completed), in every interleaving that keeps each script's order
/// (924 + 210 schedules). In each: the variable's final value is what sequential OpenMP
/// gives, the mapping is gone and nothing leaks, and under CUDA-like stream semantics every
/// two device operations on one block that conflict are ordered (by a queue, a
/// synchronisation or an event): a kernel never runs before the copy that fills its data,
/// a free never overtakes a kernel or copy of another queue.
#[test]
fn every_schedule_of_two_threads_scripts_is_race_free_under_stream_semantics() {
    use Step::*;
    let scripts: [(&[Step], &[Step], i32); 2] = [
        (&[Enter, Target, Exit], &[Enter, Target, Exit], 2),
        (&[Enter, Target, Exit], &[Target, Target], 3),
    ];
    let mut schedules = 0;
    for (a, b, expect) in scripts {
        // Steps: (script, construct, 0 = issue / 1 = synchronise).
        let (na, nb) = (a.len() * 2, b.len() * 2);
        let total = na + nb;
        for mask in 0u32..(1 << total) {
            if mask.count_ones() as usize != na {
                continue;
            }
            schedules += 1;
            let fx = fixture(1, true, true);
            let x = Box::new(0i32);
            let dev = fx.rt.device(0).unwrap();
            let base = fx.state.memory.live();
            fx.state.clear_log();
            let mut pending: [Option<AsyncInfo>; 2] = [None, None];
            let mut next = [0usize, 0usize];
            let mut order = Vec::new();
            for slot in 0..total {
                let t = if mask & (1 << slot) != 0 { 0 } else { 1 };
                let script = if t == 0 { a } else { b };
                let k = next[t];
                next[t] += 1;
                let (construct, phase) = (script[k / 2], k % 2);
                order.push((t, construct, phase));
                if phase == 1 {
                    let mut ai = pending[t].take().unwrap();
                    if t == 1 {
                        // The second thread completes its constructs as libomp completes a
                        // `nowait` one: by polling.
                        assert!(ai.is_done().unwrap());
                    } else {
                        ai.synchronize().unwrap();
                    }
                    continue;
                }
                let mut ai = fx.rt.async_info(&dev);
                let ty = match construct {
                    Enter => mt::TO,
                    Exit => mt::FROM,
                    Target => mt::TO | mt::FROM | mt::TARGET_PARAM,
                };
                with_args(&[(addr(&*x), 4, ty)], |args| match construct {
                    Enter => fx.rt.data_begin(&dev, args, &mut ai),
                    Exit => fx.rt.data_end(&dev, args, &mut ai),
                    Target => issue_target(&fx, &dev, args, &mut ai),
                })
                .unwrap();
                pending[t] = Some(ai);
            }
            let ctx = format!("schedule {order:?}");
            assert_eq!(*x, expect, "final value in {ctx}");
            assert!(!fx.rt.target_is_present(addr(&*x), 0), "{ctx}");
            assert_eq!(fx.state.memory.live(), base, "leak in {ctx}");
            let log = fx.state.log();
            if let Some((i, j)) = unordered_conflict(&log) {
                let ops: Vec<String> = log
                    .iter()
                    .enumerate()
                    .map(|(k, o)| format!("{k}: {o:?}"))
                    .collect();
                panic!(
                    "unordered conflicting operations {i} and {j} in {ctx}:\n{}",
                    ops.join("\n")
                );
            }
        }
    }
    assert_eq!(schedules, 924 + 210);
}

/// The checker itself finds a kernel that is not ordered after the copy that fills its data.
#[test]
fn the_race_checker_flags_an_unordered_kernel() {
    use omptarget_core::plugin::{CopyKind, QueueId};
    let (q1, q2) = (QueueId(1), QueueId(2));
    let alloc = Op::Alloc {
        device: 0,
        ptr: 0x1000,
        size: 4,
        queue: Some(q1),
    };
    let copy = Op::Copy {
        device: 0,
        kind: CopyKind::HostToDevice,
        dst: 0x1000,
        src: 0x7000,
        size: 4,
        queue: Some(q1),
    };
    let launch = Op::Launch {
        device: 0,
        kernel: "inc".into(),
        args: vec![0x1000],
        queue: q2,
    };
    let racy = vec![alloc.clone(), copy.clone(), launch.clone()];
    assert!(unordered_conflict(&racy).is_some());
    let event = omptarget_core::plugin::EventId(9);
    let ordered = vec![
        alloc,
        copy,
        Op::RecordEvent {
            device: 0,
            event,
            queue: q1,
        },
        Op::WaitEvent {
            device: 0,
            event,
            queue: q2,
        },
        launch,
    ];
    assert_eq!(unordered_conflict(&ordered), None);
}

/// Heap allocations made by the calling thread (a counting global allocator; per thread, so
/// tests running beside it do not count).
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    pub struct Counting;

    thread_local! {
        static ALLOCS: Cell<u64> = const { Cell::new(0) };
    }
    // SAFETY: forwards to the system allocator; only counts.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
            // SAFETY: same contract as the caller's.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: same contract as the caller's.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
            // SAFETY: same contract as the caller's.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    pub fn allocations() -> u64 {
        ALLOCS.with(|c| c.get())
    }
}

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

/// The hot path on a device like a GPU (asynchronous, stream-ordered, atomic maps): a
/// `map(tofrom)` target region issued and synchronised, counted over 200 regions after a
/// warm-up, with the argument arrays made once (as clang's are static). The count includes
/// the mock's own allocations: 5 per region (the device block, a buffer for each of the two
/// copies, the launch record's kernel name and argument list); the runtime's share is 0.
#[test]
fn a_mapped_region_on_an_asynchronous_device_allocates_nothing_in_the_runtime() {
    let fx = fixture(1, true, true);
    let x = Box::new(0i32);
    let dev = fx.rt.device(0).unwrap();
    with_args(
        &[(addr(&*x), 4, mt::TO | mt::FROM | mt::TARGET_PARAM)],
        |args| {
            let mut region = || {
                let mut ai = fx.rt.async_info(&dev);
                issue_target(&fx, &dev, args, &mut ai).unwrap();
                ai.synchronize().unwrap();
                // The mock's operation log keeps its capacity (no growth counted).
                fx.state.clear_log();
            };
            for _ in 0..20 {
                region();
            }
            let before = counting::allocations();
            for _ in 0..200 {
                region();
            }
            let per_region = (counting::allocations() - before) as f64 / 200.0;
            println!("heap allocations per region (runtime + mock): {per_region}");
            assert!(per_region <= 5.0, "{per_region} allocations per region");
        },
    );
    assert_eq!(*x, 220);
}

#[test]
fn a_kernel_language_launch_passes_its_parameter_bytes_and_grid_as_given() {
    // llvmLaunchKernel (LLVM 22, CUDA/HIP with -foffload-via-llvm): the backend gets the
    // parameter buffer byte for byte and the 3-D grid and blocks untouched, no argument words.
    let fx = fixture(1, false, false);
    let params: Vec<u8> = (0u8..58).collect();
    let config = LaunchConfig {
        version: 0,
        num_teams: [2, 3, 4],
        thread_limit: [5, 6, 7],
        dyn_cgroup_mem: 64,
        language: Some(omptarget_core::plugin::LanguageArgs {
            data: params.as_ptr() as usize,
            size: params.len(),
        }),
        ..Default::default()
    };
    target_with(&fx, &[], &config).unwrap();
    let log = fx.state.log();
    let launched: Vec<&Op> = log
        .iter()
        .filter(|o| matches!(o, Op::LanguageLaunch { .. } | Op::Launch { .. }))
        .collect();
    assert_eq!(launched.len(), 1, "{launched:?}");
    match launched[0] {
        Op::LanguageLaunch {
            params: p,
            grid,
            block,
            shared,
            ..
        } => {
            assert_eq!(p, &params);
            assert_eq!((*grid, *block, *shared), ([2, 3, 4], [5, 6, 7], 64));
        }
        other => panic!("an OpenMP launch instead: {other:?}"),
    }
}

#[test]
fn a_legacy_launch_of_a_kernel_that_takes_the_launch_environment_gets_it() {
    // clang ≤ 16's entry points launch with KernelArgs version 1 and no launch-environment
    // word; a clang 18+ kernel takes that word first. Without arguments the launch runs, and
    // the backend is told the kernel's own version, so every backend passes the word.
    let fx = fixture(1, false, false);
    fx.state
        .kernels_take_launch_env
        .store(true, std::sync::atomic::Ordering::SeqCst);
    // The region's kernel, without arguments to read here.
    fx.state.add_kernel("inc", |_, _| {});
    let launch = |version: u32, items: &[(usize, i64, u64)]| {
        let config = LaunchConfig {
            version,
            ..Default::default()
        };
        target_with(&fx, items, &config)
    };
    let seen = || {
        fx.state
            .last_launch_version
            .load(std::sync::atomic::Ordering::SeqCst)
    };
    launch(1, &[]).unwrap();
    assert_eq!(seen(), 3, "upgraded to the kernel's version");
    launch(3, &[]).unwrap();
    assert_eq!(seen(), 3);
    fx.state
        .last_launch_version
        .store(0, std::sync::atomic::Ordering::SeqCst);
    let x = Box::new(1i32);
    assert!(
        launch(2, &[(addr(&*x), 4, mt::TO | mt::FROM | mt::TARGET_PARAM)]).is_err(),
        "with arguments each would reach the wrong parameter: refused"
    );
    assert_eq!(seen(), 0, "not launched");
}
