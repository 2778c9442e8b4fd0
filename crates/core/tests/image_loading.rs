//! Image loading on the mock backend: no lock is held while a device loads an image or runs
//! its constructors, a binary unregistered meanwhile is never installed, and an image whose
//! constructor fails leaves nothing behind.

mod common;

use common::{addr, entry, flagged_entry, leak};
use omptarget_core::image::entry_flags;
use omptarget_core::{Config, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockPlugin, MockState, Op, OpKind};
use std::sync::Arc;
use std::time::Duration;

/// A runtime over one mock device and a binary whose entries are a constructor `ctor` and a
/// 4-byte global; returns the key and the global's host address.
fn runtime_with_ctor(rt: &Runtime) -> (usize, usize) {
    let ctor = addr(leak(0u8));
    let global = addr(leak(0u32));
    let entries = vec![
        flagged_entry(c"ctor", ctor, 0, entry_flags::CTOR),
        entry(c"g", global, 4),
    ];
    let key = addr(leak(0u64));
    let image: &'static [u8] = MAGIC;
    rt.register(key, &[image], entries);
    (key, global)
}

fn mock() -> (MockPlugin, Arc<MockState>) {
    let plugin = MockPlugin::new(1, false, false);
    let state = plugin.state.clone();
    (plugin, state)
}

/// Runs `f` on another thread and fails (instead of hanging) if it does not finish in time.
fn within_deadline(what: &str, f: impl FnOnce() + Send + 'static) {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = done.send(());
    });
    if finished.recv_timeout(Duration::from_secs(20)).is_err() {
        panic!("{what} did not finish in 20 s: a lock is held across the image's constructor");
    }
}

#[test]
fn unregistration_from_a_loading_images_constructor_neither_hangs_nor_installs_it() {
    // A constructor that unregisters its own binary: what a thread in `dlclose` (holding the
    // dynamic loader's lock) does while another loads the image. It must not wait for the
    // load, and the load must then drop the image instead of installing it.
    let (plugin, state) = mock();
    let rt = Arc::new(Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    ));
    let (key, global) = runtime_with_ctor(&rt);
    let weak = Arc::downgrade(&rt);
    state.add_kernel("ctor", move |_, _| {
        if let Some(rt) = weak.upgrade() {
            rt.unregister(key);
        }
    });
    let rt2 = rt.clone();
    within_deadline(
        "loading an image whose constructor unregisters it",
        move || {
            rt2.device(0).expect("the device is usable");
        },
    );
    assert!(
        !rt.target_is_present(global, 0),
        "the unregistered binary's global is not mapped"
    );
    let log = state.log();
    assert!(log.contains(&Op::Load { device: 0 }));
    assert!(
        log.contains(&Op::Unload { device: 0 }),
        "the loader unloads the image it may not install: {log:?}"
    );
    assert_eq!(state.memory.live(), 0, "the image's globals went with it");
}

#[test]
fn an_image_whose_constructor_fails_is_unloaded_with_its_globals() {
    let (plugin, state) = mock();
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    let (_key, global) = runtime_with_ctor(&rt);
    state.fail_nth(OpKind::Launch, 1);
    assert!(
        rt.device(0).is_err(),
        "the constructor's failure is reported"
    );
    assert!(
        state.log().contains(&Op::Unload { device: 0 }),
        "the image is unloaded"
    );
    assert_eq!(state.memory.live(), 0, "its globals' blocks are freed");
    assert!(!rt.target_is_present(global, 0));
    // The next construct tries again, and this time the constructor succeeds.
    rt.device(0).expect("loaded on the second try");
    assert!(rt.target_is_present(global, 0));
}
