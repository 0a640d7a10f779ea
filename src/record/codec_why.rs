//! The "why" figures of a recorded Sample (format 4), after its cgroups:
//! the system's count of preemptions the probe could not attribute, then
//! for each thread, in the threads' order, 0 (none) or 1 and its migration
//! causes and block reasons as deltas on the same thread's in the previous
//! Sample, and its preemptors of the interval (tid, count) with the rest;
//! format 5 adds 2: the same counts as that thread's, no preemptors.
//! Format 1-3 Samples end before this: their threads read as having none.
//! Format 5 may add the threads outside the thread list that the preemptor
//! lists name (`Sample::outside`): their count, then each one's tid (a
//! delta on the one before), pid, name and process name; and then the
//! wakers (`encode_wakers`), with the same pair-list encoding.
use super::codec_budget::Budget;
use super::codec_cpus::{decode_migrations, encode_migrations};
use super::varint::{put_bytes, put_delta, put_u64, Cursor, DResult, DecodeError};
use crate::model::rates::ThreadMatcher;
use crate::model::why::{PairKind, WhySample, MAX_PAIRS, MAX_PREEMPTORS, MIG_CAUSES};
use crate::model::{OutsideThread, Sample};
use std::sync::Arc;

/// Whether `cur` has anything for this section.
pub(super) fn has_why(cur: &Sample) -> bool {
    cur.system.losses.preempt_pairs_full > 0
        || !cur.system.migrations_by_cause.is_empty()
        || cur.threads.iter().any(|t| t.why.is_some())
}

pub(super) fn encode_why(out: &mut Vec<u8>, cur: &Sample, prev: &Sample) {
    // in step with the previous Sample, as encode_threads finds them: no
    // map of every thread per frame
    let mut before = ThreadMatcher::of(Some(&prev.threads));
    put_delta(
        out,
        cur.system.losses.preempt_pairs_full,
        prev.system.losses.preempt_pairs_full,
    );
    // the CPU→CPU moves by cause: 0 lists (unknown) or MIG_CAUSES
    let lists = &cur.system.migrations_by_cause;
    let n = if lists.len() == MIG_CAUSES {
        MIG_CAUSES
    } else {
        0
    };
    put_u64(out, n as u64);
    for (i, list) in lists.iter().take(n).enumerate() {
        let before = prev
            .system
            .migrations_by_cause
            .get(i)
            .map_or(&[][..], |v| v.as_slice());
        encode_migrations(out, list, before);
    }
    for t in &cur.threads {
        let Some(w) = &t.why else {
            out.push(0);
            continue;
        };
        let b = before.get(t).and_then(|p| p.why.as_deref());
        if b.is_some_and(|b| quiet_since(w, b)) {
            out.push(2);
            continue;
        }
        out.push(1);
        for (i, &v) in w.migrations_by_cause.iter().enumerate() {
            put_delta(out, v, b.map_or(0, |b| b.migrations_by_cause[i]));
        }
        for (i, &v) in w.blocked_on.iter().enumerate() {
            put_delta(out, v, b.map_or(0, |b| b.blocked_on[i]));
        }
        put_pairs(out, w.pairs(PairKind::Preempt), MAX_PREEMPTORS);
    }
}

/// One pair list (any kind): its length, each (tid, count), the rest.
fn put_pairs(out: &mut Vec<u8>, (list, rest): (&[(u32, u64)], u64), max: usize) {
    let list = &list[..list.len().min(max)];
    put_u64(out, list.len() as u64);
    for &(tid, n) in list {
        put_u64(out, tid.into());
        put_u64(out, n);
    }
    put_u64(out, rest);
}

fn get_pairs(c: &mut Cursor, max: usize) -> DResult<(Vec<(u32, u64)>, u64)> {
    let n = c.count(2)?;
    if n > max {
        return Err(DecodeError("a longer pair list than a thread keeps"));
    }
    let mut list = Vec::with_capacity(n);
    for _ in 0..n {
        let tid = u32::try_from(c.u64()?).map_err(|_| DecodeError("pair tid over 32 bits"))?;
        list.push((tid, c.u64()?));
    }
    Ok((list, c.u64()?))
}

/// `w` counts what `b` did, and names no preemptor or waker: an idle
/// thread's.
fn quiet_since(w: &WhySample, b: &WhySample) -> bool {
    !w.has_pairs() && w.migrations_by_cause == b.migrations_by_cause && w.blocked_on == b.blocked_on
}

fn thread_why(c: &mut Cursor, b: Option<&Arc<WhySample>>) -> DResult<Option<Arc<WhySample>>> {
    match c.u8()? {
        0 => return Ok(None),
        1 => {}
        2 => {
            // format 5: as the reference's, no preemptors (shared when
            // the reference had none either)
            let b = b.ok_or(DecodeError("unchanged why figures without a reference"))?;
            if b.preempted_by.is_empty() && b.preempted_by_rest == 0 {
                return Ok(Some(Arc::clone(b)));
            }
            return Ok(Some(Arc::new(WhySample {
                migrations_by_cause: b.migrations_by_cause,
                blocked_on: b.blocked_on,
                ..WhySample::default()
            })));
        }
        _ => return Err(DecodeError("bad why flag of a thread")),
    }
    let mut w = WhySample::default();
    for (i, v) in w.migrations_by_cause.iter_mut().enumerate() {
        *v = c.delta(b.map_or(0, |b| b.migrations_by_cause[i]))?;
    }
    for (i, v) in w.blocked_on.iter_mut().enumerate() {
        *v = c.delta(b.map_or(0, |b| b.blocked_on[i]))?;
    }
    (w.preempted_by, w.preempted_by_rest) = get_pairs(c, MAX_PREEMPTORS)?;
    Ok(Some(Arc::new(w)))
}

/// Read the section into `s` (its threads already decoded).
pub(super) fn decode_why(
    c: &mut Cursor,
    s: &mut Sample,
    prev: &Sample,
    b: &mut Budget,
) -> DResult<()> {
    let mut before = ThreadMatcher::of(Some(&prev.threads));
    s.system.losses.preempt_pairs_full = c.delta(prev.system.losses.preempt_pairs_full)?;
    match c.u64()? {
        0 => {}
        n if n == MIG_CAUSES as u64 => {
            for i in 0..MIG_CAUSES {
                let p = prev
                    .system
                    .migrations_by_cause
                    .get(i)
                    .map_or(&[][..], |v| v.as_slice());
                let list = decode_migrations(c, p, b)?;
                s.system.migrations_by_cause.push(list);
            }
        }
        _ => return Err(DecodeError("bad count of migration cause lists")),
    }
    for t in s.threads.iter_mut() {
        let b = before.get(t).and_then(|p| p.why.as_ref());
        t.why = thread_why(c, b)?;
    }
    Ok(())
}

/// Whether `cur` has wakers for the section after the outside threads:
/// whether its source counted them (the section's presence says so; a
/// Sample without it reads with every waker figure unknown).
pub(super) fn has_wakers(cur: &Sample) -> bool {
    cur.system.losses.wake_pairs_full > 0
        || cur
            .threads
            .iter()
            .filter_map(|t| t.why.as_deref())
            .any(|w| w.wakeups.is_some() || !w.woken_by.is_empty() || w.woken_by_rest > 0)
}

/// The wakers (format 5, after the outside threads, which are then always
/// written; Samples whose source did not count wakers, and older ones, end
/// before: their threads' waker figures read as unknown): the count of
/// wakeups whose pair was lost, then for each thread that has why figures,
/// in order, 0 (wakeups as the same thread's in the previous Sample, no
/// wakers), 1, its wakeups (a delta on that) and its (wakee, waker) pair
/// list, encoded as the preemptors' are, or 2 (its wakers unknown in a
/// Sample that knows others'; no source writes this today).
pub(super) fn encode_wakers(out: &mut Vec<u8>, cur: &Sample, prev: &Sample) {
    let mut before = ThreadMatcher::of(Some(&prev.threads));
    put_delta(
        out,
        cur.system.losses.wake_pairs_full,
        prev.system.losses.wake_pairs_full,
    );
    for t in &cur.threads {
        let Some(w) = &t.why else { continue };
        let was = before
            .get(t)
            .and_then(|p| p.why.as_deref())
            .and_then(|b| b.wakeups);
        let (list, rest) = w.pairs(PairKind::Wake);
        let Some(wakeups) = w.wakeups else {
            out.push(2);
            continue;
        };
        if Some(wakeups) == was && list.is_empty() && rest == 0 {
            out.push(0);
            continue;
        }
        out.push(1);
        put_delta(out, wakeups, was.unwrap_or(0));
        put_pairs(out, (list, rest), MAX_PAIRS);
    }
}

pub(super) fn decode_wakers(c: &mut Cursor, s: &mut Sample, prev: &Sample) -> DResult<()> {
    let mut before = ThreadMatcher::of(Some(&prev.threads));
    s.system.losses.wake_pairs_full = c.delta(prev.system.losses.wake_pairs_full)?;
    for t in s.threads.iter_mut() {
        let was = before
            .get(t)
            .and_then(|p| p.why.as_deref())
            .and_then(|b| b.wakeups);
        let Some(w) = t.why.as_mut() else { continue };
        let (wakeups, list, rest) = match c.u8()? {
            // a reference without wakers (an older Sample's) counted none
            // yet: format 5 wrote 0 for a thread never woken
            0 => (Some(was.unwrap_or(0)), Vec::new(), 0),
            1 => {
                let wakeups = c.delta(was.unwrap_or(0))?;
                let (list, rest) = get_pairs(c, MAX_PAIRS)?;
                (Some(wakeups), list, rest)
            }
            2 => (None, Vec::new(), 0),
            _ => return Err(DecodeError("bad waker flag of a thread")),
        };
        set_wakers(w, wakeups, list, rest);
    }
    Ok(())
}

/// A Sample without the wakers section: its source did not count them.
pub(super) fn wakers_unknown(s: &mut Sample) {
    for t in s.threads.iter_mut() {
        if let Some(w) = t.why.as_mut() {
            set_wakers(w, None, Vec::new(), 0);
        }
    }
}

fn set_wakers(w: &mut Arc<WhySample>, wakeups: Option<u64>, list: Vec<(u32, u64)>, rest: u64) {
    if w.wakeups != wakeups || w.woken_by != list || w.woken_by_rest != rest {
        let w = Arc::make_mut(w);
        w.wakeups = wakeups;
        w.woken_by = list;
        w.woken_by_rest = rest;
    }
}

/// The outside threads (after the why figures; only when there are any).
pub(super) fn encode_outside(out: &mut Vec<u8>, list: &[OutsideThread]) {
    put_u64(out, list.len() as u64);
    let mut last = 0u64;
    for o in list {
        put_delta(out, o.tid.into(), last);
        last = o.tid.into();
        put_u64(out, o.pid.into());
        put_bytes(out, o.comm.as_bytes());
        put_bytes(out, o.process_comm.as_bytes());
    }
}

pub(super) fn decode_outside(c: &mut Cursor, b: &mut Budget) -> DResult<Vec<OutsideThread>> {
    // tid, pid and two name lengths: 4 bytes at least
    let n = c.count(4)?;
    b.items::<OutsideThread>(n)?;
    let mut out = Vec::with_capacity(n);
    let mut last = 0u64;
    for _ in 0..n {
        let tid = c.delta(last)?;
        last = tid;
        let tid = u32::try_from(tid).map_err(|_| DecodeError("outside tid over 32 bits"))?;
        let pid = c.u32()?;
        let comm = c.string()?;
        let process_comm = c.string()?;
        b.take(comm.len() + process_comm.len())?;
        out.push(OutsideThread {
            tid,
            pid,
            comm: comm.into(),
            process_comm: process_comm.into(),
        });
    }
    Ok(out)
}
