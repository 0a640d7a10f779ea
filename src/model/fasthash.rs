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

/// A bit per id modulo 4,096: a sure "no" for most ids before a map is
/// asked, where a few ids are looked for among 50,000 threads.
#[derive(Clone)]
pub struct IdFilter([u64; 64]);

impl IdFilter {
    pub fn of(ids: impl IntoIterator<Item = u32>) -> IdFilter {
        let mut f = IdFilter([0; 64]);
        for id in ids {
            f.0[(id as usize / 64) % 64] |= 1 << (id % 64);
        }
        f
    }

    /// False: `id` is not one of them. True: it may be.
    pub fn may_hold(&self, id: u32) -> bool {
        self.0[(id as usize / 64) % 64] & (1 << (id % 64)) != 0
    }
}

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

    #[test]
    fn the_filter_never_says_no_to_an_id_it_holds() {
        let ids = [0, 5, 63, 64, 4095, 70_000, u32::MAX];
        let f = IdFilter::of(ids);
        assert!(ids.iter().all(|&id| f.may_hold(id)));
        // 4101 shares 5's bit; 6 does not
        assert!(f.may_hold(4101));
        assert!(!f.may_hold(6));
        assert!(!IdFilter::of([]).may_hold(5));
    }
}
