//! `schedtop record --dir DIR`: the black box (black_box.rs) fed by its
//! own sampler until stopped (SIGINT/SIGTERM/SIGHUP, `--duration`).
use std::path::Path;

use anyhow::{bail, Result};

use super::black_box::{BlackBox, DirPolicy};
use crate::collect::sampler::{self, Flow, Taken};
use crate::collect::{LiveOptions, LiveSource};
use crate::model::{HostInfo, Sample};
use crate::util::signals;

pub struct DirOptions {
    pub live: LiveOptions,
    pub policy: DirPolicy,
    pub duration_ns: Option<u64>,
}

pub fn run(dir: &Path, o: &DirOptions) -> Result<()> {
    run_tapped(dir, o, &mut |_, _| {})
}

/// `run`, handing each Sample to `tap` as well (the incident watch of
/// `--trigger`), also those dropped while writing is paused.
pub fn run_tapped(
    dir: &Path,
    o: &DirOptions,
    tap: &mut dyn FnMut(&HostInfo, &Sample),
) -> Result<()> {
    let mut bb = BlackBox::open(dir, o.policy.clone())?;
    let mut source = LiveSource::open(&o.live)?;
    if let Some(reason) = &source.host().degraded_reason {
        crate::say!("schedtop: {reason}");
    }
    signals::stop_on(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP]);
    crate::say!(
        "schedtop: recording to {} every {} s ({} source), {}",
        dir.display(),
        o.live.interval_ns as f64 / 1e9,
        source.host().source.as_str(),
        bb.describe()
    );
    let limits = sampler::Limits {
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
                Taken::Panicked(p) => bail!("the collector panicked: {p}"),
            };
            bb.take(source.host(), &s)?;
            // the incident watch sees every Sample, written or dropped at
            // the floor: its bundles are not this directory's to hold back
            tap(source.host(), &s);
            Ok(Flow::Continue)
        },
    );
    let why = match why {
        Ok("stopped") => "stopped by signal".to_string(),
        Ok(other) => other.to_string(),
        Err(e) => return Err(bb.abandon(e)),
    };
    let summary = bb.finish()?;
    crate::say!("schedtop: {why}: {summary}");
    Ok(())
}
