/* The "why" probes, included by schedtop.bpf.c after its per-thread state
 * helpers: why a thread migrated, what it blocked on at a voluntary
 * switch-out, and who ran when it was preempted. Counters live at the end of
 * the thread's record (thread_stats) and are cumulative like the rest. */
#ifndef SCHEDTOP_WHY_BPF_H
#define SCHEDTOP_WHY_BPF_H

#define TASK_WAKING 0x0200		/* same value 5.10 .. 6.18 */
#define TASK_ON_RQ_MIGRATING 2		/* same value 5.10 .. 6.18 */
#define PF_KTHREAD 0x00200000
#define TASK_STOPPED_OR_TRACED (0x0004 | 0x0008)
#define ENOSYS 38
#define USER32_CS 0x23			/* int 0x80 / ia32: other numbers */
#define THREAD_SIZE_X86_64 16384	/* without KASAN, before 5.15 */
#define S_IFMT 00170000
#define S_IFSOCK 0140000
#define S_IFIFO 0010000
#define S_IFREG 0100000
#define S_IFBLK 0060000

/* syscall number -> BLK_* + 1 (0: other), filled by user space for the
 * running architecture before load (src/collect/why_syscalls.rs): one load
 * instead of a compare chain (BPF has no jump tables). */
const volatile u8 syscall_reason[SYSCALL_SLOTS] = {};

/* (subject, other, kind, gen) -> count: the one pair list (preemptions:
 * victim, preemptor; wakeups: wakee, waker). Preallocated (updated with
 * interrupts off); a pair that does not fit is counted in drops
 * (preempt_pairs_full / wake_pairs_full by kind).
 *
 * A program adds through a pointer it looked up, so user space must not
 * delete an element a program may still hold: the count would be lost, or
 * (preallocated elements are recycled at once) land in another pair's.
 * Hence generations: user space advances pair_gen (through the mmapped
 * .bss), waits for an RCU grace period, and only then reads and deletes
 * the keys of older generations (collect/why_drain.rs). Every pair writer
 * runs from a tracepoint (tp_btf) inside rcu_read_lock() with preemption
 * off, so once the grace period is over no program that read an older
 * generation is still running, and a program that starts later sees the
 * new one (a store before synchronize_rcu() is visible to any reader not
 * wholly before it). The old generation's keys then stay only for the
 * length of the drain: the map holds about one interval's pairs. */
u32 pair_gen = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct pair_key);
	__type(value, u64);
} pair_counts SEC(".maps");

/* Add n to the pair's count; a pair that does not fit is counted lost. */
static __always_inline void count_pair(u32 kind, u32 subject, u32 other, u64 n)
{
	struct pair_key key = {
		.subject = subject,
		.other = other,
		.kind = kind,
		/* once: the key's generation is the one this program saw */
		.gen = *(volatile u32 *)&pair_gen,
	};
	struct drop_stats *d;
	u32 zero = 0;
	u64 *c;

	c = bpf_map_lookup_elem(&pair_counts, &key);
	if (c) {
		__sync_fetch_and_add(c, n);
		return;
	}
	if (!bpf_map_update_elem(&pair_counts, &key, &n, BPF_NOEXIST))
		return;
	/* another CPU created it meanwhile */
	c = bpf_map_lookup_elem(&pair_counts, &key);
	if (c) {
		__sync_fetch_and_add(c, n);
		return;
	}
	d = bpf_map_lookup_elem(&drops, &zero);
	if (!d)
		return;
	if (kind == PAIR_WAKE)
		__sync_fetch_and_add(&d->wake_pairs_full, n);
	else
		__sync_fetch_and_add(&d->preempt_pairs_full, n);
}

/* Why `p` moves from CPU `src` (sched_migrate_task fires in set_task_cpu()
 * before the CPU changes). Checked in this order; each rule was verified on
 * 6.1, 6.12 and 6.18 (and reads only fields that exist since 5.3):
 * 1. affinity / cpuset: the source CPU is not in p->cpus_mask. Whatever the
 *    path (the stopper's migration_cpu_stop(), move_queued_task() in the
 *    caller, or the next wakeup placing it on an allowed CPU) a task moved
 *    because of its affinity may no longer run where it is. A thread that
 *    changes its own affinity is often moved as a wakeup (6.18: it waits for
 *    the stopper, which sets wake_cpu and wakes it), so this comes first.
 * 2. NUMA balancing: sched_move_numa / sched_swap_numa fired for the task
 *    since its last migration (a swapped task that is asleep moves at its
 *    next wakeup, so this also comes before the wakeup rule).
 * 3. wakeup placement: try_to_wake_up() sets TASK_WAKING before
 *    select_task_rq() and set_task_cpu(). Fork placement uses
 *    __set_task_cpu(): no tracepoint and no se.nr_migrations increment.
 * 4. load balance: a queued task taken off its queue to be moved has on_rq
 *    == TASK_ON_RQ_MIGRATING: detach_task() of the periodic, idle and
 *    new-idle balancers, active balance in the stopper, and also exec
 *    balancing, CPU unplug and RT/deadline push/pull (all move a queued task
 *    whose source CPU is allowed).
 * 5. anything else: other. Never guessed. */
static __always_inline u32 why_mig_cause(struct task_struct *p, struct thread_stats *s, u32 src)
{
	unsigned long word = ~0UL;

	if (src < 1024) {
		bpf_core_read(&word, sizeof(word), &p->cpus_mask.bits[src / 64]);
		if (!((word >> (src % 64)) & 1))
			return MIG_AFFINITY;
	}
	if (s && s->numa_pending)
		return MIG_NUMA;
	if (task_state(p) & TASK_WAKING)
		return MIG_WAKEUP;
	if (p->on_rq == TASK_ON_RQ_MIGRATING)
		return MIG_LOAD_BALANCE;
	return MIG_OTHER;
}

/* CPUs per side of the by-cause migration matrix below (0: off). Set by
 * user space: 5 n^2 counters, so it stays off on very large machines. */
const volatile u32 cause_matrix_cpus = 0;

/* (cause * n + from) * n + to -> moves, n = cause_matrix_cpus; resized by
 * user space */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} migration_cause_matrix SEC(".maps");

/* Called from the migrate probe. Never creates the thread's state: this
 * runs in softirq context too (the balancer), where creating task storage
 * can fail. A move of a thread without state yet is not counted here; user
 * space counts the difference to se.nr_migrations as "other". */
static __always_inline void why_migrate(struct task_struct *p, u32 src, u32 dst)
{
	struct thread_stats *s = stats_if_any(p);
	u32 cause = why_mig_cause(p, s, src), n = cause_matrix_cpus, idx;
	u64 *cell;

	if (src < n && dst < n && cause < MIG_CAUSES) {
		idx = (cause * n + src) * n + dst;
		cell = bpf_map_lookup_elem(&migration_cause_matrix, &idx);
		if (cell)
			__sync_fetch_and_add(cell, 1);
	}
	if (!s)
		return;
	s->numa_pending = 0;
	if (cause < MIG_CAUSES)
		__sync_fetch_and_add(&s->mig_cause[cause], 1);
}

static __always_inline void why_numa_mark(struct task_struct *p)
{
	struct thread_stats *s;

	if (!p) /* sched_swap_numa's dst_p may be NULL */
		return;
	s = stats_if_any(p);
	if (s)
		s->numa_pending = 1;
}

SEC("tp_btf/sched_move_numa")
int BPF_PROG(why_move_numa, struct task_struct *p, int src_cpu, int dst_cpu)
{
	why_numa_mark(p);
	return 0;
}

SEC("tp_btf/sched_swap_numa")
int BPF_PROG(why_swap_numa, struct task_struct *src_p, int src_cpu, struct task_struct *dst_p,
	     int dst_cpu)
{
	why_numa_mark(src_p);
	why_numa_mark(dst_p);
	return 0;
}

/* What fd `fd` of `t` is: pipe, socket, a file or block device (disk), or
 * other (tty, eventfd, ...). */
static __noinline u32 why_fd_class(struct task_struct *t, long fd)
{
	struct file **fds, *f = 0;
	u32 max;
	u16 mode;

	if (fd < 0)
		return BLK_OTHER;
	max = BPF_CORE_READ(t, files, fdt, max_fds);
	if ((u64)fd >= max)
		return BLK_OTHER;
	fds = BPF_CORE_READ(t, files, fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return BLK_OTHER;
	mode = BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT;
	if (mode == S_IFIFO)
		return BLK_PIPE;
	if (mode == S_IFSOCK)
		return BLK_SOCKET;
	if (mode == S_IFREG || mode == S_IFBLK)
		return BLK_DISK_IO;
	return BLK_OTHER;
}

/* t's saved user registers (syscall number, return value, fd argument,
 * code segment); false if they cannot be read. */
static __always_inline bool why_user_regs(struct task_struct *t, long *nr, long *ax, long *di,
					  unsigned long *cs)
{
	struct pt_regs *regs;

	/* 5.15+: the helper (it knows FRED's padding, 6.9+) returns a trusted
	 * pointer: plain loads, no helper call per field */
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs)) {
		regs = (struct pt_regs *)bpf_task_pt_regs(t);
		if (!regs)
			return false;
		*nr = regs->orig_ax;
		*ax = regs->ax;
		*di = regs->di;
		*cs = regs->cs;
		return true;
	}
	/* before: task_pt_regs() of arch/x86/include/asm/processor.h, the top
	 * of the kernel stack (no padding on x86-64 before FRED) */
	regs = (struct pt_regs *)((char *)t->stack + THREAD_SIZE_X86_64 -
				  bpf_core_type_size(struct pt_regs));
	return !bpf_core_read(nr, sizeof(*nr), &regs->orig_ax) &&
	       !bpf_core_read(ax, sizeof(*ax), &regs->ax) &&
	       !bpf_core_read(di, sizeof(*di), &regs->di) &&
	       !bpf_core_read(cs, sizeof(*cs), &regs->cs);
}

/* What `t` blocks on at a voluntary switch-out, from the system call it is
 * in (x86-64: a syscall entry saves the number in orig_ax and sets ax to
 * -ENOSYS until the call returns; interrupts and exceptions save orig_ax
 * -1, so -1 here is the page-fault handler, unless the task is stopped or
 * traced). A thread blocked after its syscall returned (exit-to-user work)
 * is "other", as is a kernel thread not waiting for I/O. */
static __always_inline u32 why_block_reason(struct task_struct *t, struct thread_stats *s,
					    u32 state)
{
	long nr = 0, ax = 0, fd = 0;
	unsigned long cs = 0;
	u32 r, c;

	/* a direct load (tp_btf's task is trusted), no helper call */
	if (BPF_CORE_READ_BITFIELD(t, in_iowait))
		return BLK_DISK_IO;
	if (t->flags & PF_KTHREAD)
		return BLK_OTHER;
	if (!why_user_regs(t, &nr, &ax, &fd, &cs))
		return BLK_OTHER;
	if (nr == -1)
		return (state & TASK_STOPPED_OR_TRACED) ? BLK_OTHER : BLK_PAGE_FAULT;
	if (ax != -ENOSYS || cs == USER32_CS || nr < 0 || nr >= SYSCALL_SLOTS)
		return BLK_OTHER;
	r = syscall_reason[nr & (SYSCALL_SLOTS - 1)];
	if (r != BLK_BY_FD)
		return r ? r - 1 : BLK_OTHER;
	/* read/write family: the fd's type. A ping-pong thread blocks on the
	 * same fd every time: the last answer is kept (an fd closed and reused
	 * for another type in between is misclassified once). */
	if (s->last_fd_class && s->last_fd == fd)
		return s->last_fd_class - 1;
	c = why_fd_class(t, fd);
	s->last_fd = fd;
	s->last_fd_class = c + 1;
	return c;
}

/* From switch_out(), inside the record's seq window: `voluntary` and
 * `involuntary` are the kernel's nvcsw/nivcsw increments this switch-out
 * accounts for (more than one only if switches went untraced). */
static __always_inline void why_switch_out(struct task_struct *prev, struct task_struct *next,
					   struct thread_stats *s, u64 voluntary,
					   u64 involuntary, u32 state)
{
	u32 r;

	if (voluntary) {
		r = why_block_reason(prev, s, state);
		/* hide what the compiler knows, so the bound check stays on the
		 * register used as the index (the verifier needs it there) */
		asm volatile("" : "+r"(r));
		if (r < BLOCK_REASONS)
			s->blocked_on[r] += voluntary;
	}
	if (involuntary)
		count_pair(PAIR_PREEMPT, prev->pid, next->pid, involuntary);
}

/* 1: count who woke each thread (set by user space before load) */
const volatile u32 count_wakers = 1;

/* The kernel's softirq numbering (include/linux/interrupt.h, 5.10 .. 6.18):
 * TIMER 1, NET_TX 2, NET_RX 3, BLOCK 4, HRTIMER 8; the rest is "other". */
static __always_inline u32 softirq_waker(u32 vec)
{
	if (vec == 1 || vec == 8)
		return WAKER_SOFTIRQ_TIMER;
	if (vec == 2 || vec == 3)
		return WAKER_SOFTIRQ_NET;
	if (vec == 4)
		return WAKER_SOFTIRQ_BLOCK;
	return WAKER_SOFTIRQ_OTHER;
}

/* Bytes from this CPU's run queue to its preempt count (set by user space
 * from the kernel's BTF, or kallsyms where the BTF lists no variables, as
 * Debian's 5.10: features.rs preempt_count_from_rq; 0: unknown). */
const volatile s64 preempt_count_from_rq = 0;

#define HARDIRQ_OR_NMI_MASK 0x00ff0000	/* preempt.h: HARDIRQ_MASK | NMI_MASK */
#define SOFTIRQ_OFFSET 0x100		/* set while a softirq is served */

/* Who is waking a thread from here: the current task, unless this runs in
 * interrupt context, which the preempt count says. It is a per-CPU
 * variable that a ksym cannot reach on every kernel (kallsyms lists no
 * per-CPU data without CONFIG_KALLSYMS_ALL; 5.10's BTF has no variables
 * for bpf_this_cpu_ptr): it is found from this CPU's run queue (current's cfs_rq->rq, CONFIG_FAIR_GROUP_SCHED) and
 * an offset user space read from the BTF. Without either: x86-64 runs
 * hardirqs taken in kernel mode (and softirqs) on the per-CPU interrupt
 * stack, where a tp_btf program's ctx (the argument array, on the stack of
 * the code that fired the tracepoint) is off the task's stack; a hardirq
 * from user mode runs on the task stack and is then missed. The softirq
 * vector the softirq probes saw running names the kind. */
static __always_inline u32 waker_id(void *ctx)
{
	u32 zero = 0, pid, pc = 0;
	struct task_struct *cur;
	struct cpu_stats *c;
	u64 lo, at = (u64)ctx;
	struct rq *rq = 0;

	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)) {
		cur = bpf_get_current_task_btf();
		lo = (u64)cur->stack;
		pid = cur->pid;
		/* a trusted task: plain loads, no helper call per hop */
		if (preempt_count_from_rq && bpf_core_field_exists(((struct cfs_rq *)0)->rq))
			rq = cur->se.cfs_rq->rq;
	} else {
		/* 5.10: no trusted current */
		cur = (struct task_struct *)bpf_get_current_task();
		lo = (u64)BPF_CORE_READ(cur, stack);
		pid = BPF_CORE_READ(cur, pid);
		if (preempt_count_from_rq && bpf_core_field_exists(((struct cfs_rq *)0)->rq))
			rq = BPF_CORE_READ(cur, se.cfs_rq, rq);
	}
	if (rq && !bpf_probe_read_kernel(&pc, sizeof(pc), (char *)rq + preempt_count_from_rq)) {
		if (pc & HARDIRQ_OR_NMI_MASK)
			return WAKER_HARDIRQ;
		if (!(pc & SOFTIRQ_OFFSET))
			return pid ? pid : WAKER_IDLE;
	}
	/* a softirq (the preempt count says so), or no preempt count: the
	 * vector the softirq probes (irq_time.bpf.h) saw running, if any */
	c = bpf_map_lookup_elem(&cpus, &zero);
	if (c && c->irq_soft)
		return softirq_waker(c->irq_soft - 1);
	if (pc & SOFTIRQ_OFFSET)
		return WAKER_SOFTIRQ_OTHER;
	if (at < lo || at >= lo + THREAD_SIZE_X86_64)
		return WAKER_HARDIRQ;
	return pid ? pid : WAKER_IDLE;
}

/* A wakeup of p, from a program whose ctx is on the waker's stack. p is
 * serialised by its pi_lock here (try_to_wake_up, wake_up_new_task), so
 * its record needs no atomic add: the waker goes in the first of p's own
 * slots that holds it or is free, without a map update (a ping-pong
 * thread has one waker; a sleeper the timer); only a thread with more
 * than WAKER_SLOTS wakers sends the others to the pair map. A thread
 * without a record (no switch-out seen yet) is not counted, as its wait
 * is not. */
static __always_inline void why_wakeup(void *ctx, struct task_struct *p, struct thread_stats *s)
{
	u32 w, i;

	if (!count_wakers || !s)
		return;
	w = waker_id(ctx);
#pragma unroll
	for (i = 0; i < WAKER_SLOTS; i++) {
		if (s->waker_id[i] == w) {
			s->waker_count[i]++;
			break;
		}
		if (!s->waker_id[i]) {
			/* the waker before its count: a count read is never
			 * taken for another slot's */
			s->waker_id[i] = w;
			barrier();
			s->waker_count[i] = 1;
			break;
		}
	}
	if (i == WAKER_SLOTS)
		count_pair(PAIR_WAKE, p->pid, w, 1);
	/* last, and locked: the full barrier the dirty-set protocol needs
	 * before handle_waking's mark_dirty loads the epoch (dirty.bpf.h) */
	if (dirty_sets)
		__sync_fetch_and_add(&s->wakeups, 1);
	else
		s->wakeups++;
}

#endif
