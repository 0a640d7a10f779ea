//! The findings in each sink, on fixture Samples whose trouble is known
//! (ui/fixtures/quota.rs: 16 spinners in a 0.5-CPU quota on a 2-CPU box,
//! throttled in 9 of 10 periods, each thread waiting 968.75 ms a second)
//! and on a healthy one (24 pool workers on 4 CPUs, waits of tens of
//! microseconds): batch JSON, `finding:KIND` triggers and the bundle they
//! make, and the bounded `/metrics` gauge.
use crate::common;

use common::incident_bundles as bundles;
use schedtop::collect::Seekable;
use schedtop::export::incident::{Event, IncidentOptions, Watch};
use schedtop::export::incident_writer::Render;
use schedtop::export::json::interval_record;
use schedtop::export::openmetrics::{render, ExportOptions, MAX_FINDING_SERIES};
use schedtop::export::openmetrics_totals::Totals;
use schedtop::model::findings::{FindingKind, Value};
use schedtop::model::trigger::parse;
use schedtop::model::{HostInfo, Sample, SourceKind};
use schedtop::ui::fixtures::{self, QUOTA_CGROUP};
use schedtop::ui::history::{History, DEFAULT_BYTE_CAP, DEFAULT_WINDOW_NS};

/// 15.5 s waited of 16 s runnable by the cgroup's threads in the second
const QUOTA_IMPACT: f64 = 15.5 / 16.0;

fn quota() -> (HostInfo, Vec<Sample>) {
    (fixtures::quota_host(), fixtures::quota_samples())
}

fn healthy() -> (HostInfo, Vec<Sample>) {
    (
        fixtures::host(SourceKind::Bpf),
        fixtures::worker_pool_samples(),
    )
}

#[test]
fn batch_json_carries_the_findings_in_the_contract_shape() {
    let (host, s) = quota();
    let rec = interval_record(&host, Some(&s[1]), &s[2]);
    let j = serde_json::to_value(&rec).unwrap();
    let f = j["findings"].as_array().unwrap();
    assert_eq!(f.len(), 2, "{f:#?}");
    assert_eq!(f[0]["kind"], "cpu_quota");
    assert_eq!(f[0]["severity"], "warning");
    assert_eq!(f[0]["subject"]["type"], "cgroup");
    assert_eq!(f[0]["subject"]["id"], QUOTA_CGROUP);
    assert_eq!(f[0]["subject"]["name"], "api.service");
    assert_eq!(f[0]["impact"], QUOTA_IMPACT);
    assert_eq!(f[0]["evidence"]["quota_cpus"], 0.5);
    assert_eq!(f[0]["evidence"]["throttled_periods"], 9);
    assert_eq!(f[0]["evidence"]["periods"], 10);
    assert_eq!(f[0]["evidence"]["threads"], 16);
    assert!(f[0]["text"].as_str().unwrap().contains("0.50 CPUs"));
    assert_eq!(f[1]["kind"], "too_many_threads");
    assert_eq!(f[1]["subject"]["type"], "process");
    assert_eq!(f[1]["subject"]["id"], fixtures::QUOTA_PID);
    // the first Sample has no interval; a healthy box has nothing
    let first = serde_json::to_value(interval_record(&host, None, &s[0])).unwrap();
    assert_eq!(first["findings"], serde_json::json!([]));
    let (host, s) = healthy();
    let ok = serde_json::to_value(interval_record(&host, Some(&s[1]), &s[2])).unwrap();
    assert_eq!(ok["findings"], serde_json::json!([]));
}

#[test]
fn finding_triggers_parse_and_a_bad_kind_lists_the_kinds() {
    let t = parse("finding:cpu_quota for 2s").unwrap();
    assert_eq!(t.for_ns, 2_000_000_000);
    let e = parse("finding:cpu_qouta").unwrap_err().to_string();
    assert!(!e.contains('\n'), "{e}");
    assert!(e.contains("\"cpu_qouta\""), "{e}");
    for k in FindingKind::ALL {
        assert!(e.contains(k.key()), "{e}");
    }
    assert!(parse("finding:").is_err());
    assert!(parse("finding:cpu_quota>1").is_err());
}

/// Every event a trigger's watch says over `samples`, bundles in `dir`.
fn watch(trigger: &str, host: &HostInfo, samples: &[Sample], dir: &std::path::Path) -> Vec<Event> {
    let mut o = IncidentOptions::in_dir(dir.to_path_buf());
    o.after_ns = 0;
    let mut w = Watch::new(vec![parse(trigger).unwrap()], o);
    let mut kept = History::new(host.clone(), DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP);
    let screens: Render =
        |_: &HostInfo,
         _: &mut dyn Seekable,
         _: &std::sync::Arc<schedtop::model::shared_interval::Interval>| Vec::new();
    let mut ev = Vec::new();
    for s in samples {
        kept.push(s);
        ev.extend(w.on_sample(s, host, &mut kept, screens));
    }
    ev.extend(w.finish());
    ev
}

fn written(ev: &[Event]) -> usize {
    ev.iter()
        .filter(|e| matches!(e, Event::Written { .. }))
        .count()
}

#[test]
fn a_finding_trigger_fires_on_the_quota_and_its_bundle_lists_the_findings() {
    let (host, s) = quota();
    let d = tempfile::tempdir().unwrap();
    let ev = watch("finding:cpu_quota", &host, &s, d.path());
    assert_eq!(written(&ev), 1, "{ev:?}");
    let b = bundles(d.path());
    let text = std::fs::read_to_string(b[0].join("summary.txt")).unwrap();
    assert!(text.contains("fired by:   finding:cpu_quota"), "{text}");
    assert!(text.contains("value:      97% impact"), "{text}");
    assert!(
        text.contains("  1. warning cpu_quota (97% impact): cgroup api.service is held"),
        "{text}"
    );
    assert!(text.contains("  2. warning too_many_threads"), "{text}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b[0].join("summary.json")).unwrap()).unwrap();
    assert_eq!(j["figure"], "cpu_quota");
    assert_eq!(j["value"], QUOTA_IMPACT);
    assert_eq!(j["hits"][0]["name"], QUOTA_CGROUP);
    assert_eq!(j["findings"][0]["kind"], "cpu_quota");
    assert_eq!(j["findings"][0]["subject"]["id"], QUOTA_CGROUP);

    // a kind the quota box does not show never fires there; nothing fires
    // on the healthy box
    let d = tempfile::tempdir().unwrap();
    assert_eq!(
        written(&watch("finding:cross_node_churn", &host, &s, d.path())),
        0
    );
    let (host, s) = healthy();
    let d = tempfile::tempdir().unwrap();
    let ev = watch("finding:cpu_quota", &host, &s, d.path());
    assert_eq!(written(&ev), 0, "{ev:?}");
    assert!(bundles(d.path()).is_empty());
}

fn finding_lines(om: &str) -> Vec<&str> {
    om.lines()
        .filter(|l| l.starts_with("schedtop_finding{"))
        .collect()
}

#[test]
fn the_finding_gauge_names_kind_and_subject_and_is_bounded() {
    let (host, s) = quota();
    let mut t = Totals::new(host);
    for x in s {
        t.update(x);
    }
    let om = render(&t, &ExportOptions::default(), 0);
    let lines = finding_lines(&om);
    assert_eq!(lines.len(), 2, "{om}");
    assert_eq!(
        lines[0],
        format!(
            "schedtop_finding{{kind=\"cpu_quota\",severity=\"warning\",subject_type=\"cgroup\",\
subject=\"{QUOTA_CGROUP}\",name=\"api.service\"}} {QUOTA_IMPACT}"
        )
    );
    assert!(lines[1].starts_with("schedtop_finding{kind=\"too_many_threads\""));
    assert!(om.contains("schedtop_omitted{level=\"finding\"} 0"), "{om}");

    // more findings than the bound: the first MAX_FINDING_SERIES are
    // written, the rest counted
    let extra = 7;
    let one = t.findings[0].clone();
    t.findings = (0..MAX_FINDING_SERIES + extra)
        .map(|i| {
            let mut f = one.clone();
            f.subject.id = Value::Text(format!("/svc/app-{i}"));
            f
        })
        .collect();
    let om = render(&t, &ExportOptions::default(), 0);
    assert_eq!(finding_lines(&om).len(), MAX_FINDING_SERIES);
    assert!(
        om.contains(&format!("schedtop_omitted{{level=\"finding\"}} {extra}")),
        "{om}"
    );

    // a healthy box: no series
    let (host, s) = healthy();
    let mut t = Totals::new(host);
    for x in s {
        t.update(x);
    }
    assert!(finding_lines(&render(&t, &ExportOptions::default(), 0)).is_empty());
}
