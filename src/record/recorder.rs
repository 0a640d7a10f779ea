//! `schedtop record`: headless, suitable for a systemd unit. Takes a Sample
//! every interval at absolute deadlines and appends it to the recording;
//! stops on SIGINT/SIGTERM, after `--duration` or at `--max-size`, writing
//! the closing index. SIGKILL loses nothing already written (writer.rs).
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Result;

use super::writer::{OpenMode, WriteOptions, Writer, Written};
use crate::collect::system::monotonic_ns;
use crate::collect::{LiveOptions, LiveSource};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn install_stop_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic (async-signal-safe);
        // the sigaction struct is zeroed plain data.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

pub struct RecordOptions {
    pub live: LiveOptions,
    pub mode: OpenMode,
    pub duration_ns: Option<u64>,
    pub max_size: Option<u64>,
}

/// Record until told to stop. Prints one line when it starts and one when
/// it stops (stderr).
pub fn run(path: &Path, o: &RecordOptions) -> Result<()> {
    let mut source = LiveSource::open(&o.live)?;
    if let Some(reason) = &source.host().degraded_reason {
        eprintln!("schedtop: {reason}");
    }
    let mut w = Writer::open(
        path,
        source.host(),
        WriteOptions {
            mode: o.mode,
            max_size: o.max_size,
            ..Default::default()
        },
    )?;
    install_stop_handlers();
    eprintln!(
        "schedtop: recording to {} every {} s ({} source)",
        path.display(),
        o.live.interval_ns as f64 / 1e9,
        source.host().source.as_str()
    );
    let start = monotonic_ns();
    let mut deadline = start;
    let mut samples = 0u64;
    let why = loop {
        let s = source.sample()?;
        if w.write_sample(&s)? == Written::Full {
            break "reached --max-size";
        }
        samples += 1;
        deadline += o.live.interval_ns;
        // after a stall (SIGSTOP, a starved CPU) skip the missed ticks
        // instead of taking a burst of Samples milliseconds apart
        let now = monotonic_ns();
        while deadline <= now {
            deadline += o.live.interval_ns;
        }
        if o.duration_ns.is_some_and(|d| deadline - start > d) {
            break "--duration reached";
        }
        // absolute deadlines: the interval does not drift by the time a
        // drain takes; wake every 100 ms to notice a stop request
        loop {
            let now = monotonic_ns();
            if STOP.load(Ordering::SeqCst) || now >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_nanos((deadline - now).min(100_000_000)));
        }
        if STOP.load(Ordering::SeqCst) {
            break "stopped by signal";
        }
    };
    let size = w.size();
    w.finish()?;
    eprintln!(
        "schedtop: {why}: {samples} samples, {size} bytes in {}",
        path.display()
    );
    Ok(())
}
