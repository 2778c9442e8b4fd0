//! Several devices in one process, on the mock backend (no machine with two GPUs is at hand): `omp_target_memcpy`
//! between two devices goes directly when the backend has a peer path and through host memory
//! when it has not, `omp_target_memcpy_rect`'s rows follow the same path, and host threads
//! running constructs on different devices each use their own device's queues and memory.

use omptarget_core::ops::map_type as mt;
use omptarget_core::plugin::{AllocKind, CopyKind, LaunchConfig};
use omptarget_core::trace::SourceLoc;
use omptarget_core::{NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockState, Op};
use std::sync::Arc;
use std::sync::atomic::Ordering;

mod common;
use common::{entry, inc_plugin, with_args};

fn leak<T>(v: T) -> &'static T {
    Box::leak(Box::new(v))
}

/// A runtime with `devices` asynchronous, stream-ordered mock devices (GPU-like) and one
/// registered image with the kernel `inc` (adds 1 to the i32 its first argument points at).
fn runtime(devices: usize) -> (Runtime, Arc<MockState>, usize) {
    let (plugin, state) = inc_plugin(devices, true, true);
    let rt = Runtime::new(
        omptarget_core::Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    let region = leak(0u8) as *const u8 as usize;
    let entries = vec![entry(c"inc", region, 0)];
    rt.register(leak(1u64) as *const u64 as usize, &[MAGIC], entries);
    (rt, state, region)
}

fn fill(rt: &Runtime, ptr: usize, dev: i64, bytes: &[u8]) {
    rt.target_memcpy(
        ptr,
        bytes.as_ptr() as usize,
        bytes.len(),
        0,
        0,
        dev,
        rt.initial_device(),
    )
    .expect("host to device");
}

fn read(rt: &Runtime, ptr: usize, dev: i64, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    rt.target_memcpy(
        out.as_mut_ptr() as usize,
        ptr,
        len,
        0,
        0,
        rt.initial_device(),
        dev,
    )
    .expect("device to host");
    out
}

fn copies(state: &MockState) -> (usize, usize) {
    let log = state.log();
    let peer = log
        .iter()
        .filter(|o| matches!(o, Op::CopyPeer { .. }))
        .count();
    let staged = log
        .iter()
        .filter(|o| {
            matches!(
                o,
                Op::Copy {
                    kind: CopyKind::DeviceToHost | CopyKind::HostToDevice,
                    ..
                }
            )
        })
        .count();
    (peer, staged)
}

#[test]
fn memcpy_between_devices_is_direct_with_a_peer_path_and_staged_without() {
    let (rt, state, _) = runtime(2);
    let data: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    for peer in [true, false] {
        state.peer_access.store(peer, Ordering::Relaxed);
        let a = rt
            .target_alloc(4096, 0, AllocKind::Device)
            .expect("alloc on 0");
        let b = rt
            .target_alloc(4096, 1, AllocKind::Device)
            .expect("alloc on 1");
        fill(&rt, a, 0, &data);
        state.clear_log();
        rt.target_memcpy(b, a, 4000, 96, 0, 1, 0).expect("0 -> 1");
        let (direct, staged) = copies(&state);
        if peer {
            assert_eq!(
                (direct, staged),
                (1, 0),
                "one peer copy, nothing through the host"
            );
            assert!(state.log().iter().any(|o| matches!(
                o,
                Op::CopyPeer {
                    device: 0,
                    peer: 1,
                    size: 4000,
                    ..
                }
            )));
        } else {
            assert_eq!((direct, staged), (0, 2), "down to the host, then up");
        }
        assert_eq!(&read(&rt, b, 1, 4096)[96..], &data[..4000]);
        rt.target_free(a, 0, AllocKind::Device).expect("free");
        rt.target_free(b, 1, AllocKind::Device).expect("free");
    }
}

#[test]
fn memcpy_rect_between_devices_moves_every_row_directly() {
    // A 4 x 8 block of a 16 x 16 i32 grid on device 0 into the middle of one on device 1,
    // one row at a time as omp_target_memcpy_rect does (crates/abi/src/entry/api.rs).
    let (rt, state, _) = runtime(2);
    state.peer_access.store(true, Ordering::Relaxed);
    let grid: Vec<u8> = (0..16 * 16 * 4).map(|i| (i % 251) as u8).collect();
    let a = rt.target_alloc(grid.len(), 0, AllocKind::Device).unwrap();
    let b = rt.target_alloc(grid.len(), 1, AllocKind::Device).unwrap();
    fill(&rt, a, 0, &grid);
    fill(&rt, b, 1, &vec![0u8; grid.len()]);
    state.clear_log();
    let row = 8 * 4;
    for r in 0..4 {
        let src_off = ((2 + r) * 16 + 3) * 4;
        let dst_off = ((5 + r) * 16 + 6) * 4;
        rt.target_memcpy(b, a, row, dst_off, src_off, 1, 0).unwrap();
    }
    assert_eq!(copies(&state), (4, 0));
    let got = read(&rt, b, 1, grid.len());
    for r in 0..4 {
        let src_off = ((2 + r) * 16 + 3) * 4;
        let dst_off = ((5 + r) * 16 + 6) * 4;
        assert_eq!(&got[dst_off..dst_off + row], &grid[src_off..src_off + row]);
    }
}

#[test]
fn threads_running_constructs_on_different_devices_use_each_device_alone() {
    let (rt, state, region) = runtime(4);
    let rt = &rt;
    std::thread::scope(|s| {
        for dev in 0..4i64 {
            s.spawn(move || {
                let mut x: i32 = 100 * dev as i32;
                let d = rt.device(dev).expect("device");
                for _ in 0..50 {
                    let item = (&raw mut x as usize, 4, mt::TO | mt::FROM | mt::TARGET_PARAM);
                    with_args(&[item], |args| {
                        let mut ai = rt.async_info(&d);
                        let config = LaunchConfig {
                            version: 3,
                            ..LaunchConfig::default()
                        };
                        let r =
                            rt.target(&d, region, args, &config, &SourceLoc::default(), &mut ai);
                        ai.synchronize().and(r).expect("region");
                    });
                }
                assert_eq!(x, 100 * dev as i32 + 50);
            });
        }
    });
    // Every queue and every allocation belongs to the device that created it.
    let mut queue_owner = std::collections::HashMap::new();
    let mut alloc_owner = std::collections::HashMap::new();
    for op in state.log() {
        match op {
            Op::CreateQueue { device, queue } => {
                queue_owner.insert(queue, device);
            }
            Op::Alloc { device, ptr, .. } => {
                alloc_owner.insert(ptr, device);
            }
            _ => {}
        }
    }
    for op in state.log() {
        match op {
            Op::Launch { device, queue, .. } | Op::Synchronize { device, queue } => {
                assert_eq!(queue_owner.get(&queue), Some(&device), "{op:?}");
            }
            Op::Free {
                device,
                ptr,
                queue: Some(q),
            } => {
                assert_eq!(alloc_owner.get(&ptr), Some(&device), "{op:?}");
                assert_eq!(queue_owner.get(&q), Some(&device), "{op:?}");
            }
            _ => {}
        }
    }
    assert_eq!(
        queue_owner
            .values()
            .collect::<std::collections::HashSet<_>>()
            .len(),
        4,
        "each device made its own queues"
    );
}
