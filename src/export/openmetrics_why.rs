//! The "why" families of one level of the exporter: migrations by cause and
//! voluntary switch-outs by what the thread blocked on, as counters with a
//! `cause` / `reason` label. "other" holds what the probe could not
//! attribute, so a level's causes sum to its `migrations` counter and its
//! reasons to its voluntary `switches`. Preemptors are left out: a
//! (victim, preemptor) pair per series would be unbounded.
use prometheus_client::metrics::MetricType;

use super::openmetrics_encode::{Family, Labels, Value};
use super::openmetrics_totals::Counts;
use crate::model::why::{BlockReason, MigCause};

pub struct WhyFamilies {
    causes: Family,
    reasons: Family,
}

/// The two names and helps of a level.
pub struct WhyNames {
    pub causes: (&'static str, &'static str),
    pub reasons: (&'static str, &'static str),
}

pub const SYSTEM: WhyNames = WhyNames {
    causes: (
        "schedtop_migrations_by_cause",
        "Migrations of threads by cause: wakeup, load_balance, numa_balance, affinity, other (unattributed).",
    ),
    reasons: (
        "schedtop_blocked_on",
        "Voluntary switch-outs by what the thread blocked on (its syscall; other: unattributed).",
    ),
};
pub const PROCESS: WhyNames = WhyNames {
    causes: (
        "schedtop_process_migrations_by_cause",
        "Migrations of a process's threads by cause.",
    ),
    reasons: (
        "schedtop_process_blocked_on",
        "Voluntary switch-outs of a process's threads by what they blocked on.",
    ),
};
pub const THREAD: WhyNames = WhyNames {
    causes: (
        "schedtop_thread_migrations_by_cause",
        "Migrations of one thread by cause.",
    ),
    reasons: (
        "schedtop_thread_blocked_on",
        "Voluntary switch-outs of one thread by what it blocked on.",
    ),
};

impl WhyFamilies {
    pub fn new(n: &WhyNames) -> WhyFamilies {
        WhyFamilies {
            causes: Family::new(n.causes.0, n.causes.1, MetricType::Counter),
            reasons: Family::new(n.reasons.0, n.reasons.1, MetricType::Counter),
        }
    }

    /// Sample lines `c` adds.
    pub fn cost(c: &Counts) -> usize {
        c.migrations_by_cause.map_or(0, |m| m.len()) + c.blocked_on.map_or(0, |b| b.len())
    }

    pub fn push(&mut self, labels: &Labels, c: &Counts) {
        let with = |k: &'static str, v: &str| {
            let mut l = labels.clone();
            l.push((k, v.to_string()));
            l
        };
        if let Some(m) = &c.migrations_by_cause {
            for cause in MigCause::ALL {
                let v = Value::Counter(m[cause as usize] as f64);
                self.causes.rows.push((with("cause", cause.key()), v));
            }
        }
        if let Some(b) = &c.blocked_on {
            for reason in BlockReason::ALL {
                let v = Value::Counter(b[reason as usize] as f64);
                self.reasons.rows.push((with("reason", reason.key()), v));
            }
        }
    }

    pub fn into_vec(self) -> [Family; 2] {
        [self.causes, self.reasons]
    }
}

#[cfg(test)]
mod tests {
    use crate::export::openmetrics::{render, ExportOptions};
    use crate::export::openmetrics_totals::Totals;
    use crate::model::why::WhySample;
    use crate::model::{Sample, ThreadSample};

    fn sample(s: u64, vol: u64, migr: u64, why: WhySample) -> Sample {
        Sample {
            mono_ns: s * 1_000_000_000,
            time_ns: s * 1_000_000_000,
            threads: vec![ThreadSample {
                tid: 5,
                pid: 5,
                comm: "w".into(),
                process_comm: "w".into(),
                start_time_ns: 1,
                voluntary: vol,
                migrations: Some(migr),
                why: Some(why.into()),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }
    }

    #[test]
    fn causes_sum_to_migrations_and_reasons_to_voluntary_switches() {
        let mut t = Totals::new(crate::record::testdata::synthetic_host(&Default::default()));
        // first seen: 10 voluntary (8 on a pipe), 3 migrations (2 affinity)
        let mut a = WhySample::default();
        a.blocked_on[3] = 8;
        a.migrations_by_cause[3] = 2;
        t.update(sample(1, 10, 3, a.clone()));
        // then 20 more voluntary (15 more on a pipe, 4 sleeps), 5 more
        // migrations (4 by load balance)
        let mut b = a;
        b.blocked_on[3] += 15;
        b.blocked_on[1] += 4;
        b.migrations_by_cause[1] += 4;
        t.update(sample(2, 30, 8, b));
        let o = ExportOptions {
            per_thread: true,
            ..Default::default()
        };
        let om = render(&t, &o, 0);
        let has = |line: &str| assert!(om.contains(&format!("{line}\n")), "{line}\n{om}");
        has("schedtop_blocked_on_total{reason=\"pipe\"} 23.0");
        has("schedtop_blocked_on_total{reason=\"sleep\"} 4.0");
        // 30 voluntary, 27 attributed
        has("schedtop_blocked_on_total{reason=\"other\"} 3.0");
        has("schedtop_migrations_by_cause_total{cause=\"affinity\"} 2.0");
        has("schedtop_migrations_by_cause_total{cause=\"load_balance\"} 4.0");
        has("schedtop_migrations_by_cause_total{cause=\"other\"} 2.0");
        has("schedtop_process_blocked_on_total{pid=\"5\",comm=\"w\",reason=\"pipe\"} 23.0");
        has("schedtop_thread_migrations_by_cause_total{pid=\"5\",tid=\"5\",comm=\"w\",cause=\"other\"} 2.0");
        has("schedtop_migrations_total 8.0");
    }
}
