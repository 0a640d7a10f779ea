//! `schedtop --batch`: one JSON object per interval on stdout, like `top -b`.
//! The sampler takes the Samples; this is its sink.
use std::io::Write;

use anyhow::Result;

use crate::collect::sampler::{self, Flow, Limits, Taken};
use crate::collect::Source;
use crate::export::json::interval_record;
use crate::model::Sample;

/// Print `count` intervals (None: until stdout closes).
pub fn run(source: &mut impl Source, interval_ns: u64, count: Option<u64>) -> Result<()> {
    let stdout = std::io::stdout();
    let mut prev: Option<Sample> = None;
    let limits = Limits {
        // the first Sample only starts the first interval
        count: count.map(|n| n.saturating_add(1)),
        ..Default::default()
    };
    if count == Some(0) {
        return Ok(());
    }
    sampler::run(
        source,
        interval_ns,
        limits,
        sampler::sleep_until(|| false),
        |source, taken| {
            let cur = match taken {
                Taken::Sample(s) => s,
                Taken::Error(e) => return Err(e),
                Taken::Panicked(p) => anyhow::bail!("the collector panicked: {p}"),
            };
            let Some(p) = prev.replace(cur) else {
                return Ok(Flow::Continue);
            };
            let cur = prev.as_ref().expect("just stored");
            let rec = interval_record(source.host(), Some(&p), cur);
            let mut out = stdout.lock();
            let written = serde_json::to_writer(&mut out, &rec)
                .map_err(std::io::Error::from)
                .and_then(|_| writeln!(out))
                .and_then(|_| out.flush());
            match written {
                Ok(()) => Ok(Flow::Continue),
                // `schedtop -b | head` is a normal way to stop
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    Ok(Flow::Stop("stdout closed"))
                }
                Err(e) => Err(e.into()),
            }
        },
    )?;
    Ok(())
}
