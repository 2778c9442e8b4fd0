//! A copy back to the host that fails: the entry whose last reference the
//! construct released is retired all the same, on every device model, blocking or `nowait`,
//! and whether the copy fails when it is issued or when the queue is synchronised. Before, the
//! entry stayed in the table with count 0: `omp_target_is_present` still said yes, and a later
//! `enter data map(to:)` found it and did not copy the new host value in.

use omptarget_core::MapArgs;
use omptarget_core::ops::map_type as mt;
use omptarget_core::plugin::LaunchConfig;
use omptarget_core::trace::SourceLoc;
use omptarget_core::{AsyncInfo, Config, Device, Error, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockState, OpKind};
use std::sync::Arc;

mod common;
use common::{addr, entry, inc_plugin, leak, with_args};

struct Fixture {
    rt: Runtime,
    state: Arc<MockState>,
    region: usize,
}

fn fixture(stream_ordered: bool, asynchronous: bool) -> Fixture {
    let (plugin, state) = inc_plugin(1, stream_ordered, asynchronous);
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    let region = addr(leak(0u8));
    let entries = vec![entry(c"inc", region, 0)];
    rt.register(addr(leak(0u64)), &[MAGIC], entries);
    rt.device(0).expect("the mock device loads");
    Fixture { rt, state, region }
}

/// How a construct completes.
#[derive(Clone, Copy, Debug)]
enum Completion {
    /// One synchronisation at the end.
    Blocking,
    /// Polled until done, as libomp completes a `nowait` construct (on failure it is
    /// synchronised, as the C boundary does).
    Nowait,
}

fn run(
    fx: &Fixture,
    how: Completion,
    items: &[(usize, i64, u64)],
    op: impl FnOnce(&Fixture, &Device, &mut MapArgs<'_>, &mut AsyncInfo) -> Result<(), Error>,
) -> Result<(), Error> {
    let dev = fx.rt.device(0)?;
    with_args(items, |args| {
        let mut ai = fx.rt.async_info(&dev);
        let r = op(fx, &dev, args, &mut ai);
        match (how, r) {
            (Completion::Blocking, r) => ai.synchronize().and(r),
            (Completion::Nowait, Err(e)) => {
                let _ = ai.synchronize();
                Err(e)
            }
            (Completion::Nowait, Ok(())) => {
                while !ai.is_done()? {}
                drop(ai);
                Ok(())
            }
        }
    })
}

fn enter(fx: &Fixture, how: Completion, items: &[(usize, i64, u64)]) -> Result<(), Error> {
    run(fx, how, items, |fx, dev, args, ai| {
        fx.rt.data_begin(dev, args, ai)
    })
}

fn exit(fx: &Fixture, how: Completion, items: &[(usize, i64, u64)]) -> Result<(), Error> {
    run(fx, how, items, |fx, dev, args, ai| {
        fx.rt.data_end(dev, args, ai)
    })
}

fn target(fx: &Fixture, how: Completion, items: &[(usize, i64, u64)]) -> Result<(), Error> {
    run(fx, how, items, |fx, dev, args, ai| {
        let config = LaunchConfig {
            version: 3,
            ..Default::default()
        };
        fx.rt
            .target(dev, fx.region, args, &config, &SourceLoc::default(), ai)
    })
}

/// Device blocks that belong to a mapping or a construct (not the size-class cache's).
fn blocks_in_use(fx: &Fixture) -> usize {
    let dev = fx.rt.device(0).unwrap();
    fx.state.memory.live() - dev.cached_blocks()
}

const MODELS: [(&str, bool, bool); 3] = [
    ("synchronous", false, false),
    ("asynchronous", false, true),
    ("stream-ordered", true, true),
];

/// The faults: the copy back fails when issued, or the queue fails after it (found by the
/// synchronisation of a blocking construct, by the query that polls a `nowait` one).
fn faults(how: Completion) -> [OpKind; 2] {
    match how {
        Completion::Blocking => [OpKind::CopyFromDevice, OpKind::Synchronize],
        Completion::Nowait => [OpKind::CopyFromDevice, OpKind::Query],
    }
}

#[test]
fn a_failed_copy_back_at_exit_data_retires_the_entry() {
    for (model, stream_ordered, asynchronous) in MODELS {
        for how in [Completion::Blocking, Completion::Nowait] {
            for fault in faults(how) {
                let what = format!("{model} {how:?} {fault:?}");
                let fx = fixture(stream_ordered, asynchronous);
                let mut x = Box::new(1i32);
                let p = addr(&*x);
                let base = blocks_in_use(&fx);
                enter(&fx, how, &[(p, 4, mt::TO)]).unwrap();
                fx.state.fail_nth(fault, 1);
                let r = exit(&fx, how, &[(p, 4, mt::FROM)]);
                assert!(r.is_err(), "{what}: the failure is reported");
                let dev = fx.rt.device(0).unwrap();
                assert!(
                    !fx.rt.target_is_present(p, 0),
                    "{what}: the entry is retired"
                );
                assert_eq!(dev.check_table(), Ok(()), "{what}");
                assert_eq!(blocks_in_use(&fx), base, "{what}: its block is freed");
                // The next mapping is new: the new host value goes in.
                *x = 7;
                enter(&fx, how, &[(p, 4, mt::TO)]).unwrap();
                target(&fx, how, &[(p, 4, mt::TO | mt::FROM | mt::TARGET_PARAM)]).unwrap();
                exit(&fx, how, &[(p, 4, mt::FROM)]).unwrap();
                assert_eq!(*x, 8, "{what}: no stale device value came back");
                assert_eq!(blocks_in_use(&fx), base, "{what}");
            }
        }
    }
}

#[test]
fn a_failed_copy_back_at_the_end_of_a_region_retires_the_entry() {
    for (model, stream_ordered, asynchronous) in MODELS {
        for how in [Completion::Blocking, Completion::Nowait] {
            for fault in faults(how) {
                let what = format!("{model} {how:?} {fault:?}");
                let fx = fixture(stream_ordered, asynchronous);
                let mut x = Box::new(1i32);
                let p = addr(&*x);
                let base = blocks_in_use(&fx);
                fx.state.fail_nth(fault, 1);
                let r = target(&fx, how, &[(p, 4, mt::TO | mt::FROM | mt::TARGET_PARAM)]);
                assert!(r.is_err(), "{what}: the failure is reported");
                assert!(
                    !fx.rt.target_is_present(p, 0),
                    "{what}: the entry is retired"
                );
                assert_eq!(blocks_in_use(&fx), base, "{what}: its block is freed");
                *x = 7;
                target(&fx, how, &[(p, 4, mt::TO | mt::FROM | mt::TARGET_PARAM)]).unwrap();
                assert_eq!(*x, 8, "{what}: the region saw the new host value");
            }
        }
    }
}

/// A queue that fails when it is synchronised (a kernel that faulted, on a GPU) or polled
/// says why on stderr in LLVM's words, before the construct's failure is handled; before, the
/// only lines were the generic ones ("Consult ...", "failure of target construct"). The
/// construct runs in a child process of this test binary, whose stderr the test reads.
#[test]
fn a_failed_synchronisation_or_query_says_why() {
    if let Ok(which) = std::env::var("OMPTARGET_TEST_CHILD") {
        let (how, fault) = match which.as_str() {
            "sync" => (Completion::Blocking, OpKind::Synchronize),
            _ => (Completion::Nowait, OpKind::Query),
        };
        let fx = fixture(true, true);
        let x = Box::new(1i32);
        fx.state.fail_nth(fault, 1);
        let r = target(
            &fx,
            how,
            &[(addr(&*x), 4, mt::TO | mt::FROM | mt::TARGET_PARAM)],
        );
        assert!(r.is_err());
        return;
    }
    for (which, line) in [
        (
            "sync",
            "\"PluginInterface\" error: Failure to synchronize stream (nil): ",
        ),
        (
            "query",
            "\"PluginInterface\" error: Failure to query stream (nil): ",
        ),
    ] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_failed_synchronisation_or_query_says_why",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("OMPTARGET_TEST_CHILD", which)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{which}: the child failed: {stderr}");
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with(line) && l.contains("injected")),
            "{which}: stderr lacks `{line}...`:\n{stderr}"
        );
    }
}
