/* Histogram slot arithmetic of the probe, with a multiply where a division
 * would do. Included by schedtop.bpf.c; tests/live/bpf_buckets.rs runs this very
 * code in the kernel (BPF_PROG_TEST_RUN on test_fine_slot) against the plain
 * definition in src/model/hist.rs. */
#ifndef SCHEDTOP_HIST_SLOT_H
#define SCHEDTOP_HIST_SLOT_H

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

/* Slot of a duration in ns: four sub-buckets per bpftrace hist() octave of
 * whole microseconds. Octave o (0 = below 1 us, o >= 1 = [2^(o-1), 2^o) us)
 * holds slots 4o..4o+3, so slot >> 2 is exactly bpftrace's bucket of ns/1000.
 * - below 1 us: quarters of a microsecond (0, 250, 500, 750 ns);
 * - octave [base, 2 base), base = 1000 << (o-1) ns: cut at base + j q,
 *   q = base / 4 = 250 << (o-1), exact because 1000 is divisible by 4.
 *   (The bits below the top bit of ns would not do: octave edges are
 *   multiples of 1000 ns, not powers of two, so the fold-back would not be
 *   exact.)
 * Every edge is a whole number of 250 ns units, so the slot of ns is that
 * of u = ns / 250 (rounded down): u itself below 4 (below 1 us), else, with
 * l = log2(u), octave l - 1 and quarter (u >> (l - 2)) - 4, i.e. slot
 * 4 l - 8 + (u >> (l - 2)). The last slot is open (2^26 us * 1.75 and up).
 * It runs twice per switch: ~45 BPF instructions fewer each than comparing
 * ns with the octave's edges (handle_switch: 824 -> 732 instructions). */
static __always_inline u64 fine_slot(u64 ns)
{
	u64 u, l;

	/* ns / 250 = (ns / 2) / 125 as a multiply: m = ceil(2^32 / 125) is
	 * 79 / 2^32 too large, which stays below one unit for ns / 2 < 2^32 /
	 * 79; longer spans (67 ms and up, rare) take a division */
	if (ns < (1ULL << 26))
		u = ((ns >> 1) * 34359739ULL) >> 32;
	else
		u = ns / 250;
	if (u < 4)
		return u;
	l = log2_u64(u);
	u = 4 * l - 8 + (u >> (l - 2));
	return u < HIST_SLOTS ? u : HIST_SLOTS - 1;
}

#endif
