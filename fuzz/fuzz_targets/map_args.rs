//! Map-argument arrays into the mapping logic on the mock device: random map-type bits
//! (to/from/always/delete/present/hold/close/implicit, private and literal, return_param,
//! MEMBER_OF chains, PTR_AND_OBJ), sizes (negative ones too), overlapping and nested sections,
//! in sequences of enter, exit, update, target and nowait target constructs, on each device
//! model, optionally with the k-th plugin call failing.
//!
//! Host ranges lie in one arena (the runtime trusts the program's host pointers; a fuzzed
//! pointer outside the program's memory would only test the fuzzer). Invariants: no panic;
//! after every construct the table is well formed, no entry is left without references,
//! every entry's device block is live and no device block is unaccounted for; after
//! releasing everything and unregistering, no device memory is left.

#![no_main]

use libfuzzer_sys::fuzz_target;
use omptarget_core::image::OffloadEntry;
use omptarget_core::ops::map_type as mt;
use omptarget_core::trace::SourceLoc;
use omptarget_core::plugin::LaunchConfig;
use omptarget_core::{Config, Device, Error, MapArgs, NoHostRuntime, Runtime};
use omptarget_plugin_mock::{MAGIC, MockPlugin};
use std::sync::Arc;
use std::sync::atomic::Ordering;

const ARENA: usize = 512;

/// One item, six bytes: base and begin offsets (in 2-byte steps; a PTR_AND_OBJ base in
/// 8-byte steps), size, map-type bits (one per entry of `BITS`), MEMBER_OF parent.
struct Item {
    base: u8,
    begin: u8,
    size: i8,
    bits: u16,
    member_of: u8,
}

enum Kind {
    Enter,
    Exit,
    Update,
    Target,
    Nowait,
}

struct Construct {
    kind: Kind,
    items: Vec<Item>,
}

/// The input: device model, the plugin call to fail (0: none), then constructs, each a kind
/// byte, an item count byte and the items (`fuzz/seeds.py` writes the same format).
struct Input {
    model: u8,
    fail_call: u8,
    constructs: Vec<Construct>,
}

fn decode(data: &[u8]) -> Option<Input> {
    let (&model, rest) = data.split_first()?;
    let (&fail_call, mut rest) = rest.split_first()?;
    let mut constructs = Vec::new();
    while let [kind, count, tail @ ..] = rest {
        let kind = match kind % 5 {
            0 => Kind::Enter,
            1 => Kind::Exit,
            2 => Kind::Update,
            3 => Kind::Target,
            _ => Kind::Nowait,
        };
        let n = usize::from(*count % 9).min(tail.len() / 6);
        let items = tail[..n * 6]
            .chunks_exact(6)
            .map(|b| Item {
                base: b[0],
                begin: b[1],
                size: b[2] as i8,
                bits: u16::from_le_bytes([b[3], b[4]]),
                member_of: b[5],
            })
            .collect();
        constructs.push(Construct { kind, items });
        rest = &tail[n * 6..];
    }
    Some(Input {
        model,
        fail_call,
        constructs,
    })
}

/// The map-type bits a fuzzed item may carry (NON_CONTIG is left out: its pointer is a
/// descriptor array, not data; mappers are function pointers).
const BITS: [u64; 13] = [
    mt::TO,
    mt::FROM,
    mt::ALWAYS,
    mt::DELETE,
    mt::PTR_AND_OBJ,
    mt::TARGET_PARAM,
    mt::RETURN_PARAM,
    mt::PRIVATE,
    mt::LITERAL,
    mt::IMPLICIT,
    mt::CLOSE,
    mt::PRESENT,
    mt::OMPX_HOLD,
];

/// Arrays of one construct over the arena at `arena`: every host range lies inside it, and
/// a PTR_AND_OBJ base names a readable pointer word inside it.
fn arrays(arena: usize, items: &[Item]) -> (Vec<usize>, Vec<usize>, Vec<i64>, Vec<i64>) {
    let n = items.len();
    let (mut bases, mut begins, mut sizes, mut types) = (vec![], vec![], vec![], vec![]);
    for it in &items[..n] {
        let mut ty = 0;
        for (b, bit) in BITS.iter().enumerate() {
            if it.bits & (1 << b) != 0 {
                ty |= bit;
            }
        }
        let parent = u64::from(it.member_of) % (n as u64 + 2);
        ty |= parent << 48;
        let begin = usize::from(it.begin) * 2 % ARENA;
        let size = i64::from(it.size).min((ARENA - begin) as i64);
        let base = if ty & mt::PTR_AND_OBJ != 0 {
            usize::from(it.base) * 8 % (ARENA - 8)
        } else {
            usize::from(it.base) * 2 % ARENA
        };
        bases.push(arena + base);
        begins.push(arena + begin);
        sizes.push(size);
        types.push(ty as i64);
    }
    (bases, begins, sizes, types)
}

struct Fixture {
    rt: Runtime,
    state: Arc<omptarget_plugin_mock::MockState>,
    dev: Arc<Device>,
    region: usize,
    global: usize,
}

fn fixture(model: u8) -> Fixture {
    let plugin = MockPlugin::new(1, model & 1 != 0, model & 2 != 0);
    let state = plugin.state.clone();
    state.add_kernel("inc", |mem, args| {
        if let Some(&a) = args.first()
            && let Ok(v) = mem.read_i32(a)
        {
            let _ = mem.write_i32(a, v.wrapping_add(1));
        }
    });
    let rt = Runtime::new(
        Config::default(),
        vec![Arc::new(plugin)],
        Box::new(NoHostRuntime),
    );
    static REGION: u8 = 0;
    static GLOBAL: u64 = 0;
    let region = &REGION as *const u8 as usize;
    let global = &GLOBAL as *const u64 as usize;
    let entries = vec![
        OffloadEntry {
            addr: region,
            name: c"inc",
            size: 0,
            flags: 0,
            data: 0,
        },
        OffloadEntry {
            addr: global,
            name: c"g",
            size: 8,
            flags: 0,
            data: 0,
        },
    ];
    rt.register(1, &[MAGIC], entries);
    let dev = rt.device(0).expect("the mock image loads");
    Fixture {
        rt,
        state,
        dev,
        region,
        global,
    }
}

impl Fixture {
    fn run(&self, kind: &Kind, args: &mut MapArgs<'_>) -> Result<(), Error> {
        let (rt, dev) = (&self.rt, &self.dev);
        let mut ai = rt.async_info(dev);
        let config = LaunchConfig {
            version: 3,
            ..Default::default()
        };
        let loc = SourceLoc::default();
        let r = match kind {
            Kind::Enter => rt.data_begin(dev, args, &mut ai),
            Kind::Exit => rt.data_end(dev, args, &mut ai),
            Kind::Update => rt.data_update(dev, args, &mut ai),
            Kind::Target | Kind::Nowait => {
                rt.target(dev, self.region, args, &config, &loc, &mut ai)
            }
        };
        if !matches!(kind, Kind::Nowait) || r.is_err() {
            return r.and_then(|_| ai.synchronize());
        }
        // Polled as libomp polls a target task: busy once, then until done.
        self.state.busy.store(true, Ordering::SeqCst);
        let first = ai.is_done();
        self.state.busy.store(false, Ordering::SeqCst);
        if first? {
            return Ok(());
        }
        while !ai.is_done()? {}
        Ok(())
    }

    /// With no construct in flight: the table is well formed, no entry is left without
    /// references, each entry's block is live, and every live block is accounted for.
    fn check(&self) {
        self.dev.check_table().unwrap();
        let entries = self.dev.mappings();
        let mut owned = std::collections::BTreeSet::new();
        for e in &entries {
            assert_ne!(e.total_refs(), Some(0), "an entry without references: {e:?}");
            if e.owns_allocation {
                assert!(
                    self.state.memory.with_bytes(e.tgt_alloc, 1, |_| ()).is_ok(),
                    "an entry names freed device memory: {e:?}"
                );
                owned.insert(e.tgt_alloc);
            }
        }
        assert!(entries.iter().any(|e| e.host_begin == self.global));
        assert_eq!(self.dev.deferred_frees(), 0);
        assert_eq!(
            self.state.memory.live(),
            1 + owned.len() + self.dev.cached_blocks() + self.state.refused_frees(),
            "device blocks unaccounted for: {entries:#?}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(input) = decode(data) else { return };
    let fx = fixture(input.model);
    let mut arena = vec![0u64; ARENA / 8];
    let base = arena.as_mut_ptr() as usize;
    fx.state.fail_call(usize::from(input.fail_call));
    for c in input.constructs.iter().take(16) {
        let (mut bases, begins, sizes, types) = arrays(base, &c.items);
        let mut args = MapArgs {
            bases: &mut bases,
            begins: &begins,
            sizes: &sizes,
            types: &types,
            names: None,
            mappers: None,
        };
        let _ = fx.run(&c.kind, &mut args);
        fx.check();
    }
    // Release what is left inside the arena (hold references too), then unregister.
    fx.state.fail_call(0);
    for e in fx.dev.mappings() {
        if !(base..base + ARENA).contains(&e.host_begin) {
            continue;
        }
        let mut bases = vec![e.host_begin; 2];
        let begins = bases.clone();
        let sizes = vec![e.size() as i64; 2];
        let types = vec![mt::DELETE as i64, (mt::DELETE | mt::OMPX_HOLD) as i64];
        let mut args = MapArgs {
            bases: &mut bases,
            begins: &begins,
            sizes: &sizes,
            types: &types,
            names: None,
            mappers: None,
        };
        fx.run(&Kind::Exit, &mut args).unwrap();
    }
    fx.check();
    assert_eq!(fx.dev.mappings().len(), 1, "only the global is left");
    fx.rt.unregister(1);
    assert_eq!(fx.state.memory.live(), fx.state.refused_frees());
    drop(arena);
});
