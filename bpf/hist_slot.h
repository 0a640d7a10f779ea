/* Histogram slot arithmetic of the probe, without a division (BPF has no
 * cheap one). Included by schedtop.bpf.c; tests/bpf_buckets.rs runs this very
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
 * For 2^l <= ns < 2^(l+1) the octave is l-8 or l-9, because 1000 lies
 * between 2^9 and 2^10. The last slot is open (2^26 us * 1.75 and up). */
static __always_inline u32 fine_slot(u64 ns)
{
	u64 base, q;
	u32 o;

	if (ns < 1000)
		return (ns >= 250) + (ns >= 500) + (ns >= 750);
	o = log2_u64(ns) - 8;
	/* ns >= 2^37 is past the last octave (1000 << 27 > 2^36); this also
	 * keeps the shift below from overflowing */
	if (o > HIST_OCTAVES)
		return HIST_SLOTS - 1;
	base = 1000ULL << (o - 1);
	if (ns < base) {
		o--;
		base >>= 1;
	}
	if (o > HIST_OCTAVES - 1)
		return HIST_SLOTS - 1;
	q = base >> 2;
	return o * 4 + (ns >= base + q) + (ns >= base + 2 * q) + (ns >= base + 3 * q);
}

#endif
