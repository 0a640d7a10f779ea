//! The "why" figures of a thread or process in batch JSON (the names are a
//! contract, README "Batch output"): `migrations_by_cause` and `blocked_on`
//! as objects of counts in the interval, `preempted_by` as a list of
//! `{"tid", "comm", "pid", "count"}`, largest first. All null where the
//! source cannot see them.
use serde::ser::SerializeMap;
use serde::Serialize;

use crate::model::interval::Row;
use crate::model::why::{BlockReason, MigCause, WhyCounts};

struct Causes<'a>(&'a WhyCounts);
struct Reasons<'a>(&'a WhyCounts);
struct Preemptors<'a>(&'a WhyCounts);

impl Serialize for Causes<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(Some(MigCause::ALL.len()))?;
        for c in MigCause::ALL {
            m.serialize_entry(c.key(), &self.0.migrations_by_cause[c as usize])?;
        }
        m.end()
    }
}

impl Serialize for Reasons<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(Some(BlockReason::ALL.len()))?;
        for r in BlockReason::ALL {
            m.serialize_entry(r.key(), &self.0.blocked_on[r as usize])?;
        }
        m.end()
    }
}

#[derive(Serialize)]
struct PreemptorRecord<'a> {
    tid: u32,
    comm: &'a str,
    pid: u32,
    count: u64,
}

impl Serialize for Preemptors<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_seq(self.0.preempted_by.iter().map(|p| PreemptorRecord {
            tid: p.tid,
            comm: &p.comm,
            pid: p.pid,
            count: p.count,
        }))
    }
}

/// Append the three entries to a row's JSON object.
pub fn entries<M: SerializeMap>(m: &mut M, row: &Row) -> Result<(), M::Error> {
    let w = row.why.as_ref();
    m.serialize_entry("migrations_by_cause", &w.map(Causes))?;
    m.serialize_entry("blocked_on", &w.map(Reasons))?;
    m.serialize_entry("preempted_by", &w.map(Preemptors))?;
    m.serialize_entry("preempted_by_other", &w.map(|w| w.preempted_by_rest))
}
