//! Perfetto traces, hand-encoded protobuf (no codegen): scheduler events as
//! ftrace events, which ui.perfetto.dev and trace_processor show as CPU
//! tracks, thread states and wakeup arrows.
//!
//! Field numbers are those of Perfetto's published protos
//! (protos/perfetto/trace/...):
//! ```text
//! Trace              { repeated TracePacket packet = 1; }
//! TracePacket        { FtraceEventBundle ftrace_events = 1; ProcessTree process_tree = 2;
//!                      ClockSnapshot clock_snapshot = 6; uint64 timestamp = 8;
//!                      uint32 trusted_packet_sequence_id = 10; }
//! FtraceEventBundle  { uint32 cpu = 1; repeated FtraceEvent event = 2; }
//! FtraceEvent        { uint64 timestamp = 1; uint32 pid = 2;
//!                      SchedSwitchFtraceEvent sched_switch = 4;
//!                      SchedWakeupFtraceEvent sched_wakeup = 17;
//!                      SchedWakeupNewFtraceEvent sched_wakeup_new = 114;
//!                      SchedMigrateTaskFtraceEvent sched_migrate_task = 491; }
//! SchedSwitchFtraceEvent { string prev_comm = 1; int32 prev_pid = 2; int32 prev_prio = 3;
//!                      int64 prev_state = 4; string next_comm = 5; int32 next_pid = 6;
//!                      int32 next_prio = 7; }
//! SchedWakeup(New)FtraceEvent { string comm = 1; int32 pid = 2; int32 prio = 3;
//!                      int32 success = 4; int32 target_cpu = 5; }
//! SchedMigrateTaskFtraceEvent { string comm = 1; int32 pid = 2; int32 prio = 3;
//!                      int32 orig_cpu = 4; int32 dest_cpu = 5; }
//! ClockSnapshot      { repeated Clock clocks = 1; BuiltinClock primary_trace_clock = 2; }
//! Clock              { uint32 clock_id = 1; uint64 timestamp = 2; }
//! ProcessTree        { repeated Process processes = 1; repeated Thread threads = 2; }
//! Process            { int32 pid = 1; repeated string cmdline = 3; }
//! Thread             { int32 tid = 1; string name = 2; int32 tgid = 5; }
//! ```
//! Timestamps are CLOCK_BOOTTIME, Perfetto's default trace clock, which is
//! also what it assumes for ftrace events; a clock snapshot at the start
//! relates it to CLOCK_MONOTONIC and CLOCK_REALTIME.
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use crate::collect::flight::{comm_str, EventKind, FlightEvent, COMM_LEN};

pub mod field {
    pub const TRACE_PACKET: u32 = 1;

    pub const PACKET_FTRACE_EVENTS: u32 = 1;
    pub const PACKET_PROCESS_TREE: u32 = 2;
    pub const PACKET_CLOCK_SNAPSHOT: u32 = 6;
    pub const PACKET_TIMESTAMP: u32 = 8;
    pub const PACKET_SEQUENCE_ID: u32 = 10;

    pub const BUNDLE_CPU: u32 = 1;
    pub const BUNDLE_EVENT: u32 = 2;

    pub const EVENT_TIMESTAMP: u32 = 1;
    pub const EVENT_PID: u32 = 2;
    pub const EVENT_SCHED_SWITCH: u32 = 4;
    pub const EVENT_SCHED_WAKEUP: u32 = 17;
    pub const EVENT_SCHED_WAKEUP_NEW: u32 = 114;
    pub const EVENT_SCHED_MIGRATE_TASK: u32 = 491;

    pub const CLOCK_SNAPSHOT_CLOCKS: u32 = 1;
    pub const CLOCK_SNAPSHOT_PRIMARY: u32 = 2;
    pub const CLOCK_ID: u32 = 1;
    pub const CLOCK_TIMESTAMP: u32 = 2;

    pub const TREE_PROCESSES: u32 = 1;
    pub const TREE_THREADS: u32 = 2;
    pub const PROCESS_PID: u32 = 1;
    pub const PROCESS_CMDLINE: u32 = 3;
    pub const THREAD_TID: u32 = 1;
    pub const THREAD_NAME: u32 = 2;
    pub const THREAD_TGID: u32 = 5;
}

/// Perfetto's BuiltinClock ids.
pub mod clock {
    pub const REALTIME: u32 = 1;
    pub const MONOTONIC: u32 = 3;
    pub const BOOTTIME: u32 = 6;
}

/// A CPU's bundle is written out once it holds this many events: that, per
/// CPU, is all the trace keeps in memory (about 100 KiB).
pub const BUNDLE_EVENTS: usize = 1024;
/// Threads remembered for the process tree; later ones still appear in the
/// events with their names, only not grouped under their process.
pub const MAX_THREADS: usize = 1 << 16;
const SEQUENCE_ID: u64 = 1;

/// A comm's bytes up to the first NUL, as UTF-8 (protobuf strings must be);
/// no allocation unless it has to be repaired.
fn comm_bytes(c: &[u8; COMM_LEN]) -> Cow<'_, [u8]> {
    let n = c.iter().position(|&b| b == 0).unwrap_or(COMM_LEN);
    match String::from_utf8_lossy(&c[..n]) {
        Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
        Cow::Owned(s) => Cow::Owned(s.into_bytes()),
    }
}

/// Minimal protobuf wire-format encoding into a byte vector.
pub mod wire {
    pub fn varint(buf: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        buf.push(v as u8);
    }

    fn key(buf: &mut Vec<u8>, field: u32, wire_type: u8) {
        varint(buf, ((field as u64) << 3) | wire_type as u64);
    }

    /// uint32/uint64/bool/enum
    pub fn uint(buf: &mut Vec<u8>, field: u32, v: u64) {
        key(buf, field, 0);
        varint(buf, v);
    }

    /// int32/int64: negative values are sign-extended to 64 bits (10 bytes),
    /// as protobuf does for int32
    pub fn int(buf: &mut Vec<u8>, field: u32, v: i64) {
        uint(buf, field, v as u64);
    }

    pub fn bytes(buf: &mut Vec<u8>, field: u32, b: &[u8]) {
        key(buf, field, 2);
        varint(buf, b.len() as u64);
        buf.extend_from_slice(b);
    }
}

/// Streams a Perfetto trace to `out`: events are grouped per CPU into
/// bundles, written whenever a CPU's bundle reaches [`BUNDLE_EVENTS`], in
/// timestamp order (the ring buffer hands them over in reservation order,
/// which an interrupt between reservation and timestamp can swap).
pub struct PerfettoWriter<W: Write> {
    out: W,
    /// per CPU: the events of the bundle being filled
    bundles: BTreeMap<u32, Vec<FlightEvent>>,
    threads: HashMap<i32, (i32, [u8; COMM_LEN])>,
    scratch_event: Vec<u8>,
    scratch_inner: Vec<u8>,
    scratch_packet: Vec<u8>,
    events: u64,
}

/// Clock readings taken at the same moment, ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockSnapshot {
    pub boottime: u64,
    pub monotonic: u64,
    pub realtime: u64,
}

impl ClockSnapshot {
    pub fn now() -> ClockSnapshot {
        let read = |id: libc::clockid_t| {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: clock_gettime writes one timespec into the pointer.
            unsafe { libc::clock_gettime(id, &mut ts) };
            ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
        };
        ClockSnapshot {
            boottime: read(libc::CLOCK_BOOTTIME),
            monotonic: read(libc::CLOCK_MONOTONIC),
            realtime: read(libc::CLOCK_REALTIME),
        }
    }
}

/// One FtraceEvent message (timestamp, common pid and the sched_* payload)
/// into `out`; `scratch` is reused for the payload.
pub fn encode_event(e: &FlightEvent, out: &mut Vec<u8>, scratch: &mut Vec<u8>) {
    let inner = scratch;
    inner.clear();
    let which = match e.kind {
        EventKind::Switch => {
            wire::bytes(inner, 1, &comm_bytes(&e.comm));
            wire::int(inner, 2, e.pid as i64);
            wire::int(inner, 3, e.prio as i64);
            wire::int(inner, 4, e.prev_state);
            wire::bytes(inner, 5, &comm_bytes(&e.next_comm));
            wire::int(inner, 6, e.next_pid as i64);
            wire::int(inner, 7, e.next_prio as i64);
            field::EVENT_SCHED_SWITCH
        }
        EventKind::Wakeup | EventKind::WakeupNew => {
            wire::bytes(inner, 1, &comm_bytes(&e.comm));
            wire::int(inner, 2, e.pid as i64);
            wire::int(inner, 3, e.prio as i64);
            wire::int(inner, 4, 1);
            wire::int(inner, 5, e.target_cpu as i64);
            if e.kind == EventKind::Wakeup {
                field::EVENT_SCHED_WAKEUP
            } else {
                field::EVENT_SCHED_WAKEUP_NEW
            }
        }
        EventKind::Migrate => {
            wire::bytes(inner, 1, &comm_bytes(&e.comm));
            wire::int(inner, 2, e.pid as i64);
            wire::int(inner, 3, e.prio as i64);
            wire::int(inner, 4, e.orig_cpu as i64);
            wire::int(inner, 5, e.target_cpu as i64);
            field::EVENT_SCHED_MIGRATE_TASK
        }
    };
    out.clear();
    wire::uint(out, field::EVENT_TIMESTAMP, e.ts);
    wire::uint(out, field::EVENT_PID, e.common_pid as u64);
    wire::bytes(out, which, inner);
}

impl<W: Write> PerfettoWriter<W> {
    /// Start a trace; the clock snapshot goes first.
    pub fn new(out: W, clocks: ClockSnapshot) -> io::Result<Self> {
        let mut w = PerfettoWriter {
            out,
            bundles: BTreeMap::new(),
            threads: HashMap::new(),
            scratch_event: Vec::new(),
            scratch_inner: Vec::new(),
            scratch_packet: Vec::new(),
            events: 0,
        };
        let mut snap = Vec::new();
        for (id, ts) in [
            (clock::BOOTTIME, clocks.boottime),
            (clock::MONOTONIC, clocks.monotonic),
            (clock::REALTIME, clocks.realtime),
        ] {
            let mut c = Vec::new();
            wire::uint(&mut c, field::CLOCK_ID, id as u64);
            wire::uint(&mut c, field::CLOCK_TIMESTAMP, ts);
            wire::bytes(&mut snap, field::CLOCK_SNAPSHOT_CLOCKS, &c);
        }
        wire::uint(
            &mut snap,
            field::CLOCK_SNAPSHOT_PRIMARY,
            clock::BOOTTIME as u64,
        );
        let mut packet = Vec::new();
        wire::uint(&mut packet, field::PACKET_TIMESTAMP, clocks.boottime);
        wire::bytes(&mut packet, field::PACKET_CLOCK_SNAPSHOT, &snap);
        wire::uint(&mut packet, field::PACKET_SEQUENCE_ID, SEQUENCE_ID);
        w.write_packet(&packet)?;
        Ok(w)
    }

    /// Events added so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    fn write_packet(&mut self, packet: &[u8]) -> io::Result<()> {
        let mut head = Vec::with_capacity(8);
        // key (field 1, length-delimited), then the length
        wire::varint(&mut head, ((field::TRACE_PACKET as u64) << 3) | 2);
        wire::varint(&mut head, packet.len() as u64);
        self.out.write_all(&head)?;
        self.out.write_all(packet)
    }

    /// Write one bundle of events encoded elsewhere: `events` is a run of
    /// `FtraceEventBundle.event` fields (see [`encode_event`]), `n` of them,
    /// already in timestamp order. Bundles being filled by `push` are not
    /// touched.
    pub fn push_encoded(&mut self, cpu: u32, events: &[u8], n: u64) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        let mut bundle = Vec::with_capacity(events.len() + 8);
        wire::uint(&mut bundle, field::BUNDLE_CPU, cpu as u64);
        bundle.extend_from_slice(events);
        let mut packet = Vec::with_capacity(bundle.len() + 16);
        wire::bytes(&mut packet, field::PACKET_FTRACE_EVENTS, &bundle);
        wire::uint(&mut packet, field::PACKET_SEQUENCE_ID, SEQUENCE_ID);
        self.events += n;
        self.write_packet(&packet)
    }

    /// Name a thread in the process tree (events added with `push` do this
    /// themselves).
    pub fn remember_thread(&mut self, pid: i32, tgid: i32, comm: &[u8; COMM_LEN]) {
        self.remember(pid, tgid, comm);
    }

    fn remember(&mut self, pid: i32, tgid: i32, comm: &[u8; COMM_LEN]) {
        if pid <= 0 {
            return;
        }
        match self.threads.get_mut(&pid) {
            Some(known) => {
                if known.0 != tgid || known.1 != *comm {
                    *known = (tgid, *comm);
                }
            }
            None => {
                if self.threads.len() < MAX_THREADS {
                    self.threads.insert(pid, (tgid, *comm));
                }
            }
        }
    }

    /// Add one event to its CPU's bundle.
    pub fn push(&mut self, e: &FlightEvent) -> io::Result<()> {
        let bundle = self.bundles.entry(e.cpu).or_default();
        bundle.push(e.clone());
        let full = bundle.len() >= BUNDLE_EVENTS;
        self.events += 1;
        self.remember(e.pid, e.tgid, &e.comm);
        if e.kind == EventKind::Switch {
            self.remember(e.next_pid, e.next_tgid, &e.next_comm);
        }
        if full {
            self.flush_cpu(e.cpu)?;
        }
        Ok(())
    }

    fn flush_cpu(&mut self, cpu: u32) -> io::Result<()> {
        let Some(mut events) = self.bundles.remove(&cpu) else {
            return Ok(());
        };
        if events.is_empty() {
            return Ok(());
        }
        events.sort_by_key(|e| e.ts);
        let mut bundle = std::mem::take(&mut self.scratch_packet);
        bundle.clear();
        wire::uint(&mut bundle, field::BUNDLE_CPU, cpu as u64);
        for e in &events {
            encode_event(e, &mut self.scratch_event, &mut self.scratch_inner);
            wire::bytes(&mut bundle, field::BUNDLE_EVENT, &self.scratch_event);
        }
        let mut packet = Vec::with_capacity(bundle.len() + 16);
        wire::bytes(&mut packet, field::PACKET_FTRACE_EVENTS, &bundle);
        wire::uint(&mut packet, field::PACKET_SEQUENCE_ID, SEQUENCE_ID);
        self.scratch_packet = bundle;
        // keep the allocation for the next bundle of this CPU
        events.clear();
        self.bundles.insert(cpu, events);
        self.write_packet(&packet)
    }

    /// Write out every bundle in progress.
    pub fn flush(&mut self) -> io::Result<()> {
        let cpus: Vec<u32> = self.bundles.keys().copied().collect();
        for cpu in cpus {
            self.flush_cpu(cpu)?;
        }
        self.out.flush()
    }

    /// Write the remaining bundles and the process tree (which threads
    /// belong to which process, with their names); returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush()?;
        let mut tree = Vec::new();
        let mut tids: Vec<&i32> = self.threads.keys().collect();
        tids.sort();
        let mut processes: BTreeMap<i32, Option<String>> = BTreeMap::new();
        for tid in tids {
            let (tgid, comm) = &self.threads[tid];
            let mut t = Vec::new();
            wire::int(&mut t, field::THREAD_TID, *tid as i64);
            wire::bytes(&mut t, field::THREAD_NAME, comm_str(comm).as_bytes());
            if *tgid > 0 {
                wire::int(&mut t, field::THREAD_TGID, *tgid as i64);
                let name = processes.entry(*tgid).or_default();
                if tid == tgid {
                    *name = Some(comm_str(comm));
                }
            }
            wire::bytes(&mut tree, field::TREE_THREADS, &t);
        }
        for (pid, name) in &processes {
            let mut p = Vec::new();
            wire::int(&mut p, field::PROCESS_PID, *pid as i64);
            if let Some(n) = name {
                wire::bytes(&mut p, field::PROCESS_CMDLINE, n.as_bytes());
            }
            wire::bytes(&mut tree, field::TREE_PROCESSES, &p);
        }
        let mut packet = Vec::new();
        wire::bytes(&mut packet, field::PACKET_PROCESS_TREE, &tree);
        wire::uint(&mut packet, field::PACKET_SEQUENCE_ID, SEQUENCE_ID);
        self.write_packet(&packet)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comm(s: &str) -> [u8; COMM_LEN] {
        let mut c = [0u8; COMM_LEN];
        c[..s.len()].copy_from_slice(s.as_bytes());
        c
    }

    #[test]
    fn varints_and_negative_ints() {
        let mut b = Vec::new();
        wire::varint(&mut b, 300);
        assert_eq!(b, [0xac, 0x02]);
        b.clear();
        wire::int(&mut b, 2, -1);
        assert_eq!(
            b,
            [0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
        b.clear();
        wire::uint(&mut b, 491, 1);
        // key 491 << 3 = 3928 = varint [0xd8, 0x1e]
        assert_eq!(b, [0xd8, 0x1e, 0x01]);
    }

    #[test]
    fn one_switch_encodes_to_known_bytes() {
        let clocks = ClockSnapshot {
            boottime: 1,
            monotonic: 2,
            realtime: 3,
        };
        let mut w = PerfettoWriter::new(Vec::new(), clocks).unwrap();
        let header_len = w.out.len();
        w.push(&FlightEvent {
            ts: 5,
            kind: EventKind::Switch,
            cpu: 1,
            common_pid: 7,
            pid: 7,
            tgid: 7,
            prio: 120,
            comm: comm("a"),
            next_pid: 0,
            next_tgid: 0,
            next_prio: 120,
            next_comm: comm("b"),
            prev_state: 1,
            target_cpu: 0,
            orig_cpu: 0,
        })
        .unwrap();
        w.flush().unwrap();
        let bytes = &w.out[header_len..];
        let switch = [
            0x0a, 1, b'a', 0x10, 7, 0x18, 120, 0x20, 1, 0x2a, 1, b'b', 0x30, 0, 0x38, 120,
        ];
        let mut event = vec![0x08, 5, 0x10, 7, 0x22, switch.len() as u8];
        event.extend_from_slice(&switch);
        let mut bundle = vec![0x08, 1, 0x12, event.len() as u8];
        bundle.extend_from_slice(&event);
        let mut packet = vec![0x0a, bundle.len() as u8];
        packet.extend_from_slice(&bundle);
        packet.extend_from_slice(&[0x50, 1]);
        let mut trace = vec![0x0a, packet.len() as u8];
        trace.extend_from_slice(&packet);
        assert_eq!(bytes, &trace[..]);
    }

    fn wakeup(ts: u64, cpu: u32) -> FlightEvent {
        FlightEvent {
            ts,
            kind: EventKind::Wakeup,
            cpu,
            common_pid: 1,
            pid: 2,
            tgid: 2,
            prio: 120,
            comm: comm("w"),
            next_pid: 0,
            next_tgid: 0,
            next_prio: 0,
            next_comm: [0; COMM_LEN],
            prev_state: 0,
            target_cpu: 0,
            orig_cpu: 0,
        }
    }

    #[test]
    fn bundles_are_bounded() {
        let clocks = ClockSnapshot {
            boottime: 0,
            monotonic: 0,
            realtime: 0,
        };
        let mut w = PerfettoWriter::new(Vec::new(), clocks).unwrap();
        let start = w.out.len();
        for i in 0..20_000 {
            w.push(&wakeup(1 << 40, (i % 2) as u32)).unwrap();
            assert!(w.bundles.values().all(|b| b.len() < BUNDLE_EVENTS));
        }
        assert!(
            w.out.len() - start > 15 * BUNDLE_EVENTS * 20,
            "full bundles were written out"
        );
        assert_eq!(w.events(), 20_000);
    }

    #[test]
    fn a_bundle_is_in_timestamp_order() {
        let clocks = ClockSnapshot {
            boottime: 0,
            monotonic: 0,
            realtime: 0,
        };
        let mut shuffled = PerfettoWriter::new(Vec::new(), clocks).unwrap();
        let mut sorted = PerfettoWriter::new(Vec::new(), clocks).unwrap();
        for ts in [30, 10, 20] {
            shuffled.push(&wakeup(ts, 3)).unwrap();
        }
        for ts in [10, 20, 30] {
            sorted.push(&wakeup(ts, 3)).unwrap();
        }
        let a = shuffled.finish().unwrap();
        let b = sorted.finish().unwrap();
        assert_eq!(a, b);
    }
}
