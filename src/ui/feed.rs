//! Where the UI's Samples come from. `Feed` is what the event loop needs;
//! `LiveFeed` samples this machine on a collector thread. A replay feed
//! (a recording) goes next to it.
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::time::Duration;

use anyhow::{anyhow, Result};

use crate::collect::system::monotonic_ns;
use crate::collect::{LiveOptions, LiveSource};
use crate::model::{HostInfo, Sample};

#[derive(Debug)]
pub enum FeedEvent {
    Sample(Sample),
    /// the latest attempt failed (the feed keeps trying)
    Error(String),
}

pub trait Feed {
    fn host(&self) -> &HostInfo;
    /// The next event if one is ready; never blocks.
    fn poll(&mut self) -> Option<FeedEvent>;
    fn set_interval(&mut self, interval_ns: u64);
}

enum Control {
    Interval(u64),
}

/// Samples taken on a timer by a collector thread and sent over a channel;
/// the first one right away. Dropping the feed stops the thread.
pub struct LiveFeed {
    host: HostInfo,
    events: Receiver<FeedEvent>,
    control: Sender<Control>,
    stopped: bool,
    last_was_error: bool,
}

impl LiveFeed {
    /// Open the live source (on the collector thread, which owns it) and
    /// start sampling. Fails as `LiveSource::open` does.
    pub fn start(opts: &LiveOptions) -> Result<LiveFeed> {
        let (host_tx, host_rx) = mpsc::sync_channel(1);
        let (tx, events) = mpsc::channel();
        let (control, ctl_rx) = mpsc::channel();
        let opts = opts.clone();
        std::thread::Builder::new()
            .name("schedtop-collect".into())
            .spawn(move || collect(opts, host_tx, tx, ctl_rx))?;
        let host = host_rx
            .recv()
            .map_err(|_| anyhow!("the collector thread stopped before it started"))?
            .map_err(|e| anyhow!(e))?;
        Ok(LiveFeed {
            host,
            events,
            control,
            stopped: false,
            last_was_error: false,
        })
    }
}

impl Feed for LiveFeed {
    fn host(&self) -> &HostInfo {
        &self.host
    }

    fn poll(&mut self) -> Option<FeedEvent> {
        match self.events.try_recv() {
            Ok(e) => {
                self.last_was_error = matches!(e, FeedEvent::Error(_));
                Some(e)
            }
            Err(mpsc::TryRecvError::Empty) => None,
            Err(mpsc::TryRecvError::Disconnected) if !self.stopped => {
                // say so once, unless the thread's last word already said why
                self.stopped = true;
                (!self.last_was_error)
                    .then(|| FeedEvent::Error("the collector thread stopped".into()))
            }
            Err(mpsc::TryRecvError::Disconnected) => None,
        }
    }

    fn set_interval(&mut self, interval_ns: u64) {
        self.host.interval_ns = interval_ns;
        let _ = self.control.send(Control::Interval(interval_ns));
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// The collector thread: sample, send, sleep until the next deadline (or
/// an interval change), until the UI goes away.
fn collect(
    opts: LiveOptions,
    host_tx: SyncSender<std::result::Result<HostInfo, String>>,
    tx: Sender<FeedEvent>,
    control: Receiver<Control>,
) {
    let mut source = match LiveSource::open(&opts) {
        Ok(s) => s,
        Err(e) => {
            let _ = host_tx.send(Err(format!("{e:#}")));
            return;
        }
    };
    if host_tx.send(Ok(source.host().clone())).is_err() {
        return;
    }
    let mut interval = opts.interval_ns.max(1);
    loop {
        let started = monotonic_ns();
        let ev = match catch_unwind(AssertUnwindSafe(|| source.sample())) {
            Ok(Ok(s)) => FeedEvent::Sample(s),
            Ok(Err(e)) => FeedEvent::Error(format!("{e:#}")),
            Err(p) => {
                let _ = tx.send(FeedEvent::Error(format!(
                    "the collector panicked: {}",
                    panic_text(p.as_ref())
                )));
                return;
            }
        };
        if tx.send(ev).is_err() {
            return;
        }
        let mut deadline = started + interval;
        loop {
            let now = monotonic_ns();
            if now >= deadline {
                break;
            }
            match control.recv_timeout(Duration::from_nanos(deadline - now)) {
                Ok(Control::Interval(ns)) => {
                    interval = ns.max(1);
                    source.set_interval(interval);
                    deadline = started + interval;
                }
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }
}
