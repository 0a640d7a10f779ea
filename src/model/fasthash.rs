//! A small, fast hasher for the per-interval indexes keyed by thread ids
//! (tid, start time): 10,000 threads are indexed every second, and std's
//! SipHash (built to resist hash flooding) showed up at ~10 % of schedtop's
//! CPU. These keys are kernel-assigned integers, not attacker-chosen input.
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate, one word at a time (the FxHash scheme).
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl IdHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(w));
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.add(n as u64);
    }
    fn write_u32(&mut self, n: u32) {
        self.add(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;
pub type IdSet<K> = HashSet<K, BuildHasherDefault<IdHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_ids_spread_and_maps_work() {
        let mut m: IdMap<(u32, u64), u32> = IdMap::default();
        for tid in 0..10_000u32 {
            m.insert((tid, 1_000_000 + tid as u64), tid);
        }
        assert_eq!(m.len(), 10_000);
        assert_eq!(m.get(&(4242, 1_004_242)), Some(&4242));
        assert_eq!(m.get(&(4242, 1)), None);
        let h = |k: (u32, u64)| {
            let mut s = IdHasher::default();
            std::hash::Hash::hash(&k, &mut s);
            s.finish()
        };
        assert_ne!(h((1, 2)), h((2, 1)));
    }
}
