//! `schedtop --batch`: one JSON object per interval on stdout, like `top -b`.
//! The sampler takes the Samples; this is its sink.
use std::io::Write;
use std::sync::Arc;

use anyhow::Result;

use crate::collect::sampler::{self, Flow, Limits};
use crate::collect::sink::{Fanout, Sink};
use crate::collect::Source;
use crate::export::json::record_of;
use crate::model::shared_interval::Interval;
use crate::model::HostInfo;

/// JSON Lines on stdout, one per Interval after the first Sample.
pub struct Batch;

impl Sink for Batch {
    fn take(&mut self, host: &HostInfo, iv: &Arc<Interval>) -> Result<Flow> {
        // the first Sample only starts the first interval
        if iv.prev.is_none() {
            return Ok(Flow::Continue);
        }
        let rec = record_of(host, iv);
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        let written = serde_json::to_writer(&mut out, &rec)
            .map_err(std::io::Error::from)
            .and_then(|_| writeln!(out))
            .and_then(|_| out.flush());
        match written {
            Ok(()) => Ok(Flow::Continue),
            // `schedtop -b | head` is a normal way to stop
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(Flow::Stop("stdout closed")),
            Err(e) => Err(e.into()),
        }
    }
}

/// Print `count` intervals (None: until stdout closes).
pub fn run(source: &mut impl Source, interval_ns: u64, count: Option<u64>) -> Result<()> {
    let limits = Limits {
        // the first Sample only starts the first interval
        count: count.map(|n| n.saturating_add(1)),
        ..Default::default()
    };
    if count == Some(0) {
        return Ok(());
    }
    let mut fan = Fanout::new(source.host().clone());
    fan.add(Box::new(Batch));
    fan.run(source, interval_ns, limits, sampler::sleep_until(|| false))?;
    Ok(())
}
