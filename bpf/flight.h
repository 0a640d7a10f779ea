/* The flight recorder's event record, shared by bpf/flight.bpf.c and user
 * space (src/collect/flight.rs, through the skeleton's `types` module).
 * One record per scheduler event, shipped through a BPF ring buffer. */
#ifndef SCHEDTOP_FLIGHT_H
#define SCHEDTOP_FLIGHT_H

#define FLIGHT_COMM_LEN 16

enum flight_kind {
	FLIGHT_SWITCH = 1,
	FLIGHT_WAKEUP = 2,
	FLIGHT_WAKEUP_NEW = 3,
	FLIGHT_MIGRATE = 4,
};

struct flight_event {
	/* CLOCK_BOOTTIME ns (bpf_ktime_get_boot_ns): Perfetto's default
	 * trace clock, so ftrace events need no clock conversion */
	u64 ts;
	u32 kind;
	/* the CPU the event fired on */
	u32 cpu;
	/* the task running on that CPU (ftrace's common_pid) */
	u32 common_pid;
	/* switch: prev; wakeup(_new), migrate: the task concerned */
	s32 pid;
	s32 tgid;
	s32 prio;
	/* switch only */
	s32 next_pid;
	s32 next_tgid;
	s32 next_prio;
	/* switch: prev's raw __state and exit_state, and the preempt flag;
	 * user space derives ftrace's prev_state from them */
	u32 prev_state;
	u32 exit_state;
	u32 preempt;
	/* wakeup: the CPU it will run on; migrate: the destination */
	u32 target_cpu;
	/* migrate: the source */
	u32 orig_cpu;
	char comm[FLIGHT_COMM_LEN];
	char next_comm[FLIGHT_COMM_LEN];
};

#endif
