//! Where the UI's Samples come from. `Feed` is what the event loop needs;
//! `LiveFeed` samples this machine on a collector thread. A replay feed
//! (a recording) goes next to it.
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::time::Duration;

use anyhow::{anyhow, Result};

use crate::collect::sampler::{self, Flow, Limits, Taken, Wake};
use crate::collect::{LiveOptions, LiveSource};
use crate::model::{HostInfo, Sample};
use crate::util::clock::monotonic_ns;

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

/// A feed that never delivers: a replay moves through its recording
/// itself (the session drives the seekable source).
pub struct NoFeed {
    host: HostInfo,
}

impl NoFeed {
    pub fn new(host: HostInfo) -> NoFeed {
        NoFeed { host }
    }
}

impl Feed for NoFeed {
    fn host(&self) -> &HostInfo {
        &self.host
    }

    fn poll(&mut self) -> Option<FeedEvent> {
        None
    }

    fn set_interval(&mut self, _interval_ns: u64) {}
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

/// The collector thread: the sampler's loop with a sink that sends each
/// Sample (or error) to the UI, woken early by an interval change, until
/// the UI goes away.
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
    let wait = |deadline: u64| {
        let now = monotonic_ns();
        if now >= deadline {
            return Wake::Deadline;
        }
        match control.recv_timeout(Duration::from_nanos(deadline - now)) {
            Ok(Control::Interval(ns)) => Wake::Interval(ns),
            Err(RecvTimeoutError::Timeout) => Wake::Deadline,
            Err(RecvTimeoutError::Disconnected) => Wake::Stop,
        }
    };
    let _ = sampler::run(
        &mut source,
        opts.interval_ns,
        Limits::default(),
        wait,
        |_, taken| {
            let (ev, last) = match taken {
                Taken::Sample(s) => (FeedEvent::Sample(s), false),
                Taken::Error(e) => (FeedEvent::Error(format!("{e:#}")), false),
                Taken::Panicked(p) => (
                    FeedEvent::Error(format!("the collector panicked: {p}")),
                    true,
                ),
            };
            if tx.send(ev).is_err() {
                return Ok(Flow::Stop("the UI went away"));
            }
            Ok(if last {
                Flow::Stop("panicked")
            } else {
                Flow::Continue
            })
        },
    );
}
