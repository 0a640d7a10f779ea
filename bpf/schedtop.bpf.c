// SPDX-License-Identifier: GPL-2.0
/* schedtop's probes: per-thread switch, slice, run-queue wait and migration
 * counters aggregated in the kernel; user space drains them once an interval. */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "schedtop.h"

char LICENSE[] SEC("license") = "GPL";

#define TASK_RUNNING 0x0000
#define TASK_DEAD 0x0080

/* Set by user space before load. */
const volatile u32 nr_cpus = 1;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct thread_key);
	__type(value, struct thread_stats);
} threads SEC(".maps");

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

static __always_inline u32 log2_u64(u64 v)
{
	u32 r = 0;
	/* unrolled binary search; the verifier likes bounded code */
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

/* bpftrace hist() bucket of a duration in ns, counted in microseconds */
static __always_inline u32 hist_slot(u64 ns)
{
	u64 us = ns / 1000;
	u32 slot;

	if (us == 0)
		return 0;
	slot = log2_u64(us) + 1;
	return slot < HIST_SLOTS ? slot : HIST_SLOTS - 1;
}

static __always_inline u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return (u32)BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

static __always_inline u32 task_cpu_of(struct task_struct *t)
{
	if (bpf_core_field_exists(t->cpu))
		return BPF_CORE_READ(t, cpu);
	return BPF_CORE_READ(t, thread_info.cpu);
}

static __always_inline void count_drop_thread(void)
{
	u32 zero = 0;
	struct drop_stats *d = bpf_map_lookup_elem(&drops, &zero);

	if (d)
		__sync_fetch_and_add(&d->thread_map_full, 1);
}

/* The entry of a thread, created on first sight with the kernel's switch
 * counters as baseline. Creating it is only exact while the task is not
 * running (wakeup, switch-in); see the switch-out handler for the rest. */
static __always_inline struct thread_stats *stats_of(struct task_struct *t, struct thread_key *key)
{
	struct thread_stats *s, fresh = {};

	key->tid = BPF_CORE_READ(t, pid);
	key->pad = 0;
	key->start_time = BPF_CORE_READ(t, start_time);
	s = bpf_map_lookup_elem(&threads, key);
	if (s)
		return s;

	fresh.tid = key->tid;
	fresh.pid = BPF_CORE_READ(t, tgid);
	BPF_CORE_READ_STR_INTO(&fresh.comm, t, comm);
	fresh.nvcsw = BPF_CORE_READ(t, nvcsw);
	fresh.nivcsw = BPF_CORE_READ(t, nivcsw);
	fresh.base_nvcsw = fresh.nvcsw;
	fresh.base_nivcsw = fresh.nivcsw;
	fresh.last_cpu = task_cpu_of(t);
	if (bpf_map_update_elem(&threads, key, &fresh, BPF_NOEXIST) && !bpf_map_lookup_elem(&threads, key)) {
		count_drop_thread();
		return 0;
	}
	return bpf_map_lookup_elem(&threads, key);
}

static __always_inline void on_wakeup(struct task_struct *p)
{
	struct thread_key key;
	struct thread_stats *s;

	if (BPF_CORE_READ(p, pid) == 0)
		return;
	s = stats_of(p, &key);
	if (s && !s->runnable_since)
		s->runnable_since = bpf_ktime_get_ns();
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(handle_wakeup, struct task_struct *p)
{
	on_wakeup(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(handle_wakeup_new, struct task_struct *p)
{
	on_wakeup(p);
	return 0;
}

static __always_inline void switch_out(struct task_struct *prev, u64 now, bool preempt)
{
	struct thread_key key;
	struct thread_stats *s;
	u32 state = task_state(prev);
	u64 nvcsw, nivcsw;

	s = stats_of(prev, &key);
	if (!s)
		return;

	/* __schedule() bumps prev->nvcsw or prev->nivcsw before it fires
	 * sched_switch (kernel/sched/core.c), so these are final for this switch. */
	nvcsw = BPF_CORE_READ(prev, nvcsw);
	nivcsw = BPF_CORE_READ(prev, nivcsw);
	if (s->switch_outs == 0 && s->base_nvcsw == nvcsw && s->base_nivcsw == nivcsw) {
		/* First seen while running: the baseline was read after this
		 * switch was counted. Undo it with the kernel's own rule
		 * (not preempted and not runnable = voluntary). */
		if (!preempt && state != TASK_RUNNING && s->base_nvcsw)
			s->base_nvcsw--;
		else if (s->base_nivcsw)
			s->base_nivcsw--;
	}
	s->nvcsw = nvcsw;
	s->nivcsw = nivcsw;
	s->switch_outs++;

	if (s->oncpu_since) {
		u64 slice = now - s->oncpu_since;
		u32 slot = hist_slot(slice);

		s->oncpu_ns += slice;
		if (slot < HIST_SLOTS)
			s->slice_hist[slot]++;
		s->oncpu_since = 0;
	}
	/* else: running since before we attached, slice length unknown; it
	 * stays out of the histogram (user space sees switch_outs > sum). */

	if (state == TASK_RUNNING) {
		/* preempted (or woken by a pending signal): still runnable,
		 * its run-queue wait starts now */
		s->runnable_since = now;
	}
	if (state & TASK_DEAD)
		s->exited = 1;
}

static __always_inline void switch_in(struct task_struct *next, u64 now, u32 cpu)
{
	struct thread_key key;
	struct thread_stats *s;

	s = stats_of(next, &key);
	if (!s)
		return;
	if (s->runnable_since) {
		u64 wait = now - s->runnable_since;
		u32 slot = hist_slot(wait);

		s->wait_ns += wait;
		if (slot < HIST_SLOTS)
			s->wait_hist[slot]++;
		s->runnable_since = 0;
	}
	s->oncpu_since = now;
	s->last_cpu = cpu;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	u64 now = bpf_ktime_get_ns();
	u32 zero = 0, cpu = bpf_get_smp_processor_id();
	struct cpu_stats *c = bpf_map_lookup_elem(&cpus, &zero);
	u32 prev_tid = BPF_CORE_READ(prev, pid);
	u32 next_tid = BPF_CORE_READ(next, pid);

	if (c) {
		c->switches++;
		if (!c->curr_is_idle && c->curr_since)
			c->busy_ns += now - c->curr_since;
		c->curr_since = now;
		c->curr_tid = next_tid;
		c->curr_is_idle = next_tid == 0;
	}
	/* tid 0 is the per-CPU idle task: not a thread anyone runs */
	if (prev_tid)
		switch_out(prev, now, preempt);
	if (next_tid)
		switch_in(next, now, cpu);
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(handle_migrate, struct task_struct *p, int dest_cpu)
{
	/* The tracepoint fires before set_task_cpu() changes task_cpu(p):
	 * the task's CPU now is the source. */
	u32 from = task_cpu_of(p), to = dest_cpu;
	struct thread_key key;
	struct thread_stats *s;
	u32 *from_node, *to_node;
	u64 *cell;
	u32 idx;

	if (BPF_CORE_READ(p, pid) == 0)
		return 0;
	s = stats_of(p, &key);
	from_node = bpf_map_lookup_elem(&cpu_node, &from);
	to_node = bpf_map_lookup_elem(&cpu_node, &to);
	if (s) {
		__sync_fetch_and_add(&s->migrations, 1);
		if (from_node && to_node && *from_node != *to_node)
			__sync_fetch_and_add(&s->cross_node_migrations, 1);
	}
	if (from < nr_cpus && to < nr_cpus) {
		idx = from * nr_cpus + to;
		cell = bpf_map_lookup_elem(&migration_matrix, &idx);
		if (cell) {
			__sync_fetch_and_add(cell, 1);
			return 0;
		}
	}
	{
		struct drop_stats *d = bpf_map_lookup_elem(&drops, &(u32){0});

		if (d)
			__sync_fetch_and_add(&d->migration_matrix_overflow, 1);
	}
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
	u32 queued, delayed = 0, len, slot;

	if (!c || !bpf_core_field_exists(((struct cfs_rq *)0)->rq))
		return 0;
	rq = BPF_CORE_READ(cur, se.cfs_rq, rq);
	if (!rq)
		return 0;
	queued = BPF_CORE_READ(rq, nr_running);
	/* Since 6.12 a fair task that blocks with negative lag stays queued
	 * ("delayed dequeue") and still counts in rq->nr_running; it is not
	 * runnable. cfs.h_nr_queued - cfs.h_nr_runnable is that number on
	 * kernels that track it (6.14+). */
	if (bpf_core_field_exists(rq->cfs.h_nr_runnable)) {
		u32 q = BPF_CORE_READ(rq, cfs.h_nr_queued);
		u32 r = BPF_CORE_READ(rq, cfs.h_nr_runnable);

		if (q > r)
			delayed = q - r;
	}
	len = queued > delayed ? queued - delayed : 0;
	/* the running task is not waiting */
	if (BPF_CORE_READ(rq, curr) != BPF_CORE_READ(rq, idle) && len > 0)
		len--;

	if (len < RQ_LINEAR)
		slot = len;
	else {
		slot = RQ_LINEAR + log2_u64(len) - 5;
		if (slot >= RQ_SLOTS)
			slot = RQ_SLOTS - 1;
	}
	c->rq_samples++;
	c->rq_sum += len;
	if (slot < RQ_SLOTS)
		c->rq_hist[slot]++;
	return 0;
}
