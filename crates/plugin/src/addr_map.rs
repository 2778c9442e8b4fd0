//! A hash map for keys that are addresses or sizes the runtime made itself (device pointers,
//! host region ids, block sizes): no attacker chooses them, so std's SipHash (about 60
//! instructions a lookup, several lookups a construct) buys nothing there.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// `HashMap` with [`AddrHasher`].
pub type AddrMap<K, V> = HashMap<K, V, BuildHasherDefault<AddrHasher>>;

/// A new, empty [`AddrMap`].
pub fn addr_map<K, V>() -> AddrMap<K, V> {
    HashMap::with_hasher(BuildHasherDefault::default())
}

/// Multiply-xor hashing of machine words (rustc's `FxHasher` scheme), finished by a
/// splitmix-style fold that brings the well-mixed high bits down: aligned addresses have zero
/// low bits, and the table indexes buckets by the low bits of the hash.
#[derive(Default, Clone, Copy)]
pub struct AddrHasher(u64);

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl Hasher for AddrHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(K);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn finish(&self) -> u64 {
        let h = self.0;
        (h ^ (h >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn a_map_of_aligned_addresses_works_and_spreads_them() {
        let mut m: AddrMap<usize, usize> = addr_map();
        for i in 0..10_000usize {
            m.insert(0x7f00_0000_0000 + i * 4096, i);
        }
        for i in (0..10_000usize).step_by(7) {
            assert_eq!(m.get(&(0x7f00_0000_0000 + i * 4096)), Some(&i));
        }
        assert_eq!(m.remove(&0x7f00_0000_0000), Some(0));
        assert_eq!(m.len(), 9_999);
        // Page-aligned keys land in many of 1024 buckets (by the hash's low bits).
        let b = BuildHasherDefault::<AddrHasher>::default();
        let buckets: std::collections::HashSet<u64> = (0..1024usize)
            .map(|i| b.hash_one(0x7f00_0000_0000usize + i * 4096) & 1023)
            .collect();
        assert!(buckets.len() > 600, "{} buckets", buckets.len());
    }
}
