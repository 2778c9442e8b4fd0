//! Tool events (`omptarget_core::tools`) seen by a subscriber, on the mock backend: what a
//! construct, an `omp_target_*` routine and the device life cycle report, in which order,
//! with which addresses, and that nothing is dispatched without a subscriber.

use omptarget_core::ops::map_type as mt;
use omptarget_core::plugin::{AllocKind, LaunchConfig};
use omptarget_core::tools::{
    ApiCall, ConstructKind, DataOp, DeviceLoad, Endpoint, Region, Submit, Subscriber, TraceRecord,
};
use omptarget_core::trace::SourceLoc;
use omptarget_core::{Config, Device, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockPlugin, MockState, Op};
use std::sync::{Arc, Mutex};

mod common;
use common::{entry, inc_plugin, with_args};

fn leak<T>(v: T) -> &'static T {
    Box::leak(Box::new(v))
}

/// Every event as a line, and the trace records.
#[derive(Default)]
struct Recorder {
    lines: Mutex<Vec<String>>,
    records: Mutex<Vec<TraceRecord>>,
    trace: bool,
}

impl Recorder {
    fn push(&self, s: String) {
        self.lines.lock().unwrap().push(s);
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.lines.lock().unwrap())
    }
}

fn ep(e: Endpoint) -> &'static str {
    match e {
        Endpoint::Begin => "begin",
        Endpoint::End => "end",
    }
}

impl Subscriber for Recorder {
    fn device_initialize(&self, device: &Arc<Device>) {
        self.push(format!("init {}", device.id));
    }
    fn device_finalize(&self, device: i32) {
        self.push(format!("finalize {device}"));
    }
    fn device_load(&self, l: &DeviceLoad) {
        self.push(format!("load {} module {}", l.device, l.module_id));
    }
    fn device_unload(&self, device: i32, module: u64) {
        self.push(format!("unload {device} module {module}"));
    }
    fn construct(&self, e: Endpoint, r: &Region) {
        // The tool's word, set at the begin event, is what later events see.
        if e == Endpoint::Begin {
            // SAFETY: the region's word, owned by the tool during its callbacks.
            unsafe { *r.tool_data_ptr() = 1000 + r.id };
        }
        self.push(format!(
            "{} {:?} nowait={} dev={} codeptr={:#x} data={}",
            ep(e),
            r.kind,
            r.nowait,
            r.device,
            r.codeptr,
            r.tool_data()
        ));
    }
    fn data_op(&self, e: Endpoint, r: Option<&Region>, op: &mut DataOp) {
        if e == Endpoint::Begin {
            op.tool_data = 7000 + op.id;
        }
        self.push(format!(
            "  {} {:?} src={:#x}@{} dst={:#x}@{} bytes={} region={} codeptr={:#x} op={}",
            ep(e),
            op.kind,
            op.src,
            op.src_device,
            op.dst,
            op.dst_device,
            op.bytes,
            r.map_or(0, |r| r.tool_data()),
            op.codeptr,
            op.tool_data,
        ));
    }
    fn submit(&self, e: Endpoint, r: &Region, s: &mut Submit) {
        if e == Endpoint::Begin {
            s.tool_data = 7000 + s.id;
        }
        self.push(format!(
            "  {} submit teams={} region={}",
            ep(e),
            s.requested_teams,
            r.tool_data()
        ));
    }
    fn traces(&self, _device: i32) -> bool {
        self.trace
    }
    fn record(&self, r: &TraceRecord) {
        self.records.lock().unwrap().push(r.clone());
    }
}

struct Fixture {
    rt: Runtime,
    state: Arc<MockState>,
    tool: Arc<Recorder>,
    key: usize,
    region: usize,
}

fn fixture(stream_ordered: bool, asynchronous: bool, trace: bool) -> Fixture {
    let (plugin, state) = inc_plugin(2, stream_ordered, asynchronous);
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    let tool = Arc::new(Recorder {
        trace,
        ..Recorder::default()
    });
    assert!(rt.tools.subscribe(tool.clone()));
    let region = leak(0u8) as *const u8 as usize;
    let entries = vec![entry(c"inc", region, 0)];
    let key = leak(1u64) as *const u64 as usize;
    rt.register(key, &[MAGIC], entries);
    Fixture {
        rt,
        state,
        tool,
        key,
        region,
    }
}

/// A blocking target region with `inc` on device 0, as the C boundary runs it.
fn target(fx: &Fixture, items: &[(usize, i64, u64)], codeptr: usize) {
    let dev = fx.rt.device(0).unwrap();
    with_args(items, |args| {
        let mut ai = fx.rt.async_info(&dev);
        let region = fx
            .rt
            .begin_construct(&mut ai, ConstructKind::Target, false, codeptr);
        let config = LaunchConfig {
            version: 3,
            num_teams: [u32::MAX, 0, 0],
            ..Default::default()
        };
        let r = fx.rt.target(
            &dev,
            fx.region,
            args,
            &config,
            &SourceLoc::default(),
            &mut ai,
        );
        ai.synchronize().and(r).unwrap();
        fx.rt.end_construct(region);
    });
}

fn addr<T>(x: &T) -> usize {
    x as *const T as usize
}

/// The device address the mock's n-th allocation returned.
fn nth_alloc(state: &MockState, n: usize) -> usize {
    state
        .log()
        .iter()
        .filter_map(|o| match o {
            Op::Alloc { ptr, .. } => Some(*ptr),
            _ => None,
        })
        .nth(n)
        .expect("allocation")
}

#[test]
fn a_target_region_reports_each_operation_between_its_begin_and_end() {
    let fx = fixture(false, false, false);
    assert_eq!(fx.tool.take(), ["init 0", "init 1"]);
    let x = Box::new(41i32);
    let y = Box::new(1i32);
    fx.state.clear_log();
    target(
        &fx,
        &[
            (addr(&*x), 4, mt::TO | mt::FROM | mt::TARGET_PARAM),
            (addr(&*y), 4, mt::TO | mt::TARGET_PARAM),
        ],
        0xc0de,
    );
    assert_eq!(*x, 42);
    let (dx, dy) = (nth_alloc(&fx.state, 0), nth_alloc(&fx.state, 1));
    let (hx, hy) = (addr(&*x), addr(&*y));
    // The initial device is number 2 (two mock devices); a region's id is 1 (the first id),
    // so its tool word is 1001; operation ids follow.
    let expected = vec![
        // A device's first image is module 0, as LLVM 19 and 22 number it.
        "load 0 module 0".to_string(),
        "begin Target nowait=false dev=0 codeptr=0xc0de data=1001".into(),
        format!("  begin Alloc src={hx:#x}@2 dst=0x0@0 bytes=4 region=1001 codeptr=0xc0de op=7002"),
        format!(
            "  end Alloc src={hx:#x}@2 dst={dx:#x}@0 bytes=4 region=1001 codeptr=0xc0de op=7002"
        ),
        format!(
            "  begin TransferToDevice src={hx:#x}@2 dst={dx:#x}@0 bytes=4 region=1001 codeptr=0xc0de op=7003"
        ),
        format!(
            "  end TransferToDevice src={hx:#x}@2 dst={dx:#x}@0 bytes=4 region=1001 codeptr=0xc0de op=7003"
        ),
        format!("  begin Alloc src={hy:#x}@2 dst=0x0@0 bytes=4 region=1001 codeptr=0xc0de op=7004"),
        format!(
            "  end Alloc src={hy:#x}@2 dst={dy:#x}@0 bytes=4 region=1001 codeptr=0xc0de op=7004"
        ),
        format!(
            "  begin TransferToDevice src={hy:#x}@2 dst={dy:#x}@0 bytes=4 region=1001 codeptr=0xc0de op=7005"
        ),
        format!(
            "  end TransferToDevice src={hy:#x}@2 dst={dy:#x}@0 bytes=4 region=1001 codeptr=0xc0de op=7005"
        ),
        // A region without teams (num_teams -1) reports one team, as LLVM 19.
        "  begin submit teams=1 region=1001".into(),
        "  end submit teams=1 region=1001".into(),
        format!(
            "  begin TransferFromDevice src={dx:#x}@0 dst={hx:#x}@2 bytes=4 region=1001 codeptr=0xc0de op=7007"
        ),
        format!(
            "  end TransferFromDevice src={dx:#x}@0 dst={hx:#x}@2 bytes=4 region=1001 codeptr=0xc0de op=7007"
        ),
        // Entries leave in reverse order, after the synchronisation.
        format!(
            "  begin Delete src={dy:#x}@0 dst=0x0@-1 bytes=0 region=1001 codeptr=0xc0de op=7008"
        ),
        format!("  end Delete src={dy:#x}@0 dst=0x0@-1 bytes=0 region=1001 codeptr=0xc0de op=7008"),
        format!(
            "  begin Delete src={dx:#x}@0 dst=0x0@-1 bytes=0 region=1001 codeptr=0xc0de op=7009"
        ),
        format!("  end Delete src={dx:#x}@0 dst=0x0@-1 bytes=0 region=1001 codeptr=0xc0de op=7009"),
        "end Target nowait=false dev=0 codeptr=0xc0de data=1001".into(),
    ];
    assert_eq!(fx.tool.take(), expected);
    // Unregistration unloads the image (same module id) and finalises every device.
    fx.rt.unregister(fx.key);
    assert_eq!(
        fx.tool.take(),
        ["unload 0 module 0", "finalize 0", "finalize 1"]
    );
}

#[test]
fn module_ids_count_per_device_from_zero_and_are_never_reused() {
    let fx = fixture(false, false, false);
    // A second binary (a shared library's image) and the program's, loaded on both devices.
    let key2 = leak(2u64) as *const u64 as usize;
    fx.rt.register(key2, &[MAGIC], Vec::new());
    fx.rt.device(0).unwrap();
    fx.rt.device(1).unwrap();
    let loads: Vec<String> = fx
        .tool
        .take()
        .into_iter()
        .filter(|l| l.starts_with("load"))
        .collect();
    assert_eq!(
        loads,
        [
            "load 0 module 0",
            "load 0 module 1",
            "load 1 module 0",
            "load 1 module 1"
        ]
    );
    // The library goes (its ids on both devices) and comes back: a new id on each device.
    fx.rt.unregister(key2);
    assert_eq!(fx.tool.take(), ["unload 0 module 1", "unload 1 module 1"]);
    fx.rt.register(key2, &[MAGIC], Vec::new());
    fx.rt.device(1).unwrap();
    assert_eq!(fx.tool.take(), ["load 1 module 2"]);
}

#[test]
fn stream_ordered_frees_are_reported_inside_the_construct() {
    let fx = fixture(true, true, false);
    let x = Box::new(1i32);
    fx.tool.take();
    target(
        &fx,
        &[(addr(&*x), 4, mt::TO | mt::FROM | mt::TARGET_PARAM)],
        1,
    );
    let lines = fx.tool.take();
    let kinds: Vec<&str> = lines
        .iter()
        .filter(|l| l.contains("begin"))
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "Target",
            "Alloc",
            "TransferToDevice",
            "submit",
            "TransferFromDevice",
            "Delete"
        ]
    );
    // The free is queued behind the copy back, on the construct's queue.
    let log = fx.state.log();
    let free = log
        .iter()
        .position(|o| matches!(o, Op::Free { queue: Some(_), .. }))
        .expect("a queued free");
    let sync = log
        .iter()
        .position(|o| matches!(o, Op::Synchronize { .. }))
        .expect("a synchronisation");
    assert!(free < sync);
}

#[test]
fn device_routines_report_with_their_return_address_and_no_region() {
    let fx = fixture(false, false, false);
    fx.tool.take();
    let p = {
        let _call = ApiCall::enter(0xaaa);
        fx.rt.target_alloc(64, 1, AllocKind::Device).unwrap()
    };
    let src = Box::new([7u8; 64]);
    {
        let _call = ApiCall::enter(0xbbb);
        fx.rt
            .target_memcpy(p, addr(&*src), 64, 0, 0, 1, fx.rt.initial_device())
            .unwrap();
    }
    let host = Box::new([0u8; 16]);
    {
        let _call = ApiCall::enter(0xccc);
        fx.rt.associate_ptr(addr(&*host), p, 16, 1).unwrap();
        fx.rt.disassociate_ptr(addr(&*host), 1).unwrap();
        fx.rt.target_free(p, 1, AllocKind::Device).unwrap();
    }
    let h = addr(&*src);
    let hh = addr(&*host);
    let lines = fx.tool.take();
    let expected = [
        "  begin Alloc src=0x0@2 dst=0x0@1 bytes=64 region=0 codeptr=0xaaa op=7001".to_string(),
        format!("  end Alloc src=0x0@2 dst={p:#x}@1 bytes=64 region=0 codeptr=0xaaa op=7001"),
        format!(
            "  begin TransferToDevice src={h:#x}@2 dst={p:#x}@1 bytes=64 region=0 codeptr=0xbbb op=7002"
        ),
        format!(
            "  end TransferToDevice src={h:#x}@2 dst={p:#x}@1 bytes=64 region=0 codeptr=0xbbb op=7002"
        ),
        format!(
            "  begin Associate src={hh:#x}@2 dst={p:#x}@1 bytes=16 region=0 codeptr=0xccc op=7003"
        ),
        format!(
            "  end Associate src={hh:#x}@2 dst={p:#x}@1 bytes=16 region=0 codeptr=0xccc op=7003"
        ),
        format!(
            "  begin Disassociate src={hh:#x}@2 dst=0x0@1 bytes=0 region=0 codeptr=0xccc op=7004"
        ),
        format!(
            "  end Disassociate src={hh:#x}@2 dst=0x0@1 bytes=0 region=0 codeptr=0xccc op=7004"
        ),
        format!("  begin Delete src={p:#x}@1 dst=0x0@-1 bytes=0 region=0 codeptr=0xccc op=7005"),
        format!("  end Delete src={p:#x}@1 dst=0x0@-1 bytes=0 region=0 codeptr=0xccc op=7005"),
    ];
    assert_eq!(lines, expected);
    // Outside the routines no return address is left behind.
    assert_eq!(omptarget_core::tools::api_codeptr(), 0);
}

#[test]
fn without_a_subscriber_nothing_is_dispatched_and_constructs_carry_no_tool_state() {
    let plugin = MockPlugin::new(1, false, false);
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    rt.register(leak(2u64) as *const u64 as usize, &[MAGIC], vec![]);
    assert!(!rt.tools.active());
    let dev = rt.device(0).unwrap();
    let mut ai = rt.async_info(&dev);
    assert!(!ai.has_tools());
    assert!(
        rt.begin_construct(&mut ai, ConstructKind::Target, false, 1)
            .is_none()
    );
    ai.synchronize().unwrap();
}

#[test]
fn a_direct_copy_between_devices_is_one_transfer_with_both_device_numbers() {
    let fx = fixture(false, false, false);
    fx.state
        .peer_access
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let (p, q) = {
        let _call = ApiCall::enter(0x111);
        (
            fx.rt.target_alloc(32, 0, AllocKind::Device).unwrap(),
            fx.rt.target_alloc(32, 1, AllocKind::Device).unwrap(),
        )
    };
    fx.tool.take();
    {
        let _call = ApiCall::enter(0x222);
        fx.rt.target_memcpy(q, p, 32, 0, 0, 1, 0).unwrap();
    }
    assert_eq!(
        fx.tool.take(),
        [
            format!(
                "  begin TransferFromDevice src={p:#x}@0 dst={q:#x}@1 bytes=32 region=0 codeptr=0x222 op=7003"
            ),
            format!(
                "  end TransferFromDevice src={p:#x}@0 dst={q:#x}@1 bytes=32 region=0 codeptr=0x222 op=7003"
            ),
        ]
    );
    // Without a direct path the copy is staged: a transfer from one device, then to the other.
    fx.state
        .peer_access
        .store(false, std::sync::atomic::Ordering::SeqCst);
    {
        let _call = ApiCall::enter(0x333);
        fx.rt.target_memcpy(q, p, 32, 0, 0, 1, 0).unwrap();
    }
    let kinds: Vec<String> = fx
        .tool
        .take()
        .iter()
        .filter(|l| l.contains("begin"))
        .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        kinds,
        ["begin TransferFromDevice", "begin TransferToDevice"]
    );
}

/// Host-device mock fixture with asynchronous queues (timestamps resolve after a sync).
fn traced_fixture() -> Fixture {
    fixture(false, true, true)
}

#[test]
fn traced_operations_carry_device_times_once_their_queue_completed() {
    use omptarget_core::tools::{DataOpKind, RecordKind};
    use omptarget_plugin_mock::cost;
    let fx = traced_fixture();
    let x = Box::new(5i32);
    fx.tool.take();
    fx.state.clear_log();
    target(
        &fx,
        &[(addr(&*x), 4, mt::TO | mt::FROM | mt::TARGET_PARAM)],
        0x77,
    );
    assert_eq!(*x, 6);
    let records = std::mem::take(&mut *fx.tool.records.lock().unwrap());
    let me = omptarget_core::tools::thread_id();
    let kinds: Vec<String> = records
        .iter()
        .map(|r| match &r.kind {
            RecordKind::DataOp { kind, .. } => format!("{kind:?}"),
            RecordKind::Kernel { .. } => "Kernel".into(),
        })
        .collect();
    // The queued work (alloc, copy in, kernel, copy out) completes at the synchronisation;
    // the free follows it (no queue: its time is known at once).
    assert_eq!(
        kinds,
        [
            "Alloc",
            "TransferToDevice",
            "Kernel",
            "TransferFromDevice",
            "Delete"
        ]
    );
    let durations: Vec<u64> = records.iter().map(|r| r.end - r.start).collect();
    // The free goes to the size-class cache (an asynchronous device without stream-ordered
    // allocation keeps small blocks): no device time passes.
    assert_eq!(
        durations,
        [cost::ALLOC, cost::COPY + 4, cost::LAUNCH, cost::COPY + 4, 0]
    );
    for w in records.windows(2) {
        assert!(
            w[0].end <= w[1].start,
            "records in device order: {records:?}"
        );
    }
    for r in &records {
        assert_eq!(r.device, 0);
        assert_eq!(r.thread_id, me);
        // The ids are the ones the EMI callbacks set (region 1001, operations 7000 + id).
        assert_eq!(r.region_tool_data, 1000 + r.region_id);
        assert_eq!(r.op_tool_data, 7000 + r.op_id);
    }
    let RecordKind::DataOp {
        kind, src, bytes, ..
    } = &records[1].kind
    else {
        panic!("a data operation");
    };
    assert_eq!(
        (*kind, *src, *bytes),
        (DataOpKind::TransferToDevice, addr(&*x), 4)
    );
    // Every timestamp was resolved, after its queue's synchronisation (the mock refuses
    // earlier resolutions).
    assert_eq!(fx.state.pending_timestamps(), 0);
}

#[test]
fn a_construct_still_running_hands_over_its_records_when_found_complete() {
    let fx = traced_fixture();
    let x = Box::new(1i32);
    let dev = fx.rt.device(0).unwrap();
    fx.state
        .busy
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let mut ai = fx.rt.async_info(&dev);
    let region = fx
        .rt
        .begin_construct(&mut ai, ConstructKind::EnterData, true, 1);
    with_args(&[(addr(&*x), 4, mt::TO)], |args| {
        fx.rt.data_begin(&dev, args, &mut ai).unwrap()
    });
    assert!(!ai.is_done().unwrap());
    fx.rt.end_construct(region);
    assert!(
        fx.tool.records.lock().unwrap().is_empty(),
        "nothing before the work completes"
    );
    fx.state
        .busy
        .store(false, std::sync::atomic::Ordering::SeqCst);
    assert!(ai.is_done().unwrap());
    assert_eq!(fx.tool.records.lock().unwrap().len(), 2, "alloc and copy");
    assert_eq!(fx.state.pending_timestamps(), 0);
    drop(ai);
    with_args(&[(addr(&*x), 4, mt::FROM)], |args| {
        let mut ai = fx.rt.async_info(&dev);
        fx.rt.data_end(&dev, args, &mut ai).unwrap();
        ai.synchronize().unwrap();
    });
}

#[test]
fn untraced_devices_take_no_timestamps() {
    let fx = fixture(false, true, false);
    let x = Box::new(1i32);
    fx.state.clear_log();
    target(
        &fx,
        &[(addr(&*x), 4, mt::TO | mt::FROM | mt::TARGET_PARAM)],
        1,
    );
    assert!(
        !fx.state
            .log()
            .iter()
            .any(|o| matches!(o, Op::Timestamp { .. }))
    );
    assert!(fx.tool.records.lock().unwrap().is_empty());
}
