// SPDX-License-Identifier: GPL-2.0
/* schedtop's flight recorder: every sched_switch, sched_wakeup(_new) and
 * sched_migrate_task as a raw record in a BPF ring buffer, for
 * `schedtop trace` (a Perfetto trace). Separate from schedtop.bpf.c, which
 * aggregates in the kernel and never ships single events. */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "flight.h"

char LICENSE[] SEC("license") = "GPL";

/* 8 MiB by default; user space may resize it before load (a power of two
 * number of pages). Fixed size: a slow reader loses events, counted below,
 * never memory. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/* Set by user space before load: record only events of this process's
 * threads (a switch counts if either side belongs to it); 0 = everything. */
const volatile u32 filter_tgid = 0;

/* Never written: makes struct flight_event part of the object's BTF, so the
 * skeleton generates the matching Rust type. */
struct flight_event flight_event_layout = {};

/* records that did not fit in the ring buffer, per CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} dropped SEC(".maps");

static __always_inline void count_drop(void)
{
	u32 zero = 0;
	u64 *d = bpf_map_lookup_elem(&dropped, &zero);

	if (d)
		(*d)++;
}

/* No wakeup per record (that would cost an irq_work per event, or a ring
 * buffer query to decide): user space drains on a 20 ms timer; 8 MiB hold
 * ~80k records of 104 bytes, 20 ms of ~4M events/s. */
#define SUBMIT_FLAGS BPF_RB_NO_WAKEUP

/* tp_btf arguments are trusted BTF pointers: fields are read with plain
 * (CO-RE relocated) loads, no bpf_probe_read_kernel() call per field. This
 * runs on every context switch, so that matters. */
static __always_inline u32 task_cpu_of(struct task_struct *t)
{
	if (bpf_core_field_exists(t->cpu))
		return t->cpu;
	return t->thread_info.cpu;
}

static __always_inline u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return (u32)((struct task_struct___pre514 *)t)->state;
}

static __always_inline struct flight_event *reserve(u32 kind)
{
	struct flight_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count_drop();
		return 0;
	}
	e->ts = bpf_ktime_get_boot_ns();
	e->kind = kind;
	e->cpu = bpf_get_smp_processor_id();
	e->common_pid = (u32)bpf_get_current_pid_tgid();
	return e;
}

static __always_inline void fill_task(struct flight_event *e, struct task_struct *p)
{
	e->pid = p->pid;
	e->tgid = p->tgid;
	e->prio = p->prio;
	__builtin_memcpy(e->comm, p->comm, sizeof(e->comm));
}

static __always_inline bool wanted(struct task_struct *p)
{
	return !filter_tgid || (u32)p->tgid == filter_tgid;
}

static __always_inline void on_wakeup(struct task_struct *p, u32 kind)
{
	struct flight_event *e;

	if (!wanted(p))
		return;
	e = reserve(kind);
	if (!e)
		return;
	fill_task(e, p);
	e->next_pid = 0;
	e->next_tgid = 0;
	e->next_prio = 0;
	e->prev_state = 0;
	e->exit_state = 0;
	e->preempt = 0;
	e->target_cpu = task_cpu_of(p);
	e->orig_cpu = 0;
	__builtin_memset(e->next_comm, 0, sizeof(e->next_comm));
	bpf_ringbuf_submit(e, SUBMIT_FLAGS);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(flight_wakeup, struct task_struct *p)
{
	on_wakeup(p, FLIGHT_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(flight_wakeup_new, struct task_struct *p)
{
	on_wakeup(p, FLIGHT_WAKEUP_NEW);
	return 0;
}

static __always_inline void on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, u32 prev_state)
{
	struct flight_event *e;

	if (!wanted(prev) && !wanted(next))
		return;
	e = reserve(FLIGHT_SWITCH);
	if (!e)
		return;
	fill_task(e, prev);
	e->next_pid = next->pid;
	e->next_tgid = next->tgid;
	e->next_prio = next->prio;
	__builtin_memcpy(e->next_comm, next->comm, sizeof(e->next_comm));
	e->prev_state = prev_state;
	e->exit_state = prev->exit_state;
	e->preempt = preempt;
	e->target_cpu = 0;
	e->orig_cpu = 0;
	bpf_ringbuf_submit(e, SUBMIT_FLAGS);
}

/* Before 5.18 sched_switch has no prev_state argument: the state
 * __schedule() decided on is read from prev->__state (or ->state before
 * 5.14). A wakeup racing with the block can have set it back to running by
 * then, which is why 5.18 added the argument. User space loads one of the
 * two programs. */
SEC("tp_btf/sched_switch")
int BPF_PROG(flight_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(preempt, prev, next, task_state(prev));
	return 0;
}

/* 5.18+: the state as __schedule() saw it when it decided to switch. */
SEC("tp_btf/sched_switch")
int BPF_PROG(flight_switch_state, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	on_switch(preempt, prev, next, prev_state);
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(flight_migrate, struct task_struct *p, int dest_cpu)
{
	struct flight_event *e;

	if (!wanted(p))
		return 0;
	e = reserve(FLIGHT_MIGRATE);
	if (!e)
		return 0;
	fill_task(e, p);
	e->next_pid = 0;
	e->next_tgid = 0;
	e->next_prio = 0;
	e->prev_state = 0;
	e->exit_state = 0;
	e->preempt = 0;
	/* fires before set_task_cpu(): task_cpu(p) is still the source */
	e->orig_cpu = task_cpu_of(p);
	e->target_cpu = dest_cpu;
	__builtin_memset(e->next_comm, 0, sizeof(e->next_comm));
	bpf_ringbuf_submit(e, SUBMIT_FLAGS);
	return 0;
}
