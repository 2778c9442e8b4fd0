//! On a device that frees on the queue (CUDA's memory pools), a construct's copy back to the
//! host is queued after the mapping table is unlocked: the driver's call can take hundreds of
//! microseconds when many threads submit at once (32 concurrent `nowait` regions: ~0.7 ms per
//! `cuMemcpyDtoHAsync`), and every other thread's mapping waited for it. The mock's copy hook
//! maps another array from a second thread while the first is inside its copy back; with the
//! copy under the lock that mapping cannot finish. On other devices the copy stays under the
//! lock (a racing thread could otherwise free the memory it reads), and the mapping waits.
//! The same for `target update from`.

use omptarget_core::ops::map_type as mt;
use omptarget_core::{Config, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MockPlugin, MockState};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

mod common;
use common::{addr, enter, exit, leak, register_image, update};

fn leak_read(a: usize) -> &'static [u8; 64] {
    // SAFETY: `a` is the address of a leaked `[u8; 64]`.
    unsafe { &*(a as *const [u8; 64]) }
}

/// Runs `copy_back` (a construct that copies `x` back) while, inside its copy, another thread
/// maps `y`; checks that the mapping finished during the copy (stream-ordered devices) or
/// waited for it (others), and that `x` got the device's bytes.
fn map_during_copy_back(
    rt: &Arc<Runtime>,
    state: &MockState,
    stream_ordered: bool,
    x: usize,
    y: usize,
    copy_back: impl FnOnce(),
) {
    let dev = rt.device(0).unwrap();
    let on_device = rt.mapped_ptr(&dev, x).expect("mapped");
    state
        .memory
        .with_bytes(on_device, 64, |b| b.fill(9))
        .unwrap();
    let blocked = Err("blocked: the table was locked".to_string());
    let outcome: Arc<Mutex<Option<Result<(), String>>>> = Arc::default();
    let other: Arc<Mutex<Option<mpsc::Receiver<_>>>> = Arc::default();
    let hooks = Arc::new(AtomicUsize::new(0));
    let (rt2, outcome2, other2, hooks2) =
        (rt.clone(), outcome.clone(), other.clone(), hooks.clone());
    let patience = Duration::from_millis(if stream_ordered { 10_000 } else { 300 });
    *state.on_copy_from_device.lock().unwrap() = Some(Arc::new(move || {
        hooks2.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = mpsc::channel();
        let rt = rt2.clone();
        std::thread::spawn(move || {
            tx.send(enter(&rt, &[(y, 64, mt::TO)]).map_err(|e| e.to_string()))
                .ok();
        });
        let r = rx.recv_timeout(patience);
        *outcome2.lock().unwrap() = Some(r.clone().unwrap_or(blocked.clone()));
        if r.is_err() {
            *other2.lock().unwrap() = Some(rx);
        }
    }));
    copy_back();
    *state.on_copy_from_device.lock().unwrap() = None;

    assert_eq!(hooks.load(Ordering::SeqCst), 1, "one copy back");
    let during = outcome.lock().unwrap().take().expect("the hook ran");
    if stream_ordered {
        assert_eq!(
            during,
            Ok(()),
            "the other thread's mapping finished during the copy back"
        );
    } else {
        assert!(during.is_err(), "the copy back held the table");
        let rx = other.lock().unwrap().take().expect("still mapping");
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(Ok(())));
    }
    assert_eq!(*leak_read(x), [9u8; 64], "x got the device's bytes");
    assert!(rt.mapped_ptr(&dev, y).is_some(), "y is mapped");
    exit(rt, &[(y, 64, mt::DELETE)]).unwrap();
}

#[test]
fn other_threads_map_while_a_copy_back_is_queued() {
    for (stream_ordered, asynchronous) in [(true, true), (false, false)] {
        let plugin = MockPlugin::new(1, stream_ordered, asynchronous);
        let state = plugin.state.clone();
        let rt = Arc::new(Runtime::new(
            Config::default(),
            vec![Arc::new(plugin)],
            Box::new(NoHostRuntime),
        ));
        register_image(&rt, c"k");
        let dev = rt.device(0).unwrap();
        let (x, y) = (addr(leak([3u8; 64])), addr(leak([5u8; 64])));

        // A construct's exit.
        enter(&rt, &[(x, 64, mt::TO)]).unwrap();
        map_during_copy_back(&rt, &state, stream_ordered, x, y, || {
            exit(&rt, &[(x, 64, mt::FROM)]).unwrap()
        });
        assert!(rt.mapped_ptr(&dev, x).is_none(), "x was unmapped");

        // `target update from`.
        let x = addr(leak([4u8; 64]));
        enter(&rt, &[(x, 64, mt::TO)]).unwrap();
        map_during_copy_back(&rt, &state, stream_ordered, x, y, || {
            update(&rt, &[(x, 64, mt::FROM)]).unwrap()
        });
        assert!(rt.mapped_ptr(&dev, x).is_some(), "x is still mapped");
        exit(&rt, &[(x, 64, mt::DELETE)]).unwrap();
    }
}
