//! The flight recorder: bpf/flight.bpf.c ships every sched_switch,
//! sched_wakeup(_new) and sched_migrate_task through a fixed-size BPF ring
//! buffer; [`record`] loads it, drains it on a short timer and hands each
//! event to a sink (the Perfetto writer for `schedtop trace`).
//!
//! Memory is bounded on both sides: the ring buffer has a fixed size (a
//! reader that falls behind loses events, counted per CPU by the program,
//! never memory), and events are passed on one at a time, not kept.
use std::cell::Cell;
use std::mem::MaybeUninit;
use std::time::Duration;

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, RingBufferBuilder};

mod skel {
    #![allow(clippy::all, clippy::pedantic, non_camel_case_types, unused_imports)]
    include!(concat!(env!("OUT_DIR"), "/flight.skel.rs"));
}
use skel::types::flight_event;
use skel::FlightSkelBuilder;

/// Default ring buffer size: 8 MiB hold ~80k records (96 bytes and an
/// 8-byte header each), so with a drain every [`DRAIN_EVERY`] a drainer that
/// gets the CPU keeps up with ~4M events/s.
pub const DEFAULT_RINGBUF_BYTES: u32 = 8 << 20;
/// How often user space drains the ring: the program never wakes it (a
/// wakeup per event would cost an irq_work each), the timer does.
pub const DRAIN_EVERY: Duration = Duration::from_millis(20);
pub const COMM_LEN: usize = 16;

/// What happened (the tracepoint that fired).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    Switch,
    Wakeup,
    WakeupNew,
    Migrate,
}

/// One scheduler event, as the kernel's tracepoint saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlightEvent {
    /// CLOCK_BOOTTIME, ns
    pub ts: u64,
    pub kind: EventKind,
    /// the CPU it happened on
    pub cpu: u32,
    /// the task running on that CPU (ftrace's common_pid)
    pub common_pid: u32,
    /// switch: the task switched out; otherwise the task woken or migrated
    pub pid: i32,
    pub tgid: i32,
    pub prio: i32,
    pub comm: [u8; COMM_LEN],
    /// switch only: the task switched in
    pub next_pid: i32,
    pub next_tgid: i32,
    pub next_prio: i32,
    pub next_comm: [u8; COMM_LEN],
    /// switch only: ftrace's prev_state encoding (see [`ftrace_prev_state`])
    pub prev_state: i64,
    /// wakeup: the CPU the task will run on; migrate: the destination
    pub target_cpu: u32,
    /// migrate: the source CPU
    pub orig_cpu: u32,
}

// task states (include/linux/sched.h)
const TASK_REPORT: u32 = 0x7f;
const TASK_UNINTERRUPTIBLE: u32 = 0x2;
const TASK_NOLOAD: u32 = 0x400;
const TASK_IDLE: u32 = TASK_UNINTERRUPTIBLE | TASK_NOLOAD;
const TASK_RTLOCK_WAIT: u32 = 0x1000;
const TASK_REPORT_IDLE: u32 = TASK_REPORT + 1;
const TASK_REPORT_MAX: i64 = (TASK_REPORT_IDLE as i64) << 1;

/// prev_state the way the sched_switch trace event prints it
/// (`__trace_sched_switch_state()`, include/trace/events/sched.h): a
/// preempted task is TASK_REPORT_MAX ("R+"), otherwise one bit for the
/// state's report index (`__task_state_index()`), 0 for runnable.
pub fn ftrace_prev_state(preempt: bool, state: u32, exit_state: u32) -> i64 {
    if preempt {
        return TASK_REPORT_MAX;
    }
    let mut s = (state | exit_state) & TASK_REPORT;
    if state == TASK_IDLE {
        s = TASK_REPORT_IDLE;
    }
    if state == TASK_RTLOCK_WAIT {
        s = TASK_UNINTERRUPTIBLE;
    }
    // fls(s): index of the highest set bit, 1-based
    let index = 32 - s.leading_zeros();
    if index == 0 {
        0
    } else {
        1i64 << (index - 1)
    }
}

impl FlightEvent {
    /// Decode one ring buffer record; None for a short record or an unknown
    /// kind (never trusts the kernel side blindly).
    pub fn parse(bytes: &[u8]) -> Option<FlightEvent> {
        if bytes.len() < std::mem::size_of::<flight_event>() {
            return None;
        }
        let mut raw = flight_event::default();
        // SAFETY: flight_event is a repr(C) plain-old-data struct generated
        // from the program's BTF; we copy exactly its size from a slice at
        // least that long.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                &mut raw as *mut flight_event as *mut u8,
                std::mem::size_of::<flight_event>(),
            )
        };
        let kind = match raw.kind {
            1 => EventKind::Switch,
            2 => EventKind::Wakeup,
            3 => EventKind::WakeupNew,
            4 => EventKind::Migrate,
            _ => return None,
        };
        let comm = |c: &[i8; COMM_LEN]| c.map(|b| b as u8);
        Some(FlightEvent {
            ts: raw.ts,
            kind,
            cpu: raw.cpu,
            common_pid: raw.common_pid,
            pid: raw.pid,
            tgid: raw.tgid,
            prio: raw.prio,
            comm: comm(&raw.comm),
            next_pid: raw.next_pid,
            next_tgid: raw.next_tgid,
            next_prio: raw.next_prio,
            next_comm: comm(&raw.next_comm),
            prev_state: if kind == EventKind::Switch {
                ftrace_prev_state(raw.preempt != 0, raw.prev_state, raw.exit_state)
            } else {
                0
            },
            target_cpu: raw.target_cpu,
            orig_cpu: raw.orig_cpu,
        })
    }
}

/// A comm as text: up to the first NUL, invalid UTF-8 replaced.
pub fn comm_str(c: &[u8; COMM_LEN]) -> String {
    let n = c.iter().position(|&b| b == 0).unwrap_or(COMM_LEN);
    String::from_utf8_lossy(&c[..n]).into_owned()
}

#[derive(Clone, Debug)]
pub struct FlightOptions {
    /// ring buffer size in bytes: a power of two, at least one page
    pub ringbuf_bytes: u32,
    /// only events of this process's threads (filtered in the kernel)
    pub pid: Option<u32>,
}

impl Default for FlightOptions {
    fn default() -> Self {
        FlightOptions {
            ringbuf_bytes: DEFAULT_RINGBUF_BYTES,
            pid: None,
        }
    }
}

/// What one recording saw and lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlightStats {
    pub events: u64,
    /// records the kernel could not reserve (ring buffer full)
    pub dropped: u64,
    /// records user space could not decode
    pub malformed: u64,
}

/// Whether the running kernel's `sched_switch` tracepoint passes
/// `prev_state` (5.18+): its BTF typedef `btf_trace_sched_switch` points to
/// a function taking (void *, preempt, prev, next, prev_state).
pub fn sched_switch_has_prev_state() -> bool {
    use libbpf_rs::btf::{types::FuncProto, Btf, BtfType};
    let Ok(btf) = Btf::from_vmlinux() else {
        return false;
    };
    let proto = btf
        .type_by_name::<BtfType<'_>>("btf_trace_sched_switch")
        .and_then(|t| t.next_type())
        .and_then(|ptr| ptr.next_type())
        .and_then(|f| FuncProto::try_from(f).ok());
    proto.is_some_and(|p| p.len() >= 5)
}

/// Load the flight recorder without attaching it: whether `trace` and
/// `--flight` can work here, and which `sched_switch` it would use.
pub fn probe() -> Result<String> {
    let mut storage = MaybeUninit::uninit();
    let mut open = FlightSkelBuilder::default()
        .open(&mut storage)
        .context("opening the flight recorder's BPF object")?;
    open.maps
        .events
        .set_max_entries(4096)
        .context("sizing the ring buffer")?;
    let with_state = sched_switch_has_prev_state();
    open.progs.flight_switch.set_autoload(!with_state);
    open.progs.flight_switch_state.set_autoload(with_state);
    open.load()
        .context("loading the flight recorder's BPF programs")?;
    Ok(if with_state {
        "loads; sched_switch with prev_state (5.18+)".into()
    } else {
        "loads; sched_switch without prev_state (before 5.18): state read from the task".into()
    })
}

/// Load and attach the flight recorder, call `on_ready` once the probes are
/// attached, then pass every event to `sink` until `keep_going` says stop.
/// The probes are detached before the last drain, so nothing recorded is
/// left behind in the ring.
pub fn record(
    opts: &FlightOptions,
    on_ready: &mut dyn FnMut(),
    keep_going: &mut dyn FnMut() -> bool,
    sink: &mut dyn FnMut(&FlightEvent),
) -> Result<FlightStats> {
    record_with_drops(opts, on_ready, &mut |_| keep_going(), sink)
}

/// [`record`], for a long-running recorder: `keep_going` is also handed the
/// drop counter so far (records the kernel could not reserve), read after
/// each drain.
pub fn record_with_drops(
    opts: &FlightOptions,
    on_ready: &mut dyn FnMut(),
    keep_going: &mut dyn FnMut(u64) -> bool,
    sink: &mut dyn FnMut(&FlightEvent),
) -> Result<FlightStats> {
    let size = opts.ringbuf_bytes;
    if !size.is_power_of_two() || size < 4096 {
        anyhow::bail!("ring buffer size {size} is not a power of two of at least 4096 bytes");
    }
    let mut storage = MaybeUninit::uninit();
    let mut open = FlightSkelBuilder::default()
        .open(&mut storage)
        .context("opening the flight recorder's BPF object")?;
    open.maps
        .events
        .set_max_entries(size)
        .context("sizing the ring buffer")?;
    if let Some(ro) = open.maps.rodata_data.as_mut() {
        ro.filter_tgid = opts.pid.unwrap_or(0);
    } else if opts.pid.is_some() {
        anyhow::bail!("the flight recorder's BPF object has no settings section");
    }
    let with_state = sched_switch_has_prev_state();
    open.progs.flight_switch.set_autoload(!with_state);
    open.progs.flight_switch_state.set_autoload(with_state);
    let skel = open
        .load()
        .context("loading the flight recorder's BPF programs")?;

    let events = Cell::new(0u64);
    let malformed = Cell::new(0u64);
    let mut builder = RingBufferBuilder::new();
    builder
        .add(&skel.maps.events, |data: &[u8]| {
            match FlightEvent::parse(data) {
                Some(e) => {
                    events.set(events.get() + 1);
                    sink(&e);
                }
                None => malformed.set(malformed.get() + 1),
            }
            0
        })
        .context("opening the ring buffer")?;
    let rb = builder.build().context("opening the ring buffer")?;

    let links = [
        if with_state {
            skel.progs.flight_switch_state.attach()
        } else {
            skel.progs.flight_switch.attach()
        },
        skel.progs.flight_wakeup.attach(),
        skel.progs.flight_wakeup_new.attach(),
        skel.progs.flight_migrate.attach(),
    ]
    .into_iter()
    .collect::<Result<Vec<_>, _>>()
    .context("attaching the scheduler tracepoints")?;
    on_ready();

    let zero = 0u32.to_ne_bytes();
    let read_dropped = || -> Result<u64> {
        Ok(skel
            .maps
            .dropped
            .lookup_percpu(&zero, MapFlags::ANY)
            .context("reading the drop counter")?
            .unwrap_or_default()
            .iter()
            .map(|v| {
                let mut b = [0u8; 8];
                let n = v.len().min(8);
                b[..n].copy_from_slice(&v[..n]);
                u64::from_ne_bytes(b)
            })
            .sum())
    };
    let mut dropped_so_far = 0;
    while keep_going(dropped_so_far) {
        // The program submits without wakeups: this is a 20 ms wait that a
        // signal cuts short. poll() does not consume on a timeout: consume().
        let n = rb.poll_raw(DRAIN_EVERY);
        // EINTR: a signal (Ctrl-C) arrived; keep_going decides
        if n < 0 && n != -libc::EINTR {
            return Err(std::io::Error::from_raw_os_error(-n)).context("polling the ring buffer");
        }
        rb.consume().context("draining the ring buffer")?;
        dropped_so_far = read_dropped()?;
    }
    drop(links);
    rb.consume().context("draining the ring buffer")?;
    drop(rb);

    let dropped = read_dropped()?;
    Ok(FlightStats {
        events: events.get(),
        dropped,
        malformed: malformed.get(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prev_state_like_the_trace_event() {
        // preempted: "R+"
        assert_eq!(ftrace_prev_state(true, 1, 0), 0x100);
        // runnable (e.g. yield): "R"
        assert_eq!(ftrace_prev_state(false, 0, 0), 0);
        // TASK_INTERRUPTIBLE: "S"
        assert_eq!(ftrace_prev_state(false, 0x1, 0), 0x1);
        // TASK_UNINTERRUPTIBLE: "D"
        assert_eq!(ftrace_prev_state(false, 0x2, 0), 0x2);
        // TASK_IDLE reports as "I"
        assert_eq!(ftrace_prev_state(false, TASK_IDLE, 0), 0x80);
        // a dying task: TASK_DEAD with EXIT_ZOMBIE, "Z"
        assert_eq!(ftrace_prev_state(false, 0x80, 0x20), 0x20);
        // TASK_WAKEKILL|TASK_UNINTERRUPTIBLE (killable): "D"
        assert_eq!(ftrace_prev_state(false, 0x100 | 0x2, 0), 0x2);
    }

    #[test]
    fn short_or_unknown_records_are_rejected() {
        assert_eq!(FlightEvent::parse(&[0u8; 8]), None);
        let raw = vec![0u8; std::mem::size_of::<flight_event>()];
        // kind 0 is not a kind
        assert_eq!(FlightEvent::parse(&raw), None);
    }

    #[test]
    fn comm_stops_at_nul_and_survives_bad_utf8() {
        let mut c = [0u8; COMM_LEN];
        c[..4].copy_from_slice(b"ab\xffc");
        assert_eq!(comm_str(&c), "ab\u{FFFD}c");
        assert_eq!(comm_str(&[b'x'; COMM_LEN]), "x".repeat(16));
    }
}
