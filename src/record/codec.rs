//! One `Sample` to bytes and back, as a key frame (on its own) or as a delta
//! on the Sample before it. Counters are cumulative, so a thread's values
//! change little between neighbouring Samples: the delta stores each field
//! as the difference from the same thread in the previous Sample, in
//! separate streams per kind of field (ids, flags, names, small counters,
//! nanosecond counters, histograms) so zstd sees like next to like.
//! Everything round-trips exactly: decode(encode(s, p), p) == s.
use crate::model::counters::Counters;
use crate::model::rates::ThreadMatcher;
use crate::model::row::no_name;

use super::codec_attrs::{get_attrs, put_attrs};
pub(super) use super::codec_budget::Budget;
pub use super::codec_budget::{decoded_size, thread_size, MAX_DECODED};
use super::codec_cgroups::{decode_cgroups, encode_cgroups, has_cgroups};
use super::codec_counters::{get_counters, get_old_cross_node, put_counters};
use super::codec_cpus::{decode_cpus, decode_migrations, encode_cpus, encode_migrations};
use super::codec_hist::{decode_hist, encode_hist, fine_hists};
pub(super) use super::codec_streams::STREAMS;
use super::codec_streams::{get_ns, put_ns, with_spare_streams, Streams};
use super::codec_system::{decode_system, encode_system};
use super::codec_why::{
    decode_outside, decode_wakers, decode_why, encode_outside, encode_wakers, encode_why,
    has_wakers, has_why, wakers_unknown,
};
use super::codec_zstd::compress_parts;
pub use super::codec_zstd::{compress, decompress};
use super::varint::{put_bytes, put_delta, put_u64, Cursor, DResult, DecodeError};
use crate::model::{
    Baseline, CgroupSample, Log2Hist, Name, Sample, ThreadAttrs, ThreadSample, Threads,
};

const MODE_KEY: u8 = 0;
const MODE_DELTA: u8 = 1;

// Thread flags. "differs" bits are only meaningful for a thread that has a
// reference in the previous Sample; without one every field is written.
const F_PID: u64 = 1;
const F_COMM: u64 = 1 << 1;
const F_PCOMM: u64 = 1 << 2;
const F_CPU: u64 = 1 << 3;
const F_START: u64 = 1 << 4;
const F_MIG: u64 = 1 << 5;
/// format 5 and older: cross-node migrations (small), read into their slot
const F_XNODE: u64 = 1 << 6;
const F_SLICE: u64 = 1 << 7;
const F_WAIT: u64 = 1 << 8;
const F_BASE: u64 = 1 << 9;
const F_BASE_WRITTEN: u64 = 1 << 10;
const F_EXITED: u64 = 1 << 11;
/// format 2: the thread's attributes follow in meta (codec_attrs.rs)
const F_ATTRS: u64 = 1 << 12;
/// format 4: the histograms hold four sub-buckets per octave (model/hist.rs);
/// without it they are per-octave counts (format 3 and older, or a
/// histogram that only ever knew octaves)
const F_FINE: u64 = 1 << 13;
/// format 4: the waits split by how they began (after a wakeup / after a
/// preemption), each a histogram after the combined one
const F_WAKE: u64 = 1 << 14;
const F_PREEMPT: u64 = 1 << 15;
/// format 5: the thread is its reference in the previous Sample, unchanged
/// (no other bit, nothing in the other streams): most of a big machine's
/// threads between two Samples
const F_SAME: u64 = 1 << 16;
/// format 6: counters known, changed slots in meta (codec_counters.rs)
const F_COUNTERS: u64 = 1 << 17;

/// Encode `cur`; a delta on `prev` when given, else a key frame.
pub fn encode(cur: &Sample, prev: Option<&Sample>) -> Vec<u8> {
    encode_split(cur, prev).0
}

/// `encode`, plus the offsets where each thread stream starts: `compress`
/// starts a new zstd block there, so each kind of field gets its own
/// entropy tables.
pub fn encode_split(cur: &Sample, prev: Option<&Sample>) -> (Vec<u8>, Vec<usize>) {
    with_spare_streams(|st| {
        let parts = encode_parts(st, cur, prev);
        let mut out = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
        let mut splits = Vec::with_capacity(parts.len());
        for p in parts {
            if !out.is_empty() {
                splits.push(out.len());
            }
            out.extend_from_slice(p);
        }
        (out, splits)
    })
}

/// `compress(encode_split(..))` without the encoded Sample in one piece:
/// the thread streams go to zstd from where they were written (a key
/// frame of 50,000 threads was 3.4 MB more at its peak, and a copy).
pub fn encode_compressed(cur: &Sample, prev: Option<&Sample>, level: i32) -> Vec<u8> {
    let z = with_spare_streams(|st| compress_parts(&encode_parts(st, cur, prev), level));
    // the ancestors beside the Sample (codec_ancestors.rs): read it with
    // decode_compressed
    super::codec_ancestors::with_ancestors(z, cur, prev)
}

/// The encoded Sample in its zstd blocks, in order: the head (through the
/// thread streams' lengths), the eight thread streams, then the cgroups
/// and the why figures where there are any.
fn encode_parts<'a>(st: &'a mut Streams, cur: &Sample, prev: Option<&Sample>) -> Vec<&'a [u8]> {
    // the head and tail in the spare streams' own (emptied) buffers
    let mut head = std::mem::take(&mut st.head);
    let mut tail = std::mem::take(&mut st.tail);
    head.push(if prev.is_some() { MODE_DELTA } else { MODE_KEY });
    let zero = Sample::default();
    let p = prev.unwrap_or(&zero);
    put_delta(&mut head, cur.time_ns, p.time_ns);
    put_delta(&mut head, cur.mono_ns, p.mono_ns);
    encode_system(&mut head, &cur.system, &p.system);
    encode_cpus(&mut head, &cur.cpus, &p.cpus);
    encode_migrations(&mut head, &cur.migrations, &p.migrations);
    fill_streams(st, &cur.threads, &p.threads);
    put_stream_lens(&mut head, cur.threads.len(), st);
    // the wakers come after the outside threads (then written if empty)
    let wakers = has_wakers(cur);
    let outside = !cur.outside.is_empty() || wakers;
    let why = has_why(cur) || outside;
    if has_cgroups(cur) || why {
        encode_cgroups(&mut tail.0, cur, p);
    }
    if why {
        encode_why(&mut tail.1, cur, p);
    }
    if outside {
        encode_outside(&mut tail.1, &cur.outside);
    }
    if wakers {
        encode_wakers(&mut tail.1, cur, p);
    }
    st.head = head;
    st.tail = tail;
    let mut parts = vec![&st.head[..]];
    parts.extend(st.all().map(|v| &v[..]));
    if has_cgroups(cur) || why {
        parts.push(&st.tail.0);
    }
    if why {
        parts.push(&st.tail.1);
    }
    parts
}

/// Decode what `encode` wrote; `prev` must be the Sample it was encoded on.
pub fn decode(raw: &[u8], prev: Option<&Sample>) -> DResult<Sample> {
    super::fuzz_tally::tally(super::fuzz_tally::Decoder::Sample, decode_sample(raw, prev))
}

fn decode_sample(raw: &[u8], prev: Option<&Sample>) -> DResult<Sample> {
    let mut c = Cursor::new(raw);
    let mut budget = Budget(MAX_DECODED);
    let zero = Sample::default();
    let p = match (c.u8()?, prev) {
        (MODE_KEY, _) => &zero,
        (MODE_DELTA, Some(p)) => p,
        (MODE_DELTA, None) => return Err(DecodeError("delta without the Sample it is based on")),
        _ => return Err(DecodeError("unknown Sample encoding")),
    };
    let time_ns = c.delta(p.time_ns)?;
    let mono_ns = c.delta(p.mono_ns)?;
    let system = decode_system(&mut c, &p.system)?;
    let cpus = decode_cpus(&mut c, &p.cpus, &mut budget)?;
    let migrations = decode_migrations(&mut c, &p.migrations, &mut budget)?;
    let threads = decode_threads(&mut c, &p.threads, &mut budget)?;
    let mut s = Sample {
        time_ns,
        mono_ns,
        threads: threads.into(),
        cpus,
        migrations,
        system,
        cgroups: Vec::new(),
        outside: Vec::new(),
        ancestors: Vec::new(),
    };
    // format 3: the cgroups follow the threads (older Samples end there)
    if !c.is_empty() {
        decode_cgroups(&mut c, &mut s, p)?;
        budget.items::<CgroupSample>(s.cgroups.len())?;
    }
    // format 4: the why figures follow the cgroups
    if !c.is_empty() {
        decode_why(&mut c, &mut s, p, &mut budget)?;
    }
    // format 5: the threads outside the thread list its preemptors name
    if !c.is_empty() {
        s.outside = decode_outside(&mut c, &mut budget)?;
    }
    // then the wakers (older Samples, and those whose source did not
    // count them, end before: unknown, not "woken by nobody")
    if !c.is_empty() {
        decode_wakers(&mut c, &mut s, p)?;
    } else {
        wakers_unknown(&mut s);
    }
    if !c.is_empty() {
        return Err(DecodeError("trailing bytes after Sample"));
    }
    Ok(s)
}

/// A Sample as `encode_compressed` wrote it, with its ancestors (a delta
/// without them has `prev`'s); `prev` as for `decode`.
pub fn decode_compressed(payload: &[u8], prev: Option<&Sample>) -> DResult<Sample> {
    let ancestors = super::codec_ancestors::ancestors_of(payload)?;
    let mut s = decode(&decompress(payload)?, prev)?;
    s.ancestors =
        ancestors.unwrap_or_else(|| prev.map(|p| p.ancestors.clone()).unwrap_or_default());
    Ok(s)
}

/// Whether the encoded Sample is a key frame.
pub fn is_key(raw: &[u8]) -> bool {
    raw.first() == Some(&MODE_KEY)
}

fn opt_delta(out: &mut Vec<u8>, cur: Option<u64>, r: Option<u64>) {
    if let Some(v) = cur {
        put_delta(out, v, r.unwrap_or(0));
    }
}

/// The thread list: its count and each stream's length into `out`, then
/// the streams.
pub(super) fn encode_threads(out: &mut Vec<u8>, threads: &[ThreadSample], prev: &Threads) {
    with_spare_streams(|s| {
        fill_streams(s, threads, prev);
        put_stream_lens(out, threads.len(), s);
        for st in s.all() {
            out.extend_from_slice(st);
        }
    })
}

fn put_stream_lens(out: &mut Vec<u8>, threads: usize, s: &Streams) {
    put_u64(out, threads as u64);
    for st in s.all() {
        put_u64(out, st.len() as u64);
    }
}

/// Every thread's fields into the streams, as a delta on `prev`'s thread
/// with the same (tid, start time) where there is one.
fn fill_streams(s: &mut Streams, threads: &[ThreadSample], prev: &Threads) {
    let mut matcher = ThreadMatcher::of(Some(prev));
    let mut last_tid = 0u64;
    let mut last_ref: i64 = -1;
    for t in threads {
        put_delta(&mut s.ids, t.tid.into(), last_tid);
        last_tid = t.tid.into();
        let ri = matcher.find(t.tid, t.start_time_ns);
        match ri {
            None => put_u64(&mut s.ids, 0),
            Some(i) => {
                let d = i as i64 - (last_ref + 1);
                put_u64(&mut s.ids, (((d << 1) ^ (d >> 63)) as u64) + 1);
                last_ref = i as i64;
            }
        }
        let r = ri.map(|i| &prev[i]);
        if r.is_some_and(|r| t.unchanged_from(r)) {
            put_u64(&mut s.flags, F_SAME);
            continue;
        }
        let mut f = 0u64;
        let differs = |c: bool| r.is_none() || c;
        if differs(r.is_some_and(|r| r.pid != t.pid)) {
            f |= F_PID;
        }
        if differs(r.is_some_and(|r| r.comm != t.comm)) {
            f |= F_COMM;
        }
        if differs(r.is_some_and(|r| r.process_comm != t.process_comm)) {
            f |= F_PCOMM;
        }
        if differs(r.is_some_and(|r| r.cpu != t.cpu)) {
            f |= F_CPU;
        }
        if differs(r.is_some_and(|r| r.start_time_ns != t.start_time_ns)) {
            f |= F_START;
        }
        if t.migrations.is_some() {
            f |= F_MIG;
        }
        if t.counters.is_known() {
            f |= F_COUNTERS;
        }
        if t.slice_hist.is_some() {
            f |= F_SLICE;
        }
        if t.wait_hist.is_some() {
            f |= F_WAIT;
        }
        if t.wakeup_wait_hist.is_some() {
            f |= F_WAKE;
        }
        if t.preempt_wait_hist.is_some() {
            f |= F_PREEMPT;
        }
        if fine_hists(t) {
            f |= F_FINE;
        }
        if t.baseline.is_some() {
            f |= F_BASE;
            if r.is_none_or(|r| r.baseline != t.baseline) {
                f |= F_BASE_WRITTEN;
            }
        }
        if t.exited {
            f |= F_EXITED;
        }
        if r.map_or(ThreadAttrs::default(), |r| r.attrs) != t.attrs {
            f |= F_ATTRS;
        }
        put_u64(&mut s.flags, f);
        if f & F_PID != 0 {
            put_u64(&mut s.meta, t.pid.into());
        }
        if f & F_CPU != 0 {
            put_u64(&mut s.meta, t.cpu.into());
        }
        if f & F_START != 0 {
            put_u64(&mut s.meta, t.start_time_ns);
        }
        if f & F_BASE_WRITTEN != 0 {
            if let Some(b) = &t.baseline {
                for v in [b.voluntary, b.involuntary, b.oncpu_ns, b.wait_ns] {
                    put_u64(&mut s.meta, v);
                }
            }
        }
        if f & F_ATTRS != 0 {
            put_attrs(&mut s.meta, &t.attrs);
        }
        if f & F_COUNTERS != 0 {
            put_counters(&mut s.meta, &t.counters, r.map(|r| &r.counters));
        }
        if f & F_COMM != 0 {
            put_bytes(&mut s.strs, t.comm.as_bytes());
        }
        if f & F_PCOMM != 0 {
            put_bytes(&mut s.strs, t.process_comm.as_bytes());
        }
        put_delta(&mut s.small, t.voluntary, r.map_or(0, |r| r.voluntary));
        put_delta(&mut s.small, t.involuntary, r.map_or(0, |r| r.involuntary));
        opt_delta(&mut s.small, t.migrations, r.and_then(|r| r.migrations));
        put_ns(s, t.oncpu_ns, r.map_or(0, |r| r.oncpu_ns));
        put_ns(s, t.wait_ns, r.map_or(0, |r| r.wait_ns));
        for (h, rh) in [
            (&t.slice_hist, r.and_then(|r| r.slice_hist.as_ref())),
            (&t.wait_hist, r.and_then(|r| r.wait_hist.as_ref())),
            (
                &t.wakeup_wait_hist,
                r.and_then(|r| r.wakeup_wait_hist.as_ref()),
            ),
            (
                &t.preempt_wait_hist,
                r.and_then(|r| r.preempt_wait_hist.as_ref()),
            ),
        ] {
            if let Some(h) = h {
                encode_hist(&mut s.hist, h, rh, f & F_FINE != 0);
            }
        }
    }
}

fn decode_threads(
    c: &mut Cursor,
    prev: &[ThreadSample],
    b: &mut Budget,
) -> DResult<Vec<ThreadSample>> {
    // every thread takes at least 2 id bytes and 1 flag byte (an unchanged
    // one nothing more; any other also 2 small, 2 ns and 4 ns_lo bytes)
    let n = c.count(3)?;
    let mut lens = [0usize; STREAMS];
    for l in lens.iter_mut() {
        *l = c.count(1)?;
    }
    // ... in its own stream each: the count is bounded by each stream's
    // length before anything is reserved for it
    let fits = [(0, 2), (1, 1)].iter().all(|&(s, min)| n <= lens[s] / min);
    if !fits {
        return Err(DecodeError("thread count larger than the data holding it"));
    }
    b.items::<ThreadSample>(n)?;
    let mut ids = Cursor::new(c.take(lens[0])?);
    let mut flags = Cursor::new(c.take(lens[1])?);
    let mut meta = Cursor::new(c.take(lens[2])?);
    let mut strs = Cursor::new(c.take(lens[3])?);
    let mut small = Cursor::new(c.take(lens[4])?);
    let mut ns = Cursor::new(c.take(lens[5])?);
    let mut ns_lo = Cursor::new(c.take(lens[6])?);
    let mut hist = Cursor::new(c.take(lens[7])?);
    let mut threads = Vec::with_capacity(n);
    let mut last_tid = 0u64;
    let mut last_ref: i64 = -1;
    let mut names = RecentNames::default();
    for _ in 0..n {
        last_tid = ids.delta(last_tid)?;
        let tid = u32::try_from(last_tid).map_err(|_| DecodeError("tid over 32 bits"))?;
        let code = ids.u64()?;
        let r = if code == 0 {
            None
        } else {
            let z = code - 1;
            let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
            let i = (last_ref + 1).wrapping_add(d);
            let t = usize::try_from(i)
                .ok()
                .and_then(|i| prev.get(i))
                .ok_or(DecodeError("thread refers past the previous Sample"))?;
            last_ref = i;
            Some(t)
        };
        let f = flags.u64()?;
        if f & F_SAME != 0 {
            let r = r
                .filter(|r| r.tid == tid && f == F_SAME)
                .ok_or(DecodeError("bad unchanged thread"))?;
            // names and histograms shared with the reference
            threads.push(ThreadSample {
                cgroup: None,
                why: None,
                ..r.clone()
            });
            continue;
        }
        let need = |bit: u64| r.is_none() || f & bit != 0;
        let pid = if need(F_PID) {
            meta.u32()?
        } else {
            r.map_or(0, |r| r.pid)
        };
        let cpu = if need(F_CPU) {
            meta.u32()?
        } else {
            r.map_or(0, |r| r.cpu)
        };
        let start_time_ns = if need(F_START) {
            meta.u64()?
        } else {
            r.map_or(0, |r| r.start_time_ns)
        };
        let baseline = if f & F_BASE == 0 {
            None
        } else if f & F_BASE_WRITTEN != 0 {
            Some(Box::new(Baseline {
                voluntary: meta.u64()?,
                involuntary: meta.u64()?,
                oncpu_ns: meta.u64()?,
                wait_ns: meta.u64()?,
            }))
        } else {
            Some(
                r.and_then(|r| r.baseline.clone())
                    .ok_or(DecodeError("baseline refers to a thread without one"))?,
            )
        };
        let attrs = if f & F_ATTRS != 0 {
            get_attrs(&mut meta)?
        } else {
            r.map_or(ThreadAttrs::default(), |r| r.attrs)
        };
        let mut counters = if f & F_COUNTERS != 0 {
            let start = r.map_or_else(Counters::zero, |r| r.counters.clone());
            get_counters(&mut meta, start, b)?
        } else {
            Counters::UNKNOWN
        };
        // an unchanged name is the previous frame's, shared; a written one
        // the same as the thread's before is shared with it
        let comm: Name = if need(F_COMM) {
            names.get(strs.str()?)
        } else {
            r.map_or_else(no_name, |r| r.comm.clone())
        };
        let process_comm: Name = if need(F_PCOMM) {
            names.get(strs.str()?)
        } else {
            r.map_or_else(no_name, |r| r.process_comm.clone())
        };
        b.take(comm.len() + process_comm.len())?;
        let voluntary = small.delta(r.map_or(0, |r| r.voluntary))?;
        let involuntary = small.delta(r.map_or(0, |r| r.involuntary))?;
        let migrations = if f & F_MIG != 0 {
            Some(small.delta(r.and_then(|r| r.migrations).unwrap_or(0))?)
        } else {
            None
        };
        if f & F_XNODE != 0 {
            get_old_cross_node(&mut small, r.map(|r| &r.counters), &mut counters, b)?;
        }
        let oncpu_ns = get_ns(&mut ns, &mut ns_lo, r.map_or(0, |r| r.oncpu_ns))?;
        let wait_ns = get_ns(&mut ns, &mut ns_lo, r.map_or(0, |r| r.wait_ns))?;
        let mut read_hist = |bit: u64, rh: Option<&Log2Hist>| -> DResult<Option<Log2Hist>> {
            if f & bit == 0 {
                return Ok(None);
            }
            decode_hist(&mut hist, rh, f & F_FINE != 0, b).map(Some)
        };
        let slice_hist = read_hist(F_SLICE, r.and_then(|r| r.slice_hist.as_ref()))?;
        let wait_hist = read_hist(F_WAIT, r.and_then(|r| r.wait_hist.as_ref()))?;
        let wakeup_wait_hist = read_hist(F_WAKE, r.and_then(|r| r.wakeup_wait_hist.as_ref()))?;
        let preempt_wait_hist = read_hist(F_PREEMPT, r.and_then(|r| r.preempt_wait_hist.as_ref()))?;
        threads.push(ThreadSample {
            tid,
            pid,
            comm,
            process_comm,
            cpu,
            start_time_ns,
            voluntary,
            involuntary,
            oncpu_ns,
            wait_ns,
            migrations,
            counters,
            slice_hist,
            wait_hist,
            wakeup_wait_hist,
            preempt_wait_hist,
            baseline,
            exited: f & F_EXITED != 0,
            attrs,
            cgroup: None,
            why: None,
        });
    }
    for st in [&ids, &flags, &meta, &strs, &small, &ns, &ns_lo, &hist] {
        if !st.is_empty() {
            return Err(DecodeError("trailing bytes in a thread stream"));
        }
    }
    Ok(threads)
}

/// The names a decode made last, the most recently used first: a
/// process's threads are written side by side, mostly named alike and all
/// with one process name, so a key frame's 100,000 names are a few hundred
/// distinct ones (and decoding allocated each twice).
#[derive(Default)]
struct RecentNames([Option<Name>; 4]);

impl RecentNames {
    fn get(&mut self, s: &str) -> Name {
        let hit = self.0.iter().position(|n| n.as_deref() == Some(s));
        let at = hit.unwrap_or(self.0.len() - 1);
        self.0[..=at].rotate_right(1);
        if hit.is_none() {
            self.0[0] = Some(s.into());
        }
        self.0[0].clone().unwrap_or_else(no_name)
    }
}

#[cfg(test)]
#[path = "codec_ancestors_tests.rs"]
mod ancestors_tests;
#[cfg(test)]
#[path = "codec_tests.rs"]
mod tests;
