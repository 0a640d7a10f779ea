/* Types shared by the BPF program and user space (through the skeleton's
 * generated `types` module). Every counter here is cumulative: user space
 * derives rates from two drains, so a missed drain costs nothing but one rate.
 */
#ifndef SCHEDTOP_H
#define SCHEDTOP_H

/* log2 buckets in microseconds, like bpftrace's hist():
 * slot 0 = [0], slot 1 = [1], slot k = [2^(k-1), 2^k) for k >= 1,
 * the last slot also takes everything longer (2^26 us is about 67 s). */
#define HIST_SLOTS 28

/* Run-queue length histogram: exact for 0..RQ_LINEAR-1, then log2 buckets. */
#define RQ_LINEAR 32
#define RQ_SLOTS 44

#define TASK_COMM_LEN 16

struct thread_key {
	u32 tid;
	u32 pad;
	/* task->start_time disambiguates a reused tid: a new thread gets a new key. */
	u64 start_time;
};

/* Per-thread state, kept in task-local storage (no hash lookup on the hot
 * path) and read out once an interval by the task iterator; a thread's last
 * copy goes to the `exited` hash map when it dies.
 *
 * Slice and wait lengths are not timed by the probe: they are differences of
 * the kernel's own per-task accounting between two switch-outs of the thread
 * (se.sum_exec_runtime: on-CPU time; sched_info.run_delay / pcount: run-queue
 * wait and arrivals on a CPU), so they stay exact even when a switch-in is
 * not traced, and the probe needs no clock read for them. */
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
	/* counted by the migrate probe */
	u64 cross_node_migrations;
	/* switch-outs this probe saw */
	u64 switch_outs;
	/* the kernel's accounting at the thread's last switch-out */
	u64 mark_runtime;
	u64 mark_run_delay;
	u64 mark_pcount;
	u32 last_cpu;
	/* 1 once the thread went through its final switch (TASK_DEAD) */
	u32 exited;
	/* 0: switch-out bookkeeping not started (marks not set yet) */
	u32 seen;
	/* odd while a switch updates the counters: readers retry, so a copy
	 * never has a switch counted in nvcsw but not yet in slice_hist */
	u32 seq;
	u32 slice_hist[HIST_SLOTS];
	u32 wait_hist[HIST_SLOTS];
	/* the nice value (static_prio - 120), filled by the iterator */
	s32 nice;
};

struct cpu_stats {
	u64 switches;
	/* run-queue length sampler (perf_event, timer driven) */
	u64 rq_samples;
	u64 rq_sum;
	u64 rq_hist[RQ_SLOTS];
};

/* Counted, never silent: updates that could not be stored. */
struct drop_stats {
	/* exited threads whose final counts did not fit the exited map */
	u64 thread_map_full;
	u64 migration_matrix_overflow;
	/* task storage could not be had (allocation failure or recursion) */
	u64 storage_unavailable;
};

#endif
