/* Dirty sets: which threads' records changed since user space last read
 * them, so a drain reads those threads instead of walking every task
 * (docs/design/scale.md §1). Included by schedtop.bpf.c.
 *
 * Protocol. A drain with epoch e (dirty_epoch) reads the set of epoch e-1
 * again for stragglers and empties it, sets the epoch to e+1 (new inserts
 * go to the set just emptied), then reads the set of epoch e. The probe
 * updates a record, closes its seq with a locked add (a full barrier on
 * x86, also on 5.10's BPF_XADD) and only then loads the epoch: either it
 * saw the old epoch and the key is (or goes) into the set read next, or it
 * saw the new one and inserts for the next drain. A failed insert sets
 * dirty_lost and the next drain reads every task instead. The ordering
 * argument is for x86 (TSO plus locked RMW); arm64 would need the fetch
 * form of the atomic (5.12+). */

/* 1: the switch probe marks threads in the sets (set by user space on
 * kernels whose reader can look a thread up by tid: 6.2+) */
const volatile u32 dirty_sets = 0;

/* The current epoch: written by user space through the mmapped .bss. */
u32 dirty_epoch = 0;
/* 1 once an insert failed since user space last cleared it */
u32 dirty_lost = 0;

/* tid -> start_time (a reused tid is told apart by the reader); sized by
 * user space, one entry when the sets are off */
struct dirty_set {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
};
struct dirty_set dirty0 SEC(".maps");
struct dirty_set dirty1 SEC(".maps");

/* After the switch-out's update of s (seq closed): queue t once per epoch. */
static __always_inline void mark_dirty(struct task_struct *t, struct thread_stats *s)
{
	u32 e = *(volatile u32 *)&dirty_epoch;
	u32 tid = t->pid;
	u64 start = t->start_time;
	long err;

	/* queued_epoch holds epoch + 1, so a fresh (zeroed) record is never
	 * taken for queued */
	if (s->queued_epoch == e + 1)
		return;
	if (e & 1)
		err = bpf_map_update_elem(&dirty1, &tid, &start, BPF_ANY);
	else
		err = bpf_map_update_elem(&dirty0, &tid, &start, BPF_ANY);
	if (err) {
		/* full (-E2BIG) or a bucket lock held by what we interrupted
		 * (-EBUSY): left unqueued, so the next switch-out retries */
		dirty_lost = 1;
		count_drop(3);
		return;
	}
	s->queued_epoch = e + 1;
}
