//! Memory whose entry a construct still running retired, after queuing a copy back from it:
//! on a device that frees on the queue the entry leaves the table as soon as its construct
//! has issued its work, but under OpenMP the construct's region has not ended, so the memory
//! is still mapped. A construct that would map it anew meanwhile (another thread's, or
//! another task's) would copy it in before the copy back lands and copy it back after: the
//! first construct's results lost. It waits until that construct completes (`ops/data.rs::
//! after_retired`). Driven through the mock's asynchronous model (queues stay busy until
//! synchronised; the log shows every synchronisation); `tests/c/threads_map_inflight.c`
//! compares the results with LLVM 19 on a GPU.

use omptarget_core::ops::held;
use omptarget_core::ops::map_type as mt;
use omptarget_core::plugin::{CopyKind, LaunchConfig, QueueId};
use omptarget_core::trace::SourceLoc;
use omptarget_plugin_mock::Op;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

mod common;
use common::{addr, held_region, inc_runtime, with_args};

/// Index of the first copy to the device from `host` at or after `from`.
fn copy_in_after(log: &[Op], host: usize, from: usize) -> Option<usize> {
    (from..log.len()).find(
        |&i| matches!(log[i], Op::Copy { kind: CopyKind::HostToDevice, src, .. } if src == host),
    )
}

fn synchronised_at(log: &[Op], queue: QueueId) -> Option<usize> {
    log.iter()
        .position(|o| matches!(o, Op::Synchronize { queue: q, .. } if *q == queue))
}

#[test]
fn another_threads_region_maps_the_memory_only_after_the_construct_completed() {
    let (rt, state, key, region) = inc_runtime();
    let x = Box::leak(Box::new(0i32));
    let item = (addr(x), 4i64, mt::TO | mt::FROM | mt::TARGET_PARAM);
    held_region(&rt, region, &[item], false);
    state.clear_log();
    let dev = rt.device(0).unwrap();
    let b_done = AtomicBool::new(false);
    with_args(&[item], |args| {
        // Construct A issued (its entry retired, its copy back queued), not synchronised:
        // a blocking region of this thread that is still waiting for its work.
        let mut a = rt.async_info(&dev);
        let config = LaunchConfig {
            version: 3,
            ..Default::default()
        };
        rt.target(&dev, region, args, &config, &SourceLoc::default(), &mut a)
            .unwrap();
        assert!(!rt.is_present(&dev, addr(x)), "A's entry left");
        std::thread::scope(|s| {
            s.spawn(|| {
                held_region(&rt, region, &[item], false);
                b_done.store(true, Ordering::SeqCst);
            });
            std::thread::sleep(Duration::from_millis(100));
            assert!(
                !b_done.load(Ordering::SeqCst),
                "B mapped the memory while A's copy back was still to land"
            );
            a.synchronize().unwrap();
        });
    });
    assert!(b_done.load(Ordering::SeqCst));
    let log = state.log();
    let a_queue = log
        .iter()
        .find_map(|o| match o {
            Op::Launch { queue, .. } => Some(*queue),
            _ => None,
        })
        .unwrap();
    let a_synced = synchronised_at(&log, a_queue).expect("A synchronised");
    assert!(
        copy_in_after(&log, addr(x), a_synced).is_some(),
        "B copied x in after A completed: {log:#?}"
    );
    assert_eq!(*x, 3, "three increments");
    rt.unregister(key);
    assert_eq!(state.memory.live(), 0, "nothing leaked");
}

#[test]
fn a_region_mapping_the_memory_from_only_completes_the_held_construct_first() {
    let (rt, state, key, region) = inc_runtime();
    let x = Box::leak(Box::new(0i32));
    let item = (addr(x), 4i64, mt::TO | mt::FROM | mt::TARGET_PARAM);
    held_region(&rt, region, &[item], false);
    // A `nowait` region left held (the mock's queues stay busy): its entry already left the
    // table, its copy back is still to land.
    state.busy.store(true, Ordering::SeqCst);
    state.clear_log();
    let a = held_region(&rt, region, &[item], true);
    assert!(!a.is_null(), "A is held");
    assert!(
        !rt.is_present(&rt.device(0).unwrap(), addr(x)),
        "A's entry left"
    );
    // A `from`-only region copies nothing in: only the retired entry tells it of A.
    let from_only = (addr(x), 4, mt::FROM | mt::TARGET_PARAM);
    std::thread::scope(|s| {
        s.spawn(|| assert!(held_region(&rt, region, &[from_only], false).is_null()));
    });
    let log = state.log();
    let launches: Vec<(usize, QueueId)> = log
        .iter()
        .enumerate()
        .filter_map(|(i, o)| match o {
            Op::Launch { queue, .. } => Some((i, *queue)),
            _ => None,
        })
        .collect();
    assert_eq!(launches.len(), 2, "{log:#?}");
    let a_synced = synchronised_at(&log, launches[0].1).expect("A completed");
    assert!(
        a_synced < launches[1].0,
        "A completed before B's region ran: {log:#?}"
    );
    // SAFETY: the slot value `held_region` returned, polled once.
    assert!(unsafe { held::poll(a, false) }.unwrap());
    state.busy.store(false, Ordering::SeqCst);
    rt.unregister(key);
    assert_eq!(state.memory.live(), 0, "nothing leaked");
}

/// Whether the log orders queue `to` after queue `from` before index `before`: an event
/// recorded on `from`, then waited for on `to`.
fn ordered_after(log: &[Op], from: QueueId, to: QueueId, before: usize) -> bool {
    log[..before].iter().enumerate().any(|(i, o)| match o {
        Op::RecordEvent { event, queue, .. } if *queue == from => log[i..before].iter().any(
            |w| matches!(w, Op::WaitEvent { event: e, queue: q, .. } if e == event && *q == to),
        ),
        _ => false,
    })
}

#[test]
fn the_last_release_copies_back_after_the_work_of_constructs_that_released_before() {
    let (rt, state, key, region) = inc_runtime();
    let x = Box::leak(Box::new(0i32));
    let to = (addr(x), 4i64, mt::TO);
    common::enter(&rt, &[to]).unwrap();
    // A `nowait` region that uses x while `enter data` holds it: at its exit it releases its
    // reference but stays held, its kernel still to run (the mock's queues stay busy).
    state.busy.store(true, Ordering::SeqCst);
    state.clear_log();
    let item = (addr(x), 4i64, mt::TO | mt::FROM | mt::TARGET_PARAM);
    let a = held_region(&rt, region, &[item], true);
    assert!(!a.is_null(), "A is held");
    // `exit data map(from)` releases the last reference: under OpenMP A's region, still
    // running, holds one, so its copy back must come after A's kernel.
    common::exit(&rt, &[(addr(x), 4, mt::FROM)]).unwrap();
    let log = state.log();
    let (launch, a_queue) = log
        .iter()
        .enumerate()
        .find_map(|(i, o)| match o {
            Op::Launch { queue, .. } => Some((i, *queue)),
            _ => None,
        })
        .unwrap();
    let (copy_back, exit_queue) = log
        .iter()
        .enumerate()
        .skip(launch)
        .find_map(|(i, o)| match o {
            Op::Copy {
                kind: CopyKind::DeviceToHost,
                queue: Some(q),
                ..
            } if *q != a_queue => Some((i, *q)),
            _ => None,
        })
        .expect("exit data copied x back");
    assert!(
        ordered_after(&log, a_queue, exit_queue, copy_back),
        "exit data's copy back waits for A's queue on the device: {log:#?}"
    );
    state.busy.store(false, Ordering::SeqCst);
    // SAFETY: the slot value `held_region` returned, polled once.
    assert!(unsafe { held::poll(a, false) }.unwrap());
    rt.unregister(key);
    assert_eq!(state.memory.live(), 0, "nothing leaked");
}
