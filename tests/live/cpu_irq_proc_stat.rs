//! The CPU view's interrupt and steal shares from /proc/stat (IRQ% SIRQ%
//! with the interrupt-time probes off, STEAL% always) against this test's
//! own reads of /proc/stat around each of the source's: every cumulative
//! figure lies between the reads taken just before and just after it, the
//! interval's delta between the narrowest and widest bracket, and the
//! view's share is that delta over the interval. A loopback UDP flood (in
//! this process, stopped and joined however the test ends) makes softirq
//! ticks, so the columns move.
use crate::common;

use std::collections::BTreeMap;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use schedtop::model::cpu_metrics::{self, CpuRow};
use schedtop::model::cpus::CpuHistory;
use schedtop::model::shared_interval;

/// /proc/stat's irq, softirq and steal per CPU, in ns (the 6th to 8th
/// numbers of each `cpuN` line, in USER_HZ ticks).
fn proc_stat() -> BTreeMap<u32, [u64; 3]> {
    // SAFETY: sysconf has no preconditions.
    let tick = 1_000_000_000 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let cpu = w.next()?.strip_prefix("cpu")?.parse().ok()?;
            let v: Vec<u64> = w.map(|x| x.parse().unwrap()).collect();
            Some((cpu, [v[5] * tick, v[6] * tick, v[7] * tick]))
        })
        .collect()
}

/// Flood loopback with small datagrams until dropped.
struct Flood(Arc<AtomicBool>, Option<std::thread::JoinHandle<()>>);

impl Flood {
    fn start() -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let h = std::thread::spawn(move || {
            let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
            rx.set_nonblocking(true).unwrap();
            let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
            let to = rx.local_addr().unwrap();
            let mut buf = [0u8; 64];
            while !s.load(Ordering::Relaxed) {
                for _ in 0..64 {
                    let _ = tx.send_to(&buf[..32], to);
                    let _ = rx.recv(&mut buf);
                }
            }
        });
        Flood(stop, Some(h))
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
        if let Some(h) = self.1.take() {
            let _ = h.join();
        }
    }
}

#[test]
fn cpu_irq_softirq_and_steal_shares_agree_with_proc_stat() {
    let _serial = common::serial();
    let Some(mut src) = common::bpf_source(vec![common::getpid()]) else {
        return;
    };
    let flood = Flood::start();
    std::thread::sleep(Duration::from_millis(200));
    let a0 = proc_stat();
    let s1 = src.sample().unwrap();
    let b0 = proc_stat();
    std::thread::sleep(Duration::from_secs(2));
    let a1 = proc_stat();
    let s2 = src.sample().unwrap();
    let b1 = proc_stat();
    drop(flood);

    let host = src.host().clone();
    let dt = (s2.mono_ns - s1.mono_ns) as f64 / 1e9;
    let iv = shared_interval::of(
        &host,
        Some(Arc::new(s1.clone())),
        Arc::new(s2.clone()),
        Default::default(),
    );
    let view = iv.cpus.as_ref().expect("a CPU view from two Samples");
    let mut hist = CpuHistory::default();
    hist.push(view);
    let mut moved = 0;
    for c in &s2.cpus {
        let read = |s: &schedtop::model::Sample| {
            let i = s.cpus.iter().find(|x| x.cpu == c.cpu).unwrap();
            let i = i
                .irq
                .as_ref()
                .expect("BPF source reads /proc/stat's columns");
            [i.stat_irq_ns, i.stat_softirq_ns, i.stat_steal_ns]
        };
        let (v1, v2) = (read(&s1), read(&s2));
        let fig = view.cpus.iter().find(|f| f.cpu == c.cpu).unwrap();
        let row = CpuRow::of_figures(fig, &hist);
        let probes_on = row.irq.as_ref().unwrap().probe_irq_pct.is_some();
        let keys = ["irq_shown_pct", "softirq_shown_pct", "steal_pct"];
        for k in 0..3 {
            let (lo0, hi0) = (a0[&c.cpu][k], b0[&c.cpu][k]);
            let (lo1, hi1) = (a1[&c.cpu][k], b1[&c.cpu][k]);
            assert!(
                lo0 <= v1[k] && v1[k] <= hi0,
                "CPU {} col {k}: {lo0} {} {hi0}",
                c.cpu,
                v1[k]
            );
            assert!(
                lo1 <= v2[k] && v2[k] <= hi1,
                "CPU {} col {k}: {lo1} {} {hi1}",
                c.cpu,
                v2[k]
            );
            let d = v2[k] - v1[k];
            assert!(
                lo1.saturating_sub(hi0) <= d && d <= hi1 - lo0,
                "CPU {} col {k}",
                c.cpu
            );
            moved += d;
            if k < 2 && probes_on {
                continue; // the view shows the probes' figure then
            }
            let shown = cpu_metrics::by_key(keys[k]).unwrap().value(&row);
            let want = d as f64 / 1e9 / dt * 100.0;
            let got = shown.number().unwrap();
            assert!(
                (got - want).abs() < 1e-6,
                "CPU {} {}: {got} vs {want}",
                c.cpu,
                keys[k]
            );
            assert!((0.0..=100.0).contains(&got), "{got}");
        }
    }
    eprintln!(
        "/proc/stat irq+softirq+steal moved {} ms over {dt:.2} s",
        moved / 1_000_000
    );
    if moved == 0 {
        common::cannot_run("no irq, softirq or steal tick in /proc/stat under the flood");
    }
}
