//! Incident bundles: when a trigger fires (`--trigger`, SIGUSR1, the key),
//! a directory `schedtop-incident-HOST-YYYYMMDD-HHMMSS/` in the incident
//! directory with the recording of the kept history and the next `--after`
//! of Samples, screenshots of the views at the firing moment and
//! `summary.txt`/`summary.json`. A cooldown keeps a flapping trigger from
//! making bundle after bundle; a cap on bundles and a cap on bytes (the
//! flight trace included, the bundles already in the directory counted, so
//! a restart does not reset them) keep them from filling the disk: beyond
//! them the oldest bundle schedtop made goes (incident_rotate.rs), so the
//! newest incident is never the one lost.
//! Everything is created new: the directory 0700 with mkdir (which never
//! follows a symlink), the files 0600 with O_EXCL|O_NOFOLLOW.
//!
//! `Watch` is a sink beside the others: every Sample goes through
//! `on_sample` with the kept history; it derives the interval, evaluates
//! the triggers and says what it did as `Event`s, which the caller shows
//! (the status line, stderr). It never stops the caller: a bundle that
//! cannot be written is an `Event::Failed`. The directory and summary are
//! made at the firing; the screenshots and the recording are written on a
//! thread of their own (incident_writer.rs).
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{bail, Context, Result};

use super::flight_ring::DumpRequest;
use super::incident_rotate as rotate;
use super::incident_summary::{self as summary, Firing};
pub use super::incident_writer::{write_file, Event, RECORDING};

pub const DEFAULT_AFTER_NS: u64 = 30_000_000_000;
pub const DEFAULT_COOLDOWN_NS: u64 = 300_000_000_000;
pub const DEFAULT_MAX_BUNDLES: u32 = 20;
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;
/// What every bundle directory's name starts with.
pub use super::incident_rotate::PREFIX;
use super::incident_writer::{Caps, Job, Render, Running};
use crate::collect::Seekable;
use crate::model::shared_interval::{Deriver, Interval};
use crate::model::trigger::Trigger;
use crate::model::trigger_eval::{evaluate, Figures, Hold, Verdict};
use crate::model::{HostInfo, Sample};
use crate::util::names::file_name_ext;

#[derive(Clone, Debug)]
pub struct IncidentOptions {
    pub dir: PathBuf,
    /// Samples recorded after the firing
    pub after_ns: u64,
    /// no new bundle this long after one was made
    pub cooldown_ns: u64,
    /// bundles in the directory at most (those there already count)
    pub max_bundles: u32,
    /// bytes of bundles in the directory at most
    pub max_bytes: u64,
}

impl IncidentOptions {
    pub fn in_dir(dir: PathBuf) -> IncidentOptions {
        IncidentOptions {
            dir,
            after_ns: DEFAULT_AFTER_NS,
            cooldown_ns: DEFAULT_COOLDOWN_NS,
            max_bundles: DEFAULT_MAX_BUNDLES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// The kept history a bundle's recording starts with: read here, and
/// frozen (its compressed frames shared) for the bundle's writer thread.
pub trait Kept: Seekable {
    fn frozen(&self) -> Box<dyn Seekable + Send>;
}

/// The flight recorder (`--flight`), asked for its trace in each bundle.
struct Flight {
    requests: Sender<DumpRequest>,
}

struct Open {
    writer: Running,
    /// the `--after` Samples go to the writer until then
    until_mono: u64,
}

pub struct Watch {
    opts: IncidentOptions,
    triggers: Vec<(Trigger, Hold, bool)>,
    /// `on_sample`'s own (None where Intervals are shared)
    deriver: Option<Deriver>,
    manual: Option<String>,
    last_made_mono: Option<u64>,
    open: Option<Open>,
    flight: Option<Flight>,
    /// what the bundles' writers say on the way (the flight trace, bundles
    /// removed to make room), passed on at the next Sample
    notes: Sender<Event>,
    noted: Receiver<Event>,
}

/// One line when `dir` cannot take bundles (checked before collecting).
pub fn check_dir(dir: &Path) -> Result<()> {
    let m = std::fs::metadata(dir).with_context(|| format!("--incident-dir {}", dir.display()))?;
    if !m.is_dir() {
        bail!("--incident-dir {}: not a directory", dir.display());
    }
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .context("--incident-dir: a NUL in the path")?;
    // SAFETY: access(2) on a NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        bail!(
            "--incident-dir {}: {}",
            dir.display(),
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

/// Bundles schedtop made in `dir` and their bytes (files one level down,
/// never following a link); look-alike directories are not counted.
pub fn existing(dir: &Path) -> (u32, u64) {
    let (n, bytes) = rotate::usage(dir);
    (u32::try_from(n).unwrap_or(u32::MAX), bytes)
}

/// `schedtop-incident-HOST-YYYYMMDD-HHMMSS` (then `-2`, `-3`), made 0700.
fn make_dir(dir: &Path, host: &str, time_ns: u64) -> Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let t = UNIX_EPOCH + Duration::from_nanos(time_ns);
    let base = file_name_ext(host, t, "d");
    let stem = format!(
        "{PREFIX}{}",
        base.trim_start_matches("schedtop-").trim_end_matches(".d")
    );
    for n in 1..=100u32 {
        let name = if n == 1 {
            stem.clone()
        } else {
            format!("{stem}-{n}")
        };
        let p = dir.join(name);
        // mkdir(2) fails on any existing name, a symlink included
        match std::fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", p.display())),
        }
    }
    bail!("{}: 100 bundles named {stem}* exist", dir.display())
}

impl Watch {
    pub fn new(triggers: Vec<Trigger>, opts: IncidentOptions) -> Watch {
        let (notes, noted) = mpsc::channel();
        Watch {
            opts,
            triggers: triggers
                .into_iter()
                .map(|t| (t, Hold::default(), false))
                .collect(),
            deriver: None,
            manual: None,
            last_made_mono: None,
            open: None,
            flight: None,
            notes,
            noted,
        }
    }

    /// Ask the flight recorder behind `requests` for its trace in every
    /// bundle (written on its own thread; the answer is an `Event::Trace`).
    pub fn with_flight(mut self, requests: Sender<DumpRequest>) -> Watch {
        self.flight = Some(Flight { requests });
        self
    }

    pub fn options(&self) -> &IncidentOptions {
        &self.opts
    }

    /// Fire at the next Sample, by hand (SIGUSR1, the key).
    pub fn request(&mut self, reason: &str) {
        self.manual = Some(reason.to_string());
    }

    /// Whether a bundle's recording is still being written.
    pub fn recording(&self) -> bool {
        self.open.is_some()
    }

    /// A Sample arrived; `kept` already holds it. Derives its interval
    /// here: for callers without a shared one (`on_interval` is the way).
    pub fn on_sample(
        &mut self,
        s: &Sample,
        host: &HostInfo,
        kept: &mut dyn Kept,
        render: Render,
    ) -> Vec<Event> {
        let d = self
            .deriver
            .get_or_insert_with(|| Deriver::new(host.clone()));
        let iv = d.next(s.clone());
        self.on_interval(&iv, host, kept, render)
    }

    /// The interval ending with a new Sample arrived; `kept` already holds
    /// the Sample (the history the bundle's recording starts with).
    pub fn on_interval(
        &mut self,
        iv: &Arc<Interval>,
        host: &HostInfo,
        kept: &mut dyn Kept,
        render: Render,
    ) -> Vec<Event> {
        let s = &*iv.sample;
        let mut ev: Vec<Event> = self.noted.try_iter().collect();
        if let Some(e) = self.extend(s) {
            ev.push(e);
        }
        let firing = self.check(iv, &mut ev);
        let Some(f) = firing else {
            return ev;
        };
        // a trigger fires once per episode (Hold), so this says one line
        // per episode, not one per interval
        if let Some(why) = self.refusal(s.mono_ns) {
            ev.push(Event::Suppressed {
                reason: f.reason,
                why,
            });
            return ev;
        }
        match self.make(&f, iv, host, kept, render, &mut ev) {
            Ok(dir) => {
                self.last_made_mono = Some(s.mono_ns);
                ev.push(Event::Written {
                    dir,
                    reason: f.reason,
                });
                if self.opts.after_ns == 0 {
                    if let Some(o) = self.open.as_mut() {
                        o.writer.close_input();
                    }
                }
            }
            Err(e) => ev.push(Event::Failed(format!("incident bundle: {e:#}"))),
        }
        ev
    }

    /// The open bundle's recording takes `s` until `--after` is over;
    /// the writer's outcome, once done.
    fn extend(&mut self, s: &Sample) -> Option<Event> {
        let o = self.open.as_mut()?;
        if let Some(done) = o.writer.poll() {
            self.open = None;
            return Some(done);
        }
        // up to the first Sample at or past the end (its interval is
        // mostly inside the window); nothing once the input is closed
        o.writer.send(s);
        if s.mono_ns >= o.until_mono {
            o.writer.close_input();
        }
        None
    }

    /// The first trigger that fires on this interval (or the request).
    fn check(&mut self, iv: &Interval, ev: &mut Vec<Event>) -> Option<Firing> {
        if self.triggers.is_empty() && self.manual.is_none() {
            return None;
        }
        let (s, d) = (&*iv.sample, &iv.derived);
        if let Some(reason) = self.manual.take() {
            let f = Firing::new(reason, None, Vec::new(), d, s.time_ns);
            return Some(f.with_findings(iv.findings.clone()));
        }
        // the first Sample has no interval: nothing to compare yet
        iv.prev.as_ref()?;
        let x = Figures {
            derived: d,
            cpus: iv.cpus.as_ref(),
            findings: &iv.findings,
        };
        let mut fired = None;
        for (t, hold, said) in &mut self.triggers {
            let (holds, hits) = match evaluate(t, &x) {
                Verdict::Holds(h) => (true, h),
                Verdict::Quiet => (false, Vec::new()),
                Verdict::NotEvaluated(why) => {
                    if !*said {
                        *said = true;
                        ev.push(Event::NotEvaluated {
                            trigger: t.text.clone(),
                            why,
                        });
                    }
                    (false, Vec::new())
                }
            };
            if hold.update(holds, s.mono_ns, t.for_ns) && fired.is_none() {
                fired = Some(
                    Firing::new(t.text.clone(), Some(t.figure), hits, d, s.time_ns)
                        .with_findings(iv.findings.clone()),
                );
            }
        }
        fired
    }

    /// Why no bundle may be made now, if so.
    fn refusal(&self, now_mono: u64) -> Option<String> {
        if self.open.is_some() {
            return Some("the last bundle is still recording".into());
        }
        if let Some(t) = self.last_made_mono {
            let left = (t + self.opts.cooldown_ns).saturating_sub(now_mono);
            if left > 0 {
                return Some(format!(
                    "cooldown ({} s left)",
                    left.div_ceil(1_000_000_000)
                ));
            }
        }
        // beyond the caps the oldest bundle goes (make); none at all only
        // where the caps allow none
        if self.opts.max_bundles == 0 || self.opts.max_bytes == 0 {
            return Some("--max-incidents or --incident-max-size is 0 (the cap)".into());
        }
        None
    }

    /// Make room for a new bundle: the oldest of schedtop's bundles go
    /// until one more fits the count and the bytes left are at least an
    /// even share of the byte cap (the new bundle's recording is cut at
    /// what is left once its screens and flight trace are written).
    fn make_room(&self, ev: &mut Vec<Event>) {
        let o = &self.opts;
        let share = o.max_bytes / u64::from(o.max_bundles.max(1));
        let max_count = o.max_bundles.saturating_sub(1) as usize;
        let gone = rotate::prune(&o.dir, None, max_count, o.max_bytes - share);
        ev.extend(gone.into_iter().map(Event::Removed));
    }

    /// The directory, the flight trace request and the summary now; the
    /// screens and the recording on the writer's thread.
    fn make(
        &mut self,
        f: &Firing,
        iv: &Arc<Interval>,
        host: &HostInfo,
        kept: &mut dyn Kept,
        render: Render,
        ev: &mut Vec<Event>,
    ) -> Result<PathBuf> {
        let s = &*iv.sample;
        self.make_room(ev);
        let dir = make_dir(&self.opts.dir, &host.hostname, s.time_ns)?;
        // first: the ring covers the time before the firing; the writer
        // waits for the trace, which counts in the byte cap
        let mut trace_reply = None;
        let trace = self.flight.as_ref().map(|f| {
            let (reply, replies) = mpsc::channel();
            let req = DumpRequest {
                dir: dir.clone(),
                host: host.hostname.clone(),
                time: UNIX_EPOCH + Duration::from_nanos(s.time_ns),
                reply,
            };
            match f.requests.send(req) {
                Ok(()) => {
                    trace_reply = Some(replies);
                    "; the flight recorder's trace (.pftrace) is written beside it"
                }
                Err(_) => "; the flight recorder had stopped: no trace",
            }
        });
        let what = format!(
            "{RECORDING}: {} Samples kept from {} to the firing, then the next {} s{}",
            kept.len(),
            kept.time_of(0)
                .map_or("-".into(), crate::util::clock::rfc3339),
            self.opts.after_ns / 1_000_000_000,
            trace.unwrap_or("")
        );
        write_file(
            &dir,
            "summary.txt",
            summary::text(f, host, &what).as_bytes(),
        )?;
        write_file(
            &dir,
            "summary.json",
            summary::json(f, host, &what).as_bytes(),
        )?;
        let writer = Running::start(Job {
            dir: dir.clone(),
            host: host.clone(),
            kept: kept.frozen(),
            render,
            interval: iv.clone(),
            caps: Caps {
                parent: self.opts.dir.clone(),
                max_bundles: self.opts.max_bundles,
                max_bytes: self.opts.max_bytes,
            },
            trace: trace_reply,
            notes: self.notes.clone(),
        })?;
        self.open = Some(Open {
            writer,
            until_mono: s.mono_ns.saturating_add(self.opts.after_ns),
        });
        Ok(dir)
    }

    /// End an open bundle's recording now and wait for its writer (at exit).
    pub fn finish(&mut self) -> Option<Event> {
        self.open.take()?.writer.join()
    }
}

/// One line for a person (stderr, the status line).
pub fn describe(e: &Event) -> String {
    use crate::export::screenshot::visible;
    match e {
        Event::Written { dir, reason } => format!(
            "incident: {} fired; bundle written to {}",
            visible(reason),
            dir.display()
        ),
        Event::Finished { dir, samples, cut } => format!(
            "incident bundle {} complete ({samples} Samples{})",
            dir.display(),
            if *cut {
                ", cut at --incident-max-size"
            } else {
                ""
            }
        ),
        Event::Suppressed { reason, why } => {
            format!("incident: {} fired; no bundle: {why}", visible(reason))
        }
        Event::NotEvaluated { trigger, why } => {
            format!("trigger {}: not evaluated: {why}", visible(trigger))
        }
        Event::Trace(Ok(t)) => format!(
            "incident bundle: flight trace {} ({} events, last {:.0} s, {} dropped)",
            t.path.display(),
            t.events,
            t.span.as_secs_f64(),
            t.dropped
        ),
        Event::Trace(Err(e)) => format!("incident bundle: no flight trace: {e}"),
        Event::Removed(r) => format!(
            "incident bundle {} removed ({} bytes; {}): the oldest goes first",
            r.path.display(),
            r.bytes,
            r.why
        ),
        Event::Failed(s) => s.clone(),
    }
}
