//! The one sampling loop: take a Sample from a `Source` at absolute
//! deadlines and hand it to a sink. The live view (on its collector
//! thread), `--batch`, `record` and `snapshot` all run this loop; what
//! differs is the sink (where each Sample goes) and the waiter (how the
//! loop sleeps and what may wake it).
use std::panic::{catch_unwind, AssertUnwindSafe};

use anyhow::Result;

use super::source::Source;
use crate::model::Sample;
use crate::util::clock::monotonic_ns;

/// What ended a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// the deadline came
    Deadline,
    /// the interval changed to this many ns (the next deadline moves)
    Interval(u64),
    /// stop sampling (a signal, the consumer went away)
    Stop,
}

/// What the sink wants after a Sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// stop, and say why
    Stop(&'static str),
}

/// One attempt to take a Sample. (One a second, moved once: its size does
/// not matter, and a box would be one more allocation per interval.)
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Taken {
    Sample(Sample),
    /// the source failed this time (it may work next time)
    Error(anyhow::Error),
    /// the source panicked: it is not to be used again
    Panicked(String),
}

/// When the loop ends by itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// stop after this many Samples
    pub count: Option<u64>,
    /// stop when the next deadline would be more than this after the first
    /// Sample (`record --duration`)
    pub duration_ns: Option<u64>,
    /// take a last Sample exactly this long after the first and stop
    /// (`snapshot --duration`: the screen covers the whole span)
    pub end_after_ns: Option<u64>,
}

/// Absolute deadlines keep the interval from drifting by the time a drain
/// takes. After a stall (SIGSTOP, a suspended VM) the missed ticks are
/// skipped rather than caught up in a burst: the next Sample then spans the
/// whole stall, and rates use the real elapsed time, so nothing spikes.
pub fn next_deadline(deadline: u64, now: u64, interval_ns: u64) -> u64 {
    let next = deadline.saturating_add(interval_ns);
    if next <= now {
        now.saturating_add(interval_ns)
    } else {
        next
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Take one Sample, turning a panic in the source into `Taken::Panicked`.
pub fn take(source: &mut (impl Source + ?Sized)) -> Taken {
    match catch_unwind(AssertUnwindSafe(|| source.next_sample())) {
        Ok(Ok(s)) => Taken::Sample(s),
        Ok(Err(e)) => Taken::Error(e),
        Err(p) => Taken::Panicked(panic_text(p.as_ref())),
    }
}

/// Sample `source` every `interval_ns` (the first right away) until the
/// sink or the waiter says stop or a limit is reached; returns why it
/// stopped. `wait(deadline)` sleeps until the monotonic `deadline` or
/// until something wakes it. The sink's error ends the loop with it.
pub fn run<S: Source + ?Sized>(
    source: &mut S,
    interval_ns: u64,
    limits: Limits,
    mut wait: impl FnMut(u64) -> Wake,
    mut sink: impl FnMut(&S, Taken) -> Result<Flow>,
) -> Result<&'static str> {
    let mut interval = interval_ns.max(1);
    let start = monotonic_ns();
    let end = limits.end_after_ns.map(|d| start.saturating_add(d));
    let mut taken = 0u64;
    let mut deadline = start;
    loop {
        let started = monotonic_ns();
        let t = take(source);
        taken += 1;
        if let Flow::Stop(why) = sink(source, t)? {
            return Ok(why);
        }
        if limits.count.is_some_and(|n| taken >= n) {
            return Ok("count reached");
        }
        if end.is_some_and(|e| started >= e) {
            return Ok("duration reached");
        }
        deadline = next_deadline(deadline, monotonic_ns(), interval);
        if limits
            .duration_ns
            .is_some_and(|d| deadline.saturating_sub(start) > d)
        {
            return Ok("--duration reached");
        }
        if let Some(e) = end {
            deadline = deadline.min(e);
        }
        loop {
            match wait(deadline) {
                Wake::Deadline => break,
                Wake::Stop => return Ok("stopped"),
                Wake::Interval(ns) => {
                    interval = ns.max(1);
                    source.set_interval(interval);
                    deadline = started.saturating_add(interval);
                    if monotonic_ns() >= deadline {
                        break;
                    }
                }
            }
        }
    }
}

/// A waiter that sleeps until the deadline, waking every 100 ms to ask
/// `stop` whether to give up.
pub fn sleep_until(stop: impl Fn() -> bool) -> impl FnMut(u64) -> Wake {
    move |deadline| loop {
        if stop() {
            return Wake::Stop;
        }
        let now = monotonic_ns();
        if now >= deadline {
            return Wake::Deadline;
        }
        std::thread::sleep(std::time::Duration::from_nanos(
            (deadline - now).min(100_000_000),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::source::MemorySource;
    use crate::model::{HostInfo, Sample};

    #[test]
    fn missed_ticks_are_skipped_not_caught_up() {
        let s = 1_000_000_000;
        assert_eq!(next_deadline(10 * s, 10 * s + s / 10, s), 11 * s);
        assert_eq!(next_deadline(10 * s, 10 * s + s / 2, s), 11 * s);
        assert_eq!(next_deadline(10 * s, 40 * s, s), 41 * s, "stalled 30 s");
    }

    fn host() -> HostInfo {
        HostInfo {
            hostname: "test".into(),
            kernel: "test".into(),
            topology: Default::default(),
            source: crate::model::SourceKind::Procfs,
            degraded_reason: None,
            sched_ext: None,
            interval_ns: 5,
        }
    }

    fn samples(n: u64) -> Vec<Sample> {
        (0..n)
            .map(|i| Sample {
                time_ns: i * 1000,
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn count_and_errors_reach_the_sink_in_order() {
        let mut src = MemorySource::new(host(), samples(3));
        let mut got = Vec::new();
        let mut waits = Vec::new();
        let why = run(
            &mut src,
            5,
            Limits {
                count: Some(4),
                ..Default::default()
            },
            |d| {
                waits.push(d);
                Wake::Deadline
            },
            |_, t| {
                got.push(match t {
                    Taken::Sample(s) => format!("s{}", s.time_ns),
                    Taken::Error(e) => format!("e:{e}"),
                    Taken::Panicked(p) => format!("p:{p}"),
                });
                Ok(Flow::Continue)
            },
        )
        .unwrap();
        assert_eq!(why, "count reached");
        assert_eq!(got[..3], ["s0", "s1000", "s2000"]);
        assert!(got[3].starts_with("e:no more Samples"), "{got:?}");
        // one wait between each pair of Samples, deadlines increasing
        assert_eq!(waits.len(), 3);
        assert!(waits.windows(2).all(|w| w[0] < w[1]), "{waits:?}");
    }

    #[test]
    fn a_waiter_or_a_sink_can_stop_it() {
        let mut src = MemorySource::new(host(), samples(5));
        let mut n = 0;
        let why = run(
            &mut src,
            1,
            Limits::default(),
            |_| Wake::Stop,
            |_, _| {
                n += 1;
                Ok(Flow::Continue)
            },
        )
        .unwrap();
        assert_eq!((why, n), ("stopped", 1));
        let why = run(
            &mut src,
            1,
            Limits::default(),
            |_| Wake::Deadline,
            |_, _| Ok(Flow::Stop("full")),
        )
        .unwrap();
        assert_eq!(why, "full");
    }

    #[test]
    fn an_interval_change_reaches_the_source() {
        let mut src = MemorySource::new(host(), samples(5));
        let mut woke = 0;
        run(
            &mut src,
            1_000_000_000,
            Limits {
                count: Some(2),
                ..Default::default()
            },
            |_| {
                woke += 1;
                if woke == 1 {
                    Wake::Interval(1)
                } else {
                    Wake::Deadline
                }
            },
            |_, _| Ok(Flow::Continue),
        )
        .unwrap();
        assert_eq!(src.host().interval_ns, 1);
    }
}
