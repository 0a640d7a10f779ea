//! `schedtop record`: headless, suitable for a systemd unit. The sampler
//! takes a Sample every interval at absolute deadlines; this is its sink,
//! appending each to the recording. Stops on SIGINT/SIGTERM/SIGHUP, after
//! `--duration` or at `--max-size`, writing the closing index. SIGKILL
//! loses nothing already written (writer.rs).
use std::path::Path;

use anyhow::Result;

use super::black_box::left_out_line;
use super::writer::{LeftOut, OpenMode, WriteOptions, Writer, Written};
use crate::collect::sampler::{self, Flow, Limits, Taken};
use crate::collect::{LiveOptions, LiveSource, Source};
use crate::model::{HostInfo, Sample};
use crate::util::signals;

pub struct RecordOptions {
    pub live: LiveOptions,
    pub mode: OpenMode,
    pub duration_ns: Option<u64>,
    pub max_size: Option<u64>,
}

/// Record until told to stop. Prints one line when it starts and one when
/// it stops (stderr).
pub fn run(path: &Path, o: &RecordOptions) -> Result<()> {
    run_tapped(path, o, &mut |_, _| {})
}

/// `run`, handing each Sample, once written, to `tap` as well (the
/// incident watch of `--trigger`).
pub fn run_tapped(
    path: &Path,
    o: &RecordOptions,
    tap: &mut dyn FnMut(&HostInfo, &Sample),
) -> Result<()> {
    let mut source = LiveSource::open(&o.live)?;
    if let Some(reason) = &source.host().degraded_reason {
        crate::say!("schedtop: {reason}");
    }
    let mut w = Writer::open(
        path,
        Source::host(&source),
        WriteOptions {
            mode: o.mode,
            max_size: o.max_size,
            ..Default::default()
        },
    )?;
    signals::stop_on(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP]);
    crate::say!(
        "schedtop: recording to {} every {} s ({} source)",
        path.display(),
        o.live.interval_ns as f64 / 1e9,
        source.host().source.as_str()
    );
    let mut samples = 0u64;
    let limits = Limits {
        duration_ns: o.duration_ns,
        ..Default::default()
    };
    let why = sampler::run(
        &mut source,
        o.live.interval_ns,
        limits,
        sampler::sleep_until(signals::stop_requested),
        |source, taken| {
            let s = match taken {
                Taken::Sample(s) => s,
                Taken::Error(e) => return Err(e),
                Taken::Panicked(p) => anyhow::bail!("the collector panicked: {p}"),
            };
            let before = w.left_out();
            if w.write_sample(&s)? == Written::Full {
                return Ok(Flow::Stop("reached --max-size"));
            }
            if before == LeftOut::default() && w.left_out() != before {
                crate::say!(
                    "schedtop: a Sample of {} threads is too large for a frame: {}",
                    s.threads.len(),
                    left_out_line(&w.left_out())
                );
            }
            samples += 1;
            tap(source.host(), &s);
            Ok(Flow::Continue)
        },
    );
    let why = match why? {
        "stopped" => "stopped by signal",
        other => other,
    };
    let size = w.size();
    let left = w.left_out();
    w.finish()?;
    let extra = if left == LeftOut::default() {
        String::new()
    } else {
        format!("; too large for a frame: {}", left_out_line(&left))
    };
    crate::say!(
        "schedtop: {why}: {samples} samples, {size} bytes in {}{extra}",
        path.display()
    );
    Ok(())
}
