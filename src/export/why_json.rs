//! The "why" figures of a thread or process in batch JSON (the names are a
//! contract, docs/json-and-csv.md): `migrations_by_cause` and `blocked_on`
//! as objects of counts in the interval, `preempted_by` as a list of
//! `{"tid", "comm", "pid", "count"}`, largest first. All null where the
//! source cannot see them.
use serde::ser::SerializeMap;
use serde::Serialize;

use crate::model::interval::Row;
use crate::model::why::{BlockReason, MigCause, Preemptor, PseudoWaker, WhyCounts, PSEUDO_WAKERS};

struct Causes<'a>(&'a WhyCounts);
struct Reasons<'a>(&'a WhyCounts);
struct Preemptors<'a>(&'a [Preemptor]);
struct Irq<'a>(&'a WhyCounts);

impl Serialize for Irq<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let by = &self.0.woken_by_irq;
        let softirq = PseudoWaker::ALL
            .iter()
            .filter(|p| p.key().starts_with("softirq"))
            .fold(0u64, |a, &p| a.saturating_add(by[p as usize]));
        let mut m = ser.serialize_map(Some(PSEUDO_WAKERS + 1))?;
        m.serialize_entry("hardirq", &by[PseudoWaker::Hardirq as usize])?;
        m.serialize_entry("softirq", &softirq)?;
        for p in PseudoWaker::ALL {
            if p != PseudoWaker::Hardirq {
                m.serialize_entry(p.key(), &by[p as usize])?;
            }
        }
        m.end()
    }
}

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
        ser.collect_seq(self.0.iter().map(|p| PreemptorRecord {
            tid: p.tid,
            comm: &p.comm,
            pid: p.pid,
            count: p.count,
        }))
    }
}

/// Append the entries to a row's JSON object. Wakers: `woken_by` (threads,
/// or per process the waking processes), `woken_by_other` (those not
/// listed), `woken_by_irq` (interrupt context and the idle task) and
/// `wakeups` (what the three sum to): null where the wakers were not
/// counted, whatever the other figures.
pub fn entries<M: SerializeMap>(m: &mut M, row: &Row) -> Result<(), M::Error> {
    let w = row.why.as_deref();
    let k = w.filter(|w| w.wakers_known());
    m.serialize_entry("migrations_by_cause", &w.map(Causes))?;
    m.serialize_entry("blocked_on", &w.map(Reasons))?;
    m.serialize_entry("preempted_by", &w.map(|w| Preemptors(&w.preempted_by)))?;
    m.serialize_entry("preempted_by_other", &w.map(|w| w.preempted_by_rest))?;
    m.serialize_entry("woken_by", &k.map(|w| Preemptors(&w.woken_by)))?;
    m.serialize_entry("woken_by_other", &k.map(|w| w.woken_by_rest))?;
    m.serialize_entry("woken_by_irq", &k.map(Irq))?;
    m.serialize_entry("wakeups", &k.and_then(|w| w.wakeups))
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
        // wakers counted, none yet
        let counted = WhySample {
            wakeups: Some(0),
            ..WhySample::default()
        };
        let before = Sample {
            mono_ns: 1_000_000_000,
            threads: vec![
                thread(10, "victim", 5, 100, counted.clone()),
                thread(11, "bully", 0, 0, counted.clone()),
            ]
            .into(),
            ..Default::default()
        };
        let why = WhySample {
            migrations_by_cause: [1, 2, 0, 0, 0],
            blocked_on: [0, 0, 0, 30, 0, 0, 0, 0, 0],
            preempted_by: vec![(11, 7), (99, 1)],
            preempted_by_rest: 2,
            // 40 wakeups: 25 by the bully, 4 by a gone thread, 3 not
            // listed, 6 by hardirqs, 2 by timer softirqs
            woken_by: vec![(11, 25), (98, 4), (0xffff_ff00, 6), (0xffff_ff01, 2)],
            woken_by_rest: 3,
            wakeups: Some(40),
        };
        let after = Sample {
            mono_ns: 2_000_000_000,
            threads: vec![
                // 4 migrations (1 unattributed), 32 blocks (2 unattributed)
                thread(10, "victim", 9, 132, why),
                thread(11, "bully", 0, 0, counted),
            ]
            .into(),
            ..Default::default()
        };
        let d = derive(Some(&before), &after, 1.0);
        let v = serde_json::to_value(ThreadRecord(crate::model::interval::Row::clone(
            &d.threads[0],
        )))
        .unwrap();
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
        assert_eq!(
            v["woken_by"],
            serde_json::json!([
                {"tid": 11, "comm": "bully", "pid": 11, "count": 25},
                {"tid": 98, "comm": "", "pid": 0, "count": 4}
            ])
        );
        assert_eq!(v["woken_by_other"], 3);
        assert_eq!(
            v["woken_by_irq"],
            serde_json::json!({"hardirq": 6, "softirq": 2, "softirq_timer": 2, "softirq_net": 0,
                "softirq_block": 0, "softirq_other": 0, "idle": 0})
        );
        // every wakeup counted is in one of the three
        assert_eq!(v["wakeups"], 25 + 4 + 3 + 6 + 2);
        // the victim's process: woken by the bully's process, the irqs
        // summed the same way
        let p = d.processes.iter().find(|p| p.pid == 10).unwrap();
        let v = serde_json::to_value(ThreadRecord(crate::model::interval::Row::clone(p))).unwrap();
        assert_eq!(
            v["woken_by"],
            serde_json::json!([{"tid": 0, "comm": "bully", "pid": 11, "count": 25}])
        );
        assert_eq!(v["woken_by_other"], 3 + 4);
        assert_eq!(v["woken_by_irq"]["hardirq"], 6);
        assert_eq!(v["wakeups"], 40);
        // a source without the figures: null, not zeros
        let mut plain = crate::model::interval::Row::clone(&d.threads[0]);
        plain.why = None;
        let v = serde_json::to_value(ThreadRecord(plain)).unwrap();
        assert!(v["blocked_on"].is_null() && v["preempted_by"].is_null());
        assert!(v["woken_by"].is_null() && v["woken_by_irq"].is_null());
        // wakers not counted (their probe off): the waker figures null,
        // the others as they are
        let mut no_wakers = crate::model::interval::Row::clone(&d.threads[0]);
        let mut w = no_wakers.why.as_deref().unwrap().clone();
        w.wakeups = None;
        no_wakers.why = Some(w.into());
        let v = serde_json::to_value(ThreadRecord(no_wakers)).unwrap();
        assert_eq!(v["blocked_on"]["pipe"], 30);
        for k in ["woken_by", "woken_by_other", "woken_by_irq", "wakeups"] {
            assert!(v[k].is_null(), "{k}: {v}");
        }
    }
}
