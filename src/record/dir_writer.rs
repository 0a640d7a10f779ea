//! `record --dir DIR` and `serve --record-dir DIR`: the black box
//! (black_box.rs) as a sink of whichever sampler the shell runs. For
//! `record --dir` an error that stops recording ends the run; beside the
//! exporter it only ends the recording (serving goes on).
use std::sync::Arc;

use anyhow::Result;

use super::black_box::BlackBox;
use crate::collect::sampler::Flow;
use crate::collect::sink::Sink;
use crate::model::shared_interval::Interval;
use crate::model::HostInfo;

pub struct BlackBoxSink {
    bb: Option<BlackBox>,
    /// an error stops only the recording (`serve --record-dir`)
    keep_going: bool,
}

impl BlackBoxSink {
    /// The sink of `record --dir`: its errors end the run.
    pub fn alone(bb: BlackBox) -> BlackBoxSink {
        BlackBoxSink {
            bb: Some(bb),
            keep_going: false,
        }
    }

    /// Beside other sinks: its errors end only the recording.
    pub fn beside(bb: BlackBox) -> BlackBoxSink {
        BlackBoxSink {
            bb: Some(bb),
            keep_going: true,
        }
    }
}

impl Sink for BlackBoxSink {
    fn reads_figures(&self) -> bool {
        false
    }

    fn take(&mut self, host: &HostInfo, iv: &Arc<Interval>) -> Result<Flow> {
        let Some(bb) = self.bb.as_mut() else {
            return Ok(Flow::Continue);
        };
        if let Err(e) = bb.take(host, &iv.sample) {
            let bb = self.bb.take().expect("matched above");
            let e = bb.abandon(e);
            if !self.keep_going {
                return Err(e);
            }
            crate::say!("schedtop: the black box stopped, serving goes on: {e:#}");
        }
        Ok(Flow::Continue)
    }

    fn missed(&mut self, _e: &anyhow::Error) -> bool {
        self.keep_going
    }

    fn finish(&mut self, why: &str) -> Result<()> {
        let Some(bb) = self.bb.take() else {
            return Ok(());
        };
        match bb.finish() {
            Ok(summary) if self.keep_going => crate::say!("schedtop: black box: {summary}"),
            Ok(summary) => crate::say!("schedtop: {why}: {summary}"),
            Err(e) if self.keep_going => crate::say!("schedtop: black box: closing: {e:#}"),
            Err(e) => return Err(e),
        }
        Ok(())
    }

    fn failed(&mut self, e: anyhow::Error) -> anyhow::Error {
        match self.bb.take() {
            Some(bb) if !self.keep_going => bb.abandon(e),
            _ => e,
        }
    }
}
