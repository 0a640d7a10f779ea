/* Minimal kernel type definitions for CO-RE.
 *
 * Only the fields schedtop reads are declared. preserve_access_index makes
 * clang emit relocations, and libbpf rewrites every offset against the
 * running kernel's BTF at load time, so no kernel headers (and no generated
 * vmlinux.h) are needed to build or to run. Field names are checked on load:
 * a field missing on the running kernel fails the load with a clear message
 * unless guarded by bpf_core_field_exists().
 */
#ifndef SCHEDTOP_KERNEL_TYPES_H
#define SCHEDTOP_KERNEL_TYPES_H

typedef unsigned char __u8;
typedef short unsigned int __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long int __s64;
typedef long long unsigned int __u64;
typedef __u8 u8;
typedef __u16 u16;
typedef __s32 s32;
typedef __u32 u32;
typedef __s64 s64;
typedef __u64 u64;
typedef _Bool bool;
typedef int pid_t;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

#define true 1
#define false 0

enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_RINGBUF = 27,
	BPF_MAP_TYPE_TASK_STORAGE = 29,
};

enum {
	BPF_LOCAL_STORAGE_GET_F_CREATE = 1,
};

/* bpf_ringbuf_submit() flags and bpf_ringbuf_query() selectors */
enum {
	BPF_RB_NO_WAKEUP = 1,
	BPF_RB_FORCE_WAKEUP = 2,
	BPF_RB_AVAIL_DATA = 0,
	BPF_RB_RING_SIZE = 1,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
	BPF_F_NO_PREALLOC = 1,
};

struct thread_info {
	u32 cpu;
} __attribute__((preserve_access_index));

struct cfs_rq;

struct sched_entity {
	struct cfs_rq *cfs_rq;
	/* 6.12+: the entity stays queued after it blocked (delayed dequeue) */
	unsigned char sched_delayed;
	u64 sum_exec_runtime;
	/* bumped by set_task_cpu(), where sched_migrate_task fires */
	u64 nr_migrations;
} __attribute__((preserve_access_index));

/* CONFIG_SCHED_INFO: what /proc/<pid>/schedstat shows */
struct sched_info {
	unsigned long pcount;
	unsigned long long run_delay;
} __attribute__((preserve_access_index));

/* cgroups: a task's css_set names its cgroup in every hierarchy */
struct kernfs_node {
	u64 id; /* 5.5+: the cgroup directory's inode number on 64-bit */
} __attribute__((preserve_access_index));

struct cgroup {
	struct kernfs_node *kn;
} __attribute__((preserve_access_index));

struct cgroup_subsys_state {
	struct cgroup *cgroup;
} __attribute__((preserve_access_index));

/* only the enumerator's name matters: its value comes from the kernel */
enum cgroup_subsys_id {
	cpu_cgrp_id = 1,
};

#define CGROUP_SUBSYS_SLOTS 16

struct css_set {
	struct cgroup_subsys_state *subsys[CGROUP_SUBSYS_SLOTS];
	struct cgroup *dfl_cgrp;
} __attribute__((preserve_access_index));

/* why.bpf.h: affinity, the open files, the saved user registers */
struct cpumask {
	unsigned long bits[16];
} __attribute__((preserve_access_index));
struct inode {
	unsigned short i_mode;
} __attribute__((preserve_access_index));
struct file {
	struct inode *f_inode;
} __attribute__((preserve_access_index));
struct fdtable {
	unsigned int max_fds;
	struct file **fd;
} __attribute__((preserve_access_index));
struct files_struct {
	struct fdtable *fdt;
} __attribute__((preserve_access_index));
/* x86-64's saved user registers (arch/x86/include/asm/ptrace.h) */
struct pt_regs {
	unsigned long ax;
	unsigned long di;
	unsigned long orig_ax;
	unsigned long cs;
} __attribute__((preserve_access_index));
/* only the enumerator's name matters: does the kernel have the helper */
enum bpf_func_id {
	BPF_FUNC_get_current_task_btf = 158,
	BPF_FUNC_task_pt_regs = 175,
};

struct task_struct {
	struct thread_info thread_info;
	/* 2 = TASK_ON_RQ_MIGRATING: taken off a queue to be moved */
	int on_rq;
	/* 1 from the switch that puts it on a CPU until it is off (SMP) */
	int on_cpu;
	unsigned int flags;
	void *stack;
	struct cpumask cpus_mask;
	struct files_struct *files;
	/* set by io_schedule_prepare() */
	unsigned int in_iowait:1;
	struct sched_entity se;
	struct sched_info sched_info;
	unsigned int __state;
	unsigned int cpu;
	pid_t pid;
	pid_t tgid;
	int prio;
	int static_prio;
	unsigned int rt_priority;
	unsigned int policy;
	int nr_cpus_allowed;
	int exit_state;
	unsigned long nvcsw;
	unsigned long nivcsw;
	u64 start_time;
	char comm[16];
	struct task_struct *group_leader;
	struct task_struct *real_parent;
	struct css_set *cgroups;
} __attribute__((preserve_access_index));

/* Before 5.14 the state field was called "state" (and was a long). */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

struct rq;

/* rq is only there with CONFIG_FAIR_GROUP_SCHED */
struct cfs_rq {
	unsigned int h_nr_queued;
	unsigned int h_nr_runnable;
	struct rq *rq;
} __attribute__((preserve_access_index));

struct rq {
	unsigned int nr_running;
	struct cfs_rq cfs;
	struct task_struct *curr;
	struct task_struct *idle;
} __attribute__((preserve_access_index));

/* 6.12.y and 6.13 counted delayed-dequeue entities in h_nr_delayed; 6.14
 * replaced it with h_nr_runnable (and renamed h_nr_running h_nr_queued). */
struct cfs_rq___delayed {
	unsigned int h_nr_delayed;
} __attribute__((preserve_access_index));

struct rq___delayed {
	struct cfs_rq___delayed cfs;
} __attribute__((preserve_access_index));

/* what a raw_tp program gets; BPF_PROG_TEST_RUN fills args from user space */
struct bpf_raw_tracepoint_args {
	u64 args[0];
};

struct bpf_perf_event_data;

/* BPF task iterator context (kernel/bpf/task_iter.c) */
struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
	u64 session_id;
	u64 seq_num;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} __attribute__((preserve_access_index));

/* BPF map element iterator context (kernel/bpf/map_iter.c, 5.9+) */
struct bpf_map;

struct bpf_iter__bpf_map_elem {
	struct bpf_iter_meta *meta;
	struct bpf_map *map;
	void *key;
	void *value;
} __attribute__((preserve_access_index));

#endif
