//! Deferred completion (docs/ARCHITECTURE.md): data constructs whose remaining device work no
//! longer involves the program's host memory return before that work completes, on a backend
//! that orders allocation on its queues; the thread's next construct takes over their queue,
//! and everything else that could see their work completes them first. Driven through the
//! mock's stream-ordered, asynchronous model, whose log shows every synchronisation.

use omptarget_core::ops::map_type as mt;
use omptarget_core::plugin::LaunchConfig;
use omptarget_core::trace::SourceLoc;
use omptarget_core::{Config, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MockState, Op, OpKind};
use std::sync::Arc;
use std::sync::atomic::Ordering;

mod common;
use common::{addr, inc_plugin, register_image, with_args};

struct Fixture {
    rt: Runtime,
    state: Arc<MockState>,
    key: usize,
    region: usize,
}

fn fixture(config: Config) -> Fixture {
    let (plugin, state) = inc_plugin(1, true, true);
    let rt = Runtime::new(config, vec![Arc::new(plugin)], Box::new(NoHostRuntime));
    let (key, region) = register_image(&rt, c"inc");
    let fx = Fixture {
        rt,
        state,
        key,
        region,
    };
    // The image is loaded (its own waits) before the tests count waits.
    let x = Box::new(0i32);
    construct(
        &fx,
        Kind::Region,
        &[(addr(&*x), 4, mt::TO | mt::TARGET_PARAM)],
    )
    .unwrap();
    fx.state.clear_log();
    fx
}

#[derive(Clone, Copy)]
enum Kind {
    Enter,
    Exit,
    Update,
    Region,
}

/// One blocking construct on device 0, ended as the C entry points end it
/// ([`Runtime::finish_construct`] for data constructs; a target region waits).
fn construct(fx: &Fixture, kind: Kind, items: &[(usize, i64, u64)]) -> Result<(), String> {
    let dev = fx.rt.device(0).map_err(|e| e.to_string())?;
    with_args(items, |args| {
        let mut ai = fx.rt.async_info(&dev);
        let r = match kind {
            Kind::Enter => fx.rt.data_begin(&dev, args, &mut ai),
            Kind::Exit => fx.rt.data_end(&dev, args, &mut ai),
            Kind::Update => fx.rt.data_update(&dev, args, &mut ai),
            Kind::Region => {
                let config = LaunchConfig {
                    version: 3,
                    ..Default::default()
                };
                let loc = SourceLoc::default();
                fx.rt.target(&dev, fx.region, args, &config, &loc, &mut ai)
            }
        };
        let deferrable = !matches!(kind, Kind::Region);
        match r {
            Ok(()) if deferrable => fx.rt.finish_construct(ai),
            Ok(()) => ai.synchronize(),
            Err(e) => {
                let _ = ai.synchronize();
                Err(e)
            }
        }
        .map_err(|e| e.to_string())
    })
}

fn syncs(fx: &Fixture) -> usize {
    fx.state
        .log()
        .iter()
        .filter(|o| matches!(o, Op::Synchronize { .. }))
        .count()
}

#[test]
fn enter_data_returns_early_and_the_next_construct_completes_it_on_the_same_queue() {
    let fx = fixture(Config::default());
    let x = Box::new(41i32);
    let item = (addr(&*x), 4, mt::TO);
    fx.state.clear_log();
    construct(&fx, Kind::Enter, &[item]).unwrap();
    assert_eq!(syncs(&fx), 0, "enter data did not wait");
    assert_eq!(fx.rt.parked_count(), 1);
    assert!(fx.rt.target_is_present(item.0, 0), "mapped at once");
    // The region runs behind it on the same queue, and waits once for both.
    construct(&fx, Kind::Region, &[(item.0, 4, mt::TARGET_PARAM)]).unwrap();
    assert_eq!(fx.rt.parked_count(), 0);
    let log = fx.state.log();
    let queues: Vec<_> = log
        .iter()
        .filter_map(|o| match o {
            Op::Copy { queue, .. } => *queue,
            Op::Launch { queue, .. } | Op::Synchronize { queue, .. } => Some(*queue),
            _ => None,
        })
        .collect();
    assert!(
        queues.len() >= 3 && queues.iter().all(|q| *q == queues[0]),
        "{log:?}"
    );
    assert_eq!(syncs(&fx), 1, "{log:#?}");
    assert!(
        !log.iter()
            .any(|o| matches!(o, Op::RecordEvent { .. } | Op::WaitEvent { .. })),
        "same thread, same queue: no event needed"
    );
    // Exit data with `from` waits (the bytes must be home), and brings the kernel's value.
    let mut back = Box::new(0i32);
    let _ = &mut back;
    construct(&fx, Kind::Exit, &[(item.0, 4, mt::FROM)]).unwrap();
    assert_eq!(fx.rt.parked_count(), 0, "a copy home is never deferred");
    assert_eq!(*x, 42);
    assert!(!fx.rt.target_is_present(item.0, 0));
    fx.rt.unregister(fx.key);
    assert_eq!(fx.state.memory.live(), 0, "nothing leaked");
}

#[test]
fn alloc_enter_and_delete_exit_both_defer_and_free_everything() {
    let fx = fixture(Config::default());
    let a = vec![0u8; 1 << 16];
    let item = (a.as_ptr() as usize, a.len() as i64, 0);
    for _ in 0..50 {
        construct(&fx, Kind::Enter, &[item]).unwrap();
        construct(&fx, Kind::Region, &[(item.0, item.1, mt::TARGET_PARAM)]).unwrap();
        construct(&fx, Kind::Exit, &[(item.0, item.1, mt::DELETE)]).unwrap();
        assert!(fx.rt.parked_count() <= 1);
    }
    assert!(!fx.rt.target_is_present(item.0, 0));
    // One wait per region: the enter and the exit data completed with the regions.
    assert_eq!(syncs(&fx), 50, "{} waits", syncs(&fx));
    // Every delete freed on its queue, behind the parked enter data it took over (whose use
    // of the memory is ahead of it there), not later and apart from the queue.
    let log = fx.state.log();
    let frees: Vec<_> = log
        .iter()
        .filter_map(|o| match o {
            Op::Free { queue, .. } => Some(*queue),
            _ => None,
        })
        .collect();
    assert_eq!(frees.len(), 50);
    assert!(frees.iter().all(|q| q.is_some()), "{frees:?}");
    fx.rt.unregister(fx.key);
    assert_eq!(
        fx.rt.parked_count(),
        0,
        "unregistration completed the last exit"
    );
    assert_eq!(fx.state.memory.live(), 0, "nothing leaked");
}

#[test]
fn a_chain_of_deferred_constructs_stays_short() {
    let fx = fixture(Config::default());
    let bufs: Vec<Box<[u8; 64]>> = (0..20).map(|_| Box::new([7u8; 64])).collect();
    fx.state.clear_log();
    for b in &bufs {
        construct(&fx, Kind::Enter, &[(b.as_ptr() as usize, 64, mt::TO)]).unwrap();
    }
    // 20 enter data on one queue: every few, one waits for the ones before it.
    let waits = syncs(&fx);
    assert!((4..=10).contains(&waits), "{waits} waits for 20 constructs");
    assert!(fx.rt.parked_count() <= 1);
    for b in &bufs {
        construct(&fx, Kind::Exit, &[(b.as_ptr() as usize, 64, mt::DELETE)]).unwrap();
    }
    fx.rt.complete_parked(None).unwrap();
    assert_eq!(fx.rt.parked_count(), 0);
    fx.rt.unregister(fx.key);
    assert_eq!(fx.state.memory.live(), 0);
}

#[test]
fn routines_that_use_device_addresses_complete_parked_work_first() {
    let fx = fixture(Config::default());
    let x = Box::new(5i32);
    construct(&fx, Kind::Enter, &[(addr(&*x), 4, mt::TO)]).unwrap();
    assert_eq!(fx.rt.parked_count(), 1);
    let dev = fx.rt.device(0).unwrap();
    let p = fx.rt.mapped_ptr(&dev, addr(&*x)).expect("mapped");
    assert_eq!(fx.rt.parked_count(), 1, "a table lookup waits for nothing");
    fx.rt.complete_parked(Some(0)).unwrap();
    assert_eq!(fx.rt.parked_count(), 0);
    // omp_target_memcpy from the device buffer sees the entered data.
    construct(&fx, Kind::Update, &[(addr(&*x), 4, mt::TO)]).unwrap();
    let mut out = 0i32;
    fx.state.clear_log();
    fx.rt
        .target_memcpy(addr(&out), p, 4, 0, 0, fx.rt.initial_device(), 0)
        .unwrap();
    let _ = &mut out;
    assert_eq!(out, 5);
    assert_eq!(fx.rt.parked_count(), 0);
    let log = fx.state.log();
    let first_sync = log.iter().position(|o| matches!(o, Op::Synchronize { .. }));
    let copy = log.iter().position(|o| matches!(o, Op::Copy { .. }));
    assert!(
        first_sync < copy,
        "the parked update completed before the copy: {log:?}"
    );
    construct(&fx, Kind::Exit, &[(addr(&*x), 4, mt::DELETE)]).unwrap();
    fx.rt.unregister(fx.key);
    assert_eq!(fx.state.memory.live(), 0);
}

#[test]
fn another_threads_construct_completes_parked_work_first() {
    let fx = fixture(Config::default());
    let x = Box::new(1i32);
    let at = addr(&*x);
    construct(&fx, Kind::Enter, &[(at, 4, mt::TO)]).unwrap();
    assert_eq!(fx.rt.parked_count(), 1);
    std::thread::scope(|s| {
        s.spawn(|| {
            let y = Box::new(0i32);
            construct(&fx, Kind::Enter, &[(addr(&*y), 4, 0)]).unwrap();
            // This thread's own enter data may be parked now; the first thread's is not.
            construct(&fx, Kind::Exit, &[(addr(&*y), 4, mt::DELETE)]).unwrap();
            fx.rt.complete_parked(None).unwrap();
        });
    });
    assert_eq!(fx.rt.parked_count(), 0);
    assert!(fx.rt.target_is_present(at, 0));
    construct(&fx, Kind::Exit, &[(at, 4, mt::DELETE)]).unwrap();
    fx.rt.unregister(fx.key);
    assert_eq!(fx.state.memory.live(), 0);
}

#[test]
fn host_memory_still_read_by_the_device_keeps_the_construct_waiting() {
    let fx = fixture(Config::default());
    // Like DMA from pinned memory: the program may change the bytes once enter data returns,
    // so it must not return before the device has read them.
    fx.state.host_dma.store(true, Ordering::Relaxed);
    let x = Box::new(3i32);
    fx.state.clear_log();
    construct(&fx, Kind::Enter, &[(addr(&*x), 4, mt::TO)]).unwrap();
    assert_eq!(fx.rt.parked_count(), 0);
    assert_eq!(syncs(&fx), 1);
    // An allocation alone reads nothing of the host.
    let y = Box::new(0i32);
    construct(&fx, Kind::Enter, &[(addr(&*y), 4, 0)]).unwrap();
    assert_eq!(fx.rt.parked_count(), 1);
    fx.state.host_dma.store(false, Ordering::Relaxed);
    for p in [addr(&*x), addr(&*y)] {
        construct(&fx, Kind::Exit, &[(p, 4, mt::DELETE)]).unwrap();
    }
    fx.rt.unregister(fx.key);
    assert_eq!(fx.state.memory.live(), 0);
}

#[test]
fn switched_off_every_construct_waits() {
    let config = Config {
        deferred_completion: false,
        ..Config::default()
    };
    let fx = fixture(config);
    let x = Box::new(3i32);
    fx.state.clear_log();
    construct(&fx, Kind::Enter, &[(addr(&*x), 4, mt::TO)]).unwrap();
    construct(&fx, Kind::Exit, &[(addr(&*x), 4, mt::DELETE)]).unwrap();
    assert_eq!(fx.rt.parked_count(), 0);
    assert_eq!(syncs(&fx), 2);
}

#[test]
fn a_failure_of_parked_work_is_reported_by_the_construct_that_waits_for_it() {
    let fx = fixture(Config::default());
    let x = Box::new(3i32);
    construct(&fx, Kind::Enter, &[(addr(&*x), 4, mt::TO)]).unwrap();
    assert_eq!(fx.rt.parked_count(), 1);
    // The queue fails when it is next waited for: the region that took it over fails.
    fx.state.fail_nth(OpKind::Synchronize, 1);
    let r = construct(&fx, Kind::Region, &[(addr(&*x), 4, mt::TARGET_PARAM)]);
    assert!(r.is_err(), "the failure reached the program");
    assert_eq!(fx.rt.parked_count(), 0);
    // The runtime stays consistent: the entry is still mapped once, and goes away cleanly.
    assert!(fx.rt.target_is_present(addr(&*x), 0));
    construct(&fx, Kind::Exit, &[(addr(&*x), 4, mt::DELETE)]).unwrap();
    assert!(!fx.rt.target_is_present(addr(&*x), 0));
    fx.rt.unregister(fx.key);
    assert_eq!(fx.state.memory.live(), 0);
}

#[test]
fn threads_parking_and_completing_each_other_keep_every_value_and_leak_nothing() {
    let fx = fixture(Config::default());
    std::thread::scope(|s| {
        for t in 0..8 {
            let fx = &fx;
            s.spawn(move || {
                let mut x = Box::new(t * 1000);
                let scratch = vec![0u8; 4096];
                let at = addr(&*x);
                for i in 0..200 {
                    // enter (parked), an allocation-only enter (parked behind it), the region
                    // (takes the queue over), exit with the value home, delete the scratch.
                    construct(fx, Kind::Enter, &[(at, 4, mt::TO)]).unwrap();
                    let sc = (scratch.as_ptr() as usize, 4096, 0);
                    construct(fx, Kind::Enter, &[sc]).unwrap();
                    construct(fx, Kind::Region, &[(at, 4, mt::TARGET_PARAM)]).unwrap();
                    construct(fx, Kind::Exit, &[(at, 4, mt::FROM)]).unwrap();
                    construct(fx, Kind::Exit, &[(sc.0, sc.1, mt::DELETE)]).unwrap();
                    assert_eq!(*x, t * 1000 + i + 1, "thread {t} iteration {i}");
                }
                let _ = &mut x;
            });
        }
    });
    fx.rt.complete_parked(None).unwrap();
    assert_eq!(fx.rt.parked_count(), 0);
    fx.rt.unregister(fx.key);
    assert_eq!(fx.state.memory.live(), 0, "nothing leaked");
}

#[test]
fn a_free_that_a_wait_would_give_back_to_the_device_waits() {
    let fx = fixture(Config::default());
    // Like a CUDA pool over its release threshold: the synchronisation at the end of exit
    // data gives the memory back to the device (another process may wait for it).
    fx.state.pool_over_threshold.store(true, Ordering::Relaxed);
    let a = vec![0u8; 1 << 20];
    let item = (a.as_ptr() as usize, a.len() as i64, 0);
    construct(&fx, Kind::Enter, &[item]).unwrap();
    assert_eq!(
        fx.rt.parked_count(),
        1,
        "an allocation frees nothing: deferred"
    );
    construct(&fx, Kind::Exit, &[(item.0, item.1, mt::DELETE)]).unwrap();
    assert_eq!(
        fx.rt.parked_count(),
        0,
        "the delete waited, the enter with it"
    );
    assert_eq!(syncs(&fx), 1);
    // Under the threshold the same delete is deferred.
    fx.state.pool_over_threshold.store(false, Ordering::Relaxed);
    fx.state.clear_log();
    construct(&fx, Kind::Enter, &[item]).unwrap();
    construct(&fx, Kind::Exit, &[(item.0, item.1, mt::DELETE)]).unwrap();
    assert_eq!(fx.rt.parked_count(), 1);
    // The delete took over the parked enter's queue, whose use of the memory is ahead of it
    // there: freed on that queue at once, not left for the enter's completion.
    let log = fx.state.log();
    let queues: Vec<_> = log
        .iter()
        .filter_map(|o| match o {
            Op::Alloc { queue, .. } | Op::Free { queue, .. } => Some(*queue),
            _ => None,
        })
        .collect();
    assert_eq!(queues.len(), 2, "{log:?}");
    assert!(queues[0].is_some() && queues[0] == queues[1], "{log:?}");
    fx.rt.unregister(fx.key);
    assert_eq!(fx.state.memory.live(), 0);
}
