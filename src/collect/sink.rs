//! Where Samples go: every mode runs the one sampler (sampler.rs) into a
//! `Fanout` the shell builds from the command line — the live view, batch
//! JSON, a recording file or directory, the exporter, the trigger watch,
//! the history. The fan-out derives each Sample's Interval once
//! (model/shared_interval.rs) and hands the same `Arc<Interval>` to every
//! sink, in the order they were added (a recorder first: a Sample is on
//! disk before anything else can go wrong with it).
use std::sync::Arc;

use anyhow::Result;

use super::sampler::{self, Flow, Limits, Taken, Wake};
use super::source::Source;
use crate::model::shared_interval::{Deriver, Interval};
use crate::model::HostInfo;

/// A consumer of Intervals.
pub trait Sink {
    /// The interval ending with the newest Sample (`iv.sample`). An error
    /// ends the sampler with it; a sink that can carry on without its
    /// output (the black box beside the exporter) says so and returns Ok.
    fn take(&mut self, host: &HostInfo, iv: &Arc<Interval>) -> Result<Flow>;

    /// Whether it reads the Interval's figures (rows, CPUs, findings) or
    /// only its Sample: a fan-out of recorders alone derives nothing (a
    /// recorder of 10,000 exits a second held their rows for no one).
    fn reads_figures(&self) -> bool {
        true
    }

    /// Taking a Sample failed this time (the source may work next time).
    /// False (the default): the failure ends the run.
    fn missed(&mut self, _e: &anyhow::Error) -> bool {
        false
    }

    /// The run is over (`why`: what ended it): close files, say what
    /// was done.
    fn finish(&mut self, _why: &str) -> Result<()> {
        Ok(())
    }

    /// The run ended with `e`: the error to report (a recorder closes
    /// what it wrote and adds what is kept).
    fn failed(&mut self, e: anyhow::Error) -> anyhow::Error {
        e
    }
}

/// One sampler's sinks, fed one Interval per Sample.
pub struct Fanout {
    deriver: Deriver,
    sinks: Vec<Box<dyn Sink + Send>>,
}

impl Fanout {
    pub fn new(host: HostInfo) -> Fanout {
        Fanout {
            deriver: Deriver::new(host),
            sinks: Vec::new(),
        }
    }

    pub fn add(&mut self, sink: Box<dyn Sink + Send>) -> &mut Fanout {
        self.sinks.push(sink);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.sinks.is_empty()
    }

    /// The sampler's sink: derive once, hand the Interval to every sink.
    /// Stops at the first sink that asks to (the others have the Interval).
    pub fn take(&mut self, taken: Taken) -> Result<Flow> {
        match taken {
            Taken::Sample(s) => {
                let iv = if self.sinks.iter().any(|k| k.reads_figures()) {
                    self.deriver.next(s)
                } else {
                    self.deriver.bare(s)
                };
                let mut flow = Flow::Continue;
                for sink in &mut self.sinks {
                    if let Flow::Stop(why) = sink.take(self.deriver.host(), &iv)? {
                        if flow == Flow::Continue {
                            flow = Flow::Stop(why);
                        }
                    }
                }
                Ok(flow)
            }
            Taken::Error(e) => {
                // every sink is told; the run goes on if all can bear it
                let mut goes_on = true;
                for sink in &mut self.sinks {
                    goes_on &= sink.missed(&e);
                }
                if goes_on {
                    Ok(Flow::Continue)
                } else {
                    Err(e)
                }
            }
            Taken::Panicked(p) => anyhow::bail!("the collector panicked: {p}"),
        }
    }

    /// Finish every sink (each is finished even when one fails); the
    /// first error.
    pub fn finish(&mut self, why: &str) -> Result<()> {
        let mut first = Ok(());
        for sink in &mut self.sinks {
            let r = sink.finish(why);
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    /// Run the one sampler on `source` into these sinks until it stops;
    /// every sink is finished (or told of the error). What stopped it.
    pub fn run<S: Source + ?Sized>(
        mut self,
        source: &mut S,
        interval_ns: u64,
        limits: Limits,
        wait: impl FnMut(u64) -> Wake,
    ) -> Result<&'static str> {
        let r = sampler::run(source, interval_ns, limits, wait, |_, t| self.take(t));
        match r {
            Ok(why) => {
                let said = if why == "stopped" {
                    "stopped by signal"
                } else {
                    why
                };
                self.finish(said)?;
                Ok(why)
            }
            Err(mut e) => {
                for sink in &mut self.sinks {
                    e = sink.failed(e);
                }
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Sample, SourceKind};

    struct Seen(Arc<std::sync::Mutex<Vec<(u64, usize)>>>, Option<u64>);

    impl Sink for Seen {
        fn take(&mut self, _: &HostInfo, iv: &Arc<Interval>) -> Result<Flow> {
            let addr = Arc::as_ptr(iv) as usize;
            self.0.lock().unwrap().push((iv.sample.mono_ns, addr));
            Ok(match self.1 {
                Some(at) if iv.sample.mono_ns >= at => Flow::Stop("enough"),
                _ => Flow::Continue,
            })
        }
        fn missed(&mut self, _: &anyhow::Error) -> bool {
            true
        }
    }

    #[test]
    fn every_sink_gets_the_same_interval_and_the_first_stop_wins() {
        let host = HostInfo {
            hostname: "t".into(),
            kernel: "t".into(),
            topology: Default::default(),
            source: SourceKind::Procfs,
            degraded_reason: None,
            sched_ext: None,
            interval_ns: 1_000_000_000,
        };
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut f = Fanout::new(host);
        f.add(Box::new(Seen(seen.clone(), None)));
        f.add(Box::new(Seen(seen.clone(), Some(2))));
        let sample = |mono_ns| Sample {
            mono_ns,
            ..Default::default()
        };
        assert_eq!(f.take(Taken::Sample(sample(1))).unwrap(), Flow::Continue);
        let e = Taken::Error(anyhow::anyhow!("once"));
        assert_eq!(f.take(e).unwrap(), Flow::Continue, "both sinks bear it");
        assert_eq!(
            f.take(Taken::Sample(sample(2))).unwrap(),
            Flow::Stop("enough")
        );
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 4);
        // one Interval per Sample, the same one for both sinks
        assert_eq!(seen[0], seen[1]);
        assert_eq!(seen[2], seen[3]);
        assert_eq!((seen[0].0, seen[2].0), (1, 2));
    }

    /// (rows, the Sample before's time) of each Interval taken
    type RowsSeen = Arc<std::sync::Mutex<Vec<(usize, Option<u64>)>>>;

    /// Keeps only Samples, like the recorders.
    struct SamplesOnly(RowsSeen);

    impl Sink for SamplesOnly {
        fn take(&mut self, _: &HostInfo, iv: &Arc<Interval>) -> Result<Flow> {
            let rows = iv.threads.len();
            let prev = iv.prev.as_ref().map(|p| p.mono_ns);
            self.0.lock().unwrap().push((rows, prev));
            Ok(Flow::Continue)
        }
        fn reads_figures(&self) -> bool {
            false
        }
    }

    #[test]
    fn sinks_that_keep_only_samples_get_no_rows_until_one_reads_figures() {
        let host = HostInfo {
            hostname: "t".into(),
            kernel: "t".into(),
            topology: Default::default(),
            source: SourceKind::Procfs,
            degraded_reason: None,
            sched_ext: None,
            interval_ns: 1_000_000_000,
        };
        let sample = |mono_ns: u64| Sample {
            mono_ns,
            threads: crate::model::Threads::from(vec![crate::model::ThreadSample {
                tid: 7,
                pid: 7,
                ..Default::default()
            }]),
            ..Default::default()
        };
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut alone = Fanout::new(host.clone());
        alone.add(Box::new(SamplesOnly(got.clone())));
        alone.take(Taken::Sample(sample(1))).unwrap();
        alone.take(Taken::Sample(sample(2))).unwrap();
        // no rows derived, and each Interval still knows the Sample before
        assert_eq!(*got.lock().unwrap(), vec![(0, None), (0, Some(1))]);
        got.lock().unwrap().clear();
        let mut beside = Fanout::new(host);
        beside.add(Box::new(SamplesOnly(got.clone())));
        beside.add(Box::new(Seen(Default::default(), None)));
        beside.take(Taken::Sample(sample(1))).unwrap();
        assert_eq!(
            *got.lock().unwrap(),
            vec![(1, None)],
            "derived for the other"
        );
    }
}
