//! Thread names as the kernel stores them (16 bytes, NUL-padded) to shared
//! strings: thousands of threads share a handful of names, and an idle
//! thread's name is the same every drain, so a Sample (and the rows derived
//! from it) hold one allocation per distinct name, not two per thread.
use std::collections::HashMap;

use crate::model::Name;

/// Distinct names kept before the table starts over (a workload renaming
/// threads endlessly cannot grow it without bound).
const MAX_NAMES: usize = 1 << 16;

#[derive(Default)]
pub(super) struct NameInterner {
    names: HashMap<[u8; 16], Name>,
}

impl NameInterner {
    /// The shared string for a kernel name (up to the first NUL; bytes that
    /// are not UTF-8 replaced, as the kernel allows any).
    pub fn get(&mut self, raw: &[i8; 16]) -> Name {
        let mut key: [u8; 16] = raw.map(|c| c as u8);
        // what follows the NUL is not part of the name: keyed as zeros
        let len = key.iter().position(|&b| b == 0).unwrap_or(key.len());
        key[len..].fill(0);
        if let Some(n) = self.names.get(&key) {
            return n.clone();
        }
        if self.names.len() >= MAX_NAMES {
            self.names.clear();
        }
        let name: Name = String::from_utf8_lossy(&key[..len]).into();
        self.names.insert(key, name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &[u8]) -> [i8; 16] {
        let mut r = [0i8; 16];
        for (d, &b) in r.iter_mut().zip(s) {
            *d = b as i8;
        }
        r
    }

    #[test]
    fn same_name_is_one_allocation_and_bytes_survive() {
        let mut n = NameInterner::default();
        let a = n.get(&raw(b"worker"));
        let b = n.get(&raw(b"worker"));
        assert!(std::sync::Arc::ptr_eq(&a, &b));
        assert_eq!(&*a, "worker");
        // 15 bytes and no NUL inside the 16: all kept; bytes after a NUL ignored
        assert_eq!(&*n.get(&raw(b"abcdefghijklmnop")), "abcdefghijklmnop");
        assert_eq!(&*n.get(&raw(b"ab\0cd")), "ab");
        // a stale tail after the NUL is the same name, one entry
        assert!(std::sync::Arc::ptr_eq(
            &n.get(&raw(b"ab\0xy")),
            &n.get(&raw(b"ab"))
        ));
        // not UTF-8: replaced, never a panic
        assert_eq!(&*n.get(&raw(&[0xff, b'x'])), "\u{fffd}x");
    }

    #[test]
    fn bounded() {
        let mut n = NameInterner::default();
        for i in 0..(MAX_NAMES + 10) as u32 {
            let mut r = [0i8; 16];
            for (d, b) in r.iter_mut().zip(format!("t{i}").bytes()) {
                *d = b as i8;
            }
            n.get(&r);
        }
        assert!(n.names.len() <= MAX_NAMES);
    }
}
