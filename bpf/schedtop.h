/* Types shared by the BPF program and user space (through the skeleton's
 * generated `types` module). Every counter here is cumulative: user space
 * derives rates from two drains, so a missed drain costs nothing but one rate.
 */
#ifndef SCHEDTOP_H
#define SCHEDTOP_H

/* Octaves of microseconds, like bpftrace's hist(): octave 0 = [0],
 * octave k = [2^(k-1), 2^k) us for k >= 1 (2^26 us is about 67 s). Each
 * octave is cut in four sub-buckets (hist_slot.h): HIST_SLOTS slots, the last
 * one also takes everything longer. */
#define HIST_OCTAVES 28
#define HIST_SLOTS (HIST_OCTAVES * 4)

/* Run-queue length histogram: exact for 0..RQ_LINEAR-1, then log2 buckets. */
#define RQ_LINEAR 32
#define RQ_SLOTS 44

#define TASK_COMM_LEN 16

/* Migration causes (why.bpf.h), in this order in thread_stats.mig_cause */
#define MIG_WAKEUP 0
#define MIG_LOAD_BALANCE 1
#define MIG_NUMA 2
#define MIG_AFFINITY 3
#define MIG_OTHER 4
#define MIG_CAUSES 5

/* What a voluntary switch-out blocked on (why.bpf.h), in this order in
 * thread_stats.blocked_on */
#define BLK_FUTEX 0
#define BLK_SLEEP 1
#define BLK_POLL 2
#define BLK_PIPE 3
#define BLK_SOCKET 4
#define BLK_DISK_IO 5
#define BLK_PAGE_FAULT 6
#define BLK_CHILD 7
#define BLK_OTHER 8
#define BLOCK_REASONS 9
/* syscall_reason[] value of the read/write family: the fd's type decides */
#define BLK_BY_FD 15
/* syscall_reason[] size: syscall numbers at or above it are "other" */
#define SYSCALL_SLOTS 512

/* Per-thread counters that user space handles generically: slot N here is
 * the counter whose descriptor says slot N (model/counters.rs), which gives
 * its name, unit, aggregation and every output. A new counter takes a free
 * slot and a descriptor; no codec, interval or exporter code. */
/* time interrupts took while this thread was on a CPU (charged to the
 * interrupted thread): hardirq, then softirq by vector (HI_SOFTIRQ = 0 ..
 * RCU_SOFTIRQ = 9, the kernel's numbering) */
#define CTR_STOLEN_HARDIRQ_NS 0
#define CTR_STOLEN_SOFTIRQ_NS 1
#define SOFTIRQ_VECTORS 10
/* migrations to a CPU of another NUMA node (the migrate probe) */
#define CTR_CROSS_NODE_MIGRATIONS 11
#define THREAD_COUNTERS 16

/* One pair list (why.bpf.h count_pair) serves every "who did this to
 * whom" count: the kind says which list a pair belongs to. */
#define PAIR_PREEMPT 0	/* (victim, the thread that ran next when it was preempted) */
#define PAIR_WAKE 1	/* (wakee, waker) */
#define PAIR_KINDS 2

/* Reserved "other" ids of PAIR_WAKE: wakeups from interrupt context are not
 * charged to the interrupted thread (tids stay below 2^22). */
#define WAKER_HARDIRQ 0xffffff00u
#define WAKER_SOFTIRQ_TIMER 0xffffff01u
#define WAKER_SOFTIRQ_NET 0xffffff02u
#define WAKER_SOFTIRQ_BLOCK 0xffffff03u
#define WAKER_SOFTIRQ_OTHER 0xffffff04u
#define WAKER_IDLE 0xffffff05u

/* Wakers counted in the wakee's own record (why.bpf.h why_wakeup): the
 * first ones a thread meets keep a slot for its life; the pair map takes
 * only the wakeups of others. */
#define WAKER_SLOTS 4

struct pair_key {
	u32 subject;
	u32 other;
	u32 kind;
	/* why.bpf.h pair_gen as the probe read it: the drain takes only the
	 * generations before the current one */
	u32 gen;
};

struct thread_key {
	u32 tid;
	u32 pad;
	/* task->start_time disambiguates a reused tid: a new thread gets a new key. */
	u64 start_time;
};

/* Per-thread state, kept in task-local storage (no hash lookup on the hot
 * path; 5.11+) or, where the kernel has no task storage for tracing programs
 * (5.10), in a preallocated hash map keyed by tid. Read out once an interval
 * by the task iterator; a thread's last copy goes to the `exited` hash map
 * when it dies.
 *
 * Slice lengths are differences of the kernel's own per-task accounting
 * between two switch-outs of the thread (se.sum_exec_runtime: CPU time per
 * slice), so they stay exact even when a switch-in is not traced.
 *
 * Run-queue waits are timed from the moment the thread became runnable
 * (sched_wakeup / sched_wakeup_new, or a switch-out that left it runnable)
 * to its switch-in, with bpf_ktime_get_ns(): runqlat's definition. The
 * kernel's sched_info.run_delay reads exactly 0 when the wakeup preempted
 * the CPU's current task (the switch skips its rq clock update), so it is
 * only the cheaper mode (wait_from_wakeup = 0). */
struct thread_stats {
	u32 tid;
	u32 pid;
	char comm[TASK_COMM_LEN];
	/* the process (thread group leader) name, filled by the iterator */
	char process_comm[TASK_COMM_LEN];
	u64 start_time;
	/* The kernel's own counters (task_struct.nvcsw / nivcsw) as of the
	 * thread's last switch-out: exactly what /proc/<tid>/status reports,
	 * and consistent with the histograms below. */
	u64 nvcsw;
	u64 nivcsw;
	/* se.sum_exec_runtime and sched_info.run_delay: filled by the iterator
	 * (live) and at exit, not by the switch probe */
	u64 oncpu_ns;
	u64 wait_ns;
	/* se.nr_migrations: filled by the iterator and at exit */
	u64 migrations;
	/* switch-outs this probe saw */
	u64 switch_outs;
	/* the kernel's accounting at the thread's last switch-out */
	u64 mark_runtime;
	/* run_delay mode only */
	u64 mark_run_delay;
	u64 mark_pcount;
	/* when the pending wait began (ktime ns), the kind in bit 0: 1 = after
	 * a wakeup, 0 = preempted (switched out runnable); 0 = no wait pending.
	 * run_delay mode: 1 or 2, the kind of the wait the next switch-out
	 * accounts (as the previous switch-out left the thread). */
	u64 wait_ts;
	u32 last_cpu;
	/* 1 once the thread went through its final switch (TASK_DEAD) */
	u32 exited;
	/* 0: switch-out bookkeeping not started (marks not set yet) */
	u32 seen;
	/* odd while a switch updates the counters: a reader's copy is good
	 * only if seq was even and unchanged around it, so a copy never has a
	 * switch counted in nvcsw but not yet in slice_hist */
	u32 seq;
	/* iterator output only: no stable copy could be had (the counters in
	 * this record are not valid; user space keeps the last good ones) */
	u32 torn;
	/* dirty.bpf.h: the epoch (+ 1) whose dirty set holds this thread */
	u32 queued_epoch;
	/* u32 to keep the record in a 2 KiB allocation: one slot wraps after
	 * 2^32 events (about 6 h at 200,000 switches/s all in that slot);
	 * user space counts a slot that went down as an anomaly and adds
	 * nothing for that interval */
	u32 slice_hist[HIST_SLOTS];
	/* run-queue waits that began at a wakeup / at a preemption; the
	 * combined wait histogram is their sum (user space) */
	u32 wakeup_wait_hist[HIST_SLOTS];
	u32 preempt_wait_hist[HIST_SLOTS];
	/* the nice value (static_prio - 120), filled by the iterator */
	s32 nice;
	/* dirty.bpf.h: seq as of the last copy the dirty-set reader emitted
	 * (written by the reader only) */
	u32 read_seq;
	/* the kernfs id of the thread's cgroup that holds its CPU quota (v1:
	 * the cpu controller's hierarchy; v2: the default one), filled by the
	 * iterator; 0 where unknown */
	u64 cgroup_id;
	/* why.bpf.h: cumulative counts since the probes attached (or since
	 * the thread began, if later) */
	u64 mig_cause[MIG_CAUSES];
	u64 blocked_on[BLOCK_REASONS];
	/* the fd of the last blocking read/write and its class + 1 (0: none) */
	s64 last_fd;
	u32 last_fd_class;
	/* a sched_move_numa / sched_swap_numa for this thread fired: its next
	 * migration is NUMA balancing */
	u32 numa_pending;
	/* iterator output only: the thread was on a CPU (last_cpu) as it was
	 * read. A thread that has run since before the probes attached, and
	 * never switched out, is known to the dirty-set reader only by this. */
	u32 on_cpu;
	/* the iterator's: task->policy (SCHED_*), task->rt_priority (0-99)
	 * and task->nr_cpus_allowed, in what was padding */
	u8 policy;
	u8 rt_priority;
	u16 nr_cpus_allowed;
	/* the generic counters above (CTR_*): cumulative since the probes
	 * attached (or the thread began, if later) */
	u64 counters[THREAD_COUNTERS];
	/* why.bpf.h: wakeups counted (cumulative), in the waker slots below
	 * or the PAIR_WAKE list, so user space can check that they account
	 * for every one */
	u64 wakeups;
	/* why.bpf.h: the first WAKER_SLOTS distinct wakers of this thread (0:
	 * a free slot) and their cumulative counts. A slot's waker never
	 * changes, so user space takes each interval's share as the
	 * difference of two reads (collect/waker_slots.rs). */
	u32 waker_id[WAKER_SLOTS];
	u64 waker_count[WAKER_SLOTS];
	/* the iterator's: task->real_parent->tgid, the parent process (a
	 * thread's is its process's: CLONE_THREAD copies real_parent) */
	u32 ppid;
};

/* What the running kernel offers, as the program's own CO-RE relocations see
 * it: the bits returned by the probe_features program. */
#define FEAT_CFS_RQ_RQ (1 << 0)      /* cfs_rq->rq (CONFIG_FAIR_GROUP_SCHED) */
#define FEAT_H_NR_RUNNABLE (1 << 1)  /* cfs_rq.h_nr_runnable (6.14+) */
#define FEAT_H_NR_DELAYED (1 << 2)   /* cfs_rq.h_nr_delayed (6.12.y, 6.13) */
#define FEAT_SCHED_DELAYED (1 << 3)  /* sched_entity.sched_delayed: delayed dequeue (6.12+) */
#define FEAT_STATE_FIELD (1 << 4)    /* task_struct.__state (5.14+), else .state */

struct cpu_stats {
	u64 switches;
	/* run-queue length sampler (perf_event, timer driven) */
	u64 rq_samples;
	u64 rq_sum;
	u64 rq_hist[RQ_SLOTS];
	/* the last switch-in traced here (task pointer, 0 for idle) and its
	 * ktime: accounted at that task's next switch-out, where its record is
	 * already at hand (no second lookup per switch) */
	u64 in_task;
	u64 in_ns;
	/* switch-outs of a thread with a pending wait whose switch-in was not
	 * the last one traced on this CPU: that wait is not counted */
	u64 in_lost;
	/* the thread switched in last here (dirty sets on): user space adds
	 * it to the set it reads, so a thread that runs on without switching
	 * out still shows its CPU time (while switches is 0 here, the thread
	 * the last full pass found on this CPU, thread_stats.on_cpu) */
	u64 cur_tid;
	u64 cur_start;
	/* irq_time.bpf.h (SCHEDTOP_IRQ_TIME=1): interrupt time on this CPU, whoever was
	 * interrupted (the idle task too), cumulative ns */
	u64 irq_ns;
	u64 softirq_ns[SOFTIRQ_VECTORS];
	/* irq_time.bpf.h's clock: the current stretch began at irq_stamp, in a
	 * hardirq (irq_hard) or softirq vector irq_soft - 1, interrupting
	 * irq_task. irq_soft is kept for the wakers too (why.bpf.h), with or
	 * without the clock. */
	u64 irq_stamp;
	u64 irq_task;
	u32 irq_hard;
	u32 irq_soft;
};

/* Counted, never silent: updates that could not be stored. */
struct drop_stats {
	/* exited threads whose final counts did not fit the exited map */
	u64 thread_map_full;
	u64 migration_matrix_overflow;
	/* task storage could not be had (allocation failure or recursion),
	 * or the tid-keyed fallback map was full */
	u64 storage_unavailable;
	/* involuntary switch-outs whose (victim, preemptor) pair did not fit
	 * the pair_counts map */
	u64 preempt_pairs_full;
	/* switch-outs that could not queue their thread in a dirty set (the
	 * next drain read every task instead) */
	u64 dirty_full;
	/* wakeups whose (wakee, waker) pair did not fit the pair_counts map */
	u64 wake_pairs_full;
};

#endif
