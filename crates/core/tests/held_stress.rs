//! Held `nowait` constructs under load (`ops/held.rs`): eight threads issue regions over four
//! shared variables at random (held `nowait` ones, blocking ones, `from`-only ones), poll,
//! take over and complete each other's constructs, while the mock's queues flip between busy
//! and idle. Nothing may hang (a watchdog fails the test after 60 s), and at the end every
//! construct has completed, the mapping table is empty, the table's invariants hold and no
//! device memory is left. The values themselves race (the threads map the variables at once,
//! as libomp's tasks do) and are not checked; the deterministic rules are `held.rs`'s.

use omptarget_core::ops::held;
use omptarget_core::ops::map_type as mt;
use omptarget_core::{Config, NoHostRuntime, Runtime};
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

mod common;
use common::{held_region, inc_plugin, register_image};

const THREADS: usize = 8;
const STEPS: usize = 300;

/// xorshift64*: a reproducible stream of choices per thread.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) % n
    }
}

/// One region over `item` (`common::held_region`): a `nowait` one still running goes into
/// `slots` (its task's slot value), a finished or blocking one completes here.
fn region(
    rt: &Runtime,
    key_region: usize,
    item: (usize, i64, u64),
    nowait: bool,
    slots: &mut Vec<usize>,
) {
    let held = held_region(rt, key_region, &[item], nowait);
    if !held.is_null() {
        slots.push(held as usize);
    }
}

fn run(
    rt: &Runtime,
    state: &omptarget_plugin_mock::MockState,
    region_addr: usize,
    vars: &[usize],
    seed: u64,
) -> [usize; 3] {
    let mut rng = Rng(seed);
    let mut slots: Vec<usize> = Vec::new();
    // Constructs held, found complete by a poll, taken out by a later construct.
    let (mut held_n, mut polled, mut taken) = (0, 0, 0);
    for _ in 0..STEPS {
        let v = vars[rng.below(vars.len() as u64) as usize];
        let tofrom = (v, 4, mt::TO | mt::FROM | mt::TARGET_PARAM);
        let before = slots.len();
        match rng.below(10) {
            0..=3 => region(rt, region_addr, tofrom, true, &mut slots),
            4 => region(rt, region_addr, tofrom, false, &mut slots),
            5 => region(
                rt,
                region_addr,
                (v, 4, mt::FROM | mt::TARGET_PARAM),
                true,
                &mut slots,
            ),
            6 | 7 if !slots.is_empty() => {
                // A poll of one of this thread's tasks.
                let at = rng.below(slots.len() as u64) as usize;
                // SAFETY: a slot value `hold` returned, still in its slot.
                if unsafe { held::poll(slots[at] as *mut c_void, false) }.unwrap() {
                    slots.swap_remove(at);
                    polled += 1;
                }
            }
            8 if !slots.is_empty() => {
                // The task issues another construct: it takes its held one over or completes it.
                let at = rng.below(slots.len() as u64) as usize;
                let ptr = slots.swap_remove(at);
                taken += 1;
                // SAFETY: taken out of its slot here, owned once.
                if let Some(ai) = unsafe { held::take(ptr as *mut c_void) }.unwrap() {
                    ai.synchronize().unwrap();
                }
            }
            _ => state.busy.store(rng.below(2) == 0, Ordering::SeqCst),
        }
        held_n += slots.len().saturating_sub(before);
    }
    // Every task's construct completes (a blocking poll).
    for ptr in slots {
        // SAFETY: still in its slot.
        while !unsafe { held::poll(ptr as *mut c_void, true) }.unwrap() {
            std::thread::yield_now();
        }
    }
    [held_n, polled, taken]
}

#[test]
fn held_constructs_of_many_threads_on_shared_variables_all_complete_and_leave_nothing() {
    let (plugin, state) = inc_plugin(1, true, true);
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    let (key, region_addr) = register_image(&rt, c"inc");
    let vars: Vec<Box<i32>> = (0..4).map(|_| Box::new(0)).collect();
    let addrs: Vec<usize> = vars.iter().map(|v| &**v as *const i32 as usize).collect();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<[usize; 3]>();
    let mut seen = [0usize; 3];
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (rt, state, addrs, done) = (&rt, &*state, &addrs, done_tx.clone());
            s.spawn(move || {
                let counts = run(rt, state, region_addr, addrs, 0x9e37_79b9 + t as u64 * 7919);
                done.send(counts).unwrap();
            });
        }
        for _ in 0..THREADS {
            match done_rx.recv_timeout(Duration::from_secs(60)) {
                Ok(counts) => {
                    for (s, c) in seen.iter_mut().zip(counts) {
                        *s += c;
                    }
                }
                Err(_) => {
                    // The threads are stuck: no join would return.
                    eprintln!("held constructs did not complete within 60 s");
                    std::process::abort();
                }
            }
        }
    });
    // The load took the paths it is for.
    let [held_n, polled, taken] = seen;
    assert!(
        held_n > 200 && polled > 50 && taken > 50,
        "held {held_n}, found complete by a poll {polled}, taken out {taken}"
    );
    state.busy.store(false, Ordering::SeqCst);
    let dev = rt.device(0).unwrap();
    assert!(dev.mappings().is_empty(), "every mapping released");
    dev.check_table().unwrap();
    drop(dev);
    rt.unregister(key);
    assert_eq!(state.memory.live(), 0, "no device memory left");
}
