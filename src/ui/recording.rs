//! Recording from the live view (`R`): every live Sample, paused or not,
//! goes to `schedtop-HOST-YYYYMMDD-HHMMSS.schedtop` in the current
//! directory through the recorder's own writer (created 0600, never
//! through a symlink, never over an existing file). The header says
//! `REC <file> <size>`. A write error (a full filesystem) stops the
//! recording, not the UI: the status line says why, and the file ends at
//! its last complete frame (the writer cuts a partial one off).
//!
//! The recording is a sink next to the app state (the `Session` fans each
//! Sample out to both); the state only holds what the header shows.
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::app::{AppState, Mode, RecordingInfo};
use super::history::History;
use super::status::Status;
use crate::collect::Seekable;
use crate::model::Sample;
use crate::record::writer::now_ns;
use crate::record::{OpenMode, WriteOptions, Writer, Written};

/// A recording in progress. Cloning shares the file; the last clone
/// dropped writes the closing index.
#[derive(Clone)]
pub struct Recording {
    inner: Arc<Mutex<Inner>>,
    pub path: PathBuf,
    /// bytes in the file
    pub size: u64,
    pub samples: u64,
}

struct Inner {
    writer: Option<Writer>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(w) = self.writer.take() {
            let _ = w.finish();
        }
    }
}

impl fmt::Debug for Recording {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recording")
            .field("path", &self.path)
            .field("size", &self.size)
            .field("samples", &self.samples)
            .finish_non_exhaustive()
    }
}

/// `schedtop-HOST-YYYYMMDD-HHMMSS.schedtop` (UTC; the host name reduced
/// as for every artifact, util/names.rs).
pub fn default_name(hostname: &str, time_ns: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(time_ns);
    crate::util::names::file_name_ext(hostname, t, "schedtop")
}

/// An error as the user should read it: the OS's words without the
/// "(os error 28)" tail.
fn plain(e: &anyhow::Error) -> String {
    if let Some(io) = e.root_cause().downcast_ref::<std::io::Error>() {
        let s = io.to_string();
        return match s.find(" (os error") {
            Some(i) => s[..i].to_string(),
            None => s,
        };
    }
    format!("{e:#}")
}

/// `R`: start recording into `dir`, or stop; `backlog` (while rewound) is
/// written first. The session calls this with its parts.
pub fn toggle(
    app: &mut AppState,
    slot: &mut Option<Recording>,
    backlog: Option<&mut History>,
    dir: &Path,
) {
    toggle_slot(app, slot, dir, backlog);
    show(app, slot.as_ref());
}

/// What the header shows of `rec`.
fn show(app: &mut AppState, rec: Option<&Recording>) {
    app.recording = rec.map(|r| RecordingInfo {
        path: r.path.clone(),
        size: r.size,
        samples: r.samples,
    });
}

/// `backlog`: while rewound, the whole kept history goes first, so the
/// file starts before the moment on screen.
fn toggle_slot(
    app: &mut AppState,
    slot: &mut Option<Recording>,
    dir: &Path,
    backlog: Option<&mut History>,
) {
    if app.mode != Mode::Live {
        app.status = Some(Status::error(
            "R records this machine live; a replay is already a recording",
        ));
        return;
    }
    if let Some(rec) = slot.take() {
        let (size, n) = (rec.size, rec.samples);
        let path = rec.path.clone();
        drop(rec); // writes the closing index
        app.status = Some(Status::info(format!(
            "recorded {n} samples, {} to {}",
            super::format::bytes(size),
            path.display()
        )));
        return;
    }
    let opts = WriteOptions {
        mode: OpenMode::CreateNew,
        ..Default::default()
    };
    let name = default_name(&app.host.hostname, now_ns());
    match crate::record::writer::open_unique(dir, &name, &app.host, opts) {
        Ok((path, w)) => {
            let mut rec = Recording {
                size: w.size(),
                inner: Arc::new(Mutex::new(Inner { writer: Some(w) })),
                path,
                samples: 0,
            };
            let err = match backlog {
                Some(h) => write_backlog(&mut rec, h).err(),
                None => {
                    // the newest Sample at once: the file is useful from the start
                    let newest = app
                        .pending
                        .back()
                        .map(|iv| &iv.sample)
                        .or(app.history.back())
                        .cloned();
                    newest.and_then(|s| rec.write(&s).err())
                }
            };
            *slot = Some(rec);
            if let Some(e) = err {
                stop_with(app, slot, &e);
            }
        }
        Err(e) => {
            app.status = Some(Status::error(format!("cannot record: {}", plain(&e))));
        }
    }
}

impl Recording {
    fn write(&mut self, s: &Sample) -> anyhow::Result<()> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let Some(w) = inner.writer.as_mut() else {
            return Ok(());
        };
        let r = w.write_sample(s);
        self.size = w.size();
        match r {
            Ok(Written::Ok) => {
                self.samples += 1;
                Ok(())
            }
            Ok(Written::Full) => Ok(()),
            Err(e) => {
                // nothing more goes to this file, not even the closing
                // index (it would fail the same way)
                inner.writer = None;
                Err(e)
            }
        }
    }
}

/// Every kept Sample, oldest first.
fn write_backlog(rec: &mut Recording, h: &mut History) -> anyhow::Result<()> {
    for i in 0..h.len() {
        rec.write(&h.sample(i)?)?;
    }
    Ok(())
}

fn stop_with(app: &mut AppState, slot: &mut Option<Recording>, e: &anyhow::Error) {
    *slot = None;
    app.status = Some(Status::error(format!("recording stopped: {}", plain(e))));
}

/// A live Sample arrived (before pausing holds it back): write it.
pub fn on_sample(app: &mut AppState, slot: &mut Option<Recording>, s: &Sample) {
    let Some(rec) = slot.as_mut() else {
        return;
    };
    if let Err(e) = rec.write(s) {
        stop_with(app, slot, &e);
    }
    show(app, slot.as_ref());
}
