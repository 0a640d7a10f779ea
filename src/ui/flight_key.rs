//! The `W` key: write the flight recorder (`--flight SECS`, the last SECS
//! seconds of raw scheduler events, collect/flight_ring.rs) as a Perfetto
//! trace named like the screenshots (`schedtop-HOST-YYYYMMDD-HHMMSS.pftrace`
//! in --screenshot-dir, created 0600, never overwriting), and say on the
//! status line what was written or why not.
//!
//! The key only sends a request; the recorder's writer thread answers on a
//! channel that the event loop polls ([`poll`]), so the UI never waits for
//! the disk. Tests hand [`FlightLink::new`] their own request channel.
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, SystemTime};

use crate::export::flight_ring::{DumpOutcome, DumpRequest, FlightRecorder};
use crate::export::screenshot::visible;

use super::app::AppState;
use super::status::Status;

/// What `W` says without `--flight`.
pub const OFF: &str = "flight recorder off: start schedtop with --flight SECS";

/// The key's side of a running flight recorder.
#[derive(Debug)]
pub struct FlightLink {
    requests: Sender<DumpRequest>,
    reply_tx: Sender<DumpOutcome>,
    replies: Receiver<DumpOutcome>,
    dir: PathBuf,
    window: Duration,
    /// requests not answered yet
    pub pending: usize,
}

impl FlightLink {
    /// Requests go to `requests`; files to `dir`.
    pub fn new(requests: Sender<DumpRequest>, dir: PathBuf, window: Duration) -> FlightLink {
        let (reply_tx, replies) = mpsc::channel();
        FlightLink {
            requests,
            reply_tx,
            replies,
            dir,
            window,
            pending: 0,
        }
    }

    /// Linked to a started recorder.
    pub fn to(rec: &FlightRecorder, dir: PathBuf) -> FlightLink {
        FlightLink::new(rec.requests(), dir, rec.window())
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// What `W` does: ask the recorder for a dump (the answer comes through
/// [`poll`]), or say that it is off. True when a request went out.
pub fn request(app: &mut AppState, link: Option<&mut FlightLink>, now: SystemTime) -> bool {
    let Some(link) = link else {
        app.status = Some(Status::info(OFF));
        return false;
    };
    let req = DumpRequest {
        dir: link.dir.clone(),
        host: app.host.hostname.clone(),
        time: now,
        reply: link.reply_tx.clone(),
    };
    match link.requests.send(req) {
        Ok(()) => {
            link.pending += 1;
            app.status = Some(Status::info(format!(
                "flight recorder: writing the last {} s…",
                secs(link.window)
            )));
            true
        }
        Err(_) => {
            app.status = Some(Status::error("flight recorder: it has stopped"));
            false
        }
    }
}

/// Answers that arrived since the last call: the newest goes on the status
/// line. True when the status changed.
pub fn poll(app: &mut AppState, link: &mut FlightLink) -> bool {
    let mut changed = false;
    while let Ok(outcome) = link.replies.try_recv() {
        link.pending = link.pending.saturating_sub(1);
        app.status = Some(describe(&outcome, &link.dir));
        changed = true;
    }
    changed
}

/// "flight recorder: wrote FILE (N events, last S s, D dropped)" (the
/// directory shown when it is not the current one), or the error, one line.
pub fn describe(outcome: &DumpOutcome, dir: &Path) -> Status {
    match outcome {
        Ok(s) => {
            let name = s
                .path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let shown = if dir != Path::new(".") && dir != Path::new("") {
                dir.join(&name).display().to_string()
            } else {
                name
            };
            Status::info(visible(&format!(
                "flight recorder: wrote {shown} ({} events, last {} s, {} dropped)",
                s.events,
                secs(s.span),
                s.dropped
            )))
        }
        Err(e) => {
            let e = e.lines().next().unwrap_or("");
            Status::error(visible(&format!("flight recorder: {e}")))
        }
    }
}

/// Seconds, with a decimal only when it says something ("10", "2.5").
fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if (s - s.round()).abs() < 0.05 {
        format!("{}", s.round() as u64)
    } else {
        format!("{s:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::flight_ring::DumpSummary;

    #[test]
    fn describes_a_dump_and_an_error() {
        let ok: DumpOutcome = Ok(DumpSummary {
            path: PathBuf::from("./schedtop-vm-20261122-001500.pftrace"),
            events: 1234,
            span: Duration::from_millis(10_020),
            dropped: 5,
        });
        let st = describe(&ok, Path::new("."));
        assert_eq!(
            st.text,
            "flight recorder: wrote schedtop-vm-20261122-001500.pftrace \
(1234 events, last 10 s, 5 dropped)"
        );
        assert!(!st.error);
        let st = describe(&ok, Path::new("/tmp/t"));
        assert!(
            st.text
                .starts_with("flight recorder: wrote /tmp/t/schedtop-vm-"),
            "{}",
            st.text
        );
        let st = describe(&Err("cannot create x\x1b[2J\nmore".into()), Path::new("."));
        assert!(st.error);
        assert!(!st.text.contains('\x1b') && !st.text.contains('\n'));
        assert!(st.text.starts_with("flight recorder: cannot create x"));
        assert_eq!(secs(Duration::from_millis(2500)), "2.5");
    }
}
