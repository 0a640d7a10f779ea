//! A Sample's thread list, shared: the BPF source repeats most threads
//! from one Sample to the next and keeps the list it sent for that, so the
//! source's copy and the consumers' Sample are one allocation (at 50,000
//! threads the source's own copy was 12 MB). Reads go through the slice;
//! a write copies the list first if anyone else holds it.
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::sample::ThreadSample;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Threads(Arc<Vec<ThreadSample>>);

impl Threads {
    /// Another holder of the same list (no copy).
    pub fn share(&self) -> Threads {
        Threads(Arc::clone(&self.0))
    }

    /// The list to own: moved out if no one else holds it, else copied.
    pub fn into_vec(self) -> Vec<ThreadSample> {
        Arc::try_unwrap(self.0).unwrap_or_else(|shared| (*shared).clone())
    }
}

impl From<Vec<ThreadSample>> for Threads {
    fn from(v: Vec<ThreadSample>) -> Threads {
        Threads(Arc::new(v))
    }
}

impl FromIterator<ThreadSample> for Threads {
    fn from_iter<I: IntoIterator<Item = ThreadSample>>(it: I) -> Threads {
        Threads(Arc::new(it.into_iter().collect()))
    }
}

impl Deref for Threads {
    type Target = Vec<ThreadSample>;
    fn deref(&self) -> &Vec<ThreadSample> {
        &self.0
    }
}

impl DerefMut for Threads {
    fn deref_mut(&mut self) -> &mut Vec<ThreadSample> {
        Arc::make_mut(&mut self.0)
    }
}

impl<'a> IntoIterator for &'a Threads {
    type Item = &'a ThreadSample;
    type IntoIter = std::slice::Iter<'a, ThreadSample>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a mut Threads {
    type Item = &'a mut ThreadSample;
    type IntoIter = std::slice::IterMut<'a, ThreadSample>;
    fn into_iter(self) -> Self::IntoIter {
        self.deref_mut().iter_mut()
    }
}

impl Serialize for Threads {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Threads {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Threads, D::Error> {
        Vec::deserialize(d).map(Threads::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(tid: u32) -> ThreadSample {
        ThreadSample {
            tid,
            ..Default::default()
        }
    }

    #[test]
    fn a_shared_list_is_copied_on_write_and_the_other_holder_keeps_its_own() {
        let a: Threads = vec![t(1), t(2)].into();
        let mut b = a.share();
        assert!(std::ptr::eq(a.as_ptr(), b.as_ptr()), "shared, not copied");
        b.push(t(3));
        assert_eq!(a.len(), 2);
        assert_eq!(b.iter().map(|t| t.tid).collect::<Vec<_>>(), [1, 2, 3]);
        // sole holder: moved out, no copy
        let p = b.as_ptr();
        let owned = b.into_vec();
        assert_eq!(owned.as_ptr(), p);
    }
}
