//! The plugin's host path end to end without a GPU: the fake driver of `tests/fakecuda`
//! (copies made at once in host memory, the staging copy kernel emulated, other kernels not
//! run) stands in for libcuda, and data goes to the device and back through every way the
//! plugin stages pageable memory: small copies packed into a stream's arena and batched into
//! one copy-kernel launch, a copy too large for the arena in a buffer of its own, whole-buffer
//! and chunked copies, and copies filled by helper threads once staging pays. Each must
//! bring back exactly the bytes it took.
//!
//! The driver is found through `LD_LIBRARY_PATH`, which the loader reads when the process
//! starts: the test builds the fake (with the C compiler the conformance suite uses too) and
//! runs itself again with the fake's folder in front.

use omptarget_plugin::{AllocKind, CopyKind, Device, Plugin, QueueId};
use omptarget_plugin_cuda::{CudaConfig, CudaPlugin};

#[path = "../../../../tests/fakecuda/run.rs"]
mod fake_run;
use fake_run::{in_child, on_fake};

/// A byte pattern that differs from copy to copy and from offset to offset.
fn pattern(seed: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(31) ^ seed.wrapping_mul(131) ^ (i >> 8)) as u8)
        .collect()
}

/// Copies `srcs` to fresh device blocks and back into zeroed buffers on `q`, all queued
/// before one synchronisation, and checks every byte.
fn round_trip(dev: &dyn Device, q: QueueId, srcs: &[Vec<u8>]) {
    round_trip_as(dev, q, srcs, false)
}

/// Queues on `q`, without waiting: fresh device blocks for `srcs`, each filled from its source,
/// and copied back into zeroed buffers (returned with the blocks).
fn there_and_back(dev: &dyn Device, q: QueueId, srcs: &[Vec<u8>]) -> (Vec<usize>, Vec<Vec<u8>>) {
    let blocks: Vec<usize> = srcs
        .iter()
        .map(|s| dev.alloc(s.len(), AllocKind::Device, Some(q)).unwrap())
        .collect();
    for (s, &d) in srcs.iter().zip(&blocks) {
        dev.copy(
            CopyKind::HostToDevice,
            d,
            s.as_ptr() as usize,
            s.len(),
            Some(q),
        )
        .unwrap();
    }
    let mut backs: Vec<Vec<u8>> = srcs.iter().map(|s| vec![0u8; s.len()]).collect();
    copy_back(dev, q, &blocks, &mut backs);
    (blocks, backs)
}

/// Queues on `q` a copy of each block into its buffer.
fn copy_back(dev: &dyn Device, q: QueueId, blocks: &[usize], backs: &mut [Vec<u8>]) {
    for (b, &d) in backs.iter_mut().zip(blocks) {
        dev.copy(
            CopyKind::DeviceToHost,
            b.as_mut_ptr() as usize,
            d,
            b.len(),
            Some(q),
        )
        .unwrap();
    }
}

/// [`round_trip`]; with `exit_order`, as a region's exit does it: the copies back are issued
/// (`Device::issue`) and the blocks freed on the queue before the synchronisation.
fn round_trip_as(dev: &dyn Device, q: QueueId, srcs: &[Vec<u8>], exit_order: bool) {
    let free = |blocks: &[usize]| {
        for &d in blocks {
            dev.free(d, AllocKind::Device, Some(q)).unwrap();
        }
    };
    let (blocks, backs) = there_and_back(dev, q, srcs);
    if exit_order {
        dev.issue(q).unwrap();
        free(&blocks);
    }
    dev.synchronize(q).unwrap();
    for (k, (s, b)) in srcs.iter().zip(&backs).enumerate() {
        assert!(s == b, "copy {k} of {} bytes came back different", s.len());
    }
    if !exit_order {
        free(&blocks);
    }
}

/// The body, in the process that runs on the fake driver.
fn on_the_fake_driver() {
    let plugin = CudaPlugin::new(CudaConfig::default());
    assert_eq!(plugin.number_of_devices(), 1, "the fake driver's one GPU");
    let dev = plugin.init_device(0).unwrap();
    let q = dev.create_queue().unwrap();
    // Small copies: one, then 16 of 1 KiB (one arena, one batch per direction: the copy
    // kernel), then 40 of 2 KiB (past one 64 KiB arena into the next), odd sizes among them.
    round_trip(&*dev, q, &[pattern(1, 64)]);
    let small: Vec<Vec<u8>> = (0..16).map(|k| pattern(k, 1024)).collect();
    round_trip(&*dev, q, &small);
    let packed: Vec<Vec<u8>> = (0..40).map(|k| pattern(k, 2048 - 7 * (k % 3))).collect();
    round_trip(&*dev, q, &packed);
    // Larger than the arena's pieces: a buffer each; a whole 4 MiB buffer; 20 MiB in chunks.
    round_trip(&*dev, q, &[pattern(2, 60_000), pattern(3, 4 << 20)]);
    // Past 256 MiB of pageable traffic the large copies are staged (helpers fill the chunks
    // of the 20 MiB ones): the same checks on that path.
    for k in 0..8 {
        round_trip(
            &*dev,
            q,
            &[pattern(10 + k, 20 << 20), pattern(20 + k, 12 << 20)],
        );
    }
    round_trip(&*dev, q, &small);
    // A region's exit: the batch back issued, the blocks freed on the queue, then the wait
    // (twice, so the second takes the blocks the first gave back).
    round_trip_as(&*dev, q, &small, true);
    round_trip_as(&*dev, q, &small, true);
    round_trip_as(&*dev, q, &[pattern(4, 64)], true);
    // Threads whose first call is an allocation on a queue made elsewhere (as libomp's helper
    // threads take pooled queues): nothing made the context current on them before. The fake
    // driver refuses a call that needs a current context without one, as the driver does, so
    // a path that skips making it current fails here (a cached block needs none; a block the
    // cache lacks, and the larger one, come from the pool).
    let queues: Vec<QueueId> = (0..2).map(|_| dev.create_queue().unwrap()).collect();
    std::thread::scope(|scope| {
        for (t, &q) in queues.iter().enumerate() {
            let dev = &*dev;
            scope.spawn(move || {
                let srcs = [
                    pattern(40 + t, 96),
                    pattern(50 + t, 300_000),
                    pattern(60 + t, 5000),
                ];
                round_trip_as(dev, q, &srcs, true);
            });
        }
    });
    for q in queues {
        dev.destroy_queue(q).unwrap();
    }
    dev.destroy_queue(q).unwrap();
    println!("fake driver: all copies came back");
}

#[test]
fn pageable_copies_come_back_through_every_staging_path_on_the_fake_driver() {
    if in_child() {
        on_the_fake_driver();
        return;
    }
    on_fake(
        "pageable_copies_come_back_through_every_staging_path_on_the_fake_driver",
        &[],
        "fake driver: all copies came back",
    );
}

/// The body on a fake driver whose streams answer their first 3 queries "not ready".
fn late_landings() {
    let plugin = CudaPlugin::new(CudaConfig::default());
    let dev = plugin.init_device(0).unwrap();
    let q = dev.create_queue().unwrap();
    // Small copies (packed and batched) and one of a buffer of its own.
    let srcs: Vec<Vec<u8>> = (0..16)
        .map(|k| pattern(70 + k, 1024))
        .chain([pattern(90, 60_000)])
        .collect();
    let (blocks, mut backs) = there_and_back(&*dev, q, &srcs);
    dev.issue(q).unwrap();
    // While the stream is "running", nothing has landed in the program's memory: a construct
    // that polls it is still in flight (and the core's held constructs rely on copies back
    // landing only when the construct is found complete).
    for poll in 0..3 {
        assert!(!dev.query(q).unwrap(), "poll {poll}: still running");
        assert!(
            dev.queue_touches_host(q),
            "its copies back are still to land"
        );
        assert!(
            backs.iter().all(|b| b.iter().all(|&x| x == 0)),
            "poll {poll}: nothing landed yet"
        );
    }
    assert!(dev.query(q).unwrap(), "found complete");
    for (k, (s, b)) in srcs.iter().zip(&backs).enumerate() {
        assert!(s == b, "copy {k} landed when the stream was found complete");
    }
    // The same through a wait, which needs no poll to say "ready" first.
    for b in backs.iter_mut() {
        b.fill(0);
    }
    copy_back(&*dev, q, &blocks, &mut backs);
    assert!(!dev.query(q).unwrap());
    dev.synchronize(q).unwrap();
    assert!(srcs == backs, "landed at the wait");
    for d in blocks {
        dev.free(d, AllocKind::Device, Some(q)).unwrap();
    }
    dev.synchronize(q).unwrap();
    dev.destroy_queue(q).unwrap();
    println!("fake driver: copies back landed when found complete");
}

#[test]
fn copies_back_land_when_the_stream_is_found_complete_not_before_on_the_fake_driver() {
    if in_child() {
        late_landings();
        return;
    }
    on_fake(
        "copies_back_land_when_the_stream_is_found_complete_not_before_on_the_fake_driver",
        &[("FAKECUDA_BUSY_QUERIES", "3")],
        "fake driver: copies back landed when found complete",
    );
}
