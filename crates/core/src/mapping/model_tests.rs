//! A property test: random map / unmap / lookup sequences against a byte-level reference
//! model. The model records, for every host byte, which mapping owns it; the table must agree
//! with it on every lookup, and entries must never overlap.

use super::{Entry, MappingTable};
use std::collections::HashMap;

/// xorshift64*: deterministic, so a failing seed can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Host addresses used: a small window so that collisions are frequent.
const SPACE: usize = 256;

struct Model {
    /// owner[i] = begin of the mapping that holds byte i.
    owner: Vec<Option<usize>>,
    /// begin → (end, dynamic refs).
    maps: HashMap<usize, (usize, u64)>,
}

impl Model {
    fn classify(&self, begin: usize, size: usize) -> (bool, bool) {
        // (contained, touches-but-not-contained)
        if size == 0 {
            return (begin < SPACE && self.owner[begin].is_some(), false);
        }
        let owners: Vec<Option<usize>> = (begin..begin + size).map(|i| self.owner[i]).collect();
        let first = owners[0];
        let contained = first.is_some() && owners.iter().all(|o| *o == first);
        let touches = owners.iter().any(Option::is_some);
        (contained, touches && !contained)
    }
}

fn run_sequence(seed: u64, steps: usize) {
    let mut rng = Rng(seed | 1);
    let mut table = MappingTable::new();
    let mut model = Model {
        owner: vec![None; SPACE],
        maps: HashMap::new(),
    };
    for step in 0..steps {
        let begin = rng.below(SPACE as u64 - 16) as usize;
        let size = rng.below(16) as usize;
        let ctx = format!("seed {seed} step {step}: [{begin}, +{size})");
        let l = table.lookup(begin, size);
        let (contained, extension) = model.classify(begin, size);
        assert_eq!(l.contained, contained, "contained mismatch at {ctx}");
        assert_eq!(l.is_extension(), extension, "extension mismatch at {ctx}");
        if let (true, Some(id)) = (contained, l.entry) {
            let e = table.get(id).expect("lookup names a live entry");
            assert!(
                e.host_begin <= begin && begin + size <= e.host_end.max(begin),
                "{ctx}"
            );
            assert_eq!(model.owner[begin], Some(e.host_begin), "{ctx}");
        }
        match rng.below(3) {
            // map: add a reference or create the entry.
            0 if size > 0 && !extension => {
                if let (true, Some(id)) = (l.contained, l.entry) {
                    table.get_mut(id).unwrap().add_ref(false);
                    model.maps.get_mut(&id).unwrap().1 += 1;
                } else {
                    table.insert(Entry::for_tests(begin, size));
                    model.maps.insert(begin, (begin + size, 1));
                    for o in &mut model.owner[begin..begin + size] {
                        *o = Some(begin);
                    }
                }
            }
            // unmap (release, or delete one time in four).
            1 if l.contained && size > 0 => {
                let id = l.entry.unwrap();
                let delete = rng.below(4) == 0;
                let e = table.get_mut(id).unwrap();
                let would = e.release_would_remove(false, delete);
                let gone = e.release(false, delete);
                assert_eq!(would, gone, "{ctx}");
                let m = model.maps.get_mut(&id).unwrap();
                m.1 = if delete { 0 } else { m.1 - 1 };
                assert_eq!(gone, m.1 == 0, "{ctx}");
                if gone {
                    table.remove(id);
                    let (end, _) = model.maps.remove(&id).unwrap();
                    for o in &mut model.owner[id..end] {
                        *o = None;
                    }
                }
            }
            _ => {}
        }
        // Invariant: entries are disjoint and match the model.
        let mut last_end = 0;
        for e in table.iter() {
            assert!(e.host_begin >= last_end, "overlap at {ctx}");
            last_end = e.host_end;
            assert_eq!(model.maps.get(&e.host_begin).map(|m| m.0), Some(e.host_end));
        }
        assert_eq!(table.len(), model.maps.len(), "{ctx}");
        table.check_invariants().unwrap();
    }
}

#[test]
fn random_sequences_agree_with_the_model() {
    // Miri interprets every step (about 10^4 times slower): fewer, shorter sequences there.
    let (sequences, steps) = if cfg!(miri) { (12, 120) } else { (300, 400) };
    for seed in 1..=sequences {
        run_sequence((seed as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15), steps);
    }
}
