//! One construct that names very many items must cost time linear in them: `target enter data` and `target
//! exit data` of 2*10^5 distinct 4-byte items each, on the mock device, with and without
//! stream-ordered allocation. Every per-construct bookkeeping step (entries created, marked,
//! retired) must be O(1) or O(log n) per item: with the linear searches this replaced, the
//! exit took 88 s for 4*10^5 items in a release build (LLVM 19: 0.46 s), and minutes here.
//!
//! The deadline is far from both: linear work takes well under a second per construct in a
//! debug build, quadratic work takes minutes. The scaling check beside it compares 4x the
//! items against 1x in the same process (linear: about 4x the time; quadratic: 16x).

use omptarget_core::ops::map_type as mt;
use omptarget_core::{AsyncInfo, Config, MapArgs, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockPlugin, MockState};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn runtime(stream_ordered: bool) -> (Runtime, Arc<MockState>) {
    let plugin = MockPlugin::new(1, stream_ordered, stream_ordered);
    let state = plugin.state.clone();
    let config = Config {
        memory_manager_threshold: 0,
        ..Config::default()
    };
    let rt = Runtime::new(config, vec![Arc::new(plugin)], Box::new(NoHostRuntime));
    let key = Box::leak(Box::new(1u64)) as *const u64 as usize;
    let image: &'static [u8] = MAGIC;
    rt.register(key, &[image], Vec::new());
    (rt, state)
}

/// One construct over every element of `data` as its own 4-byte item of map type `ty`.
fn construct(rt: &Runtime, data: &[i32], ty: u64, enter: bool) {
    let dev = rt.device(0).expect("device 0");
    let mut bases: Vec<usize> = data.iter().map(|x| x as *const i32 as usize).collect();
    let begins = bases.clone();
    let sizes = vec![4i64; data.len()];
    let types = vec![ty as i64; data.len()];
    let mut args = MapArgs {
        bases: &mut bases,
        begins: &begins,
        sizes: &sizes,
        types: &types,
        names: None,
        mappers: None,
    };
    let mut ai: AsyncInfo = rt.async_info(&dev);
    let r = if enter {
        rt.data_begin(&dev, &mut args, &mut ai)
    } else {
        rt.data_end(&dev, &args, &mut ai)
    };
    ai.synchronize().and(r).expect("the construct succeeds");
}

/// Enters `n` items with `to`, clears the host copy, exits them with `from`: the data comes
/// back and nothing stays mapped or allocated. Returns the time of the exit.
fn round_trip(stream_ordered: bool, n: usize) -> Duration {
    let (rt, state) = runtime(stream_ordered);
    let mut data: Vec<i32> = (0..n as i32).collect();
    construct(&rt, &data, mt::TO, true);
    assert_eq!(state.memory.live(), n, "one allocation per item");
    data.iter_mut().for_each(|x| *x = -1);
    let started = Instant::now();
    construct(&rt, &data, mt::FROM, false);
    let took = started.elapsed();
    assert!(
        data.iter().enumerate().all(|(i, &x)| x == i as i32),
        "every item came back"
    );
    assert_eq!(state.memory.live(), 0, "every item was freed");
    let dev = rt.device(0).unwrap();
    assert!(!rt.is_present(&dev, data.as_ptr() as usize));
    took
}

#[test]
fn two_hundred_thousand_items_enter_and_exit_in_one_construct_each() {
    for stream_ordered in [false, true] {
        let started = Instant::now();
        round_trip(stream_ordered, 200_000);
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(60),
            "stream_ordered={stream_ordered}: {took:?} for 2*10^5 items: per-item work is not O(1)"
        );
    }
}

#[test]
fn exit_time_grows_linearly_with_the_items() {
    // The smaller size first also warms the allocator; the best of three runs of each.
    let best = |n| (0..3).map(|_| round_trip(true, n)).min().unwrap();
    let small = best(20_000);
    let large = best(80_000);
    let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-6);
    assert!(
        ratio < 10.0,
        "4x the items took {ratio:.1}x the time ({small:?} -> {large:?}): quadratic"
    );
}
