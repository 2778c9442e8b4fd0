//! Interop objects (OpenMP 5.2 §14) on the mock backend: properties, the `targetsync` queue's
//! life (out of the pool while the object lives, drained before it returns), and the order
//! of the program's foreign work against later constructs and their stream-ordered frees.

use omptarget_core::interop::{InteropKind, PropertyType, Rc, Value};
use omptarget_core::ops::map_type as mt;
use omptarget_core::{Config, Error, NoHostRuntime, Runtime};
use omptarget_plugin::QueueId;
use omptarget_plugin_mock::{MAGIC, MockPlugin, MockState, Op};
use std::sync::Arc;
use std::sync::atomic::Ordering;

mod common;
use common::{entry, with_args};

fn leak<T>(v: T) -> &'static T {
    Box::leak(Box::new(v))
}

fn runtime(foreign: bool) -> (Runtime, Arc<MockState>) {
    let plugin = MockPlugin::new(2, true, true);
    let state = plugin.state.clone();
    state.foreign.store(foreign, Ordering::SeqCst);
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    let entries = vec![entry(c"k", leak(0u8) as *const u8 as usize, 0)];
    rt.register(leak(1u64) as *const u64 as usize, &[MAGIC], entries);
    (rt, state)
}

fn data(rt: &Runtime, host: &mut [i32], enter: bool) {
    let dev = rt.device(0).unwrap();
    let item = (
        host.as_mut_ptr() as usize,
        std::mem::size_of_val(host) as i64,
        mt::TO | mt::FROM,
    );
    with_args(&[item], |args| {
        let mut ai = rt.async_info(&dev);
        let r = if enter {
            rt.data_begin(&dev, args, &mut ai)
        } else {
            rt.data_end(&dev, args, &mut ai)
        };
        ai.synchronize().and(r).unwrap();
    })
}

#[test]
fn a_device_without_foreign_runtime_gives_no_object() {
    let (rt, _) = runtime(false);
    for kind in [InteropKind::Target, InteropKind::TargetSync] {
        assert_eq!(
            rt.interop_init(0, kind).unwrap_err(),
            Error::NoForeignRuntime { device: 0 }
        );
    }
    assert!(matches!(
        rt.interop_init(7, InteropKind::Target),
        Err(Error::InvalidDevice { id: 7, .. })
    ));
}

#[test]
fn properties_of_a_targetsync_object() {
    let (rt, _) = runtime(true);
    let obj = rt.interop_init(1, InteropKind::TargetSync).unwrap();
    let q = obj.queue().expect("a queue");
    let int = |p| obj.get(p, PropertyType::Int);
    assert_eq!(int(-1), (Some(Value::Int(1000)), Rc::Success));
    assert_eq!(int(-3), (Some(Value::Int(9)), Rc::Success));
    assert_eq!(int(-5), (Some(Value::Int(1)), Rc::Success));
    assert_eq!(int(-7), (Some(Value::Int(101)), Rc::Success));
    assert_eq!(
        obj.get(-2, PropertyType::Str),
        (Some(Value::Str(c"mock")), Rc::Success)
    );
    assert_eq!(
        obj.get(-4, PropertyType::Str),
        (Some(Value::Str(c"llvm")), Rc::Success)
    );
    assert_eq!(
        obj.get(-8, PropertyType::Ptr),
        (Some(Value::Ptr(0xC0)), Rc::Success)
    );
    assert_eq!(
        obj.get(-9, PropertyType::Ptr),
        (Some(Value::Ptr(q.0)), Rc::Success)
    );
    // The device handle also through the pointer routine (LLVM 19's convention).
    assert_eq!(
        obj.get(-7, PropertyType::Ptr),
        (Some(Value::Ptr(101)), Rc::Success)
    );
    // No platform in this runtime; the wrong routine names the right one; ids out of range.
    assert_eq!(obj.get(-6, PropertyType::Ptr), (None, Rc::NoValue));
    assert_eq!(obj.get(-2, PropertyType::Int), (None, Rc::TypeStr));
    assert_eq!(obj.get(-9, PropertyType::Int), (None, Rc::TypePtr));
    assert_eq!(obj.get(-1, PropertyType::Str), (None, Rc::TypeInt));
    assert_eq!(obj.get(-10, PropertyType::Int), (None, Rc::OutOfRange));
    assert_eq!(obj.get(0, PropertyType::Int), (None, Rc::OutOfRange));
    // A `target` object has no queue.
    let t = rt.interop_init(1, InteropKind::Target).unwrap();
    assert_eq!(t.get(-9, PropertyType::Ptr), (None, Rc::NoValue));
    assert_eq!(
        omptarget_core::interop::Interop::type_desc(Some(&t), -9),
        Some(c"mock queue")
    );
    assert!(omptarget_core::interop::Interop::type_desc(None, -9).is_some());
    assert!(omptarget_core::interop::Interop::type_desc(None, -10).is_none());
}

#[test]
fn handles_are_checked_and_released_once() {
    let (rt, _) = runtime(true);
    let obj = rt.interop_init(0, InteropKind::Target).unwrap();
    let handle = Arc::into_raw(obj) as usize;
    assert!(rt.interop(handle).is_some());
    assert!(rt.interop(handle + 8).is_none());
    assert!(rt.interop(0).is_none());
    let back = rt.interop_release(handle).expect("the program's reference");
    assert!(
        rt.interop(handle).is_none(),
        "a destroyed object is not found"
    );
    assert!(rt.interop_release(handle).is_none(), "released once");
    rt.interop_destroy(back).unwrap();
}

fn syncs_of(log: &[Op], q: QueueId) -> Vec<usize> {
    log.iter()
        .enumerate()
        .filter(|(_, op)| matches!(op, Op::Synchronize { queue, .. } if *queue == q))
        .map(|(i, _)| i)
        .collect()
}

/// The queue of a `targetsync` object: no construct uses it while the object lives, `use`
/// waits for it, and `destroy` drains it before it rejoins the pool (the next construct then
/// gets it).
#[test]
fn the_targetsync_queue_is_the_programs_until_drained() {
    let (rt, state) = runtime(true);
    let obj = rt.interop_init(0, InteropKind::TargetSync).unwrap();
    let q = obj.queue().unwrap();
    let mut x = [1i32; 4];
    state.clear_log();
    data(&rt, &mut x, true);
    let on_q = |log: &[Op]| {
        log.iter().any(|op| {
            matches!(op, Op::Alloc { queue: Some(qq), .. }
                | Op::Copy { queue: Some(qq), .. }
                | Op::Free { queue: Some(qq), .. } if *qq == q)
        })
    };
    assert!(!on_q(&state.log()), "a construct used the interop queue");
    // `interop use`: the program's work on the queue is complete before it returns.
    state.clear_log();
    obj.complete_foreign_work().unwrap();
    assert_eq!(syncs_of(&state.log(), q).len(), 1);
    // `interop destroy`: drained, then back in the pool, where the next construct finds it.
    state.clear_log();
    rt.interop_destroy(obj).unwrap();
    let log = state.log();
    assert!(!syncs_of(&log, q).is_empty());
    data(&rt, &mut x, false);
    let log = state.log();
    let first_sync = syncs_of(&log, q)[0];
    let first_use = log
        .iter()
        .position(|op| matches!(op, Op::Copy { queue: Some(qq), .. } | Op::Free { queue: Some(qq), .. } if *qq == q))
        .expect("the next construct runs on the returned queue");
    assert!(first_sync < first_use);
}

/// Foreign work on the queue, then `interop use` (with a dependence the exit depends on),
/// then the exit that frees the data on its own queue: the free is issued after the interop
/// queue was waited for, so it cannot overtake the foreign work, and the memory is not
/// handed to a later allocation before.
#[test]
fn stream_ordered_frees_come_after_the_foreign_work() {
    let (rt, state) = runtime(true);
    let mut x = [5i32; 4];
    data(&rt, &mut x, true);
    let dev = rt.device(0).unwrap();
    let dx = dev.mappings()[0].tgt_begin;
    let obj = rt.interop_init(0, InteropKind::TargetSync).unwrap();
    let q = obj.queue().unwrap();
    // The program's "kernel" on the interop queue doubles x on the device.
    state
        .memory
        .write_i32(dx, 2 * state.memory.read_i32(dx).unwrap())
        .unwrap();
    state.clear_log();
    obj.complete_foreign_work().unwrap();
    data(&rt, &mut x, false);
    let log = state.log();
    let sync = syncs_of(&log, q)[0];
    let free = log
        .iter()
        .position(|op| matches!(op, Op::Free { ptr, .. } if *ptr == dx))
        .expect("the exit frees x");
    let copy_back = log
        .iter()
        .position(|op| matches!(op, Op::Copy { src, .. } if *src == dx))
        .expect("the exit copies x back");
    assert!(sync < copy_back && sync < free, "{log:?}");
    assert_eq!(x[0], 10, "the foreign work's result came back");
    rt.interop_destroy(obj).unwrap();
}

#[test]
fn prefer_type_chooses_the_first_foreign_runtime_the_device_has() {
    let (rt, _) = runtime(true);
    // The mock's runtime is id 1000: sycl (4) is skipped, 1000 chosen.
    let obj = rt
        .interop_init_preferring(0, InteropKind::TargetSync, &[4, 1000])
        .unwrap();
    assert_eq!(obj.foreign_id(), 1000);
    // None it has: its own.
    let obj = rt
        .interop_init_preferring(0, InteropKind::Target, &[4, 6])
        .unwrap();
    assert_eq!(obj.foreign_id(), 1000);
    // A CUDA driver device also serves the CUDA runtime API, under that name.
    let own = omptarget_plugin::ForeignRuntime {
        id: 2,
        name: c"cuda_driver",
        vendor: 11,
        vendor_name: c"nvidia",
        platform: None,
        device: Some(0),
        device_context: Some(0x10),
        platform_type: c"-",
        device_type: c"CUdevice",
        context_type: c"CUcontext",
        queue_type: c"CUstream",
    };
    let cuda = omptarget_core::interop::select_foreign(&own, &[5, 1, 2]);
    assert_eq!((cuda.id, cuda.name), (1, c"cuda"));
    assert_eq!(cuda.queue_type, c"cudaStream_t");
    assert_eq!(cuda.device_context, Some(0x10), "the same handles");
    assert_eq!(omptarget_core::interop::select_foreign(&own, &[2, 1]), own);
    assert_eq!(omptarget_core::interop::select_foreign(&own, &[]), own);
}

#[test]
fn completion_callbacks_run_once_in_order() {
    use omptarget_core::interop::CompletionCallback as Cb;
    let (rt, _) = runtime(true);
    let obj = rt.interop_init(0, InteropKind::TargetSync).unwrap();
    assert!(obj.take_completion_callbacks().is_empty());
    obj.add_completion_callback(Cb {
        function: 1,
        data: 10,
    });
    obj.add_completion_callback(Cb {
        function: 2,
        data: 20,
    });
    assert_eq!(
        obj.take_completion_callbacks(),
        vec![
            Cb {
                function: 1,
                data: 10
            },
            Cb {
                function: 2,
                data: 20
            }
        ]
    );
    assert!(
        obj.take_completion_callbacks().is_empty(),
        "forgotten once taken"
    );
}

#[test]
fn implicit_objects_are_per_thread_reused_and_completed_at_synchronisation_points() {
    use omptarget_core::interop::CompletionCallback as Cb;
    let (rt, state) = runtime(true);
    let a = rt
        .interop_implicit(0, 0, InteropKind::TargetSync, &[])
        .unwrap();
    let again = rt
        .interop_implicit(0, 0, InteropKind::TargetSync, &[])
        .unwrap();
    assert_eq!(a, again, "one object per thread, device and kind");
    let other_thread = rt
        .interop_implicit(1, 0, InteropKind::TargetSync, &[])
        .unwrap();
    let other_device = rt
        .interop_implicit(0, 1, InteropKind::TargetSync, &[])
        .unwrap();
    let other_kind = rt.interop_implicit(0, 0, InteropKind::Target, &[]).unwrap();
    assert_eq!(
        [other_thread, other_device, other_kind]
            .iter()
            .filter(|&&h| h == a)
            .count(),
        0
    );
    let obj = rt.interop(a).expect("a live object");
    obj.add_completion_callback(Cb {
        function: 7,
        data: 8,
    });
    let q = obj.queue().unwrap();
    let before = state
        .log()
        .iter()
        .filter(|o| matches!(o, Op::Synchronize { queue, .. } if *queue == q))
        .count();
    // Thread 0's point completes its three objects (the queue is waited for) and hands back
    // the callbacks; thread 1's object is not touched.
    let done = rt.interop_target_sync(0);
    assert_eq!(done.len(), 3);
    let mine = done.iter().find(|d| d.0 == a).expect("the object");
    assert!(mine.1.is_ok());
    assert_eq!(
        mine.1.as_ref().unwrap(),
        &vec![Cb {
            function: 7,
            data: 8
        }]
    );
    let after = state
        .log()
        .iter()
        .filter(|o| matches!(o, Op::Synchronize { queue, .. } if *queue == q))
        .count();
    assert_eq!(after, before + 1, "the foreign work was waited for");
    assert!(
        rt.interop_target_sync(0).is_empty(),
        "clean until used again"
    );
    rt.interop_implicit(0, 0, InteropKind::TargetSync, &[])
        .unwrap();
    assert_eq!(rt.interop_target_sync(0).len(), 1);
    assert_eq!(rt.interop_target_sync(1).len(), 1);
    // Released by hand, it leaves the table.
    let back = rt.interop_release(a).expect("live");
    rt.interop_destroy(back).unwrap();
    assert!(rt.interop(a).is_none());
    let fresh = rt
        .interop_implicit(0, 0, InteropKind::TargetSync, &[])
        .unwrap();
    assert!(rt.interop(fresh).is_some());
}
