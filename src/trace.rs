//! `schedtop trace`: the flight recorder for a fixed time, written as a
//! Perfetto trace.
use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::io::BufWriter;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::collect::flight::{self, EventKind, FlightOptions, FlightStats};
use crate::export::perfetto::{ClockSnapshot, PerfettoWriter};

#[derive(Clone, Debug)]
pub struct TraceOptions {
    pub duration: Duration,
    pub output: PathBuf,
    /// replace an existing regular file (never through a symlink)
    pub force: bool,
    pub ringbuf_bytes: u32,
    /// only this process's threads
    pub pid: Option<u32>,
}

/// What a trace recorded.
#[derive(Clone, Copy, Debug, Default)]
pub struct TraceSummary {
    pub stats: FlightStats,
    pub switches: u64,
    pub wakeups: u64,
    pub migrations: u64,
    pub elapsed: Duration,
}

/// The output file, created 0600 (a trace names every thread on the host):
/// O_EXCL, never following a symlink.
fn create_output(path: &Path) -> Result<File> {
    let not_a_file = || {
        anyhow::anyhow!(
            "cannot create {}: it exists and is not a regular file",
            path.display()
        )
    };
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file() && !m.is_symlink()) {
        return Err(not_a_file());
    }
    let mut o = OpenOptions::new();
    // O_NONBLOCK: a FIFO put there since the check fails the open instead
    // of waiting for a reader for ever (signals only set a flag here)
    o.write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK);
    o.create_new(true);
    let file = o.open(path).map_err(|e| {
        let why = match e.raw_os_error() {
            Some(libc::EEXIST) => "it exists (use --force to replace it)".to_string(),
            Some(libc::ELOOP) => "it is a symlink".to_string(),
            _ => e.to_string(),
        };
        anyhow::anyhow!("cannot create {}: {why}", path.display())
    })?;
    if !file.metadata()?.is_file() {
        return Err(not_a_file());
    }
    Ok(file)
}

/// Record for `opts.duration`, or until `stop` is set, into `opts.output`.
/// `on_ready` runs once the probes are attached.
pub fn trace(
    opts: &TraceOptions,
    on_ready: &mut dyn FnMut(),
    stop: &AtomicBool,
) -> Result<TraceSummary> {
    if !opts.force {
        let file = create_output(&opts.output)?;
        let result = trace_into(file, opts, on_ready, stop);
        if result.is_err() {
            // ours, and useless: do not leave an empty or partial trace behind
            let _ = std::fs::remove_file(&opts.output);
        }
        return result;
    }
    // --force: the old file stays until the new trace is whole (a trace
    // that fails to start must not cost the user the one they had)
    refuse_odd_target(&opts.output)?;
    let temp = partial_path(&opts.output);
    let file = create_output(&temp)?;
    let result = trace_into(file, opts, on_ready, stop).and_then(|summary| {
        std::fs::rename(&temp, &opts.output)
            .with_context(|| format!("cannot replace {}", opts.output.display()))?;
        Ok(summary)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// What --force never replaces: a symlink, or anything but a regular file.
fn refuse_odd_target(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_symlink() => Err(anyhow::anyhow!(
            "cannot create {}: it is a symlink",
            path.display()
        )),
        Ok(m) if !m.is_file() => Err(anyhow::anyhow!(
            "cannot create {}: it exists and is not a regular file",
            path.display()
        )),
        _ => Ok(()),
    }
}

/// The trace being written beside `path` until it is whole.
fn partial_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}

fn trace_into(
    file: File,
    opts: &TraceOptions,
    on_ready: &mut dyn FnMut(),
    stop: &AtomicBool,
) -> Result<TraceSummary> {
    let out = BufWriter::with_capacity(1 << 20, file);
    let mut writer = PerfettoWriter::new(out, ClockSnapshot::now()).context("writing the trace")?;
    let mut summary = TraceSummary::default();
    let mut write_error = None;
    let failed = Cell::new(false);
    let start = Cell::new(Instant::now());
    let deadline = Cell::new(None::<Instant>);
    let stats = flight::record(
        &FlightOptions {
            ringbuf_bytes: opts.ringbuf_bytes,
            pid: opts.pid,
        },
        &mut || {
            start.set(Instant::now());
            deadline.set(Some(start.get() + opts.duration));
            on_ready();
        },
        &mut || {
            !failed.get()
                && !stop.load(Ordering::SeqCst)
                && deadline.get().is_none_or(|d| Instant::now() < d)
        },
        &mut |e| {
            match e.kind {
                EventKind::Switch => summary.switches += 1,
                EventKind::Wakeup | EventKind::WakeupNew => summary.wakeups += 1,
                EventKind::Migrate => summary.migrations += 1,
            }
            if write_error.is_none() {
                if let Err(err) = writer.push(e) {
                    write_error = Some(err);
                    failed.set(true);
                }
            }
        },
    )
    .map_err(|e| {
        let e = format!("{e:#}");
        if deadline.get().is_none() {
            anyhow::anyhow!(
                "the flight recorder could not start ({}); it needs root and a kernel with BTF",
                first_line(&e)
            )
        } else {
            anyhow::anyhow!("the flight recorder failed: {}", first_line(&e))
        }
    })?;
    summary.elapsed = start.get().elapsed();
    if let Some(e) = write_error {
        return Err(e).with_context(|| format!("writing {}", opts.output.display()));
    }
    writer
        .finish()
        .and_then(|w| w.into_inner().map_err(|e| e.into_error()))
        .and_then(|f| f.sync_all())
        .with_context(|| format!("writing {}", opts.output.display()))?;
    summary.stats = stats;
    Ok(summary)
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

/// The `schedtop trace` command.
pub fn run(opts: &TraceOptions) -> Result<()> {
    if std::env::var_os("SCHEDTOP_BPF_DEBUG").is_none() {
        libbpf_rs::set_print(None);
    }
    crate::util::signals::stop_on(&[libc::SIGINT, libc::SIGTERM]);
    let s = trace(
        opts,
        &mut || {
            crate::say!(
                "schedtop: tracing for {:.1} s into {} (Ctrl-C stops early)",
                opts.duration.as_secs_f64(),
                opts.output.display()
            );
        },
        crate::util::signals::stop_flag(),
    )?;
    crate::say!(
        "schedtop: wrote {} events in {:.1} s ({} switches, {} wakeups, {} migrations) to {}; \
{} dropped (ring buffer full){}",
        s.stats.events,
        s.elapsed.as_secs_f64(),
        s.switches,
        s.wakeups,
        s.migrations,
        opts.output.display(),
        s.stats.dropped,
        if s.stats.dropped > 0 {
            "; a larger --ringbuf-mib loses fewer"
        } else {
            ""
        }
    );
    if s.stats.malformed > 0 {
        crate::say!(
            "schedtop: {} ring buffer records could not be decoded",
            s.stats.malformed
        );
    }
    Ok(())
}
