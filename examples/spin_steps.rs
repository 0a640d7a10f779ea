//! The demo workload (assets/make-demo.sh): busy threads pinned to one CPU,
//! stepping up in number, like the "more threads, more switches?"
//! experiment: `spin_steps --cpu 1 --steps 16,64,256,1024 --secs 5`.
//! Threads are named `spin<N>-<i>` so each step is easy to filter.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn pin_to(cpu: usize) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; sched_setaffinity reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cpu: usize = arg(&args, "--cpu")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let secs: f64 = arg(&args, "--secs")
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    let steps: Vec<usize> = arg(&args, "--steps")
        .unwrap_or_else(|| "16,64,256,1024".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    // each spinner pins itself, so the threads are created at full speed
    // from wherever this one runs, not from behind a queue of spinners
    if let Err(e) = std::thread::spawn(move || pin_to(cpu))
        .join()
        .expect("join")
    {
        eprintln!("spin_steps: cannot pin to CPU {cpu}: {e}");
        std::process::exit(1);
    }
    for &n in &steps {
        let stop = Arc::new(AtomicBool::new(false));
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let stop = stop.clone();
                std::thread::Builder::new()
                    .name(format!("spin{n}-{i}"))
                    .stack_size(64 << 10)
                    .spawn(move || {
                        let _ = pin_to(cpu);
                        let mut x = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            x = std::hint::black_box(x.wrapping_add(1));
                        }
                    })
                    .expect("spawn")
            })
            .collect();
        eprintln!("spin_steps: {n} threads on CPU {cpu} for {secs} s");
        std::thread::sleep(Duration::from_secs_f64(secs));
        stop.store(true, Ordering::Relaxed);
        for h in handles {
            let _ = h.join();
        }
    }
}
