//! The profiler (`LIBOMPTARGET_PROFILE`, `tools/profile.rs`) on the mock backend with
//! stream-ordered allocation: host events named as LLVM 19 names them, with the construct's
//! location; device events on a lane per queue with the mock's device times, the
//! stream-ordered free on the construct's queue after its copy back; the summary's counts,
//! bytes and allocations; LLVM's granularity filter.

use omptarget_core::ops::map_type as mt;
use omptarget_core::plugin::LaunchConfig;
use omptarget_core::tools::ConstructKind;
use omptarget_core::tools::profile::Profiler;
use omptarget_core::trace::SourceLoc;
use omptarget_core::{Config, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockState, cost};
use std::sync::Arc;

mod common;
use common::{entry, inc_plugin, with_args};

fn leak<T>(v: T) -> &'static T {
    Box::leak(Box::new(v))
}

const LOC: &std::ffi::CStr = c";prof.c;main;42;7;;";

fn setup(granularity_us: u64) -> (Runtime, Arc<MockState>, Arc<Profiler>, usize) {
    let (plugin, state) = inc_plugin(1, true, true);
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    let p = Arc::new(Profiler::new(
        "/nonexistent/unused.json".into(),
        None,
        granularity_us,
    ));
    assert!(rt.tools.subscribe(p.clone()));
    let region = leak(0u8) as *const u8 as usize;
    rt.register(
        leak(1u64) as *const u64 as usize,
        &[MAGIC],
        vec![entry(c"inc", region, 0)],
    );
    (rt, state, p, region)
}

/// `target map(tofrom: x)` at prof.c:42, as the C boundary runs it.
fn region(rt: &Runtime, host_ptr: usize, x: &mut i32) {
    let dev = rt.device(0).unwrap();
    let item = (
        x as *mut i32 as usize,
        4,
        mt::TO | mt::FROM | mt::TARGET_PARAM,
    );
    with_args(&[item], |args| {
        let mut ai = rt.async_info(&dev);
        let r = rt.begin_construct_at(
            &mut ai,
            ConstructKind::Target,
            false,
            0xc0de,
            LOC.as_ptr() as usize,
        );
        let config = LaunchConfig {
            version: 3,
            num_teams: [u32::MAX, 0, 0],
            ..Default::default()
        };
        let res = rt.target(
            &dev,
            host_ptr,
            args,
            &config,
            &SourceLoc::default(),
            &mut ai,
        );
        ai.synchronize().and(res).unwrap();
        rt.end_construct(r);
    })
}

/// The `"name":` values of the trace's events, in order.
fn names(json: &str) -> Vec<String> {
    json.lines()
        .filter_map(|l| {
            let at = l.find("\"name\":\"")? + 8;
            Some(l[at..at + l[at..].find('"')?].to_owned())
        })
        .collect()
}

#[test]
fn a_region_in_the_trace_and_the_summary() {
    let (rt, state, p, host_ptr) = setup(0);
    let mut x = 41;
    region(&rt, host_ptr, &mut x);
    region(&rt, host_ptr, &mut x);
    assert_eq!(x, 43);
    let json = p.trace_json();
    assert!(json.starts_with("{\"traceEvents\":[\n") && json.contains("\"beginningOfTime\":"));
    let n = names(&json);
    for want in [
        "Runtime: target exe",
        "Kernel Target",
        "HostToDev",
        "DevToHost",
        "Alloc",
        "Free",
        "alloc",
        "copy host to device",
        "inc",
        "copy device to host",
        "free",
        "Total Runtime: target exe",
        "process_name",
        "thread_name",
    ] {
        assert!(n.iter().any(|x| x == want), "{want} missing from {n:?}");
    }
    assert!(json.contains("\"args\":{\"name\":\"device 0 (generic-64bit)\"}"));
    // Host events carry LLVM's detail: the location string first.
    assert!(
        json.contains("\"detail\":\";prof.c;main;42;7;;Size=4B\""),
        "{json}"
    );
    // Device events: one queue, so one lane; each event has the mock's exact device time.
    let device: Vec<&str> = json
        .lines()
        .filter(|l| l.contains("\"cat\":\"device\""))
        .collect();
    assert_eq!(
        device.len(),
        2 * 5,
        "alloc, copy in, kernel, copy out, free per region"
    );
    assert!(
        device.iter().all(|l| l.contains("\"tid\":0,")),
        "{device:?}"
    );
    let kernel = device
        .iter()
        .find(|l| l.contains("\"name\":\"inc\""))
        .unwrap();
    assert!(
        kernel.contains(&format!("\"dur\":{}.000", cost::LAUNCH / 1000)),
        "the mock's launch costs {} ns: {kernel}",
        cost::LAUNCH
    );
    assert!(kernel.contains("\"construct\":\"prof.c:42\""));
    // The stream-ordered free follows the copy back on the device lane.
    let order: Vec<&str> = device
        .iter()
        .take(5)
        .map(|l| {
            let at = l.find("\"name\":\"").unwrap() + 8;
            &l[at..at + l[at..].find('"').unwrap()]
        })
        .collect();
    assert_eq!(
        order,
        [
            "alloc",
            "copy host to device",
            "inc",
            "copy device to host",
            "free"
        ]
    );
    let (constructs, device_ops) = p.summary();
    let (key, row) = &constructs[0];
    assert_eq!((key.0.as_str(), key.1.as_str()), ("target", "prof.c:42"));
    assert_eq!(
        (row.count, row.to_device, row.from_device, row.allocs),
        (2, 8, 8, 2)
    );
    let kernels = device_ops
        .iter()
        .find(|(k, _)| k.1 == "kernel inc")
        .unwrap();
    assert_eq!((kernels.1.count, kernels.1.total_ns), (2, 2 * cost::LAUNCH));
    assert_eq!(state.pending_timestamps(), 0, "every timestamp resolved");
    let tsv = p.summary_tsv();
    assert!(
        tsv.lines()
            .any(|l| l.starts_with("construct\ttarget\tprof.c:42\t2\t")),
        "{tsv}"
    );
    // Every row has the header's eleven columns, construct and device rows alike.
    assert!(tsv.lines().any(|l| l.starts_with("device\t")), "{tsv}");
    for l in tsv.lines() {
        assert_eq!(l.split('\t').count(), 11, "{l:?} in\n{tsv}");
    }
}

#[test]
fn short_host_events_are_left_out_but_counted() {
    let (rt, _, p, host_ptr) = setup(1_000_000);
    let mut x = 1;
    region(&rt, host_ptr, &mut x);
    let json = p.trace_json();
    let n = names(&json);
    assert!(
        !n.iter().any(|x| x == "Runtime: target exe"),
        "under a second: left out"
    );
    assert!(
        n.iter().any(|x| x == "Total Runtime: target exe"),
        "but counted"
    );
    assert!(n.iter().any(|x| x == "inc"), "device events are all kept");
}
