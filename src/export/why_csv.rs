//! The "why" figures of a thread in `dump --format csv`: one column per
//! migration cause (`mig_wakeup` …) and per block reason (`blocked_futex`
//! …), counts in the interval with "other" holding what the probe could not
//! attribute (so the causes sum to the interval's migrations and the reasons
//! to its voluntary switches, as in the JSON); then `preempted_by`, the top
//! preemptors as `comm[tid]:count` separated by spaces, and
//! `preempted_by_other`. Empty fields where the source cannot see them.
use super::csv_field::csv_field;
use crate::model::interval::Row;
use crate::model::why::{BlockReason, MigCause};

/// The columns, each with a leading comma (appended to the CSV header).
pub fn header() -> String {
    let mut h = String::new();
    for c in MigCause::ALL {
        h.push_str(",mig_");
        h.push_str(c.key());
    }
    for r in BlockReason::ALL {
        h.push_str(",blocked_");
        h.push_str(r.key());
    }
    h.push_str(",preempted_by,preempted_by_other");
    h
}

/// A row's fields, each with a leading comma, in `header`'s order.
pub fn fields(row: &Row) -> String {
    let Some(w) = row.why.as_ref() else {
        return ",".repeat(MigCause::ALL.len() + BlockReason::ALL.len() + 2);
    };
    let mut line = String::new();
    for n in w.migrations_by_cause.iter().chain(&w.blocked_on) {
        line.push(',');
        line.push_str(&n.to_string());
    }
    let who: Vec<String> = w
        .preempted_by
        .iter()
        .map(|p| format!("{}[{}]:{}", p.comm, p.tid, p.count))
        .collect();
    line.push(',');
    line.push_str(&csv_field(&who.join(" ")));
    line.push(',');
    line.push_str(&w.preempted_by_rest.to_string());
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::why::{Preemptor, WhyCounts};

    fn row(why: Option<WhyCounts>) -> Row {
        let s = crate::model::Sample {
            threads: vec![crate::model::ThreadSample {
                tid: 1,
                pid: 1,
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        };
        let mut r = Row::clone(&crate::model::interval::derive(None, &s, 1.0).threads[0]);
        r.why = why.map(Into::into);
        r
    }

    #[test]
    fn one_field_per_column_and_hostile_names_stay_in_theirs() {
        let cols = header().matches(',').count();
        assert_eq!(cols, 5 + 9 + 2);
        assert!(header().starts_with(",mig_wakeup,mig_load_balance,"));
        assert!(header().ends_with(",blocked_other,preempted_by,preempted_by_other"));
        assert_eq!(fields(&row(None)).matches(',').count(), cols);
        let w = WhyCounts {
            migrations_by_cause: [1, 2, 0, 3, 0],
            blocked_on: [5, 0, 0, 0, 0, 0, 0, 0, 1],
            preempted_by: vec![
                Preemptor {
                    tid: 7,
                    pid: 7,
                    comm: "a,\"b\"\n".into(),
                    count: 9,
                },
                Preemptor {
                    tid: 8,
                    pid: 0,
                    comm: String::new(),
                    count: 2,
                },
            ],
            preempted_by_rest: 4,
            ..WhyCounts::default()
        };
        let f = fields(&row(Some(w)));
        assert_eq!(
            f,
            ",1,2,0,3,0,5,0,0,0,0,0,0,0,1,\"a,\"\"b\"\"\\x0a[7]:9 [8]:2\",4"
        );
    }
}
