//! A bundle's screenshots and recording, written on their own thread: the
//! kept history (a frozen copy, its compressed frames shared, not copied)
//! is decoded and written, then the Samples of `--after` as they arrive
//! over a channel. Writing ten minutes of 10,000 threads takes seconds;
//! here it holds up neither the sampler nor the screen. The outcome comes
//! back as one `Event` (`Finished` or `Failed`); on the way it says what
//! the flight trace came to and which old bundles went to make room.
//!
//! The byte cap holds the whole bundle: the recording is opened once the
//! screens and the flight trace are written, the oldest other bundles go
//! if those pushed the directory over the cap, and the recording is cut
//! at what is left.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};

use super::flight_ring::DumpOutcome;
use super::incident_rotate::{self as rotate, Removed};
use crate::collect::Seekable;
use crate::model::shared_interval::Interval;
use crate::model::{HostInfo, Sample};
use crate::record::{OpenMode, WriteOptions, Writer, Written};
use crate::util::files::create_new_mode;

/// The recording's name inside a bundle.
pub use super::incident_rotate::RECORDING;

/// What `on_sample` did.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// a bundle was made; its recording goes on for `--after`
    Written {
        dir: PathBuf,
        reason: String,
    },
    /// the bundle's recording is complete (`cut`: at the byte cap)
    Finished {
        dir: PathBuf,
        samples: u64,
        cut: bool,
    },
    /// fired, but no bundle: the cooldown, the caps, one still open
    Suppressed {
        reason: String,
        why: String,
    },
    /// a trigger's figure is not measured by this source (said once)
    NotEvaluated {
        trigger: String,
        why: &'static str,
    },
    /// the flight recorder's answer: its trace in the bundle, or why not
    Trace(DumpOutcome),
    /// an old bundle removed to stay within the caps
    Removed(Removed),
    Failed(String),
}

/// A new file in a bundle, 0600, never through a symlink.
pub fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let p = dir.join(name);
    let mut f = create_new_mode(&p, 0o600).with_context(|| format!("creating {}", p.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("writing {}", p.display()))
}

/// Draws a bundle's screenshots (file name, text) of the firing
/// interval, with the kept Samples before it for the sparklines.
pub type Render = fn(&HostInfo, &mut dyn Seekable, &Arc<Interval>) -> Vec<(String, String)>;

/// What one bundle's writer needs.
pub struct Job {
    pub dir: PathBuf,
    pub host: HostInfo,
    pub kept: Box<dyn Seekable + Send>,
    pub render: Render,
    /// the interval the trigger fired on (shared, not derived again)
    pub interval: Arc<Interval>,
    pub caps: Caps,
    /// the flight recorder's answer, when it was asked
    pub trace: Option<Receiver<DumpOutcome>>,
    /// the trace's outcome and bundles removed, said on the way
    pub notes: Sender<Event>,
}

/// Where bundles go and how many and how large they may be, together.
#[derive(Clone, Debug)]
pub struct Caps {
    pub parent: PathBuf,
    pub max_bundles: u32,
    pub max_bytes: u64,
}

/// How long the writer waits for the flight trace before recording
/// without counting it (a ring of a few hundred MB writes in seconds).
const TRACE_WAIT: Duration = Duration::from_secs(60);

/// A bundle being written.
pub struct Running {
    pub dir: PathBuf,
    tx: Option<Sender<Sample>>,
    done: Receiver<Event>,
    handle: Option<JoinHandle<()>>,
}

impl Running {
    pub fn start(job: Job) -> Result<Running> {
        let (tx, rx) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        let dir = job.dir.clone();
        let handle = std::thread::Builder::new()
            .name("schedtop-incident".into())
            .spawn(move || {
                let dir = job.dir.clone();
                let ev = match work(job, rx) {
                    Ok((samples, cut)) => Event::Finished { dir, samples, cut },
                    Err(e) => Event::Failed(format!("incident bundle {}: {e:#}", dir.display())),
                };
                let _ = done_tx.send(ev);
            })
            .context("starting the incident bundle writer")?;
        Ok(Running {
            dir,
            tx: Some(tx),
            done,
            handle: Some(handle),
        })
    }

    /// One more Sample of `--after`.
    pub fn send(&self, s: &Sample) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(s.clone());
        }
    }

    /// `--after` is over: the recording ends with what was sent.
    pub fn close_input(&mut self) {
        self.tx = None;
    }

    /// The outcome, once the writer is done.
    pub fn poll(&self) -> Option<Event> {
        self.done.try_recv().ok()
    }

    /// End the input, wait for the writer, and say how it went (at exit:
    /// the recording gets its closing index).
    pub fn join(mut self) -> Option<Event> {
        self.tx = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.poll()
    }
}

/// Screens, then the kept Samples, then the `--after` ones until the
/// channel closes. Returns the Samples written and whether the byte cap
/// cut the recording.
fn work(mut job: Job, rx: Receiver<Sample>) -> Result<(u64, bool)> {
    for (name, body) in (job.render)(&job.host, job.kept.as_mut(), &job.interval) {
        write_file(&job.dir, &name, body.as_bytes())?;
    }
    if let Some(replies) = job.trace.take() {
        let outcome = match replies.recv_timeout(TRACE_WAIT) {
            Ok(o) => Some(fit_trace(&job, o)),
            // still writing: counted by the pass at the end
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Some(Err("the flight recorder did not answer".into()))
            }
        };
        if let Some(o) = outcome {
            let _ = job.notes.send(Event::Trace(o));
        }
    }
    let budget = make_room(&job.caps, &job.dir, &job.notes);
    let path = job.dir.join(RECORDING);
    let opts = WriteOptions {
        mode: OpenMode::CreateNew,
        max_size: Some(budget),
        ..Default::default()
    };
    let mut w = Writer::open(&path, &job.host, opts)?;
    let (mut n, mut cut) = (0u64, false);
    for i in 0..job.kept.len() {
        match w.write_sample(&job.kept.sample(i)?)? {
            Written::Ok => n += 1,
            Written::Full => {
                cut = true;
                break;
            }
        }
    }
    // the frozen history's frames are shared with the live one: let go
    drop(job.kept);
    for s in rx {
        if cut {
            continue; // drain, so the sender never blocks on us
        }
        match w.write_sample(&s)? {
            Written::Ok => n += 1,
            Written::Full => cut = true,
        }
    }
    w.finish()
        .with_context(|| format!("closing {}", path.display()))?;
    // a trace that came late, or a bundle that grew past its estimate
    make_room(&job.caps, &job.dir, &job.notes);
    Ok((n, cut))
}

/// Remove the oldest other bundles until this one fits beside them
/// within both caps (it counts in both); the bytes left for its recording.
fn make_room(c: &Caps, dir: &Path, notes: &Sender<Event>) -> u64 {
    let count = c.max_bundles as usize;
    for r in rotate::prune(&c.parent, Some(dir), count, c.max_bytes) {
        let _ = notes.send(Event::Removed(r));
    }
    let (_, used) = rotate::usage(&c.parent);
    c.max_bytes.saturating_sub(used)
}

/// A written trace stays if the bundle (its screens, summary and trace)
/// fits the byte cap alone; older bundles make room for it. A trace too
/// large for the cap on its own is removed and said so.
fn fit_trace(job: &Job, outcome: DumpOutcome) -> DumpOutcome {
    let t = outcome?;
    let own = rotate::bundle_bytes(&job.dir);
    if own <= job.caps.max_bytes {
        return Ok(t);
    }
    let size = std::fs::metadata(&t.path).map_or(0, |m| m.len());
    let _ = std::fs::remove_file(&t.path);
    Err(format!(
        "the trace ({size} bytes) would put the bundle over --incident-max-size ({} bytes); removed",
        job.caps.max_bytes
    ))
}
