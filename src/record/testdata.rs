//! Deterministic synthetic Samples for tests, benchmarks, the fuzz corpus
//! and the compatibility fixture: cumulative counters that grow the way a
//! busy machine's do (every thread runs every interval), with histograms.
use crate::model::counters::{
    CTR_CROSS_NODE_MIGRATIONS, CTR_STOLEN_HARDIRQ_NS, CTR_STOLEN_SOFTIRQ_NS, SOFTIRQ_VECTORS,
};
use crate::model::{
    CpuSample, CpuTopology, HostInfo, Log2Hist, Losses, MigrationCount, RqSample, Sample,
    SourceKind, ThreadSample, Topology,
};

/// splitmix64: small, fast, reproducible everywhere.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

#[derive(Clone, Debug)]
pub struct SynthOptions {
    pub threads: usize,
    pub samples: usize,
    pub interval_ns: u64,
    pub cpus: u32,
    /// share of threads replaced by new ones each interval (0.0–1.0)
    pub churn: f64,
    pub seed: u64,
    /// wall clock of the first Sample
    pub start_ns: u64,
    /// every thread alike, slices and waits spread evenly over 7 and 8
    /// octaves (the worst case for compression); otherwise each thread has
    /// its own switch rate and typical slice and wait lengths, as real ones do
    pub uniform: bool,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            threads: 100,
            samples: 10,
            interval_ns: 1_000_000_000,
            cpus: 2,
            churn: 0.0,
            seed: 1,
            // 2026-11-21T23:00:00Z
            start_ns: 1_795_302_000_000_000_000,
            uniform: false,
        }
    }
}

pub fn synthetic_host(o: &SynthOptions) -> HostInfo {
    HostInfo {
        hostname: "synth".into(),
        kernel: "6.18.0-synthetic".into(),
        topology: Topology {
            cpus: (0..o.cpus)
                .map(|c| CpuTopology {
                    cpu: c,
                    node: c / 4,
                    llc: c - c % 4,
                })
                .collect(),
        },
        source: SourceKind::Bpf,
        degraded_reason: None,
        sched_ext: None,
        interval_ns: o.interval_ns,
    }
}

fn new_thread(rng: &mut Rng, tid: u32, cpus: u32, now_ns: u64) -> ThreadSample {
    let pid = tid - tid % 50;
    ThreadSample {
        tid,
        pid,
        comm: format!("worker-{}", tid % 1000).into(),
        process_comm: format!("svc-{pid}").into(),
        cpu: rng.below(cpus.into()) as u32,
        start_time_ns: now_ns.saturating_sub(rng.below(1 << 40)),
        migrations: Some(0),
        counters: crate::model::counters::Counters::zero(),
        slice_hist: Some(Log2Hist::new()),
        wait_hist: Some(Log2Hist::new()),
        baseline: Some(Box::default()),
        ..Default::default()
    }
}

/// Add `n` to a counter slot of a thread whose counters are known.
fn bump(t: &mut ThreadSample, slot: usize, n: u64) {
    if let Some(v) = t.counters.get(slot) {
        t.counters.set(slot, v + n);
    }
}

/// A thread's character, fixed by its tid: (switches per interval, typical
/// slice octave, typical wait octave).
fn character(tid: u32) -> (u64, u64, u64) {
    let h = (tid as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
    let rate = [1, 2, 4, 8, 16, 32][(h % 6) as usize];
    (rate, 6 + (h >> 8) % 6, 1 + (h >> 16) % 7)
}

/// One interval of work for a thread that ran in it.
fn advance(rng: &mut Rng, t: &mut ThreadSample, cpus: u32, uniform: bool) {
    if !uniform {
        let (rate, slice_oct, wait_oct) = character(t.tid);
        let vol = rate / 2 + rng.below(rate);
        let invol = rng.below(rate / 4 + 2);
        t.voluntary += vol;
        t.involuntary += invol;
        let (mut oncpu, mut wait) = (0, 0);
        for _ in 0..vol + invol {
            // within an octave either side of the thread's typical lengths
            let slice_us = (1u64 << (slice_oct + rng.below(3) - 1)) + rng.below(1 << slice_oct);
            let wait_us = (1u64 << (wait_oct + rng.below(3) - 1)) + rng.below(1 << wait_oct);
            oncpu += slice_us * 1000 + rng.below(1000);
            wait += wait_us * 1000 + rng.below(1000);
            if let Some(h) = t.slice_hist.as_mut() {
                h.record_us(slice_us);
            }
            if let Some(h) = t.wait_hist.as_mut() {
                h.record_us(wait_us);
            }
        }
        t.oncpu_ns += oncpu;
        t.wait_ns += wait;
        if rng.below(10) == 0 {
            t.migrations = t.migrations.map(|m| m + 1);
            t.cpu = rng.below(cpus.into()) as u32;
            if t.tid.is_multiple_of(3) {
                bump(t, CTR_CROSS_NODE_MIGRATIONS, 1);
            }
        }
        // interrupts took a sliver of its time on CPU: hardirqs, and one
        // softirq kind by its character (no random draw: the rest of the
        // stream stays as it was)
        if t.counters.is_known() && t.tid.is_multiple_of(4) {
            bump(t, CTR_STOLEN_HARDIRQ_NS, oncpu / 256);
            let kind = CTR_STOLEN_SOFTIRQ_NS + (t.tid as usize / 4) % SOFTIRQ_VECTORS;
            bump(t, kind, oncpu / 64);
        }
        return;
    }
    let vol = rng.below(20);
    let invol = rng.below(6);
    t.voluntary += vol;
    t.involuntary += invol;
    let mut oncpu = 0;
    let mut wait = 0;
    for _ in 0..vol + invol {
        // slices of 2^(6..13) us, waits of 2^(1..9) us, roughly
        let slice_us = (1u64 << (6 + rng.below(7))) + rng.below(64);
        let wait_us = (1u64 << (1 + rng.below(8))) + rng.below(2);
        oncpu += slice_us * 1000 + rng.below(1000);
        wait += wait_us * 1000 + rng.below(1000);
        if let Some(h) = t.slice_hist.as_mut() {
            h.record_us(slice_us);
        }
        if let Some(h) = t.wait_hist.as_mut() {
            h.record_us(wait_us);
        }
    }
    t.oncpu_ns += oncpu;
    t.wait_ns += wait;
    if rng.below(10) == 0 {
        t.migrations = t.migrations.map(|m| m + 1);
        t.cpu = rng.below(cpus.into()) as u32;
    }
}

/// `o.samples` cumulative Samples of `o.threads` threads.
pub fn synthetic_samples(o: &SynthOptions) -> Vec<Sample> {
    let mut out = Vec::with_capacity(o.samples);
    let mut g = SynthGen::new(o.clone());
    for _ in 0..o.samples {
        out.push(g.next_sample());
    }
    out
}

/// Endless generator (benchmarks write more than fits in memory).
pub struct SynthGen {
    o: SynthOptions,
    rng: Rng,
    next_tid: u32,
    cur: Sample,
    exited: Vec<usize>,
    n: u64,
}

impl SynthGen {
    pub fn new(o: SynthOptions) -> Self {
        let mut rng = Rng(o.seed);
        let mut cur = Sample {
            time_ns: o.start_ns,
            mono_ns: 1_000_000_000_000,
            ..Default::default()
        };
        let mut next_tid = 1000;
        for _ in 0..o.threads {
            cur.threads
                .push(new_thread(&mut rng, next_tid, o.cpus.max(1), cur.mono_ns));
            next_tid += 1;
        }
        cur.cpus = (0..o.cpus)
            .map(|c| CpuSample {
                irq: None,
                cpu: c,
                switches: 0,
                busy_ns: 0,
                rq: Some(RqSample {
                    samples: 0,
                    sum: 0,
                    hist: vec![0; 40],
                    freq_hz: 99,
                }),
            })
            .collect();
        SynthGen {
            o,
            rng,
            next_tid,
            cur,
            exited: Vec::new(),
            n: 0,
        }
    }

    pub fn next_sample(&mut self) -> Sample {
        let o = &self.o;
        let cpus = o.cpus.max(1);
        let rng = &mut self.rng;
        if self.n > 0 {
            // threads that exited last time are gone; churn replaces some more
            for &i in self.exited.iter().rev() {
                self.cur.threads.remove(i);
            }
            self.exited.clear();
            // the system counts every switch once, also after its thread
            // is gone: what the remaining threads did from here on is added
            let before: u64 = self
                .cur
                .threads
                .iter()
                .map(|t| t.voluntary + t.involuntary)
                .sum();
            let ctxt_before = self.cur.system.context_switches;
            let fresh = (self.cur.threads.len() as f64 * o.churn).round() as usize;
            self.cur.time_ns += o.interval_ns + rng.below(2_000_000);
            self.cur.mono_ns += o.interval_ns + rng.below(2_000_000);
            for t in self.cur.threads.iter_mut() {
                advance(rng, t, cpus, o.uniform);
            }
            for _ in 0..fresh {
                let i = rng.below(self.cur.threads.len() as u64) as usize;
                if !self.cur.threads[i].exited {
                    self.cur.threads[i].exited = true;
                    self.exited.push(i);
                }
                let mut t = new_thread(rng, self.next_tid, cpus, self.cur.mono_ns);
                self.next_tid += 1;
                advance(rng, &mut t, cpus, o.uniform);
                self.cur.threads.push(t);
            }
            self.exited.sort_unstable();
            self.exited.dedup();
            let total: u64 = self
                .cur
                .threads
                .iter()
                .map(|t| t.voluntary + t.involuntary)
                .sum();
            // new threads started from zero: all of theirs are new
            let ctxt = ctxt_before + total.saturating_sub(before);
            for c in self.cur.cpus.iter_mut() {
                c.switches = ctxt / cpus as u64 + c.cpu as u64;
                c.busy_ns += o.interval_ns - rng.below(o.interval_ns / 10 + 1);
                if let Some(rq) = c.rq.as_mut() {
                    for _ in 0..99 {
                        let len = rng.below(8) as usize;
                        rq.samples += 1;
                        rq.sum += len as u64;
                        rq.hist[len] += 1;
                    }
                }
            }
            self.cur.system.context_switches = ctxt;
            if cpus > 1 {
                let (a, b) = (rng.below(cpus.into()) as u32, rng.below(cpus.into()) as u32);
                if a != b {
                    match self
                        .cur
                        .migrations
                        .iter_mut()
                        .find(|m| m.from_cpu == a && m.to_cpu == b)
                    {
                        Some(m) => m.count += 1,
                        None => self.cur.migrations.push(MigrationCount {
                            from_cpu: a,
                            to_cpu: b,
                            count: 1,
                        }),
                    }
                }
            }
        }
        self.cur.system.procs_running = 1 + rng.below(4) as u32;
        self.cur.system.procs_blocked = rng.below(2) as u32;
        self.cur.system.load = [1.5 + self.n as f64 * 0.01, 1.25, 0.5];
        self.cur.system.losses = Losses::default();
        self.n += 1;
        self.cur.clone()
    }
}
