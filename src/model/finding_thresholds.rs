//! Every threshold the finding rules use, in one table, each with why it is
//! where it is (docs/findings.md lists them too). A false alarm costs more
//! trust than a miss, so every rule also asks for a minimum absolute amount
//! of lost time: three waits of 20 µs are no finding, whatever their share.

pub struct Thresholds {
    /// Waits of a subject's threads, in CPUs (seconds of wait per second):
    /// less than a tenth of a CPU lost is not worth anyone's attention.
    pub min_wait_cpus: f64,
    /// Share of a subject's runnable time (on CPU + waiting) spent waiting:
    /// below a fifth, waiting is part of sharing a CPU, not trouble.
    pub min_wait_share: f64,
    /// cpu_quota: share of the interval's CFS periods that were throttled.
    /// A tenth: the quota is hit often enough to shape the latency.
    pub quota_min_throttled_share: f64,
    /// cpu_quota: throttled periods per second; one a second at least, so
    /// a single burst at a period boundary is not reported.
    pub quota_min_throttled_per_s: f64,
    /// cpu_quota: CPUs idle elsewhere on the box for the text to say the
    /// box had room (half a CPU: less is within the busy figure's accuracy).
    pub quota_idle_cpus: f64,
    /// too_many_threads: runnable threads on average over the CPUs the
    /// process may use. Twice as many: each thread then waits at least as
    /// long as it runs.
    pub threads_min_ratio: f64,
    /// too_many_threads: and at least this many more runnable threads than
    /// CPUs (one thread too many on one CPU is ordinary sharing).
    pub threads_min_excess: f64,
    /// cpu_saturation: the CPUs' average busy share (%). Below it some CPU
    /// had room: the waits are then placement or a quota, not saturation.
    pub saturation_min_busy_pct: f64,
    /// cpu_saturation: tasks waiting per CPU on average (the run queue
    /// without the running one). Half a task: half again as many runnable
    /// tasks as CPUs.
    pub saturation_min_rq_per_cpu: f64,
    /// cpu_saturation: the box's CPU pressure (% of the interval some task
    /// waited, PSI), where the kernel has PSI.
    pub saturation_min_psi_pct: f64,
    /// antagonist: share of a thread's waits that began at a preemption.
    /// Most of it: the waits are someone else running, not wakeup latency.
    pub antagonist_min_preempt_share: f64,
    /// antagonist: share of its preemptions by the one other process that
    /// preempted it most. Half: one process is the antagonist; spread over
    /// many it is a busy box (cpu_saturation), its own threads preempting
    /// each other is too_many_threads, and being switched to idle while
    /// runnable is a quota's throttling.
    pub antagonist_min_top_share: f64,
    /// rt_hog: a real-time (FIFO, RR, DEADLINE) thread's share of a CPU
    /// (%). Half: it takes most of the CPU the normal threads there wait
    /// for (the kernel's RT throttling still leaves them 5 %). Its victims
    /// are the normal threads on its CPUs whose waits are mostly preempted
    /// (antagonist_min_preempt_share), whoever preempted them first.
    pub rt_hog_min_cpu_pct: f64,
    /// wakeup_placement: share of a thread's waits that began at a wakeup.
    /// Most of it: being preempted is an antagonist's or a busy box's.
    pub placement_min_wakeup_share: f64,
    /// wakeup_placement: p99 wait after a wakeup (µs). 4 ms: longer than
    /// one slice of the thread running there (EEVDF's base slice is 3 ms
    /// at most), so it waited behind more than the current thread.
    pub placement_min_p99_us: f64,
    /// wakeup_placement: idle CPUs (summed idle shares) among the others
    /// the thread may use; half a CPU, as for cpu_quota's idle box.
    pub placement_min_idle_cpus: f64,
    /// blocking: voluntary switches per second for the one reason. Below a
    /// thousand a second blocking costs little of anyone's time.
    pub block_min_per_s: f64,
    /// blocking: share of the voluntary switches the top reason takes.
    pub block_min_share: f64,
    /// blocking: threads that block on the reason. A lock two threads hand
    /// back and forth is a ping-pong; contention takes at least three.
    pub block_min_threads: u32,
    /// blocking: CPUs the blocking threads use; a parked pool uses none.
    pub block_min_cpus: f64,
    /// cross_node_churn: cross-node moves by the load balancer in the
    /// interval (an absolute floor) and per second (seed 004's slow case
    /// was ~6/s on 128 CPUs; one a second sustained is already a pattern).
    pub churn_min_moves: u64,
    pub churn_min_per_s: f64,
    /// cross_node_churn: a moved thread counts as busy at this CPU %: the
    /// balancer moving busy threads away from their memory is the harm.
    pub churn_busy_pct: f64,
    /// stolen_time: a CPU's time in hardirq, softirq and hypervisor steal
    /// together (%). A tenth of a CPU doing interrupt work (or handed to
    /// another guest) is capacity its threads do not get; below it the
    /// tick-sampled /proc/stat figures are within their own noise.
    pub stolen_min_cpu_pct: f64,
    /// stolen_time: share of a thread's on-CPU time that interrupts ran in
    /// (without CONFIG_IRQ_TIME_ACCOUNTING the kernel counts it as the
    /// thread's own). A tenth: its latency and throughput visibly suffer.
    pub stolen_min_thread_share: f64,
    /// stolen_time: and at least this many ms per second of the interval,
    /// so a thread that barely ran is no finding whatever its share.
    pub stolen_min_thread_ms_per_s: f64,
    /// blocking: share of the blocked threads' wakeups by one waker (a
    /// process, or an interrupt kind) for the text to name it as the one
    /// that wakes them; spread thinner it names the top one with its share.
    pub block_waker_min_share: f64,
}

pub const THRESHOLDS: Thresholds = Thresholds {
    min_wait_cpus: 0.1,
    min_wait_share: 0.2,
    quota_min_throttled_share: 0.1,
    quota_min_throttled_per_s: 1.0,
    quota_idle_cpus: 0.5,
    threads_min_ratio: 2.0,
    threads_min_excess: 2.0,
    saturation_min_busy_pct: 90.0,
    saturation_min_rq_per_cpu: 0.5,
    saturation_min_psi_pct: 20.0,
    antagonist_min_preempt_share: 0.6,
    antagonist_min_top_share: 0.5,
    rt_hog_min_cpu_pct: 50.0,
    placement_min_wakeup_share: 0.6,
    placement_min_p99_us: 4000.0,
    placement_min_idle_cpus: 0.5,
    block_min_per_s: 1000.0,
    block_min_share: 0.6,
    block_min_threads: 3,
    block_min_cpus: 0.1,
    churn_min_moves: 20,
    churn_min_per_s: 1.0,
    churn_busy_pct: 50.0,
    stolen_min_cpu_pct: 10.0,
    stolen_min_thread_share: 0.1,
    stolen_min_thread_ms_per_s: 20.0,
    block_waker_min_share: 0.5,
};
