/* Time interrupts take from the thread they interrupt ("stolen" time),
 * included by schedtop.bpf.c after its per-thread state helpers. Charged to
 * the interrupted thread's counters[CTR_STOLEN_*]; each CPU's own totals
 * (idle included) go to cpu_stats.irq_ns / softirq_ns.
 *
 * Why the probes measure it: the kernel splits interrupt time from task
 * time only with CONFIG_IRQ_TIME_ACCOUNTING, which Debian's 5.10, 6.1 and
 * 6.12 kernels lack; without it a thread's sum_exec_runtime silently
 * includes every interrupt it suffered.
 *
 * Where:
 * - hardirq: between the entry and exit tracepoints of each interrupt
 *   handler: irq:irq_handler_entry/exit covers device interrupts (the
 *   handlers registered with request_irq), and on x86 the system vectors
 *   have their own (irq_vectors:local_timer_*, call_function*_*,
 *   reschedule_*, irq_work_*, ...): a program on each (the list below). The entry code around a handler (irq_enter, the APIC ack) is not
 *   seen: a few hundred ns per interrupt. (fentry on irq_enter_rcu and
 *   irq_exit_rcu would see all of it, but tracing programs of that kind
 *   are not allowed everywhere, and the exit runs the softirqs.)
 * - softirq: softirq_entry / softirq_exit, by vector.
 * - nesting: a CPU is in one of task, softirq or hardirq at a time (the
 *   kernel's irqtime accounting does the same): a hardirq that arrives
 *   inside a softirq closes the softirq's stretch and a new one begins at
 *   the hardirq's end, so no nanosecond is counted twice.
 * - softirqs run by this CPU's ksoftirqd are that thread's own work (as the
 *   kernel's irqtime accounting also leaves them to it): not stolen. Time a
 *   hardirq takes from ksoftirqd is.
 * - the idle task (tid 0) is not a thread: its interrupts count only in the
 *   CPU's totals.
 * - an entry whose exit was not seen (the probes attached or detached in
 *   between, or an irq_enter()/irq_exit() path that skips irq_exit_rcu) is
 *   dropped at the next entry of the same kind, never charged. */
#ifndef SCHEDTOP_IRQ_TIME_BPF_H
#define SCHEDTOP_IRQ_TIME_BPF_H

/* A stretch longer than this is a lost exit, never charged. */
#define MAX_STRETCH_NS 1000000000ULL

/* Set by user space before load: 0 leaves the programs below empty. */
const volatile u32 irq_time_on = 0;

/* Softirq time by `cur` is its own work if it is a ksoftirqd thread. A
 * kernel thread's name is set by the kernel ("ksoftirqd/N"); only one CPU's
 * ksoftirqd ever runs on it. */
static __always_inline bool is_ksoftirqd(struct task_struct *cur)
{
	char c[9];

	if (!(BPF_CORE_READ(cur, flags) & PF_KTHREAD))
		return false;
	if (bpf_probe_read_kernel(c, sizeof(c), cur->comm))
		return false;
	return c[0] == 'k' && c[1] == 's' && c[2] == 'o' && c[3] == 'f' && c[4] == 't' &&
	       c[5] == 'i' && c[6] == 'r' && c[7] == 'q' && c[8] == 'd';
}

/* Add `ns` to slot `slot` of the thread that was on the CPU. Only this CPU
 * writes a running thread's stolen slots (the thread is here), with the
 * rest of its record updated by its switch-out, which cannot run inside an
 * interrupt: a plain add. The 64-bit store is atomic for a reader. */
static __always_inline void charge_thread(struct task_struct *cur, u32 slot, u64 ns)
{
	struct thread_stats *s = 0;
	struct task_struct *t;
	u32 tid;

	if (use_task_storage &&
	    bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)) {
		t = bpf_get_current_task_btf();
		if (t->pid == 0)
			return;
		s = stats_of(t);
	} else {
		/* 5.10: no trusted pointer to the current task; the tid map
		 * holds the threads that switched out since we attached */
		tid = (u32)bpf_get_current_pid_tgid();
		if (tid == 0)
			return;
		s = bpf_map_lookup_elem(&thread_hash, &tid);
		if (s && s->start_time != BPF_CORE_READ(cur, start_time))
			s = 0;
	}
	/* task storage: may create the record (a spinner that never
	 * switched out since we attached is the very thread to charge); in
	 * an interrupt it refuses, counted in drops.storage_unavailable,
	 * rather than wait if the interrupted code holds its lock */
	asm volatile("" : "+r"(slot));
	if (s && slot < THREAD_COUNTERS)
		s->counters[slot] += ns;
}

/* ns since the stretch began, 0 if it is not one to count */
static __always_inline u64 stretch(struct cpu_stats *c, u64 now, struct task_struct *cur)
{
	u64 d = now - c->irq_stamp;

	if (c->irq_task != (u64)cur || now < c->irq_stamp || d > MAX_STRETCH_NS)
		return 0;
	return d;
}

static __always_inline struct cpu_stats *irq_cpu(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&cpus, &zero);
}

static __always_inline int hardirq_enter(void)
{
	struct cpu_stats *c;
	struct task_struct *cur;
	u64 now, d;
	u32 vec;

	if (!irq_time_on || bench_empty_probes)
		return 0;
	c = irq_cpu();
	if (!c)
		return 0;
	now = bpf_ktime_get_ns();
	cur = (struct task_struct *)bpf_get_current_task();
	/* inside a softirq: its stretch so far is softirq time */
	vec = c->irq_soft;
	d = stretch(c, now, cur);
	if (vec && !c->irq_hard && d) {
		vec--;
		asm volatile("" : "+r"(vec));
		if (vec < SOFTIRQ_VECTORS) {
			c->softirq_ns[vec] += d;
			if (!is_ksoftirqd(cur))
				charge_thread(cur, CTR_STOLEN_SOFTIRQ_NS + vec, d);
		}
	}
	/* hardirqs do not nest: a flag still set is a lost exit */
	c->irq_hard = 1;
	c->irq_task = (u64)cur;
	c->irq_stamp = now;
	return 0;
}

static __always_inline int hardirq_exit(void)
{
	struct cpu_stats *c;
	struct task_struct *cur;
	u64 now, d;

	if (!irq_time_on || bench_empty_probes)
		return 0;
	c = irq_cpu();
	if (!c || !c->irq_hard)
		return 0;
	now = bpf_ktime_get_ns();
	cur = (struct task_struct *)bpf_get_current_task();
	c->irq_hard = 0;
	d = stretch(c, now, cur);
	if (!d)
		return 0;
	c->irq_ns += d;
	charge_thread(cur, CTR_STOLEN_HARDIRQ_NS, d);
	/* back in the softirq it interrupted, if any: a new stretch */
	c->irq_stamp = now;
	return 0;
}

/* One program per softirq tracepoint serves both users: the vector running
 * on this CPU (cpu_stats.irq_soft), which names a softirq's wakeups
 * (why.bpf.h waker_id), and the stolen-time clock. Loaded when either is
 * on (collect/irq_time.rs). */
SEC("tp_btf/softirq_entry")
int BPF_PROG(irq_soft_entry, unsigned int vec)
{
	struct cpu_stats *c;

	if (bench_empty_probes)
		return 0;
	c = irq_cpu();
	if (!c)
		return 0;
	c->irq_soft = vec < SOFTIRQ_VECTORS ? vec + 1 : 0;
	if (!irq_time_on)
		return 0;
	/* softirqs never run inside a hardirq: a flag still set is stale */
	c->irq_hard = 0;
	c->irq_task = bpf_get_current_task();
	c->irq_stamp = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(irq_soft_exit, unsigned int vec)
{
	struct task_struct *cur;
	struct cpu_stats *c;
	u32 was;
	u64 now, d;

	if (bench_empty_probes)
		return 0;
	c = irq_cpu();
	if (!c)
		return 0;
	/* no softirq runs here from now on, whatever the clock makes of it
	 * (a hardirq flag still set is a lost exit: nothing is charged) */
	was = c->irq_soft;
	c->irq_soft = 0;
	if (!irq_time_on || c->irq_hard || was != vec + 1)
		return 0;
	now = bpf_ktime_get_ns();
	cur = (struct task_struct *)bpf_get_current_task();
	d = stretch(c, now, cur);
	asm volatile("" : "+r"(vec));
	if (!d || vec >= SOFTIRQ_VECTORS)
		return 0;
	c->softirq_ns[vec] += d;
	if (!is_ksoftirqd(cur))
		charge_thread(cur, CTR_STOLEN_SOFTIRQ_NS + vec, d);
	return 0;
}

/* One program per handler tracepoint (a tp_btf program is bound to its
 * tracepoint at load). User space leaves out those the kernel lacks. */
#define HARDIRQ_TRACEPOINTS(name)                                        \
	SEC("tp_btf/" #name "_entry")                                    \
	int BPF_PROG(irq_in_##name)                                      \
	{                                                                \
		return hardirq_enter();                                  \
	}                                                                \
	SEC("tp_btf/" #name "_exit")                                     \
	int BPF_PROG(irq_out_##name)                                     \
	{                                                                \
		return hardirq_exit();                                   \
	}

HARDIRQ_TRACEPOINTS(irq_handler)
HARDIRQ_TRACEPOINTS(local_timer)
HARDIRQ_TRACEPOINTS(call_function)
HARDIRQ_TRACEPOINTS(call_function_single)
HARDIRQ_TRACEPOINTS(reschedule)
HARDIRQ_TRACEPOINTS(irq_work)
HARDIRQ_TRACEPOINTS(x86_platform_ipi)
HARDIRQ_TRACEPOINTS(thermal_apic)
HARDIRQ_TRACEPOINTS(threshold_apic)
HARDIRQ_TRACEPOINTS(deferred_error_apic)
HARDIRQ_TRACEPOINTS(error_apic)
HARDIRQ_TRACEPOINTS(spurious_apic)

#endif
