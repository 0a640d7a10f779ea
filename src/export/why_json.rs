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
    let w = row.why.as_deref();
    m.serialize_entry("migrations_by_cause", &w.map(Causes))?;
    m.serialize_entry("blocked_on", &w.map(Reasons))?;
    m.serialize_entry("preempted_by", &w.map(Preemptors))?;
    m.serialize_entry("preempted_by_other", &w.map(|w| w.preempted_by_rest))
}

#[cfg(test)]
mod tests {
    use crate::export::json::ThreadRecord;
    use crate::model::interval::derive;
    use crate::model::why::WhySample;
    use crate::model::{Sample, ThreadSample};

    fn thread(tid: u32, comm: &str, migr: u64, vol: u64, why: WhySample) -> ThreadSample {
        ThreadSample {
            tid,
            pid: tid,
            comm: comm.into(),
            process_comm: comm.into(),
            voluntary: vol,
            migrations: Some(migr),
            why: Some(why.into()),
            ..Default::default()
        }
    }

    #[test]
    fn the_contract_names_with_other_filling_the_unattributed() {
        let before = Sample {
            mono_ns: 1_000_000_000,
            threads: vec![
                thread(10, "victim", 5, 100, WhySample::default()),
                thread(11, "bully", 0, 0, WhySample::default()),
            ]
            .into(),
            ..Default::default()
        };
        let why = WhySample {
            migrations_by_cause: [1, 2, 0, 0, 0],
            blocked_on: [0, 0, 0, 30, 0, 0, 0, 0, 0],
            preempted_by: vec![(11, 7), (99, 1)],
            preempted_by_rest: 2,
        };
        let after = Sample {
            mono_ns: 2_000_000_000,
            threads: vec![
                // 4 migrations (1 unattributed), 32 blocks (2 unattributed)
                thread(10, "victim", 9, 132, why),
                thread(11, "bully", 0, 0, WhySample::default()),
            ]
            .into(),
            ..Default::default()
        };
        let d = derive(Some(&before), &after, 1.0);
        let v = serde_json::to_value(ThreadRecord(d.threads[0].clone())).unwrap();
        assert_eq!(
            v["migrations_by_cause"],
            serde_json::json!({"wakeup": 1, "load_balance": 2, "numa_balance": 0, "affinity": 0, "other": 1})
        );
        assert_eq!(v["blocked_on"]["pipe"], 30);
        assert_eq!(v["blocked_on"]["other"], 2);
        assert_eq!(v["blocked_on"].as_object().unwrap().len(), 9);
        assert_eq!(
            v["preempted_by"],
            serde_json::json!([
                {"tid": 11, "comm": "bully", "pid": 11, "count": 7},
                {"tid": 99, "comm": "", "pid": 0, "count": 1}
            ])
        );
        assert_eq!(v["preempted_by_other"], 2);
        // a source without the figures: null, not zeros
        let mut plain = d.threads[0].clone();
        plain.why = None;
        let v = serde_json::to_value(ThreadRecord(plain)).unwrap();
        assert!(v["blocked_on"].is_null() && v["preempted_by"].is_null());
    }
}
