//! The run-queue wait oracles' workload thread (tests/live/bpf_wait_oracle.rs on
//! the host, examples/guest_check/wait_oracle.rs in the matrix guests):
//! spin a pseudo-random 0-200 us, sleep a pseudo-random 0-2 ms, until
//! `stop`; `seed` makes each thread's sequence its own.
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub fn spin_then_sleep(seed: u64, stop: &AtomicBool) {
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ seed;
    while !stop.load(Ordering::Relaxed) {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        let spin = Duration::from_micros((x >> 33) % 200);
        let t = Instant::now();
        while t.elapsed() < spin {
            std::hint::spin_loop();
        }
        std::thread::sleep(Duration::from_micros((x >> 20) % 2000));
    }
}
