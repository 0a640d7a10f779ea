// SPDX-License-Identifier: GPL-2.0
/* schedtop's probes: per-thread switch, slice, run-queue wait and migration
 * counters aggregated in the kernel; user space drains them once an interval.
 *
 * Hot path cost matters (every context switch runs handle_switch), so:
 * per-thread state lives in task-local storage (a pointer hop from the task,
 * no hash lookup), fields are read with direct CO-RE loads (tp_btf arguments
 * are trusted pointers, no bpf_probe_read calls), slice and wait lengths come
 * from the kernel's own per-task accounting (no wakeup probe, no switch-in
 * work, no clock read: CPU busy time is the kernel's own /proc/stat), and
 * user space reads
 * everything with one pass of a task iterator instead of walking a map.
 *
 * Seen on this kernel (6.18, in a VM): some context switches of a few
 * threads never fire sched_switch, not even for ftrace; a CPU's "current"
 * as last traced can then be stale. Nothing here depends on seeing both
 * ends of a slice. */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "schedtop.h"
#include "hist_slot.h"

char LICENSE[] SEC("license") = "GPL";

/* Keep the compiler from moving loads and stores across this point. x86
 * keeps stores in order (and loads in order) for other CPUs, so this is
 * enough for the seq counter around a thread's counter updates. */
#define barrier() asm volatile("" ::: "memory")

#define TASK_RUNNING 0x0000
#define TASK_DEAD 0x0080

/* Set by user space before load. */
const volatile u32 nr_cpus = 1;
/* CLOCK_MONOTONIC at load: a thread started later was watched all its life */
const volatile u64 attach_ns = 0;
/* Where per-thread state lives: 1 = task storage (5.11+), 0 = the tid-keyed
 * hash map below (5.10 has no task storage for tracing programs: creating
 * the map fails with EINVAL). Read-only after load, so the verifier prunes
 * the other branch, and user space does not create the unused map
 * (libbpf turns its references into dead code). */
const volatile u32 use_task_storage = 1;
/* 1: run-queue waits timed from the wakeup (sched_wakeup programs attached,
 * one clock read per switch); 0: from sched_info.run_delay (cheaper, but 0
 * for a wakeup that preempted the CPU's current task) */
const volatile u32 wait_from_wakeup = 1;
/* 1: the hot-path programs return at once (the verifier drops their
 * bodies). Only for bench/probe_overhead.sh, which measures with it what
 * attaching programs at these tracepoints costs before they do anything:
 * the floor under every probe cost figure. */
const volatile u32 bench_empty_probes = 0;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_stats);
} thread_store SEC(".maps");

/* The fallback: tid -> state. Preallocated (it is filled from sched_switch,
 * with interrupts off, where allocating can fail); user space sizes it
 * before load. The exit path deletes a thread's entry once its final copy is
 * in `exited`; user space sweeps entries of threads whose final switch was
 * never traced. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct thread_stats);
} thread_hash SEC(".maps");

/* One zeroed thread_stats, never written: the initial value of a
 * thread_hash entry (the struct is too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct thread_stats);
} empty_stats SEC(".maps");

/* The iterator's copy of one thread (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct thread_stats);
} iter_scratch SEC(".maps");

/* Final counts of threads that died since the last drain; user space reports
 * and deletes them. */
/* Preallocated: this is updated from sched_switch with interrupts off, where
 * an allocating map can fail (ENOMEM) when thousands of threads exit a
 * second. User space empties it twice a second (so a long interval does not
 * overflow it); exits that do not fit are counted as lost. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, struct thread_key);
	__type(value, struct thread_stats);
} exited SEC(".maps");

/* Exits saved into `exited` so far: user space empties that map between
 * drains only when enough went in (walking an empty map's 32,768 buckets
 * twice a second is not free). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} exits_saved SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpu_stats);
} cpus SEC(".maps");

/* from_cpu * nr_cpus + to_cpu -> count; resized to nr_cpus^2 by user space */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} migration_matrix SEC(".maps");

/* cpu -> NUMA node, filled by user space from sysfs; resized to nr_cpus */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} cpu_node SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct drop_stats);
} drops SEC(".maps");

/* a / n where n is almost always 1 */
static __always_inline u64 div_mostly_one(u64 a, u64 n)
{
	return n == 1 ? a : a / n;
}

static __always_inline u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return (u32)((struct task_struct___pre514 *)t)->state;
}

static __always_inline u32 task_cpu_of(struct task_struct *t)
{
	if (bpf_core_field_exists(t->cpu))
		return t->cpu;
	return t->thread_info.cpu;
}

static __always_inline void count_drop(int which)
{
	u32 zero = 0;
	struct drop_stats *d = bpf_map_lookup_elem(&drops, &zero);

	if (!d)
		return;
	if (which == 0)
		__sync_fetch_and_add(&d->thread_map_full, 1);
	else if (which == 1)
		__sync_fetch_and_add(&d->migration_matrix_overflow, 1);
	else if (which == 3)
		__sync_fetch_and_add(&d->dirty_full, 1);
	else
		__sync_fetch_and_add(&d->storage_unavailable, 1);
}

/* The tid-keyed map's entry for `t`, created on first use. */
static __noinline struct thread_stats *hashed_stats_of(struct task_struct *t)
{
	struct thread_stats *s;
	u32 tid = t->pid, zero = 0;
	void *empty;

	s = bpf_map_lookup_elem(&thread_hash, &tid);
	if (s && s->start_time == t->start_time)
		return s;
	/* new, or a reused tid whose previous thread's final switch was never
	 * traced (user space counts those: the thread vanished unreported) */
	empty = bpf_map_lookup_elem(&empty_stats, &zero);
	if (!empty || bpf_map_update_elem(&thread_hash, &tid, empty, BPF_ANY))
		return 0;
	s = bpf_map_lookup_elem(&thread_hash, &tid);
	if (!s)
		return 0;
	s->tid = tid;
	s->pid = t->tgid;
	s->start_time = t->start_time;
	return s;
}

/* The thread's state, created on first use. */
static __always_inline struct thread_stats *stats_of(struct task_struct *t)
{
	struct thread_stats *s;

	if (use_task_storage)
		s = bpf_task_storage_get(&thread_store, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	else
		s = hashed_stats_of(t);
	if (!s)
		count_drop(2);
	return s;
}

/* The thread's state if it has any; never creates it. */
static __always_inline struct thread_stats *stats_if_any(struct task_struct *t)
{
	struct thread_stats *s;
	u32 tid;

	if (use_task_storage)
		return bpf_task_storage_get(&thread_store, t, 0, 0);
	tid = t->pid;
	s = bpf_map_lookup_elem(&thread_hash, &tid);
	if (s && s->start_time == t->start_time)
		return s;
	return 0;
}

/* Keep a dead thread's final counts where user space will find them: its
 * task storage goes away with the task. */
/* What the kernel says of t now, into s: identity, names and its own
 * time and migration accounting (the exit path and both readers). */
static __always_inline void read_task_now(struct thread_stats *s, struct task_struct *t)
{
	s->tid = t->pid;
	s->pid = t->tgid;
	s->start_time = t->start_time;
	s->oncpu_ns = t->se.sum_exec_runtime;
	s->wait_ns = t->sched_info.run_delay;
	s->migrations = t->se.nr_migrations;
	s->last_cpu = task_cpu_of(t);
	bpf_probe_read_kernel_str(s->comm, sizeof(s->comm), t->comm);
	bpf_probe_read_kernel_str(s->process_comm, sizeof(s->process_comm), t->group_leader->comm);
}

static __always_inline void save_exited(struct task_struct *t, struct thread_stats *s)
{
	struct thread_key key = {};

	s->exited = 1;
	read_task_now(s, t);
	key.tid = s->tid;
	key.start_time = s->start_time;
	if (bpf_map_update_elem(&exited, &key, s, BPF_ANY)) {
		count_drop(0);
	} else {
		u32 zero = 0;
		u64 *n = bpf_map_lookup_elem(&exits_saved, &zero);

		if (n)
			__sync_fetch_and_add(n, 1);
	}
	/* task storage goes away with the task; the fallback's entry must go
	 * now that its final copy is saved */
	if (!use_task_storage)
		bpf_map_delete_elem(&thread_hash, &key.tid);
}

#include "dirty.bpf.h"
#include "why.bpf.h"
#include "irq_time.bpf.h"

static __always_inline void count_wait(struct thread_stats *s, u64 ns, u64 n, bool wakeup)
{
	u64 slot = fine_slot(ns);

	/* hide what the compiler knows of the slot, so the bound check stays
	 * on the register used as the index (the verifier needs it there) */
	asm volatile("" : "+r"(slot));
	if (slot >= HIST_SLOTS)
		return;
	if (wakeup)
		s->wakeup_wait_hist[slot] += n;
	else
		s->preempt_wait_hist[slot] += n;
}

static __always_inline void switch_out(struct task_struct *prev, struct task_struct *next,
				       bool preempt, struct cpu_stats *c, u64 now, bool runnable)
{
	struct thread_stats *s = stats_of(prev);
	u64 nvcsw, nivcsw, runtime, run_delay = 0, pcount = 0, switches, arrivals, slot, ts;
	u32 state;

	if (!s)
		return;
	/* __schedule() bumps prev->nvcsw or prev->nivcsw, and brings
	 * prev->se.sum_exec_runtime up to date, before it fires sched_switch
	 * (kernel/sched/core.c); sched_info's run_delay/pcount were updated when
	 * this slice began. */
	nvcsw = prev->nvcsw;
	nivcsw = prev->nivcsw;
	runtime = prev->se.sum_exec_runtime;
	if (!wait_from_wakeup) {
		run_delay = prev->sched_info.run_delay;
		pcount = prev->sched_info.pcount;
	}
	state = task_state(prev);

	s->seq++;
	barrier();
	if (!s->seen) {
		s->seen = 1;
		if (prev->start_time < attach_ns) {
			/* running since before we attached: this slice's length is
			 * unknown and stays out of the histograms; count from here */
			s->mark_runtime = runtime;
			s->mark_run_delay = run_delay;
			s->mark_pcount = pcount;
			s->nvcsw = nvcsw;
			s->nivcsw = nivcsw;
		}
		/* else: born after attach, every mark starts at zero */
	}
	/* switch-outs the kernel counted since the last one we saw: 1, unless
	 * some switches went untraced; then their time is spread evenly */
	switches = (nvcsw + nivcsw) - (s->nvcsw + s->nivcsw);
	if (switches) {
		slot = fine_slot(div_mostly_one(runtime - s->mark_runtime, switches));
		asm volatile("" : "+r"(slot));
		if (slot < HIST_SLOTS)
			s->slice_hist[slot] += switches;
	}
	ts = s->wait_ts;
	if (wait_from_wakeup) {
		/* the wait that ended at this slice's switch-in, if that
		 * switch-in was the last one traced on this CPU */
		if (c && c->in_task == (u64)prev) {
			if (ts && (ts & ~1ULL) <= c->in_ns)
				count_wait(s, c->in_ns - (ts & ~1ULL), 1, ts & 1);
		} else if (ts && c) {
			c->in_lost++;
		}
		/* a new wait begins now if the thread stays runnable; else
		 * its wakeup will stamp one */
		s->wait_ts = runnable ? (now & ~1ULL) : 0;
	} else {
		arrivals = pcount - s->mark_pcount;
		if (arrivals)
			count_wait(s, div_mostly_one(run_delay - s->mark_run_delay, arrivals),
				   arrivals, ts != 2);
		s->mark_run_delay = run_delay;
		s->mark_pcount = pcount;
		s->wait_ts = runnable ? 2 : 1;
	}
	why_switch_out(prev, next, s, nvcsw - s->nvcsw, nivcsw - s->nivcsw, state);
	s->mark_runtime = runtime;
	s->nvcsw = nvcsw;
	s->nivcsw = nivcsw;
	s->switch_outs++;
	if (dirty_sets) {
		/* a full barrier before mark_dirty loads the epoch */
		__sync_fetch_and_add(&s->seq, 1);
		/* a dead thread's record goes out through `exited` */
		if (!(state & TASK_DEAD))
			mark_dirty(prev, s);
	} else {
		barrier();
		s->seq++;
	}

	if (state & TASK_DEAD)
		save_exited(prev, s);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	u32 zero = 0, prev_tid;
	struct cpu_stats *c;
	bool runnable;
	u64 now = 0;

	if (bench_empty_probes)
		return 0;
	c = bpf_map_lookup_elem(&cpus, &zero);
	prev_tid = prev->pid;
	/* stays on the run queue: preempted, or switched out before it set
	 * itself to sleep (a task preempted while going to sleep keeps a
	 * non-zero state but is still queued when preempt is set) */
	runnable = preempt || task_state(prev) == TASK_RUNNING;
	if (c)
		c->switches++;
	/* one clock read, and only when something will use it: the switch-in
	 * of a thread, or the start of a preempted wait */
	if (wait_from_wakeup && (next->pid || (prev_tid && runnable)))
		now = bpf_ktime_get_ns();
	/* tid 0 is the per-CPU idle task: not a thread anyone runs */
	if (prev_tid)
		switch_out(prev, next, preempt, c, now, runnable);
	if (wait_from_wakeup && c) {
		c->in_task = next->pid ? (u64)next : 0;
		c->in_ns = now;
	}
	if (dirty_sets && c) {
		c->cur_tid = next->pid;
		c->cur_start = next->start_time;
	}
	return 0;
}

/* A wait after a wakeup starts here, unless one is pending already (a
 * wakeup of a queued, preempted thread does not restart its wait; one of a
 * thread still on its CPU leaves a stamp its own switch-out overwrites). A
 * thread with no record yet has not switched out since we attached: its
 * first wait is not counted, as its first slice is not. */
static __always_inline void stamp_wakeup(struct thread_stats *s)
{
	if (s && !s->wait_ts)
		s->wait_ts = bpf_ktime_get_ns() | 1;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(handle_wakeup, struct task_struct *p)
{
	if (bench_empty_probes)
		return 0;
	stamp_wakeup(stats_if_any(p));
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(handle_wakeup_new, struct task_struct *p)
{
	struct thread_stats *s;

	if (bench_empty_probes)
		return 0;
	s = stats_of(p);
	stamp_wakeup(s);
	/* wake_up_new_task() fires no sched_waking: the parent woke it */
	why_wakeup(ctx, p, s);
	return 0;
}

/* The waker's side of a wakeup: try_to_wake_up() fires sched_waking on the
 * waking CPU, in the waker's context (sched_wakeup may fire later on the
 * wakee's CPU, from an IPI, where current is not the waker). One each per
 * wakeup (5.10 .. 6.18). */
SEC("tp_btf/sched_waking")
int BPF_PROG(handle_waking, struct task_struct *p)
{
	struct thread_stats *s;

	if (bench_empty_probes || !count_wakers)
		return 0;
	s = stats_if_any(p);
	why_wakeup(ctx, p, s);
	/* its wakeups changed: a drain that reads only changed threads must
	 * read it, or the pairs just counted for it are dropped with the
	 * unread threads' (a woken thread waiting on a busy run queue has not
	 * switched out yet; seen on a loaded 6.18 host). why_wakeup's locked
	 * add is the barrier before mark_dirty loads the epoch. */
	if (dirty_sets && s)
		mark_dirty(p, s);
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(handle_migrate, struct task_struct *p, int dest_cpu)
{
	/* The tracepoint fires before set_task_cpu() changes task_cpu(p):
	 * the task's CPU now is the source. */
	u32 from = task_cpu_of(p), to = dest_cpu;
	struct thread_stats *s;
	u32 *from_node, *to_node;
	u64 *cell;
	u32 idx;

	if (p->pid == 0 || bench_empty_probes)
		return 0;
	why_migrate(p, from, to);
	/* The per-thread total is the kernel's own se.nr_migrations, read by
	 * the iterator. Only moves across nodes need the thread's storage, so
	 * a one-node machine never touches it here (this runs in softirq
	 * context too, where creating storage can fail while the interrupted
	 * code holds the storage lock). */
	from_node = bpf_map_lookup_elem(&cpu_node, &from);
	to_node = bpf_map_lookup_elem(&cpu_node, &to);
	if (from_node && to_node && *from_node != *to_node) {
		s = stats_of(p);
		if (s)
			__sync_fetch_and_add(&s->counters[CTR_CROSS_NODE_MIGRATIONS], 1);
	}
	if (from < nr_cpus && to < nr_cpus) {
		idx = from * nr_cpus + to;
		cell = bpf_map_lookup_elem(&migration_matrix, &idx);
		if (cell) {
			__sync_fetch_and_add(cell, 1);
			return 0;
		}
	}
	count_drop(1);
	return 0;
}

#include "report.bpf.h"

/* Queue length -> slot of cpu_stats.rq_hist: exact below RQ_LINEAR, then
 * log2 buckets. */
static __always_inline u32 rq_slot(u32 len)
{
	u32 slot;

	if (len < RQ_LINEAR)
		return len;
	slot = RQ_LINEAR + log2_u64(len) - 5;
	return slot < RQ_SLOTS ? slot : RQ_SLOTS - 1;
}

/* Tasks on the rq's fair queues that are not runnable: since 6.12 a fair
 * task that blocks with negative lag stays queued ("delayed dequeue") and
 * still counts in rq->nr_running. 6.14+ track the runnable ones
 * (h_nr_queued - h_nr_runnable); 6.12.y and 6.13 counted the delayed ones
 * (h_nr_delayed). User space does not attach the sampler on a
 * delayed-dequeue kernel that has neither (features below). */
static __always_inline u32 delayed_on(struct rq *rq)
{
	if (bpf_core_field_exists(rq->cfs.h_nr_runnable)) {
		u32 q = BPF_CORE_READ(rq, cfs.h_nr_queued);
		u32 r = BPF_CORE_READ(rq, cfs.h_nr_runnable);

		return q > r ? q - r : 0;
	}
	if (bpf_core_field_exists(((struct rq___delayed *)rq)->cfs.h_nr_delayed))
		return BPF_CORE_READ((struct rq___delayed *)rq, cfs.h_nr_delayed);
	return 0;
}

/* Timer-driven run-queue length sample (the runqlen method): unbiased in
 * time, unlike a sample taken at each switch.
 *
 * The per-CPU `runqueues` variable cannot be used as a ksym here: without
 * CONFIG_KALLSYMS_ALL the kernel has no address for it ("ldimm64 failed to
 * find the address for kernel symbol"). The interrupted task leads to it:
 * current->se.cfs_rq is a cfs_rq of this CPU (the idle task's is the root
 * one) and cfs_rq->rq is this CPU's rq (CONFIG_FAIR_GROUP_SCHED). */
SEC("perf_event")
int sample_runqueue(void *ctx)
{
	u32 zero = 0;
	struct cpu_stats *c = bpf_map_lookup_elem(&cpus, &zero);
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	struct rq *rq;
	u32 queued, delayed, len, slot;

	if (!c || !bpf_core_field_exists(((struct cfs_rq *)0)->rq))
		return 0;
	rq = BPF_CORE_READ(cur, se.cfs_rq, rq);
	if (!rq)
		return 0;
	queued = BPF_CORE_READ(rq, nr_running);
	delayed = delayed_on(rq);
	len = queued > delayed ? queued - delayed : 0;
	/* the running task is not waiting */
	if (BPF_CORE_READ(rq, curr) != BPF_CORE_READ(rq, idle) && len > 0)
		len--;

	slot = rq_slot(len);
	/* hide what the compiler knows, so it keeps the check the verifier needs */
	asm volatile("" : "+r"(slot));
	c->rq_samples++;
	c->rq_sum += len;
	if (slot < RQ_SLOTS)
		c->rq_hist[slot]++;
	return 0;
}

/* Run once by user space after load (BPF_PROG_TEST_RUN): what the kernel
 * offers, as this object's own CO-RE relocations resolved it. */
SEC("raw_tp")
int probe_features(struct bpf_raw_tracepoint_args *ctx)
{
	int f = 0;

	if (bpf_core_field_exists(((struct cfs_rq *)0)->rq))
		f |= FEAT_CFS_RQ_RQ;
	if (bpf_core_field_exists(((struct cfs_rq *)0)->h_nr_runnable))
		f |= FEAT_H_NR_RUNNABLE;
	if (bpf_core_field_exists(((struct cfs_rq___delayed *)0)->h_nr_delayed))
		f |= FEAT_H_NR_DELAYED;
	if (bpf_core_field_exists(((struct sched_entity *)0)->sched_delayed))
		f |= FEAT_SCHED_DELAYED;
	if (bpf_core_field_exists(((struct task_struct *)0)->__state))
		f |= FEAT_STATE_FIELD;
	return f;
}

/* Tests run the probe's own bucketing through BPF_PROG_TEST_RUN: args[0] is
 * the input, the return value the slot. Never attached. */
SEC("raw_tp")
int test_fine_slot(struct bpf_raw_tracepoint_args *ctx)
{
	return fine_slot(ctx->args[0]);
}

SEC("raw_tp")
int test_rq_slot(struct bpf_raw_tracepoint_args *ctx)
{
	return rq_slot(ctx->args[0]);
}
