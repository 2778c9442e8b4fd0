//! Copies staged ahead of the mapping table's lock (`Device::prestage`): the device does a
//! likely copy's host-side work before the item's table lock, the copy under the lock uses
//! it, and what no copy used is given back. Driven through the mock's prestage model, which
//! keeps the bytes as they were when staged and counts prestages and their uses.

use omptarget_core::ops::map_type as mt;
use omptarget_core::{Config, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MockPlugin, MockState, OpKind};
use std::sync::Arc;
use std::sync::atomic::Ordering;

mod common;
use common::{addr, enter, exit, leak, register_image};

fn fixture() -> (Runtime, Arc<MockState>, usize) {
    let plugin = MockPlugin::new(1, false, false);
    let state = plugin.state.clone();
    state.prestage_min.store(32, Ordering::Relaxed);
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    let (key, _) = register_image(&rt, c"k");
    (rt, state, key)
}

fn counts(state: &MockState) -> (usize, usize, usize) {
    (
        state.prestages.load(Ordering::Relaxed),
        state.prestages_used.load(Ordering::Relaxed),
        state.prestaged_now(),
    )
}

fn device_bytes(rt: &Runtime, state: &MockState, host: usize, n: usize) -> Vec<u8> {
    let dev = rt.device(0).unwrap();
    let p = rt.mapped_ptr(&dev, host).expect("mapped");
    state.memory.with_bytes(p, n, |b| b.to_vec()).unwrap()
}

#[test]
fn likely_copies_are_staged_ahead_and_used() {
    let (rt, state, key) = fixture();
    let x = leak([7u8; 64]);
    let small = leak([1u8; 16]);
    enter(&rt, &[(addr(x), 64, mt::TO)]).unwrap();
    assert_eq!(counts(&state), (1, 1, 0), "a new item: staged ahead, used");
    assert_eq!(device_bytes(&rt, &state, addr(x), 64), vec![7u8; 64]);
    enter(&rt, &[(addr(x), 64, mt::TO)]).unwrap();
    assert_eq!(
        counts(&state),
        (1, 1, 0),
        "present: no copy, so nothing staged"
    );
    enter(&rt, &[(addr(x), 64, mt::TO | mt::ALWAYS)]).unwrap();
    assert_eq!(counts(&state), (2, 2, 0), "always: staged and used");
    enter(&rt, &[(addr(small), 16, mt::TO)]).unwrap();
    enter(&rt, &[(addr(leak([0u8; 64])), 64, mt::FROM)]).unwrap();
    assert_eq!(
        counts(&state),
        (2, 2, 0),
        "below the device's size, or no `to`"
    );
    exit(&rt, &[(addr(x), 64, mt::DELETE)]).unwrap();
    exit(&rt, &[(addr(small), 16, mt::DELETE)]).unwrap();
    rt.unregister(key);
    assert_eq!(state.memory.live(), 0);
}

#[test]
fn what_no_copy_used_is_given_back() {
    let (rt, state, key) = fixture();
    let x = leak([3u8; 64]);
    let dev = rt.device(0).unwrap();
    // `present` on unmapped data: an error, no copy.
    assert!(enter(&rt, &[(addr(x), 64, mt::TO | mt::PRESENT)]).is_err());
    assert_eq!(counts(&state), (1, 0, 0), "no copy: the buffer came back");
    assert!(rt.mapped_ptr(&dev, addr(x)).is_none());
    state.fail_nth(OpKind::CopyToDevice, 1);
    assert!(enter(&rt, &[(addr(x), 64, mt::TO)]).is_err());
    assert_eq!(
        counts(&state),
        (2, 0, 0),
        "the copy failed: the buffer came back"
    );
    assert!(
        rt.mapped_ptr(&dev, addr(x)).is_none(),
        "the entry went with its copy"
    );
    // The next construct stages afresh and works.
    enter(&rt, &[(addr(x), 64, mt::TO)]).unwrap();
    assert_eq!(counts(&state), (3, 1, 0));
    assert_eq!(device_bytes(&rt, &state, addr(x), 64), vec![3u8; 64]);
    exit(&rt, &[(addr(x), 64, mt::DELETE)]).unwrap();
    rt.unregister(key);
    assert_eq!(state.memory.live(), 0);
}
