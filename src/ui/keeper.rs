//! What the live view keeps off the UI thread: on the collector thread,
//! each Sample is encoded into the shared history (8–13 ms per Sample with
//! 10,000 threads, history.rs) and handed to the incident watch (deriving
//! the interval, writing a bundle) before it goes to the UI, which then
//! only reads the history when rewinding. The watch's events come back as
//! status lines; the `i` key and SIGUSR1 reach it through `fire`.
use std::sync::{Arc, Mutex, MutexGuard};

use super::history::History;
use crate::export::incident::{describe, Event, Watch};
use crate::model::shared_interval::Interval;
use crate::model::HostInfo;

/// The live history, shared by the collector (which pushes) and the UI
/// (which reads it while rewound).
pub type SharedHistory = Arc<Mutex<History>>;

/// The history, whatever a panicking holder left it as (it stays valid:
/// every push completes or drops whole frames).
pub fn lock(h: &SharedHistory) -> MutexGuard<'_, History> {
    h.lock().unwrap_or_else(|e| e.into_inner())
}

pub struct Keeper {
    pub history: SharedHistory,
    pub watch: Option<Watch>,
    fire: bool,
}

/// A line for the status line, and whether it is an error.
pub type Line = (String, bool);

impl Keeper {
    pub fn new(history: History, watch: Option<Watch>) -> Keeper {
        Keeper {
            history: Arc::new(Mutex::new(history)),
            watch,
            fire: false,
        }
    }

    /// The `i` key: a bundle at the next Sample. False without a watch.
    pub fn fire(&mut self) -> bool {
        self.fire = self.watch.is_some();
        self.fire
    }

    /// Keep the interval's Sample; what the watch did, as status lines.
    pub fn keep(&mut self, host: &HostInfo, iv: &Arc<Interval>) -> Vec<Line> {
        let mut h = lock(&self.history);
        h.push_shared(&iv.sample);
        let Some(w) = self.watch.as_mut() else {
            return Vec::new();
        };
        if crate::util::signals::take_usr1() {
            w.request("SIGUSR1");
        }
        if std::mem::take(&mut self.fire) {
            w.request("the i key");
        }
        w.on_interval(iv, host, &mut *h, super::incident_screens::render)
            .iter()
            .map(line)
            .collect()
    }
}

/// An incident event as a status line.
pub fn line(e: &Event) -> Line {
    (
        describe(e),
        matches!(e, Event::Failed(_) | Event::Trace(Err(_))),
    )
}

impl Drop for Keeper {
    fn drop(&mut self) {
        // a bundle's recording still in its --after gets its closing index
        if let Some(w) = self.watch.as_mut() {
            w.finish();
        }
    }
}
