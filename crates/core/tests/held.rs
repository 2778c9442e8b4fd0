//! `nowait` constructs left running in their task's slot (`ops/held.rs`): a later construct
//! that copies host memory to the device first completes the held constructs whose copies
//! back land in that memory (libomp hands `target in_reduction nowait` tasks one shared
//! variable, which they map at once), and so does one that finds the memory's entry released
//! by a held construct; polls and take-overs of held constructs. Driven through the mock's
//! asynchronous model, whose queues stay busy until synchronised and whose log shows every
//! synchronisation.

use omptarget_core::Runtime;
use omptarget_core::ops::held;
use omptarget_core::ops::map_type as mt;
use omptarget_core::plugin::{CopyKind, QueueId};
use omptarget_plugin_mock::{MockState, Op, OpKind};
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::Ordering;

mod common;
use common::{addr, enter, exit, held_region, inc_runtime};

struct Fixture {
    rt: Runtime,
    state: Arc<MockState>,
    key: usize,
    region: usize,
}

fn fixture() -> Fixture {
    let (rt, state, key, region) = inc_runtime();
    Fixture {
        rt,
        state,
        key,
        region,
    }
}

/// A target region as the entry points run one (`common::held_region`): a `nowait` one still
/// running (the mock's queues are busy) is left in a slot (returned), others wait (null).
fn region(fx: &Fixture, items: &[(usize, i64, u64)], nowait: bool) -> *mut c_void {
    held_region(&fx.rt, fx.region, items, nowait)
}

/// The queue of the first copy to the device from host address `host`, and the log index
/// of each such copy.
fn copies_in(log: &[Op], host: usize) -> Vec<(usize, Option<QueueId>)> {
    log.iter()
        .enumerate()
        .filter_map(|(i, o)| match o {
            Op::Copy {
                kind: CopyKind::HostToDevice,
                src,
                queue,
                ..
            } if *src == host => Some((i, *queue)),
            _ => None,
        })
        .collect()
}

/// A `tofrom` kernel argument of one `i32`.
fn tofrom(x: &i32) -> (usize, i64, u64) {
    (addr(x), 4, mt::TO | mt::FROM | mt::TARGET_PARAM)
}

/// After one blocking region over `item` (the image loaded, the memory mapped once), the
/// mock's queues stay busy and its log starts empty.
fn keep_busy(fx: &Fixture, item: (usize, i64, u64)) {
    region(fx, &[item], false);
    fx.state.busy.store(true, Ordering::SeqCst);
    fx.state.clear_log();
}

/// Unregisters the image; nothing of the device's memory is left.
fn end(fx: Fixture) {
    fx.rt.unregister(fx.key);
    assert_eq!(fx.state.memory.live(), 0, "nothing leaked");
}

fn synchronised_before(log: &[Op], queue: Option<QueueId>, before: usize) -> bool {
    log[..before]
        .iter()
        .any(|o| matches!(o, Op::Synchronize { queue: q, .. } if Some(*q) == queue))
}

/// The first copy from the device signals `inside` and then waits 50 ms before it goes on.
fn pause_in_first_copy_back(fx: &Fixture, inside: std::sync::mpsc::Sender<()>) {
    let inside = std::sync::Mutex::new(Some(inside));
    *fx.state.on_copy_from_device.lock().unwrap() = Some(Arc::new(move || {
        if let Some(tx) = inside.lock().unwrap().take() {
            tx.send(()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }));
}

/// A `nowait` region over `item` whose copy back (registered, not yet held) pauses while
/// another thread runs a blocking region over `other`: the held region's slot value.
fn region_inside_copy_back(
    fx: &Fixture,
    item: (usize, i64, u64),
    other: (usize, i64, u64),
) -> usize {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    pause_in_first_copy_back(fx, tx);
    let a = std::thread::scope(|s| {
        let b = s.spawn(move || {
            rx.recv().unwrap();
            region(fx, &[other], false);
        });
        let a = region(fx, &[item], true) as usize;
        b.join().unwrap();
        a
    });
    *fx.state.on_copy_from_device.lock().unwrap() = None;
    a
}

#[test]
fn a_copy_in_completes_the_threads_held_construct_that_copies_back_there_first() {
    let fx = fixture();
    let x = Box::new(41i32);
    let item = tofrom(&x);
    keep_busy(&fx, item);
    let a = region(&fx, &[item], true);
    assert!(
        !a.is_null(),
        "the mock's busy queue keeps the construct running"
    );
    // The same thread's next construct maps the same host memory: it reads it only after
    // the held construct has completed (its copy back landed).
    let b = region(&fx, &[item], true);
    let log = fx.state.log();
    let ins = copies_in(&log, item.0);
    assert_eq!(ins.len(), 2, "{log:#?}");
    assert_ne!(ins[0].1, ins[1].1, "two queues");
    assert!(
        synchronised_before(&log, ins[0].1, ins[1].0),
        "the held construct completed before the second copy in: {log:#?}"
    );
    // Its task's poll finds it complete without asking the device again.
    assert!(unsafe { held::poll(a, false) }.unwrap());
    fx.state.busy.store(false, Ordering::SeqCst);
    assert!(unsafe { held::poll(b, false) }.unwrap());
    assert_eq!(*x, 44);
    end(fx);
}

#[test]
fn held_constructs_that_copy_back_elsewhere_keep_running() {
    let fx = fixture();
    let (x, y, z) = (Box::new(1i32), Box::new(2i32), Box::new(3i32));
    let (ix, iy) = (tofrom(&x), tofrom(&y));
    keep_busy(&fx, ix);
    let a = region(&fx, &[ix], true);
    let b = region(&fx, &[iy], true);
    // Other memory, mapped `from` only: nothing to wait for. (Memory a held construct copies
    // back from is another matter, `from` only or not: `retired_in_flight.rs`.)
    let c = region(&fx, &[(addr(&*z), 4, mt::FROM | mt::TARGET_PARAM)], true);
    let log = fx.state.log();
    assert!(
        !log.iter().any(|o| matches!(o, Op::Synchronize { .. })),
        "{log:#?}"
    );
    assert!(!unsafe { held::poll(a, false) }.unwrap());
    fx.state.busy.store(false, Ordering::SeqCst);
    for h in [a, b, c] {
        assert!(unsafe { held::poll(h, false) }.unwrap());
    }
    end(fx);
}

#[test]
fn a_construct_of_the_same_task_takes_a_held_one_over_unless_it_copies_back() {
    let fx = fixture();
    let x = Box::new(0i32);
    let item = tofrom(&x);
    keep_busy(&fx, item);
    // Copying only to the device, it registered nothing: the task's next construct goes on
    // from it, on its queue, without waiting.
    let a = region(&fx, &[(item.0, 4, mt::TO | mt::TARGET_PARAM)], true);
    let ai = unsafe { held::take(a) }.unwrap().expect("still running");
    assert!(
        ai.tracks_copies_home(),
        "its later copies back are registered"
    );
    assert!(
        !fx.state
            .log()
            .iter()
            .any(|o| matches!(o, Op::Synchronize { .. })),
        "taken over without a wait"
    );
    fx.state.busy.store(false, Ordering::SeqCst);
    ai.synchronize().unwrap();
    // One whose copy back is still to land is completed instead: other constructs may be
    // waiting for its cell, and the task's next construct may wait for theirs.
    fx.state.busy.store(true, Ordering::SeqCst);
    let b = region(&fx, &[item], true);
    fx.state.clear_log();
    assert!(unsafe { held::take(b) }.unwrap().is_none(), "completed");
    let log = fx.state.log();
    assert!(
        log.iter().any(|o| matches!(o, Op::Synchronize { .. })),
        "{log:#?}"
    );
    assert_eq!(
        *x, 2,
        "its copy back landed (the `to`-only region copied nothing back)"
    );
    // Its cell is done: a later copy in waits for nothing.
    fx.state.clear_log();
    region(&fx, &[item], false);
    let log = fx.state.log();
    let syncs = log
        .iter()
        .filter(|o| matches!(o, Op::Synchronize { .. }))
        .count();
    assert_eq!(syncs, 1, "only the blocking region's own wait: {log:#?}");
    end(fx);
}

#[test]
fn a_construct_of_another_thread_completes_it_too() {
    let fx = fixture();
    let x = Box::new(0i32);
    let item = tofrom(&x);
    keep_busy(&fx, item);
    let a = region(&fx, &[item], true) as usize;
    let b = std::thread::scope(|s| s.spawn(|| region(&fx, &[item], true) as usize).join()).unwrap();
    let log = fx.state.log();
    let ins = copies_in(&log, item.0);
    assert!(synchronised_before(&log, ins[0].1, ins[1].0), "{log:#?}");
    assert!(unsafe { held::poll(a as *mut c_void, false) }.unwrap());
    fx.state.busy.store(false, Ordering::SeqCst);
    assert!(unsafe { held::poll(b as *mut c_void, false) }.unwrap());
    assert_eq!(*x, 3);
    end(fx);
}

#[test]
fn a_construct_still_being_issued_is_waited_for_from_its_first_copy_back() {
    let fx = fixture();
    let x = Box::new(0i32);
    let item = tofrom(&x);
    keep_busy(&fx, item);
    // Inside the nowait region's copy back (registered, not yet held), another thread's
    // region maps the same memory, and the copy back's thread waits a while before it goes
    // on to be held.
    let a = region_inside_copy_back(&fx, item, item);
    let log = fx.state.log();
    let ins = copies_in(&log, item.0);
    assert_eq!(ins.len(), 2, "{log:#?}");
    assert!(
        synchronised_before(&log, ins[0].1, ins[1].0),
        "the other thread copied in only after the region was held and completed: {log:#?}"
    );
    assert!(unsafe { held::poll(a as *mut c_void, false) }.unwrap());
    fx.state.busy.store(false, Ordering::SeqCst);
    assert_eq!(*x, 3);
    end(fx);
}

#[test]
fn memory_a_held_construct_released_is_mapped_again_only_after_it_completed() {
    let fx = fixture();
    let x = Box::new(0i32);
    let item = tofrom(&x);
    keep_busy(&fx, item);
    // Inside the nowait region's copy back its entry has no reference left but is still in
    // the table (it leaves after the construct's last item). Another thread's region maps
    // the memory `from` only: it copies nothing in, so only the entry it finds tells it of
    // the copy back in flight. Sharing that device copy, its own copy back could land first
    // and the held one's after it; it must complete the held construct and map afresh.
    let from_only = (item.0, 4, mt::FROM | mt::TARGET_PARAM);
    let a = region_inside_copy_back(&fx, item, from_only);
    let log = fx.state.log();
    let launches: Vec<usize> = (0..log.len())
        .filter(|&i| matches!(log[i], Op::Launch { .. }))
        .collect();
    assert_eq!(launches.len(), 2, "{log:#?}");
    let Op::Launch { queue: first, .. } = log[launches[0]] else {
        unreachable!()
    };
    assert!(
        synchronised_before(&log, Some(first), launches[1]),
        "the held region completed before the other thread's region ran: {log:#?}"
    );
    let allocs = log[launches[0]..]
        .iter()
        .filter(|o| matches!(o, Op::Alloc { size: 4, .. }))
        .count();
    assert_eq!(allocs, 1, "the second region mapped afresh: {log:#?}");
    assert!(unsafe { held::poll(a as *mut c_void, false) }.unwrap());
    fx.state.busy.store(false, Ordering::SeqCst);
    end(fx);
}

#[test]
fn a_poll_while_another_thread_completes_the_construct_says_not_yet_then_reports_its_failure() {
    let fx = fixture();
    let x = Box::new(0i32);
    let item = tofrom(&x);
    keep_busy(&fx, item);
    let a = region(&fx, &[item], true) as usize;
    assert_ne!(a, 0, "held");
    // Another thread's region copies `x` in: it takes the held construct out and waits for
    // its queue, which fails. While it waits, the task polls.
    fx.state.fail_nth(OpKind::Synchronize, 1);
    let (waiting_tx, waiting_rx) = std::sync::mpsc::channel::<()>();
    let (polled_tx, polled_rx) = std::sync::mpsc::channel::<()>();
    let hook = std::sync::Mutex::new(Some((waiting_tx, polled_rx)));
    *fx.state.on_synchronize.lock().unwrap() = Some(Arc::new(move || {
        if let Some((waiting, polled)) = hook.lock().unwrap().take() {
            waiting.send(()).unwrap();
            polled.recv().unwrap();
        }
    }));
    std::thread::scope(|s| {
        let fx = &fx;
        // `target enter data map(to: x)`: its own result is not what is tested here.
        let b = s.spawn(move || drop(enter(&fx.rt, &[(item.0, 4, mt::TO)])));
        waiting_rx.recv().unwrap();
        // SAFETY: `a` is the held construct's slot value, still in its slot.
        let polled = unsafe { held::poll(a as *mut c_void, false) };
        assert!(
            matches!(polled, Ok(false)),
            "another thread has it out: not yet ({polled:?})"
        );
        polled_tx.send(()).unwrap();
        b.join().unwrap();
    });
    *fx.state.on_synchronize.lock().unwrap() = None;
    // Completed by the other thread, with a failure: the task's poll reports it and releases
    // the slot's reference.
    // SAFETY: still in its slot (the poll above said not yet).
    let polled = unsafe { held::poll(a as *mut c_void, false) };
    assert!(
        polled.is_err(),
        "the completion's failure, at the poll: {polled:?}"
    );
    fx.state.busy.store(false, Ordering::SeqCst);
    exit(&fx.rt, &[(item.0, 4, mt::DELETE)]).unwrap();
    end(fx);
}

#[test]
fn bytes_staged_ahead_before_the_held_construct_completed_are_not_copied_in() {
    let fx = fixture();
    let x = Box::new(0i32);
    let item = tofrom(&x);
    keep_busy(&fx, item);
    // Every `to` item is staged ahead (its bytes taken before the table is locked).
    fx.state.prestage_min.store(1, Ordering::SeqCst);
    // Another thread's region maps `x` `always, tofrom` and stages it ahead (x = 1) before
    // the nowait region below runs; it goes on only once that region, inside its copy back
    // (registered, x = 2 once it lands), has released the entry. It then finds the entry
    // released but still in the table and completes the held region first: its copy in must
    // read x again (2), not the bytes it staged.
    let (staged_tx, staged_rx) = std::sync::mpsc::channel::<()>();
    let (inside_tx, inside_rx) = std::sync::mpsc::channel::<()>();
    let staged_tx = std::sync::Mutex::new(Some((staged_tx, inside_rx)));
    *fx.state.on_prestage.lock().unwrap() = Some(Arc::new(move || {
        if let Some((staged, inside)) = staged_tx.lock().unwrap().take() {
            staged.send(()).unwrap();
            inside.recv().unwrap();
        }
    }));
    pause_in_first_copy_back(&fx, inside_tx);
    let always = (item.0, 4, mt::TO | mt::FROM | mt::ALWAYS | mt::TARGET_PARAM);
    let a = std::thread::scope(|s| {
        let fx = &fx;
        let b = s.spawn(move || {
            region(fx, &[always], false);
        });
        staged_rx.recv().unwrap();
        // The hook fires once: this region's own staging goes by.
        *fx.state.on_prestage.lock().unwrap() = None;
        let a = region(fx, &[item], true) as usize;
        b.join().unwrap();
        a
    });
    *fx.state.on_copy_from_device.lock().unwrap() = None;
    assert!(unsafe { held::poll(a as *mut c_void, false) }.unwrap());
    fx.state.busy.store(false, Ordering::SeqCst);
    assert_eq!(*x, 3, "both increments kept");
    assert_eq!(fx.state.prestaged_now(), 0, "nothing left staged");
    end(fx);
}
