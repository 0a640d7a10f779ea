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
        // absolute deadlines: the interval does not drift by the time a drain takes
        let now = monotonic_ns();
        if deadline > now {
            std::thread::sleep(Duration::from_nanos(deadline - now));
        }
        deadline += interval_ns;
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
    }
    Ok(())
}
