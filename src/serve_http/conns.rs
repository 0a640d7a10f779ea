//! The open connections of `schedtop serve` and which one to close when
//! they are too many. A connection is either serving a request (from the
//! moment its headers are read until its answer is handed to the socket)
//! or waiting: just accepted, in its TLS handshake, sending its headers,
//! or idle between requests. At the cap a new connection closes the one
//! that has waited longest, so clients that connect and say nothing (or
//! dribble their headers) can never keep a scraper out; this holds on
//! loopback too, where every client has the same address and a
//! per-address limit would count them all as one. Only when every slot is
//! serving is the new connection turned away, and answers are short.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::Notify;

struct Conn {
    serving: bool,
    /// when it was accepted or last finished an answer
    since: Instant,
    close: Arc<Notify>,
}

#[derive(Default)]
struct Open {
    next_id: u64,
    conns: HashMap<u64, Conn>,
    evicted: u64,
}

pub struct Conns {
    max: usize,
    open: Mutex<Open>,
}

/// A connection's place: `close` is notified when it must go.
pub struct Admitted {
    pub id: u64,
    pub close: Arc<Notify>,
}

impl Conns {
    pub fn new(max: usize) -> Conns {
        Conns {
            max: max.max(1),
            open: Mutex::new(Open::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for a new connection, closing the longest-waiting one at the
    /// cap; None when every place is serving.
    pub fn admit(&self, now: Instant) -> Option<Admitted> {
        let mut o = self.lock();
        if o.conns.len() >= self.max {
            let oldest = o
                .conns
                .iter()
                .filter(|(_, c)| !c.serving)
                .min_by_key(|(&id, c)| (c.since, id))
                .map(|(&id, _)| id)?;
            if let Some(c) = o.conns.remove(&oldest) {
                c.close.notify_one();
                o.evicted += 1;
            }
        }
        let id = o.next_id;
        o.next_id += 1;
        let close = Arc::new(Notify::new());
        o.conns.insert(
            id,
            Conn {
                serving: false,
                since: now,
                close: close.clone(),
            },
        );
        Some(Admitted { id, close })
    }

    /// A request's headers were read.
    pub fn serving(&self, id: u64) {
        if let Some(c) = self.lock().conns.get_mut(&id) {
            c.serving = true;
        }
    }

    /// Its answer went to the socket: waiting again, from `now`.
    pub fn waiting(&self, id: u64, now: Instant) {
        if let Some(c) = self.lock().conns.get_mut(&id) {
            c.serving = false;
            c.since = now;
        }
    }

    /// The connection ended.
    pub fn gone(&self, id: u64) {
        self.lock().conns.remove(&id);
    }

    pub fn open(&self) -> usize {
        self.lock().conns.len()
    }

    /// How many connections were closed to make room.
    #[cfg(test)]
    pub fn evicted(&self) -> u64 {
        self.lock().evicted
    }

    /// Every connection, told to close (shutdown's drain has run out).
    pub fn close_all(&self) {
        for c in self.lock().conns.values() {
            c.close.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn at_the_cap_the_longest_waiting_goes_never_one_serving() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let conns = Conns::new(3);
        let a = conns.admit(at(0)).unwrap();
        let b = conns.admit(at(1)).unwrap();
        let c = conns.admit(at(2)).unwrap();
        // a is serving; b finished an answer after c was accepted
        conns.serving(a.id);
        conns.serving(b.id);
        conns.waiting(b.id, at(3));
        // the fourth closes c (waiting since 2), not a (older, but serving)
        let d = conns.admit(at(4)).unwrap();
        assert_eq!(conns.open(), 3);
        assert_eq!(conns.evicted(), 1);
        let told = |n: &Arc<Notify>| {
            let f = n.notified();
            let mut f = std::pin::pin!(f);
            let waker = std::task::Waker::noop();
            f.as_mut()
                .poll(&mut std::task::Context::from_waker(waker))
                .is_ready()
        };
        use std::future::Future;
        assert!(told(&c.close));
        assert!(!told(&a.close) && !told(&b.close) && !told(&d.close));
        // then b (3), then d (4)
        conns.admit(at(5)).unwrap();
        assert!(told(&b.close));
        conns.admit(at(6)).unwrap();
        assert!(told(&d.close));
        // every place serving: the newcomer is turned away
        let conns = Conns::new(2);
        for i in 0..2 {
            let x = conns.admit(at(i)).unwrap();
            conns.serving(x.id);
        }
        assert!(conns.admit(at(9)).is_none());
        assert_eq!(conns.evicted(), 0);
        // a connection that ends frees its place
        conns.gone(0);
        assert!(conns.admit(at(10)).is_some());
    }
}
