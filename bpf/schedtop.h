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

struct thread_stats {
	u32 tid;
	u32 pid;
	char comm[TASK_COMM_LEN];
	/* The kernel's own counters (task_struct.nvcsw / nivcsw), copied at each
	 * switch: exactly what /proc/<tid>/status reports. */
	u64 nvcsw;
	u64 nivcsw;
	/* Their values when schedtop first saw the thread, so the switches of
	 * its first interval are known too. */
	u64 base_nvcsw;
	u64 base_nivcsw;
	u64 oncpu_ns;
	u64 wait_ns;
	u64 migrations;
	u64 cross_node_migrations;
	u64 switch_outs;
	/* bookkeeping: when the current slice / the current wait started (0 = none) */
	u64 oncpu_since;
	u64 runnable_since;
	u32 last_cpu;
	/* 1 once the thread went through its final switch (TASK_DEAD): no more
	 * updates will come, user space reports it once and deletes it. */
	u32 exited;
	u32 slice_hist[HIST_SLOTS];
	u32 wait_hist[HIST_SLOTS];
};

struct cpu_stats {
	u64 switches;
	u64 busy_ns;
	/* what runs now, so user space can add the slice in progress */
	u64 curr_since;
	u32 curr_tid;
	u32 curr_is_idle;
	/* run-queue length sampler (perf_event, timer driven) */
	u64 rq_samples;
	u64 rq_sum;
	u64 rq_hist[RQ_SLOTS];
};

/* Counted, never silent: updates that could not be stored. */
struct drop_stats {
	u64 thread_map_full;
	u64 migration_matrix_overflow;
};

#endif
