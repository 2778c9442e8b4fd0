//! Fault injection at every position, so that no failure of a device call leaves the runtime
//! inconsistent: for each script of constructs and
//! each device model, a fault-free run counts the mock plugin's faultable calls; then, for
//! every k, a fresh runtime runs the script with the k-th call failing. The construct that
//! meets the fault must leave each mapping either as it was before the construct or as a
//! fault-free run leaves it (the entry retired), with every device block accounted for (no
//! leak, no entry whose memory is gone, no entry without references); every later construct
//! must succeed; and at the end the device returns to its baseline and unregistration frees
//! everything.

mod common;

use common::{addr, entry, leak};
use omptarget_core::mapping::{Entry, RefCount};
use omptarget_core::ops::map_type as mt;
use omptarget_core::ops::{MapperComponent, push_component};
use omptarget_core::plugin::{AllocKind, LaunchConfig};
use omptarget_core::trace::SourceLoc;
use omptarget_core::{AsyncInfo, Config, Device, Error, MapArgs, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockPlugin, MockState, Op, OpKind};
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// A device model of the mock: (allocation ordered on queues, work asynchronous).
#[derive(Clone, Copy, Debug)]
struct Model {
    stream_ordered: bool,
    asynchronous: bool,
}

const MODELS: [Model; 4] = [
    Model {
        stream_ordered: false,
        asynchronous: false,
    },
    Model {
        stream_ordered: false,
        asynchronous: true,
    },
    Model {
        stream_ordered: true,
        asynchronous: false,
    },
    Model {
        stream_ordered: true,
        asynchronous: true,
    },
];

/// A struct holding a pointer, for PTR_AND_OBJ items (`map(s, s.p[0:4])`).
#[repr(C)]
struct Pair {
    p: *mut i32,
    n: i64,
}

/// The host data of one run (boxed: its addresses stay put).
#[repr(C)]
struct Host {
    x: [i32; 4],
    y: [i32; 4],
    m: [i32; 4],
    a: [i32; 4],
    s: Pair,
    pointee: [i32; 4],
    fresh: [i32; 4],
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Var {
    X,
    Y,
    M,
}

/// One construct of a script.
#[derive(Clone, Copy, Debug)]
enum Construct {
    Enter(&'static [(Var, u64)]),
    Exit(&'static [(Var, u64)]),
    Update(&'static [(Var, u64)]),
    /// A blocking target region running `inc` on its first argument.
    Target(&'static [(Var, u64)]),
    /// A `nowait` target region, completed by polling (the first poll finds it busy).
    Nowait(&'static [(Var, u64)]),
    /// `map(s) map(s.p[0:4])` with the given map type on both (PTR_AND_OBJ, MEMBER_OF 1).
    PtrEnter,
    PtrExit,
    /// A target region on `s` and `s.p[0:4]` running `deref_inc` (increments `s.p[0]`).
    PtrTarget,
    /// Enter / exit of `m` through a user-defined mapper (the whole array and a member).
    MapperEnter,
    MapperExit,
    /// omp_target_alloc, memcpy to, memset, memcpy back, omp_target_free.
    Api,
    /// omp_target_alloc, associate with `a`, a target region on `a`, disassociate, free.
    Associate,
    /// llvm_omp_target_lock_mem and unlock.
    Lock,
    /// Two constructs of one kind on two queues, the second issued before the first
    /// synchronises (a second queue, and cross-queue events on asynchronous devices).
    Overlap(Phase, &'static [(Var, u64)]),
}

#[derive(Clone, Copy, Debug)]
enum Phase {
    Enter,
    Target,
    Exit,
}

use Construct::*;
use Var::*;

const TFP: u64 = mt::TO | mt::FROM | mt::TARGET_PARAM;

/// The scripts: the model check's two, then enter/exit/update, hold and delete, nowait,
/// PTR_AND_OBJ, mappers and API calls.
const SCRIPTS: &[(&str, &[Construct])] = &[
    (
        "model check A",
        &[
            Enter(&[(X, mt::TO)]),
            Target(&[(X, TFP)]),
            Exit(&[(X, mt::FROM)]),
        ],
    ),
    ("model check B", &[Target(&[(X, TFP)]), Target(&[(X, TFP)])]),
    (
        "enter, update, exit of two items",
        &[
            Enter(&[(X, mt::TO), (Y, mt::TO)]),
            Update(&[(X, mt::TO), (Y, mt::FROM)]),
            Exit(&[(X, mt::FROM), (Y, mt::DELETE)]),
        ],
    ),
    (
        "hold, two-item region, always/delete",
        &[
            Enter(&[(X, mt::TO | mt::OMPX_HOLD)]),
            Enter(&[(Y, mt::TO)]),
            Target(&[(X, TFP), (Y, TFP | mt::ALWAYS)]),
            Exit(&[(Y, mt::FROM | mt::ALWAYS), (Y, mt::DELETE)]),
            Exit(&[(X, mt::FROM | mt::OMPX_HOLD)]),
        ],
    ),
    (
        "nowait",
        &[
            Enter(&[(X, mt::TO)]),
            Nowait(&[(X, TFP), (Y, TFP)]),
            Nowait(&[(Y, TFP)]),
            Exit(&[(X, mt::FROM)]),
        ],
    ),
    ("PTR_AND_OBJ", &[PtrEnter, PtrTarget, PtrExit, PtrTarget]),
    ("mapper", &[MapperEnter, Target(&[(M, TFP)]), MapperExit]),
    ("API calls", &[Api, Associate, Lock]),
    (
        "overlapping constructs",
        &[
            Overlap(Phase::Enter, &[(X, mt::TO)]),
            Overlap(Phase::Target, &[(X, TFP), (Y, TFP)]),
            Overlap(Phase::Exit, &[(X, mt::FROM)]),
        ],
    ),
    (
        "firstprivate",
        &[
            Enter(&[(X, mt::TO)]),
            Target(&[(Y, mt::TO | mt::PRIVATE | mt::TARGET_PARAM), (X, TFP)]),
            Exit(&[(X, mt::FROM)]),
        ],
    ),
];

struct Fixture {
    rt: Runtime,
    state: Arc<MockState>,
    key: usize,
    inc: usize,
    deref_inc: usize,
    global: usize,
    dev: Arc<Device>,
}

fn fixture(model: Model) -> Fixture {
    let plugin = MockPlugin::new(1, model.stream_ordered, model.asynchronous);
    let state = plugin.state.clone();
    state.add_kernel("inc", |mem, args| {
        if let Ok(v) = mem.read_i32(args[0]) {
            mem.write_i32(args[0], v + 1).expect("writable");
        }
    });
    // Increments the first element the pointer at the argument's address points at.
    state.add_kernel("deref_inc", |mem, args| {
        let p = mem
            .with_bytes(args[0], 8, |b| usize::from_le_bytes(b.try_into().unwrap()))
            .expect("the struct is on the device");
        let v = mem
            .read_i32(p)
            .expect("the pointer was attached to device data");
        mem.write_i32(p, v + 1).expect("writable");
    });
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    let inc = leak(0u8) as *const u8 as usize;
    let deref_inc = leak(0u8) as *const u8 as usize;
    let global = leak(0u32) as *const u32 as usize;
    let entries = vec![
        entry(c"inc", inc, 0),
        entry(c"deref_inc", deref_inc, 0),
        entry(c"g", global, 4),
    ];
    let key = leak(1u64) as *const u64 as usize;
    rt.register(key, &[MAGIC], entries);
    let dev = rt.device(0).expect("the image loads");
    Fixture {
        rt,
        state,
        key,
        inc,
        deref_inc,
        global,
        dev,
    }
}

/// The mapper of `m`: the whole array, then its first two elements as a member.
extern "C" fn mapper_m(
    handle: *mut c_void,
    base: *mut c_void,
    begin: *mut c_void,
    size: i64,
    ty: i64,
    _name: *mut c_void,
) {
    let member = (ty as u64 & (mt::TO | mt::FROM)) | (1 << 48);
    for c in [
        MapperComponent {
            base: base as usize,
            begin: begin as usize,
            size,
            ty,
            name: 0,
        },
        MapperComponent {
            base: begin as usize,
            begin: begin as usize,
            size: 8,
            ty: member as i64,
            name: 0,
        },
    ] {
        // SAFETY: the runtime passes its live mapper handle.
        unsafe { push_component(handle, c) }.expect("the runtime's handle");
    }
}

/// Argument arrays of one construct: (base, begin, size, type, mapper).
type Items = Vec<(usize, usize, i64, u64, usize)>;

fn with_items<R>(items: &Items, f: impl FnOnce(&mut MapArgs<'_>) -> R) -> R {
    let mut bases: Vec<usize> = items.iter().map(|i| i.0).collect();
    let begins: Vec<usize> = items.iter().map(|i| i.1).collect();
    let sizes: Vec<i64> = items.iter().map(|i| i.2).collect();
    let types: Vec<i64> = items.iter().map(|i| i.3 as i64).collect();
    let mappers: Vec<usize> = items.iter().map(|i| i.4).collect();
    let mut args = MapArgs {
        bases: &mut bases,
        begins: &begins,
        sizes: &sizes,
        types: &types,
        names: None,
        mappers: mappers.iter().any(|&m| m != 0).then_some(&mappers[..]),
    };
    f(&mut args)
}

fn var_items(h: &Host, vars: &[(Var, u64)]) -> Items {
    vars.iter()
        .map(|&(v, ty)| {
            let a = match v {
                X => addr(&h.x),
                Y => addr(&h.y),
                M => addr(&h.m),
            };
            (a, a, 16, ty, 0)
        })
        .collect()
}

fn ptr_items(h: &Host, ty: u64, param: bool) -> Items {
    let s = addr(&h.s);
    let param = if param { mt::TARGET_PARAM } else { 0 };
    vec![
        (s, s, 16, ty | param, 0),
        (
            addr(&h.s.p),
            h.s.p as usize,
            16,
            ty | mt::PTR_AND_OBJ | (1 << 48),
            0,
        ),
    ]
}

impl Fixture {
    fn launch_config() -> LaunchConfig {
        LaunchConfig {
            version: 3,
            ..Default::default()
        }
    }

    /// A blocking construct, ended as the C boundary ends one: synchronised when issuing
    /// succeeded, else dropped (which waits and releases).
    fn blocking(
        &self,
        items: &Items,
        op: impl FnOnce(&mut MapArgs<'_>, &mut AsyncInfo) -> Result<(), Error>,
    ) -> Result<(), Error> {
        with_items(items, |args| {
            let mut ai = self.rt.async_info(&self.dev);
            let r = op(args, &mut ai);
            r.and_then(|_| ai.synchronize())
        })
    }

    fn target(&self, region: usize, items: &Items) -> Result<(), Error> {
        self.blocking(items, |args, ai| {
            self.rt.target(
                &self.dev,
                region,
                args,
                &Self::launch_config(),
                &SourceLoc::default(),
                ai,
            )
        })
    }

    /// A `nowait` region as libomp drives one: issued, polled once while the device is busy,
    /// then polled until done. A failed poll drops the construct (it waits and releases).
    fn nowait(&self, items: &Items) -> Result<(), Error> {
        with_items(items, |args| {
            let mut ai = self.rt.async_info(&self.dev);
            let r = self.rt.target(
                &self.dev,
                self.inc,
                args,
                &Self::launch_config(),
                &SourceLoc::default(),
                &mut ai,
            );
            if r.is_err() {
                let _ = ai.synchronize();
                return r;
            }
            self.state.busy.store(true, Ordering::SeqCst);
            let first = ai.is_done();
            self.state.busy.store(false, Ordering::SeqCst);
            match first {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => return Err(e),
            }
            loop {
                match ai.is_done() {
                    Ok(true) => return Ok(()),
                    Ok(false) => continue,
                    Err(e) => return Err(e),
                }
            }
        })
    }

    fn api(&self, h: &mut Host) -> Result<(), Error> {
        let host = self.rt.initial_device();
        let d = self.rt.target_alloc(16, 0, AllocKind::Device)?;
        if d == 0 {
            return Err(Error::InvalidArgument("omp_target_alloc gave NULL".into()));
        }
        let a = addr(&h.a);
        let r = self
            .rt
            .target_memcpy(d, a, 16, 0, 0, 0, host)
            .and_then(|_| self.rt.target_memset(d, 0, 4, 0))
            .and_then(|_| self.rt.target_memcpy(a, d, 16, 0, 0, host, 0));
        let freed = self.rt.target_free(d, 0, AllocKind::Device);
        r.and(freed)
    }

    fn associate(&self, h: &mut Host) -> Result<(), Error> {
        let d = self.rt.target_alloc(16, 0, AllocKind::Device)?;
        if d == 0 {
            return Err(Error::InvalidArgument("omp_target_alloc gave NULL".into()));
        }
        let a = addr(&h.a);
        let r = self.rt.associate_ptr(a, d, 16, 0).and_then(|_| {
            let r = self.target(self.inc, &vec![(a, a, 16, TFP, 0)]);
            let dis = self.rt.disassociate_ptr(a, 0);
            r.and(dis)
        });
        let freed = self.rt.target_free(d, 0, AllocKind::Device);
        r.and(freed)
    }

    fn run(&self, h: &mut Host, c: Construct) -> Result<(), Error> {
        let dev = &self.dev;
        let rt = &self.rt;
        match c {
            Enter(v) => self.blocking(&var_items(h, v), |args, ai| rt.data_begin(dev, args, ai)),
            Exit(v) => self.blocking(&var_items(h, v), |args, ai| rt.data_end(dev, args, ai)),
            Update(v) => self.blocking(&var_items(h, v), |args, ai| rt.data_update(dev, args, ai)),
            Target(v) => self.target(self.inc, &var_items(h, v)),
            Nowait(v) => self.nowait(&var_items(h, v)),
            PtrEnter => self.blocking(&ptr_items(h, mt::TO, false), |args, ai| {
                rt.data_begin(dev, args, ai)
            }),
            PtrExit => self.blocking(&ptr_items(h, mt::FROM, false), |args, ai| {
                rt.data_end(dev, args, ai)
            }),
            PtrTarget => self.target(self.deref_inc, &ptr_items(h, mt::TO | mt::FROM, true)),
            MapperEnter | MapperExit => {
                let m = addr(&h.m);
                let ty = if matches!(c, MapperEnter) {
                    mt::TO
                } else {
                    mt::FROM
                };
                let items = vec![(m, m, 16, ty, mapper_m as *const () as usize)];
                self.blocking(&items, |args, ai| {
                    if matches!(c, MapperEnter) {
                        rt.data_begin(dev, args, ai)
                    } else {
                        rt.data_end(dev, args, ai)
                    }
                })
            }
            Api => self.api(h),
            Associate => self.associate(h),
            Overlap(phase, v) => with_items(&var_items(h, v), |args| {
                let mut issue = |ai: &mut AsyncInfo| match phase {
                    Phase::Enter => rt.data_begin(dev, args, ai),
                    Phase::Exit => rt.data_end(dev, args, ai),
                    Phase::Target => rt.target(
                        dev,
                        self.inc,
                        args,
                        &Self::launch_config(),
                        &SourceLoc::default(),
                        ai,
                    ),
                };
                let mut first = rt.async_info(dev);
                let r1 = issue(&mut first);
                let mut second = rt.async_info(dev);
                let r2 = issue(&mut second);
                let r1 = r1.and_then(|_| first.synchronize());
                let r2 = r2.and_then(|_| second.synchronize());
                r1.and(r2)
            }),
            Lock => {
                let a = addr(&h.a);
                let p = rt.lock_host_memory(a, 16, 0)?;
                assert_eq!(p, a);
                rt.unlock_host_memory(p, 0)
            }
        }
    }
}

/// A mapping as the checks compare it: host offset in `Host` (device addresses differ from
/// run to run), counts, ownership.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mapping {
    offset: usize,
    size: usize,
    dyn_refs: RefCount,
    hold_refs: u64,
    owns: bool,
}

fn snapshot(fx: &Fixture, h: &Host) -> Vec<Mapping> {
    let base = addr(h);
    let end = base + std::mem::size_of::<Host>();
    fx.dev
        .mappings()
        .iter()
        .filter(|e| (base..end).contains(&e.host_begin))
        .map(|e| Mapping {
            offset: e.host_begin - base,
            size: e.size(),
            dyn_refs: e.dyn_refs,
            hold_refs: e.hold_refs,
            owns: e.owns_allocation,
        })
        .collect()
}

/// With no construct in flight: the table is well formed, the global is still mapped, no
/// entry is left without references, every owned block is live, and the device holds
/// nothing else (the global's block, cached blocks, blocks whose free the fault refused).
fn check_quiescent(fx: &Fixture, ctx: &str) {
    fx.dev
        .check_table()
        .unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let entries: Vec<Entry> = fx.dev.mappings();
    assert!(
        entries
            .iter()
            .any(|e| e.host_begin == fx.global && e.dyn_refs == RefCount::Infinite),
        "{ctx}: the global's mapping is gone"
    );
    let mut owned = std::collections::BTreeSet::new();
    for e in &entries {
        assert_ne!(
            e.total_refs(),
            Some(0),
            "{ctx}: entry at {:#x} has no references left (dangling)",
            e.host_begin
        );
        if e.owns_allocation {
            assert!(
                fx.state.memory.with_bytes(e.tgt_alloc, 1, |_| ()).is_ok(),
                "{ctx}: entry at {:#x} names freed device memory",
                e.host_begin
            );
            owned.insert(e.tgt_alloc);
        }
    }
    assert_eq!(
        fx.dev.deferred_frees(),
        0,
        "{ctx}: a deferred free was never done"
    );
    let expected = 1 + owned.len() + fx.dev.cached_blocks() + fx.state.refused_frees();
    assert_eq!(
        fx.state.memory.live(),
        expected,
        "{ctx}: device blocks leaked (entries {entries:#?})"
    );
}

fn new_host() -> Box<Host> {
    let mut h = Box::new(Host {
        x: [10, 0, 0, 0],
        y: [20, 0, 0, 0],
        m: [30, 0, 0, 0],
        a: [40, 0, 0, 0],
        s: Pair {
            p: std::ptr::null_mut(),
            n: 4,
        },
        pointee: [50, 0, 0, 0],
        fresh: [0; 4],
    });
    h.s.p = h.pointee.as_mut_ptr();
    h
}

/// Releases whatever a script left mapped, checks the device is back at its baseline, runs
/// one fresh region (later constructs work), and unregisters.
fn finish(fx: &Fixture, h: &mut Host, ctx: &str) {
    for _ in 0..4 {
        for m in snapshot(fx, h) {
            let p = addr(h) + m.offset;
            let ty = if m.hold_refs > 0 {
                mt::DELETE | mt::OMPX_HOLD
            } else {
                mt::DELETE
            };
            let items = vec![(p, p, m.size as i64, ty, 0)];
            fx.blocking(&items, |args, ai| fx.rt.data_end(&fx.dev, args, ai))
                .unwrap_or_else(|e| panic!("{ctx}: releasing a leftover mapping: {e}"));
        }
    }
    assert_eq!(snapshot(fx, h), vec![], "{ctx}: mappings left");
    check_quiescent(fx, ctx);
    let f = addr(&h.fresh);
    fx.target(fx.inc, &vec![(f, f, 16, TFP, 0)])
        .unwrap_or_else(|e| panic!("{ctx}: a fresh region after the fault failed: {e}"));
    assert_eq!(h.fresh[0], 1, "{ctx}: the fresh region's result");
    check_quiescent(fx, ctx);
    fx.rt.unregister(fx.key);
    assert_eq!(
        fx.state.memory.live(),
        fx.state.refused_frees(),
        "{ctx}: memory left after unregistration"
    );
}

/// An overlapped pair in which one construct failed leaves the state one construct gives:
/// the script's constructs before `i`, then one construct of the pair's kind alone.
fn half_state(model: Model, script: &[Construct], i: usize) -> Option<Vec<Mapping>> {
    let Overlap(phase, v) = script[i] else {
        return None;
    };
    let fx = fixture(model);
    let mut h = new_host();
    for &c in &script[..i] {
        fx.run(&mut h, c).unwrap();
    }
    let single = match phase {
        Phase::Enter => Enter(v),
        Phase::Target => Target(v),
        Phase::Exit => Exit(v),
    };
    fx.run(&mut h, single).unwrap();
    Some(snapshot(&fx, &h))
}

/// A fault-free run: the state after each construct and the faultable calls made by the end
/// of each.
fn reference(model: Model, script: &[Construct], name: &str) -> (Vec<Vec<Mapping>>, Vec<usize>) {
    let fx = fixture(model);
    let mut h = new_host();
    fx.state.fail_call(0);
    let mut states = vec![snapshot(&fx, &h)];
    let mut calls = vec![0];
    for (i, &c) in script.iter().enumerate() {
        fx.run(&mut h, c)
            .unwrap_or_else(|e| panic!("{name} {model:?}: construct {i} ({c:?}) failed: {e}"));
        check_quiescent(&fx, &format!("{name} {model:?} reference, after {c:?}"));
        states.push(snapshot(&fx, &h));
        calls.push(fx.state.calls());
    }
    finish(&fx, &mut h, &format!("{name} {model:?} reference"));
    (states, calls)
}

/// Runs `script` with the k-th faultable call failing, checking every construct.
fn faulted(
    model: Model,
    script: &[Construct],
    name: &str,
    k: usize,
    states: &[Vec<Mapping>],
    calls: &[usize],
) -> Vec<OpKind> {
    let fx = fixture(model);
    let mut h = new_host();
    fx.state.fail_call(k);
    // The construct that makes the k-th call (the runs are deterministic until then).
    let at = calls
        .iter()
        .position(|&c| c >= k)
        .expect("k within the run")
        - 1;
    for (i, &c) in script.iter().enumerate() {
        let ctx = format!("{name} {model:?}, call {k} failing, construct {i} ({c:?})");
        let before = snapshot(&fx, &h);
        if i <= at {
            assert_eq!(before, states[i], "{ctx}: runs diverged before the fault");
        }
        let r = fx.run(&mut h, c);
        let after = snapshot(&fx, &h);
        let failed = fx.state.failed_calls();
        let ctx = format!("{ctx}, failed {failed:?}");
        if i < at {
            r.unwrap_or_else(|e| panic!("{ctx}: failed before the fault: {e}"));
        } else if i == at {
            // Each mapping is as before the construct or as a fault-free run leaves it (or,
            // for an overlapped pair, as one construct of the pair leaves it).
            let half = half_state(model, script, i);
            let mut offsets: Vec<usize> = before
                .iter()
                .chain(&states[i + 1])
                .chain(&after)
                .map(|m| m.offset)
                .collect();
            offsets.sort();
            offsets.dedup();
            for off in offsets {
                let find = |s: &[Mapping]| s.iter().find(|m| m.offset == off).cloned();
                let now = find(&after);
                assert!(
                    now == find(&before)
                        || now == find(&states[i + 1])
                        || half.as_ref().is_some_and(|h| now == find(h)),
                    "{ctx} ({r:?}): mapping at +{off} is {now:?}, neither {:?} (before) nor {:?} (fault-free)",
                    find(&before),
                    find(&states[i + 1])
                );
            }
            if r.is_ok() {
                assert_eq!(after, states[i + 1], "{ctx}: succeeded with another result");
            }
        } else {
            r.unwrap_or_else(|e| panic!("{ctx}: a later construct failed: {e}"));
        }
        check_quiescent(&fx, &ctx);
    }
    let failed = fx.state.failed_calls();
    assert_eq!(failed.len(), 1, "{name} {model:?}: call {k} was not failed");
    finish(&fx, &mut h, &format!("{name} {model:?}, call {k} failing"));
    failed
}

#[test]
fn every_faultable_call_of_every_script_fails_cleanly() {
    let mut pairs = 0;
    let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
    for &(name, script) in SCRIPTS {
        for model in MODELS {
            let (states, calls) = reference(model, script, name);
            let total = *calls.last().unwrap();
            assert!(total > 0, "{name}: no faultable call");
            for k in 1..=total {
                for kind in faulted(model, script, name, k, &states, &calls) {
                    *kinds.entry(format!("{kind:?}")).or_default() += 1;
                }
                pairs += 1;
            }
        }
    }
    println!("(script, model, k) triples covered: {pairs}; failed calls by kind: {kinds:?}");
    // Every kind of call the constructs make was failed somewhere.
    for kind in [
        "Alloc",
        "CopyToDevice",
        "CopyFromDevice",
        "Free",
        "Memset",
        "Launch",
        "Synchronize",
        "Query",
        "CreateQueue",
        "CreateEvent",
        "RecordEvent",
        "WaitEvent",
        "Lock",
    ] {
        assert!(
            kinds.contains_key(kind),
            "no {kind} call was failed: {kinds:?}"
        );
    }
}

/// Faults while an image loads (queue creation at registration, the load itself, kernel and
/// global lookups): the device reports the failure, keeps nothing of the half-loaded image,
/// and a later use loads it cleanly.
#[test]
fn every_faultable_call_while_loading_fails_cleanly() {
    let mut pairs = 0;
    for model in MODELS {
        // Count the calls of registration and loading.
        let count = {
            let fx = fixture(model);
            // `fixture` registered and loaded; count from a fresh plugin instead.
            drop(fx);
            let plugin = MockPlugin::new(1, model.stream_ordered, model.asynchronous);
            let state = plugin.state.clone();
            let rt = Runtime::new(
                Config::default(),
                vec![Arc::new(plugin)],
                Box::new(NoHostRuntime),
            );
            state.fail_call(0);
            register_fixture_image(&rt);
            rt.device(0).unwrap();
            state.calls()
        };
        assert!(count >= 4, "load, two kernels and a global: {count}");
        for k in 1..=count {
            pairs += 1;
            let plugin = MockPlugin::new(1, model.stream_ordered, model.asynchronous);
            let state = plugin.state.clone();
            let rt = Runtime::new(
                Config::default(),
                vec![Arc::new(plugin)],
                Box::new(NoHostRuntime),
            );
            state.fail_call(k);
            let key = register_fixture_image(&rt);
            let first = rt.device(0);
            let ctx = format!(
                "{model:?}, load call {k} failing ({:?})",
                state.failed_calls()
            );
            if first.is_err() {
                // Nothing of the failed load stays on the device.
                assert_eq!(
                    state.memory.live(),
                    state.refused_frees(),
                    "{ctx}: blocks of a half-loaded image"
                );
            }
            // The next use works and the image is complete: the global is mapped once.
            let dev = rt
                .device(0)
                .unwrap_or_else(|e| panic!("{ctx}: retry failed: {e}"));
            let globals = dev
                .mappings()
                .iter()
                .filter(|e| e.dyn_refs == RefCount::Infinite)
                .count();
            assert_eq!(globals, 1, "{ctx}");
            assert_eq!(state.memory.live(), 1 + state.refused_frees(), "{ctx}");
            rt.unregister(key);
            assert_eq!(state.memory.live(), state.refused_frees(), "{ctx}");
            let log = state.log();
            let count = |f: fn(&Op) -> bool| log.iter().filter(|o| f(o)).count();
            assert_eq!(
                count(|o| matches!(o, Op::Load { .. })),
                count(|o| matches!(o, Op::Unload { .. })),
                "{ctx}: an image stayed loaded: {log:?}"
            );
        }
    }
    println!("(model, k) pairs covered while loading: {pairs}");
}

fn register_fixture_image(rt: &Runtime) -> usize {
    let entries = vec![
        entry(c"inc", leak(0u8) as *const u8 as usize, 0),
        entry(c"deref_inc", leak(0u8) as *const u8 as usize, 0),
        entry(c"g", leak(0u32) as *const u32 as usize, 4),
    ];
    let key = leak(1u64) as *const u64 as usize;
    rt.register(key, &[MAGIC], entries);
    key
}

/// The mock's own fault positions: `fail_call(k)` fails exactly the k-th faultable call, and
/// the older per-kind `fail_nth(Copy, n)` still counts copies of every direction.
#[test]
fn the_mock_fails_exactly_the_chosen_call() {
    // A model without a memory manager: every region makes the same calls.
    let fx = fixture(MODELS[2]);
    let h = new_host();
    let x = addr(&h.x);
    let items = vec![(x, x, 16, TFP, 0)];
    fx.state.fail_call(0);
    fx.target(fx.inc, &items).unwrap();
    let n = fx.state.calls();
    assert!(n >= 4, "alloc, copy in, launch, copy out, free: {n}");
    fx.state.fail_call(n);
    assert!(fx.target(fx.inc, &items).is_err() || fx.state.failed_calls().len() == 1);
    assert_eq!(fx.state.failed_calls().len(), 1);
    fx.state.fail_call(n + 1);
    fx.target(fx.inc, &items).unwrap();
    assert!(fx.state.failed_calls().is_empty(), "no call past the end");
    fx.state.fail_call(0);
    fx.state.fail_nth(OpKind::Copy, 2);
    let err = fx.target(fx.inc, &items).unwrap_err();
    assert!(
        format!("{err}").contains("copying data from device to host"),
        "the second copy is the copy back: {err}"
    );
}
