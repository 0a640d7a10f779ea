//! `schedtop --batch`: one JSON object per interval on stdout, like `top -b`.
use std::io::Write;
use std::time::Duration;

use anyhow::Result;

use crate::collect::system::monotonic_ns;
use crate::collect::LiveSource;
use crate::export::json::interval_record;

/// Print `count` intervals (None: until stdout closes).
pub fn run(source: &mut LiveSource, interval_ns: u64, count: Option<u64>) -> Result<()> {
    let stdout = std::io::stdout();
    let mut prev = source.sample()?;
    let mut deadline = monotonic_ns() + interval_ns;
    let mut printed = 0u64;
    while count.is_none_or(|n| printed < n) {
        let now = monotonic_ns();
        if deadline > now {
            std::thread::sleep(Duration::from_nanos(deadline - now));
        }
        let cur = source.sample()?;
        let rec = interval_record(source.host(), Some(&prev), &cur);
        let mut out = stdout.lock();
        let written = serde_json::to_writer(&mut out, &rec)
            .map_err(std::io::Error::from)
            .and_then(|_| writeln!(out))
            .and_then(|_| out.flush());
        if let Err(e) = written {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(()); // `schedtop -b | head` is a normal way to stop
            }
            return Err(e.into());
        }
        prev = cur;
        printed += 1;
        deadline = next_deadline(deadline, monotonic_ns(), interval_ns);
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::next_deadline;

    #[test]
    fn missed_ticks_are_skipped_not_caught_up() {
        let s = 1_000_000_000;
        assert_eq!(
            next_deadline(10 * s, 10 * s + s / 10, s),
            11 * s,
            "on time: one step"
        );
        assert_eq!(
            next_deadline(10 * s, 10 * s + s / 2, s),
            11 * s,
            "a little late: keep"
        );
        assert_eq!(
            next_deadline(10 * s, 40 * s, s),
            41 * s,
            "stalled 30 s: from now"
        );
    }
}
