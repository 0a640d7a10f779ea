/* What the drains read: one record per thread, by the task iterator (every
 * task: the first drain, a census, or after a dirty set overflowed) or by
 * the dirty-set reader (only the threads dirty.bpf.h queued). Included by
 * schedtop.bpf.c. */

/* clang expands __builtin_memcpy/memset for BPF only up to a size (1 KiB at
 * 8-byte alignment); the record is larger, so it goes in constant chunks. */
#define CHUNK 512
#define PIECE(off) (sizeof(struct thread_stats) - (off) < CHUNK ? sizeof(struct thread_stats) - (off) : CHUNK)
_Static_assert(sizeof(struct thread_stats) <= 4 * CHUNK, "thread_stats: add a chunk");
#define EACH_CHUNK(op)                                                       \
	do {                                                                 \
		op(0);                                                       \
		barrier(); /* or LLVM merges the pieces again */             \
		if (sizeof(struct thread_stats) > CHUNK) op(CHUNK);          \
		barrier();                                                   \
		if (sizeof(struct thread_stats) > 2 * CHUNK) op(2 * CHUNK);  \
		barrier();                                                   \
		if (sizeof(struct thread_stats) > 3 * CHUNK) op(3 * CHUNK);  \
	} while (0)

static __always_inline void copy_stats(struct thread_stats *dst, struct thread_stats *src)
{
#define COPY(off) __builtin_memcpy((char *)dst + (off), (char *)src + (off), PIECE(off))
	EACH_CHUNK(COPY);
#undef COPY
}

static __always_inline void zero_stats(struct thread_stats *dst)
{
#define ZERO(off) __builtin_memset((char *)dst + (off), 0, PIECE(off))
	EACH_CHUNK(ZERO);
#undef ZERO
}

/* Copy `live` into `dst` if no switch-out updated it meanwhile: seq even
 * before, and the same after. */
static __always_inline bool copy_stable(struct thread_stats *dst, struct thread_stats *live)
{
	u32 gen = *(volatile u32 *)&live->seq;

	if (gen & 1)
		return false;
	barrier();
	copy_stats(dst, live);
	barrier();
	return *(volatile u32 *)&live->seq == gen;
}

/* A few attempts, unrolled (6.1's verifier rejects this loop's back-edge):
 * the thread may be switching out on another CPU right now, and a hot
 * thread's copy left torn loses the interval's preemptor pairs. */
static __always_inline bool copy_stable_tries(struct thread_stats *dst, struct thread_stats *live)
{
	return copy_stable(dst, live) || copy_stable(dst, live) || copy_stable(dst, live) ||
	       copy_stable(dst, live);
}

/* 1: the cpu controller is on a v1 hierarchy (set by user space) */
const volatile u32 cgroup_v1_cpu = 0;

/* The id of the cgroup whose CPU quota applies to t: on v1 the cpu
 * controller's cgroup, else the default (v2) hierarchy's. Iterator only. */
static __always_inline u64 task_cgroup_id(struct task_struct *t)
{
	struct cgroup_subsys_state *css;
	struct css_set *cset = BPF_CORE_READ(t, cgroups);
	int idx;

	if (!cset)
		return 0;
	if (!cgroup_v1_cpu)
		return BPF_CORE_READ(cset, dfl_cgrp, kn, id);
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, cpu_cgrp_id))
		return 0; /* no CONFIG_CGROUP_SCHED */
	idx = bpf_core_enum_value(enum cgroup_subsys_id, cpu_cgrp_id);
	if (idx < 0 || idx >= CGROUP_SUBSYS_SLOTS)
		return 0;
	if (bpf_core_read(&css, sizeof(css), &cset->subsys[idx]) || !css)
		return 0;
	return BPF_CORE_READ(css, cgroup, kn, id);
}

/* The live fields (the kernel's, read now) and identity of t, into s. */
static __always_inline void fill_live(struct thread_stats *s, struct task_struct *t)
{
	if (!s->seen) {
		s->nvcsw = t->nvcsw;
		s->nivcsw = t->nivcsw;
	}
	read_task_now(s, t);
	/* NICE_TO_PRIO(nice) = 120 + nice; prio itself moves with PI boosts */
	s->nice = t->static_prio - 120;
	s->policy = t->policy;
	s->rt_priority = t->rt_priority;
	/* cpuset and sched_setaffinity both narrow it; 65535 caps a box
	 * with more CPUs than that (none yet) */
	s->nr_cpus_allowed = t->nr_cpus_allowed > 65535 ? 65535 : t->nr_cpus_allowed;
	s->cgroup_id = task_cgroup_id(t);
	s->on_cpu = t->on_cpu;
	s->ppid = BPF_CORE_READ(t, real_parent, tgid);
}

/* One record per thread for user space. Threads the probes never saw
 * (asleep all along) are listed too, with their kernel counters, so the
 * list is every thread, like top's. */
SEC("iter/task")
int dump_threads(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *t = ctx->task;
	struct thread_stats *live, *s;
	u32 zero = 0;

	if (!t)
		return 0;
	s = bpf_map_lookup_elem(&iter_scratch, &zero);
	if (!s)
		return 0;
	live = stats_if_any(t);
	/* A zombie group leader stays listed until its process is reaped; its
	 * exited record went out already: never report it as live again. */
	if (t->exit_state && (!live || live->exited))
		return 0;
	if (live) {
		/* if no copy is stable the record says so and user space
		 * keeps the thread's last good counts */
		if (copy_stable_tries(s, live))
			s->torn = 0;
		else
			s->torn = 1;
		if (!use_task_storage && s->start_time != t->start_time)
			s->torn = 1; /* the entry was reused under us */
	} else {
		zero_stats(s);
	}
	fill_live(s, t);
	bpf_seq_write(seq, s, sizeof(*s));
	return 0;
}

/* 6.2+ (the loader checks vmlinux BTF and leaves dump_dirty unloaded
 * without them) */
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

/* The thread of one dirty-set entry, if its record changed since this
 * reader last emitted it, or it has run since its last switch-out (it is
 * on a CPU now: user space queued it). A torn copy is neither emitted nor
 * marked read: the switch-out under way queues the thread again. */
static __always_inline void report_dirty(struct seq_file *seq, struct task_struct *t)
{
	struct thread_stats *live, *s;
	u32 zero = 0;

	s = bpf_map_lookup_elem(&iter_scratch, &zero);
	if (!s)
		return;
	live = bpf_task_storage_get(&thread_store, t, 0, 0);
	if (t->exit_state && (!live || live->exited))
		return;
	if (live) {
		if (!copy_stable_tries(s, live))
			return;
		if (s->seq == s->read_seq && t->se.sum_exec_runtime == s->mark_runtime)
			return;
		s->torn = 0;
	} else {
		zero_stats(s);
	}
	fill_live(s, t);
	/* Marked read only once it is out: a record that does not fit the
	 * iterator's buffer is dropped, and the kernel shows this element
	 * again at the next read() (which would then skip it). */
	if (!bpf_seq_write(seq, s, sizeof(*s)) && live)
		live->read_seq = s->seq;
}

SEC("iter/bpf_map_elem")
int dump_dirty(struct bpf_iter__bpf_map_elem *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	u32 *tid = ctx->key;
	u64 *start = ctx->value;
	struct task_struct *t;

	if (!tid || !start || !bpf_ksym_exists(bpf_task_from_pid))
		return 0;
	t = bpf_task_from_pid(*tid);
	if (!t)
		return 0;
	/* a reused tid: the old thread's final record came through `exited` */
	if (t->start_time == *start)
		report_dirty(seq, t);
	bpf_task_release(t);
	return 0;
}
