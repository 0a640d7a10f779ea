//! Where the UI's Samples come from. `Feed` is what the event loop needs;
//! `LiveFeed` samples this machine on a collector thread. A replay feed
//! (a recording) goes next to it.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Result};

use crate::collect::sampler::{Flow, Limits, Wake};
use crate::collect::sink::{Fanout, Sink};
use crate::collect::{LiveOptions, LiveSource};
use crate::model::shared_interval::Interval;
use crate::model::{HostInfo, Sample};
use crate::util::clock::monotonic_ns;

use super::history::History;
use super::keeper::{Keeper, SharedHistory};
use crate::export::incident::Watch;

/// What the collector thread keeps (keeper.rs).
pub struct KeepSpec {
    pub window_ns: u64,
    pub byte_cap: usize,
    pub watch: Option<Watch>,
}

#[derive(Debug)]
pub enum FeedEvent {
    /// a Sample for the state to derive (fake feeds, tests)
    Sample(Arc<Sample>),
    /// the collector's Interval for its newest Sample (its Sample shared
    /// with the rewind history, which keeps it as its next base)
    Interval(Arc<Interval>),
    /// the latest attempt failed (the feed keeps trying)
    Error(String),
    /// a line for the status line (an incident bundle written), and
    /// whether it is an error
    Status(String, bool),
}

pub trait Feed {
    fn host(&self) -> &HostInfo;
    /// The next event if one is ready; never blocks.
    fn poll(&mut self) -> Option<FeedEvent>;
    fn set_interval(&mut self, interval_ns: u64);
    /// The `i` key: ask the incident watch kept beside the collector for a
    /// bundle; false when there is none.
    fn fire_incident(&mut self) -> bool {
        false
    }
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
    FireIncident,
}

/// Samples taken on a timer by a collector thread and sent over a channel;
/// the first one right away. Dropping the feed stops the thread.
pub struct LiveFeed {
    host: HostInfo,
    events: Receiver<FeedEvent>,
    control: Sender<Control>,
    stopped: bool,
    last_was_error: bool,
    /// an incident watch runs on the collector thread
    watched: bool,
    /// joined on drop when it keeps a history (an incident bundle being
    /// written gets its end)
    collector: Option<std::thread::JoinHandle<()>>,
}

impl LiveFeed {
    /// Open the live source (on the collector thread, which owns it) and
    /// start sampling. Fails as `LiveSource::open` does.
    pub fn start(opts: &LiveOptions) -> Result<LiveFeed> {
        Ok(LiveFeed::start_keeping(opts, None)?.0)
    }

    /// `start`, and with `keep` (the history's window and byte cap, and the
    /// incident watch) the collector thread keeps the history and runs the
    /// watch (keeper.rs): the shared history comes back beside the feed.
    pub fn start_keeping(
        opts: &LiveOptions,
        keep: Option<KeepSpec>,
    ) -> Result<(LiveFeed, Option<SharedHistory>)> {
        let (host_tx, host_rx) = mpsc::sync_channel(1);
        let (tx, events) = mpsc::channel();
        let (control, ctl_rx) = mpsc::channel();
        let opts = opts.clone();
        let watched = keep.as_ref().is_some_and(|k| k.watch.is_some());
        let handle = std::thread::Builder::new()
            .name("schedtop-collect".into())
            .spawn(move || collect(opts, keep, host_tx, tx, ctl_rx))?;
        let (host, kept) = host_rx
            .recv()
            .map_err(|_| anyhow!("the collector thread stopped before it started"))?
            .map_err(|e| anyhow!(e))?;
        Ok((
            LiveFeed {
                host,
                events,
                control,
                stopped: false,
                last_was_error: false,
                watched,
                collector: watched.then_some(handle),
            },
            kept,
        ))
    }
}

impl Drop for LiveFeed {
    /// With an incident watch: stop the collector (its control channel
    /// closes) and wait for it, so a bundle being written is finished
    /// (its recording closed) before the process exits.
    fn drop(&mut self) {
        let Some(h) = self.collector.take() else {
            return;
        };
        let (dummy, _) = mpsc::channel();
        drop(std::mem::replace(&mut self.control, dummy));
        let _ = h.join();
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

    fn fire_incident(&mut self) -> bool {
        self.watched && self.control.send(Control::FireIncident).is_ok()
    }
}

/// The collector thread: the sampler's loop with a sink that sends each
/// Sample (or error) to the UI, woken early by an interval change, until
/// the UI goes away.
fn collect(
    opts: LiveOptions,
    keep: Option<KeepSpec>,
    host_tx: SyncSender<std::result::Result<(HostInfo, Option<SharedHistory>), String>>,
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
    let host = source.host().clone();
    let keeper =
        keep.map(|k| Keeper::new(History::new(host.clone(), k.window_ns, k.byte_cap), k.watch));
    let shared = keeper.as_ref().map(|k| k.history.clone());
    if host_tx.send(Ok((host, shared))).is_err() {
        return;
    }
    // the i key, noted while waiting, served with the next Sample
    let fire = Arc::new(AtomicBool::new(false));
    let wait = |deadline: u64| loop {
        let now = monotonic_ns();
        if now >= deadline {
            return Wake::Deadline;
        }
        match control.recv_timeout(Duration::from_nanos(deadline - now)) {
            Ok(Control::Interval(ns)) => return Wake::Interval(ns),
            Ok(Control::FireIncident) => fire.store(true, Ordering::Relaxed),
            Err(RecvTimeoutError::Timeout) => return Wake::Deadline,
            Err(RecvTimeoutError::Disconnected) => return Wake::Stop,
        }
    };
    // one Interval per Sample: the history and the incident watch first,
    // then the UI
    let mut fan = Fanout::new(source.host().clone());
    if let Some(k) = keeper {
        fan.add(Box::new(Kept {
            keeper: k,
            fire: fire.clone(),
            tx: tx.clone(),
        }));
    }
    fan.add(Box::new(ToUi { tx }));
    let _ = fan.run(&mut source, opts.interval_ns, Limits::default(), wait);
}

/// The live history and the incident watch as a sink (keeper.rs).
struct Kept {
    keeper: Keeper,
    fire: Arc<AtomicBool>,
    tx: Sender<FeedEvent>,
}

impl Sink for Kept {
    fn take(&mut self, host: &HostInfo, iv: &Arc<Interval>) -> Result<Flow> {
        if self.fire.swap(false, Ordering::Relaxed) {
            self.keeper.fire();
        }
        for (line, error) in self.keeper.keep(host, iv) {
            let _ = self.tx.send(FeedEvent::Status(line, error));
        }
        Ok(Flow::Continue)
    }

    fn missed(&mut self, _e: &anyhow::Error) -> bool {
        true
    }
}

/// The UI thread, over the channel: the live view's sink.
struct ToUi {
    tx: Sender<FeedEvent>,
}

impl Sink for ToUi {
    fn take(&mut self, _: &HostInfo, iv: &Arc<Interval>) -> Result<Flow> {
        if self.tx.send(FeedEvent::Interval(iv.clone())).is_err() {
            return Ok(Flow::Stop("the UI went away"));
        }
        Ok(Flow::Continue)
    }

    /// Shown on the status line; the feed keeps trying.
    fn missed(&mut self, e: &anyhow::Error) -> bool {
        self.tx.send(FeedEvent::Error(format!("{e:#}"))).is_ok()
    }

    /// The collector's last word (a panic in the source).
    fn failed(&mut self, e: anyhow::Error) -> anyhow::Error {
        let _ = self.tx.send(FeedEvent::Error(format!("{e:#}")));
        e
    }
}
