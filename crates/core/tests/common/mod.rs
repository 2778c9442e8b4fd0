//! What the core's integration tests share: `mod common;` in a test file. Not every test
//! uses every helper.
#![allow(dead_code)]

use omptarget_core::image::OffloadEntry;
use omptarget_core::{AsyncInfo, Device, Error, MapArgs, Runtime};
use omptarget_plugin_mock::{MAGIC, MockPlugin, MockState};
use std::sync::Arc;

/// A value that lives for the rest of the test process (an address the runtime may keep).
pub fn leak<T>(v: T) -> &'static T {
    Box::leak(Box::new(v))
}

/// The address of `x`.
pub fn addr<T>(x: &T) -> usize {
    x as *const T as usize
}

/// Runs `f` with clang-style argument arrays for `items` (begin, size, map type; the base is
/// the begin), no names and no mappers.
pub fn with_args<R>(items: &[(usize, i64, u64)], f: impl FnOnce(&mut MapArgs<'_>) -> R) -> R {
    let mut bases: Vec<usize> = items.iter().map(|i| i.0).collect();
    let begins = bases.clone();
    let sizes: Vec<i64> = items.iter().map(|i| i.1).collect();
    let types: Vec<i64> = items.iter().map(|i| i.2 as i64).collect();
    let mut args = MapArgs {
        bases: &mut bases,
        begins: &begins,
        sizes: &sizes,
        types: &types,
        names: None,
        mappers: None,
    };
    f(&mut args)
}

/// An offload entry without flags: a kernel (`size` 0) or a global of `size` bytes at
/// `addr`, the host address the image's table gives it.
pub fn entry(name: &'static std::ffi::CStr, addr: usize, size: usize) -> OffloadEntry {
    flagged_entry(name, addr, size, 0)
}

/// [`entry`] with `flags` (`omptarget_core::image::entry_flags`).
pub fn flagged_entry(
    name: &'static std::ffi::CStr,
    addr: usize,
    size: usize,
    flags: u32,
) -> OffloadEntry {
    OffloadEntry {
        addr,
        name,
        size,
        flags,
        data: 0,
    }
}

/// Registers a mock image with one entry named `name` (a kernel the test gives the mock):
/// returns the image's key (for `unregister`) and the entry's host address (a region's id).
pub fn register_image(rt: &Runtime, name: &'static std::ffi::CStr) -> (usize, usize) {
    let region = addr(leak(0u8));
    let entries = vec![entry(name, region, 0)];
    let key = addr(leak(1u64));
    rt.register(key, &[MAGIC], entries);
    (key, region)
}

/// One blocking construct on device 0: `op`, then the synchronisation (whose error is
/// reported first).
pub fn construct(
    rt: &Runtime,
    items: &[(usize, i64, u64)],
    op: impl FnOnce(&Runtime, &Device, &mut MapArgs<'_>, &mut AsyncInfo) -> Result<(), Error>,
) -> Result<(), Error> {
    let dev = rt.device(0)?;
    with_args(items, |args| {
        let mut ai = rt.async_info(&dev);
        let r = op(rt, &dev, args, &mut ai);
        ai.synchronize().and(r)
    })
}

/// `target enter data` of `items` on device 0.
pub fn enter(rt: &Runtime, items: &[(usize, i64, u64)]) -> Result<(), Error> {
    construct(rt, items, |rt, dev, args, ai| rt.data_begin(dev, args, ai))
}

/// `target exit data` of `items` on device 0.
pub fn exit(rt: &Runtime, items: &[(usize, i64, u64)]) -> Result<(), Error> {
    construct(rt, items, |rt, dev, args, ai| rt.data_end(dev, args, ai))
}

/// `target update` of `items` on device 0.
pub fn update(rt: &Runtime, items: &[(usize, i64, u64)]) -> Result<(), Error> {
    construct(rt, items, |rt, dev, args, ai| rt.data_update(dev, args, ai))
}

/// A mock plugin with `devices` devices of the given model and the kernel `inc`, which adds 1
/// to the `i32` its first argument points to; and its state.
pub fn inc_plugin(
    devices: usize,
    stream_ordered: bool,
    asynchronous: bool,
) -> (MockPlugin, Arc<MockState>) {
    let plugin = MockPlugin::new(devices, stream_ordered, asynchronous);
    let state = plugin.state.clone();
    state.add_kernel("inc", |mem, args| {
        let v = mem
            .read_i32(args[0])
            .expect("inc's argument is device memory");
        mem.write_i32(args[0], v + 1).expect("writable");
    });
    (plugin, state)
}

/// A runtime on one mock device with stream-ordered allocation and asynchronous queues, the
/// `inc` image registered: the runtime, the mock's state, the image's key and its region.
pub fn inc_runtime() -> (Runtime, Arc<MockState>, usize, usize) {
    let (plugin, state) = inc_plugin(1, true, true);
    let rt = Runtime::new(
        omptarget_core::Config::default(),
        vec![Arc::new(plugin)],
        Box::new(omptarget_core::NoHostRuntime),
    );
    let (key, region) = register_image(&rt, c"inc");
    (rt, state, key, region)
}

/// A target region over `items` on device 0 as the entry points run one (the image's region
/// `region`, kernel arguments version 3): a `nowait` one tracks its copies back and, still
/// running, is left held (its slot value returned, `ops/held.rs`); others, and a `nowait` one
/// already complete, wait (null returned).
pub fn held_region(
    rt: &Runtime,
    region: usize,
    items: &[(usize, i64, u64)],
    nowait: bool,
) -> *mut std::ffi::c_void {
    let dev = rt.device(0).unwrap();
    with_args(items, |args| {
        let mut ai = rt.async_info(&dev);
        if nowait {
            ai.track_copies_home();
        }
        let config = omptarget_core::plugin::LaunchConfig {
            version: 3,
            ..Default::default()
        };
        let loc = omptarget_core::trace::SourceLoc::default();
        rt.target(&dev, region, args, &config, &loc, &mut ai)
            .unwrap();
        if !nowait || ai.is_done().unwrap() {
            ai.synchronize().unwrap();
            return std::ptr::null_mut();
        }
        omptarget_core::ops::held::hold(ai)
    })
}
