//! Replay on the mock backend (`record.rs`): the recorded memory lands at the recorded start
//! address, the kernel receives the recorded words as they are (no launch environment added),
//! every later allocation comes from the region, and a start address that is taken is
//! reported as the offset LLVM's replay tool corrects pointer arguments by.

mod common;

use common::entry;
use omptarget_core::plugin::AllocKind;
use omptarget_core::{Config, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockPlugin, MockState, Op};
use std::sync::{Arc, Mutex};

fn runtime() -> (Runtime, Arc<MockState>) {
    let plugin = MockPlugin::new(1, false, false);
    let state = plugin.state.clone();
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    // As the replay tool registers a recording: one entry, address 0x1, the kernel's name.
    let entries = vec![entry(c"k", 1, 0)];
    rt.register(0x1000, &[MAGIC], entries);
    (rt, state)
}

#[test]
fn replay_puts_the_memory_back_and_passes_the_words_as_they_are() {
    let (rt, state) = runtime();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    state.add_kernel("k", move |mem, args| {
        // The recorded memory holds a pointer to its second word: follow it and double it.
        let p = mem.read_i32(args[1]).unwrap() as usize + args[1];
        let v = mem.read_i32(p).unwrap();
        mem.write_i32(p, 2 * v).unwrap();
        s.lock().unwrap().extend_from_slice(args);
    });
    let at = 0x6000_0000_0000usize;
    assert_eq!(
        rt.activate_record_replay(0, 64, at, false, false).unwrap(),
        0
    );
    // Offset 8 (a self-relative "pointer") at 0, the value 21 at 8.
    let mut memory = vec![0u8; 32];
    memory[..4].copy_from_slice(&8i32.to_le_bytes());
    memory[8..12].copy_from_slice(&21i32.to_le_bytes());
    rt.replay_kernel(0, 1, &memory, &[usize::MAX, at, 7], 4, 32, 100)
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![usize::MAX, at, 7],
        "no word added"
    );
    assert_eq!(state.memory.read_i32(at + 8).unwrap(), 42);
    let launch = state
        .log()
        .into_iter()
        .find(|op| matches!(op, Op::Launch { .. }));
    assert!(launch.is_some());
    let dev = rt.device(0).unwrap();
    assert_eq!(dev.backend().unwrap().record_region(), Some((at, 32)));
    // Later allocations come from the region, 16-byte steps, and are never given back.
    let p = rt.target_alloc(5, 0, AllocKind::Device).unwrap();
    assert_eq!(p, at + 32);
    rt.target_free(p, 0, AllocKind::Device).unwrap();
    assert_eq!(dev.backend().unwrap().record_region(), Some((at, 48)));
    assert!(
        rt.activate_record_replay(0, 64, at, false, false).is_err(),
        "once"
    );
}

#[test]
fn a_taken_start_address_is_reported_as_an_offset() {
    let (rt, state) = runtime();
    // Something lives at the recorded address already.
    let taken = rt.target_alloc(64, 0, AllocKind::Device).unwrap();
    state.clear_log();
    let offset = rt
        .activate_record_replay(0, 64, taken, false, false)
        .unwrap();
    let (start, _) = rt
        .device(0)
        .unwrap()
        .backend()
        .unwrap()
        .record_region()
        .unwrap();
    assert_ne!(start, taken);
    assert_eq!(offset, taken.wrapping_sub(start) as u64);
}
