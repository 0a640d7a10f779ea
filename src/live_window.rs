//! `why` and `diff -` on this machine: the shell's sampler watching for a
//! while, its Samples folded into one window as they come (the window's
//! arithmetic is model/finding_window.rs). Not in record/: recordings are
//! read there, a source is opened and sampled only by the shell.
use std::path::Path;

use anyhow::{bail, Result};

use crate::model::finding_window::window_end;
use crate::model::{HostInfo, Sample};

/// This machine watched for `duration_ns` (Ctrl-C ends it early) as one
/// window: its host, first Sample and the Sample spanning the watch,
/// folded as they come (three held, however long the watch). `why` and
/// `diff -` share it. `what` ends the error when fewer than two Samples
/// were taken ("judge", "compare").
pub fn watch_live(
    opts: &crate::collect::LiveOptions,
    duration_ns: u64,
    what: &str,
) -> Result<(HostInfo, Sample, Sample)> {
    use crate::collect::sampler::{self, Flow, Limits, Taken};
    use crate::util::signals;
    for &pid in &opts.pid_filter {
        if !Path::new(&format!("/proc/{pid}")).exists() {
            bail!("no process with pid {pid}");
        }
    }
    let mut source = crate::collect::LiveSource::open(opts)?;
    if let Some(reason) = &crate::collect::Source::host(&source).degraded_reason {
        crate::say!("schedtop: {reason}");
    }
    signals::stop_on(&[libc::SIGINT, libc::SIGTERM]);
    let (mut first, mut end): (Option<Sample>, Option<Sample>) = (None, None);
    let limits = Limits {
        end_after_ns: Some(duration_ns),
        ..Default::default()
    };
    sampler::run(
        &mut source,
        opts.interval_ns,
        limits,
        sampler::sleep_until(signals::stop_requested),
        |_, taken| {
            let s = match taken {
                Taken::Sample(s) => s,
                Taken::Error(e) => return Err(e),
                Taken::Panicked(p) => bail!("the collector panicked: {p}"),
            };
            match (&first, end.take()) {
                (None, _) => first = Some(s),
                (Some(f), None) => end = window_end(&[f.clone(), s]),
                (Some(f), Some(e)) => end = window_end(&[f.clone(), e, s]),
            }
            Ok(Flow::Continue)
        },
    )?;
    let (Some(first), Some(end)) = (first, end) else {
        bail!("stopped before two Samples were taken: no interval to {what}");
    };
    Ok((crate::collect::Source::host(&source).clone(), first, end))
}
