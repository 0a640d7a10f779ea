//! One `Sample` to bytes and back, as a key frame (on its own) or as a delta
//! on the Sample before it. Counters are cumulative, so a thread's values
//! change little between neighbouring Samples: the delta stores each field
//! as the difference from the same thread in the previous Sample, in
//! separate streams per kind of field (ids, flags, names, small counters,
//! nanosecond counters, histograms) so zstd sees like next to like.
//! Everything round-trips exactly: decode(encode(s, p), p) == s.
use std::collections::HashMap;
use std::io::Read;

use super::format::MAX_RAW;
use super::varint::{put_bytes, put_delta, put_u64, Cursor, DResult, DecodeError};
use crate::model::{
    Baseline, CpuSample, Log2Hist, Losses, MigrationCount, RqSample, Sample, SystemSample,
    ThreadSample,
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
const F_XNODE: u64 = 1 << 6;
const F_SLICE: u64 = 1 << 7;
const F_WAIT: u64 = 1 << 8;
const F_BASE: u64 = 1 << 9;
const F_BASE_WRITTEN: u64 = 1 << 10;
const F_EXITED: u64 = 1 << 11;

/// Longest histogram accepted (Log2Hist has 28 slots, run-queue ones ~60).
const MAX_HIST: usize = 4096;
/// Slots up to this many are written sparsely (bitmap of changed slots).
const SPARSE_HIST: usize = 64;

const STREAMS: usize = 8;

#[derive(Default)]
struct Streams {
    ids: Vec<u8>,
    flags: Vec<u8>,
    meta: Vec<u8>,
    strs: Vec<u8>,
    small: Vec<u8>,
    /// nanosecond deltas (zigzag) above their low 16 bits, as varints
    ns: Vec<u8>,
    /// their low 16 bits, 2 bytes each: near-random, kept apart so they do
    /// not spoil the statistics of the compressible part
    ns_lo: Vec<u8>,
    hist: Vec<u8>,
}

impl Streams {
    fn all(&self) -> [&Vec<u8>; STREAMS] {
        [
            &self.ids,
            &self.flags,
            &self.meta,
            &self.strs,
            &self.small,
            &self.ns,
            &self.ns_lo,
            &self.hist,
        ]
    }
}

/// Encode `cur`; a delta on `prev` when given, else a key frame.
pub fn encode(cur: &Sample, prev: Option<&Sample>) -> Vec<u8> {
    encode_split(cur, prev).0
}

/// `encode`, plus the offsets where each thread stream starts: `compress`
/// starts a new zstd block there, so each kind of field gets its own
/// entropy tables.
pub fn encode_split(cur: &Sample, prev: Option<&Sample>) -> (Vec<u8>, Vec<usize>) {
    let mut out = Vec::with_capacity(64 + cur.threads.len() * 48);
    out.push(if prev.is_some() { MODE_DELTA } else { MODE_KEY });
    let zero = Sample::default();
    let p = prev.unwrap_or(&zero);
    put_delta(&mut out, cur.time_ns, p.time_ns);
    put_delta(&mut out, cur.mono_ns, p.mono_ns);
    encode_system(&mut out, &cur.system, &p.system);
    encode_cpus(&mut out, &cur.cpus, &p.cpus);
    encode_migrations(&mut out, &cur.migrations, &p.migrations);
    let splits = encode_threads(&mut out, &cur.threads, &p.threads);
    (out, splits)
}

/// Decode what `encode` wrote; `prev` must be the Sample it was encoded on.
pub fn decode(raw: &[u8], prev: Option<&Sample>) -> DResult<Sample> {
    let mut c = Cursor::new(raw);
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
    let cpus = decode_cpus(&mut c, &p.cpus)?;
    let migrations = decode_migrations(&mut c, &p.migrations)?;
    let threads = decode_threads(&mut c, &p.threads)?;
    if !c.is_empty() {
        return Err(DecodeError("trailing bytes after Sample"));
    }
    Ok(Sample {
        time_ns,
        mono_ns,
        threads,
        cpus,
        migrations,
        system,
    })
}

/// Whether the encoded Sample is a key frame.
pub fn is_key(raw: &[u8]) -> bool {
    raw.first() == Some(&MODE_KEY)
}

/// zstd-compress an encoded Sample: uncompressed length, then one zstd
/// frame, with a block boundary at each of `splits`.
pub fn compress(raw: &[u8], splits: &[usize], level: i32) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() / 4 + 16);
    put_u64(&mut out, raw.len() as u64);
    let z = compress_blocks(raw, splits, level).unwrap_or_else(|_| {
        // compressing from memory fails only for lack of memory
        zstd::bulk::compress(raw, level).unwrap_or_default()
    });
    out.extend_from_slice(&z);
    out
}

fn compress_blocks(raw: &[u8], splits: &[usize], level: i32) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut enc = zstd::stream::write::Encoder::new(Vec::with_capacity(raw.len() / 4), level)?;
    enc.include_contentsize(true)?;
    enc.set_pledged_src_size(Some(raw.len() as u64))?;
    let mut start = 0;
    for &end in splits.iter().chain([raw.len()].iter()) {
        let end = end.clamp(start, raw.len());
        enc.write_all(&raw[start..end])?;
        enc.flush()?; // ends the block
        start = end;
    }
    enc.finish()
}

/// Inverse of `compress`, never allocating more than the declared length,
/// which is itself capped (MAX_RAW), nor a zstd window over 8 MiB.
pub fn decompress(payload: &[u8]) -> DResult<Vec<u8>> {
    let mut c = Cursor::new(payload);
    let n = c.u64()?;
    if n > MAX_RAW as u64 {
        return Err(DecodeError("declared Sample size over the limit"));
    }
    let n = n as usize;
    let z = c.take(c.remaining())?;
    let mut dec = zstd::stream::read::Decoder::with_buffer(z)
        .map_err(|_| DecodeError("zstd decoder failed to start"))?;
    dec.window_log_max(23)
        .map_err(|_| DecodeError("zstd decoder failed to start"))?;
    // grows with what really decompresses, up to n (+1 to detect overrun)
    let mut raw = Vec::with_capacity(n.min(1 << 20));
    dec.take(n as u64 + 1)
        .read_to_end(&mut raw)
        .map_err(|_| DecodeError("zstd data damaged"))?;
    if raw.len() != n {
        return Err(DecodeError(
            "decompressed size differs from the declared size",
        ));
    }
    Ok(raw)
}

fn encode_system(out: &mut Vec<u8>, s: &SystemSample, p: &SystemSample) {
    put_delta(out, s.context_switches, p.context_switches);
    put_u64(out, s.procs_running.into());
    put_u64(out, s.procs_blocked.into());
    for l in s.load {
        out.extend_from_slice(&l.to_bits().to_le_bytes());
    }
    put_delta(out, s.losses.thread_map_full, p.losses.thread_map_full);
    put_delta(
        out,
        s.losses.migration_matrix_overflow,
        p.losses.migration_matrix_overflow,
    );
}

fn decode_system(c: &mut Cursor, p: &SystemSample) -> DResult<SystemSample> {
    let context_switches = c.delta(p.context_switches)?;
    let procs_running = c.u32()?;
    let procs_blocked = c.u32()?;
    let load = [c.f64()?, c.f64()?, c.f64()?];
    let thread_map_full = c.delta(p.losses.thread_map_full)?;
    let migration_matrix_overflow = c.delta(p.losses.migration_matrix_overflow)?;
    Ok(SystemSample {
        context_switches,
        procs_running,
        procs_blocked,
        load,
        // torn_reads and exits_untraced are not in the format yet
        losses: Losses {
            thread_map_full,
            migration_matrix_overflow,
            ..Losses::default()
        },
    })
}

fn encode_counts(out: &mut Vec<u8>, cur: &[u64], refv: Option<&[u64]>) {
    let r = |i: usize| refv.and_then(|r| r.get(i)).copied().unwrap_or(0);
    put_u64(out, cur.len() as u64);
    if cur.len() <= SPARSE_HIST {
        let mut map = 0u64;
        for (i, &v) in cur.iter().enumerate() {
            if v != r(i) {
                map |= 1 << i;
            }
        }
        put_u64(out, map);
        for (i, &v) in cur.iter().enumerate() {
            if map & (1 << i) != 0 {
                put_delta(out, v, r(i));
            }
        }
    } else {
        for (i, &v) in cur.iter().enumerate() {
            put_delta(out, v, r(i));
        }
    }
}

fn decode_counts(c: &mut Cursor, refv: Option<&[u64]>) -> DResult<Vec<u64>> {
    let r = |i: usize| refv.and_then(|r| r.get(i)).copied().unwrap_or(0);
    let n = c.u64()?;
    if n > MAX_HIST as u64 {
        return Err(DecodeError("histogram longer than the limit"));
    }
    let n = n as usize;
    let mut v = Vec::with_capacity(n);
    if n <= SPARSE_HIST {
        let map = c.u64()?;
        if n < 64 && map >> n != 0 {
            return Err(DecodeError("histogram bitmap past its length"));
        }
        for i in 0..n {
            v.push(if map & (1 << i) != 0 {
                c.delta(r(i))?
            } else {
                r(i)
            });
        }
    } else {
        if n > c.remaining() {
            return Err(DecodeError("histogram longer than its data"));
        }
        for i in 0..n {
            v.push(c.delta(r(i))?);
        }
    }
    Ok(v)
}

fn encode_cpus(out: &mut Vec<u8>, cpus: &[CpuSample], prev: &[CpuSample]) {
    put_u64(out, cpus.len() as u64);
    for (i, cpu) in cpus.iter().enumerate() {
        let r = prev.get(i);
        put_delta(out, cpu.cpu.into(), r.map_or(i as u64, |r| r.cpu.into()));
        put_delta(out, cpu.switches, r.map_or(0, |r| r.switches));
        put_delta(out, cpu.busy_ns, r.map_or(0, |r| r.busy_ns));
        let rr = r.and_then(|r| r.rq.as_ref());
        match &cpu.rq {
            None => out.push(0),
            Some(rq) => {
                out.push(1);
                put_delta(out, rq.samples, rr.map_or(0, |x| x.samples));
                put_delta(out, rq.sum, rr.map_or(0, |x| x.sum));
                put_u64(out, rq.freq_hz.into());
                encode_counts(out, &rq.hist, rr.map(|x| x.hist.as_slice()));
            }
        }
    }
}

fn decode_cpus(c: &mut Cursor, prev: &[CpuSample]) -> DResult<Vec<CpuSample>> {
    let n = c.count(4)?;
    let mut cpus = Vec::with_capacity(n);
    for i in 0..n {
        let r = prev.get(i);
        let cpu = u32::try_from(c.delta(r.map_or(i as u64, |r| r.cpu.into()))?)
            .map_err(|_| DecodeError("CPU id over 32 bits"))?;
        let switches = c.delta(r.map_or(0, |r| r.switches))?;
        let busy_ns = c.delta(r.map_or(0, |r| r.busy_ns))?;
        let rr = r.and_then(|r| r.rq.as_ref());
        let rq = match c.u8()? {
            0 => None,
            1 => Some(RqSample {
                samples: c.delta(rr.map_or(0, |x| x.samples))?,
                sum: c.delta(rr.map_or(0, |x| x.sum))?,
                freq_hz: c.u32()?,
                hist: decode_counts(c, rr.map(|x| x.hist.as_slice()))?,
            }),
            _ => return Err(DecodeError("bad run-queue presence byte")),
        };
        cpus.push(CpuSample {
            cpu,
            switches,
            busy_ns,
            rq,
        });
    }
    Ok(cpus)
}

fn encode_migrations(out: &mut Vec<u8>, cells: &[MigrationCount], prev: &[MigrationCount]) {
    let before: HashMap<(u32, u32), u64> = prev
        .iter()
        .map(|m| ((m.from_cpu, m.to_cpu), m.count))
        .collect();
    put_u64(out, cells.len() as u64);
    let (mut from, mut to) = (0u64, 0u64);
    for m in cells {
        put_delta(out, m.from_cpu.into(), from);
        put_delta(out, m.to_cpu.into(), to);
        from = m.from_cpu.into();
        to = m.to_cpu.into();
        let b = before.get(&(m.from_cpu, m.to_cpu)).copied().unwrap_or(0);
        put_delta(out, m.count, b);
    }
}

fn decode_migrations(c: &mut Cursor, prev: &[MigrationCount]) -> DResult<Vec<MigrationCount>> {
    let before: HashMap<(u32, u32), u64> = prev
        .iter()
        .map(|m| ((m.from_cpu, m.to_cpu), m.count))
        .collect();
    let n = c.count(3)?;
    let mut cells = Vec::with_capacity(n);
    let (mut from, mut to) = (0u64, 0u64);
    for _ in 0..n {
        from = c.delta(from)?;
        to = c.delta(to)?;
        let (f, t) = (
            u32::try_from(from).map_err(|_| DecodeError("CPU id over 32 bits"))?,
            u32::try_from(to).map_err(|_| DecodeError("CPU id over 32 bits"))?,
        );
        let b = before.get(&(f, t)).copied().unwrap_or(0);
        cells.push(MigrationCount {
            from_cpu: f,
            to_cpu: t,
            count: c.delta(b)?,
        });
    }
    Ok(cells)
}

fn opt_delta(out: &mut Vec<u8>, cur: Option<u64>, r: Option<u64>) {
    if let Some(v) = cur {
        put_delta(out, v, r.unwrap_or(0));
    }
}

fn put_ns(s: &mut Streams, now: u64, before: u64) {
    let d = now.wrapping_sub(before) as i64;
    let z = ((d << 1) ^ (d >> 63)) as u64;
    s.ns_lo.extend_from_slice(&(z as u16).to_le_bytes());
    put_u64(&mut s.ns, z >> 16);
}

fn get_ns(hi: &mut Cursor, lo: &mut Cursor, before: u64) -> DResult<u64> {
    let l = lo.take(2)?;
    let h = hi.u64()?;
    if h >> 48 != 0 {
        return Err(DecodeError("nanosecond delta over 64 bits"));
    }
    let z = (h << 16) | u64::from(u16::from_le_bytes([l[0], l[1]]));
    let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
    Ok(before.wrapping_add(d as u64))
}

fn encode_threads(
    out: &mut Vec<u8>,
    threads: &[ThreadSample],
    prev: &[ThreadSample],
) -> Vec<usize> {
    let index: HashMap<(u32, u64), usize> = prev
        .iter()
        .enumerate()
        .map(|(i, t)| ((t.tid, t.start_time_ns), i))
        .collect();
    let mut s = Streams::default();
    let mut last_tid = 0u64;
    let mut last_ref: i64 = -1;
    for t in threads {
        put_delta(&mut s.ids, t.tid.into(), last_tid);
        last_tid = t.tid.into();
        let ri = index.get(&(t.tid, t.start_time_ns)).copied();
        match ri {
            None => put_u64(&mut s.ids, 0),
            Some(i) => {
                let d = i as i64 - (last_ref + 1);
                put_u64(&mut s.ids, (((d << 1) ^ (d >> 63)) as u64) + 1);
                last_ref = i as i64;
            }
        }
        let r = ri.map(|i| &prev[i]);
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
        if t.cross_node_migrations.is_some() {
            f |= F_XNODE;
        }
        if t.slice_hist.is_some() {
            f |= F_SLICE;
        }
        if t.wait_hist.is_some() {
            f |= F_WAIT;
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
        if f & F_COMM != 0 {
            put_bytes(&mut s.strs, t.comm.as_bytes());
        }
        if f & F_PCOMM != 0 {
            put_bytes(&mut s.strs, t.process_comm.as_bytes());
        }
        put_delta(&mut s.small, t.voluntary, r.map_or(0, |r| r.voluntary));
        put_delta(&mut s.small, t.involuntary, r.map_or(0, |r| r.involuntary));
        opt_delta(&mut s.small, t.migrations, r.and_then(|r| r.migrations));
        opt_delta(
            &mut s.small,
            t.cross_node_migrations,
            r.and_then(|r| r.cross_node_migrations),
        );
        put_ns(&mut s, t.oncpu_ns, r.map_or(0, |r| r.oncpu_ns));
        put_ns(&mut s, t.wait_ns, r.map_or(0, |r| r.wait_ns));
        for (h, rh) in [
            (&t.slice_hist, r.and_then(|r| r.slice_hist.as_ref())),
            (&t.wait_hist, r.and_then(|r| r.wait_hist.as_ref())),
        ] {
            if let Some(h) = h {
                encode_counts(&mut s.hist, &h.counts, rh.map(|x| x.counts.as_slice()));
            }
        }
    }
    put_u64(out, threads.len() as u64);
    for st in s.all() {
        put_u64(out, st.len() as u64);
    }
    let mut splits = Vec::with_capacity(STREAMS);
    for st in s.all() {
        splits.push(out.len());
        out.extend_from_slice(st);
    }
    splits
}

fn decode_threads(c: &mut Cursor, prev: &[ThreadSample]) -> DResult<Vec<ThreadSample>> {
    // every thread takes at least 2 id bytes, 1 flag byte, 2 small, 2 ns
    // and 4 ns_lo bytes
    let n = c.count(11)?;
    let mut lens = [0usize; STREAMS];
    for l in lens.iter_mut() {
        *l = c.count(1)?;
    }
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
            Some(Baseline {
                voluntary: meta.u64()?,
                involuntary: meta.u64()?,
                oncpu_ns: meta.u64()?,
                wait_ns: meta.u64()?,
            })
        } else {
            Some(
                r.and_then(|r| r.baseline)
                    .ok_or(DecodeError("baseline refers to a thread without one"))?,
            )
        };
        let comm = if need(F_COMM) {
            strs.string()?
        } else {
            r.map(|r| r.comm.clone()).unwrap_or_default()
        };
        let process_comm = if need(F_PCOMM) {
            strs.string()?
        } else {
            r.map(|r| r.process_comm.clone()).unwrap_or_default()
        };
        let voluntary = small.delta(r.map_or(0, |r| r.voluntary))?;
        let involuntary = small.delta(r.map_or(0, |r| r.involuntary))?;
        let migrations = if f & F_MIG != 0 {
            Some(small.delta(r.and_then(|r| r.migrations).unwrap_or(0))?)
        } else {
            None
        };
        let cross_node_migrations = if f & F_XNODE != 0 {
            Some(small.delta(r.and_then(|r| r.cross_node_migrations).unwrap_or(0))?)
        } else {
            None
        };
        let oncpu_ns = get_ns(&mut ns, &mut ns_lo, r.map_or(0, |r| r.oncpu_ns))?;
        let wait_ns = get_ns(&mut ns, &mut ns_lo, r.map_or(0, |r| r.wait_ns))?;
        let mut read_hist = |bit: u64, rh: Option<&Log2Hist>| -> DResult<Option<Log2Hist>> {
            if f & bit == 0 {
                return Ok(None);
            }
            let counts = decode_counts(&mut hist, rh.map(|h| h.counts.as_slice()))?;
            Ok(Some(Log2Hist { counts }))
        };
        let slice_hist = read_hist(F_SLICE, r.and_then(|r| r.slice_hist.as_ref()))?;
        let wait_hist = read_hist(F_WAIT, r.and_then(|r| r.wait_hist.as_ref()))?;
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
            cross_node_migrations,
            slice_hist,
            wait_hist,
            baseline,
            exited: f & F_EXITED != 0,
        });
    }
    for st in [&ids, &flags, &meta, &strs, &small, &ns, &ns_lo, &hist] {
        if !st.is_empty() {
            return Err(DecodeError("trailing bytes in a thread stream"));
        }
    }
    Ok(threads)
}

/// Raw and zstd-compressed size of each thread stream of `cur` encoded on
/// `prev` (for the size benchmark: which fields cost what).
#[doc(hidden)]
pub fn stream_sizes(
    cur: &Sample,
    prev: Option<&Sample>,
    level: i32,
) -> Vec<(&'static str, usize, usize)> {
    let p = prev.cloned().unwrap_or_default();
    let mut out = Vec::new();
    encode_threads(&mut out, &cur.threads, &p.threads);
    let mut c = Cursor::new(&out);
    let names = [
        "ids", "flags", "meta", "strs", "small", "ns", "ns_lo", "hist",
    ];
    let _ = c.u64();
    let lens: Vec<usize> = (0..STREAMS)
        .map(|_| c.u64().unwrap_or(0) as usize)
        .collect();
    names
        .iter()
        .zip(lens)
        .map(|(n, l)| {
            let b = c.take(l).unwrap_or(&[]);
            (*n, l, zstd::bulk::compress(b, level).map_or(0, |z| z.len()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::testdata::{synthetic_samples, SynthOptions};

    #[test]
    fn key_and_delta_round_trip() {
        let samples = synthetic_samples(&SynthOptions {
            threads: 50,
            samples: 6,
            ..Default::default()
        });
        let mut prev: Option<&Sample> = None;
        for s in &samples {
            let raw = encode(s, prev);
            assert_eq!(is_key(&raw), prev.is_none());
            let (raw2, splits) = encode_split(s, prev);
            assert_eq!(raw2, raw);
            let z = compress(&raw, &splits, 3);
            let back = decode(&decompress(&z).unwrap(), prev).unwrap();
            assert_eq!(&back, s);
            // a key frame of the same Sample decodes without the previous one
            assert_eq!(&decode(&encode(s, None), None).unwrap(), s);
            prev = Some(s);
        }
    }

    #[test]
    fn delta_needs_its_base_and_rejects_garbage() {
        let samples = synthetic_samples(&SynthOptions {
            threads: 5,
            samples: 2,
            ..Default::default()
        });
        let raw = encode(&samples[1], Some(&samples[0]));
        assert!(decode(&raw, None).is_err());
        for cut in 0..raw.len() {
            assert!(decode(&raw[..cut], Some(&samples[0])).is_err(), "cut {cut}");
        }
        assert!(decompress(&[0xff, 0xff, 0xff, 0xff, 0x7f]).is_err());
        assert!(decompress(&compress(b"abc", &[1], 1)[..3]).is_err());
        assert_eq!(
            decompress(&compress(b"abcdef", &[1, 1, 9], 1)).unwrap(),
            b"abcdef"
        );
    }

    #[test]
    fn odd_values_round_trip() {
        let t = ThreadSample {
            tid: u32::MAX,
            pid: 0,
            comm: "\u{1b}[31mred\n".into(),
            start_time_ns: u64::MAX,
            voluntary: u64::MAX,
            slice_hist: Some(Log2Hist { counts: vec![] }),
            wait_hist: Some(Log2Hist {
                counts: (0..100).collect(),
            }),
            baseline: Some(Baseline::default()),
            exited: true,
            ..Default::default()
        };
        let a = Sample {
            time_ns: u64::MAX,
            threads: vec![t.clone(), t.clone()],
            system: SystemSample {
                load: [f64::NAN, -0.0, f64::INFINITY],
                ..Default::default()
            },
            ..Default::default()
        };
        let mut b = a.clone();
        b.time_ns = 0;
        b.threads[1].voluntary = 0;
        b.threads[1].baseline = None;
        b.threads.reverse();
        let back = decode(&encode(&b, Some(&a)), Some(&a)).unwrap();
        // NaN != NaN, so compare through the encoding
        assert_eq!(encode(&back, None), encode(&b, None));
        assert_eq!(back.threads, b.threads);
        assert!(back.system.load[0].is_nan());
    }
}
