//! Every per-thread counter descriptor (model/counters.rs) reaches every
//! sink, generated from the table: two hand-built Samples whose counters
//! grow by a known, different amount in each slot go through a recording
//! (the codec), `dump` JSON and CSV, the interval rows and table columns,
//! and `/metrics` at every level (read back by a strict OpenMetrics
//! parser). A descriptor a sink leaves out fails here by name.
use std::collections::BTreeMap;

use openmetrics_parser::openmetrics::parse_openmetrics;
use openmetrics_parser::OpenMetricsValue;
use schedtop::export::dump::{csv_header, dump, DumpOptions, Format};
use schedtop::export::openmetrics::{render, ExportOptions};
use schedtop::export::openmetrics_totals::Totals;
use schedtop::model::counters::{
    CounterDesc, CounterUnit, Counters, Display, COUNTERS, CTR_CROSS_NODE_MIGRATIONS,
    THREAD_COUNTERS,
};
use schedtop::model::figures::Level;
use schedtop::model::interval::derive;
use schedtop::model::metrics;
use schedtop::model::{Sample, ThreadSample};
use schedtop::record::testdata::{synthetic_host, SynthOptions};
use schedtop::record::{codec, Reader, Writer};
use schedtop::ui::columns::{columns_of, Column};
use schedtop::ui::View;

const TID: u32 = 4321;
/// the interval: 2 s by the monotonic clock
const DT_S: f64 = 2.0;

/// What each slot held in the first Sample, and what it grew by.
fn base(slot: usize) -> u64 {
    1_000 * (slot as u64 + 1)
}
fn grow(slot: usize) -> u64 {
    // distinct per slot, so a label mixed up with another shows
    (slot as u64 + 1) * 1_000_000 + 7
}

fn counters(with_growth: bool) -> Counters {
    let pairs: Vec<(usize, u64)> = (0..THREAD_COUNTERS)
        .map(|s| (s, base(s) + if with_growth { grow(s) } else { 0 }))
        .collect();
    Counters::of(&pairs)
}

fn sample(second: bool) -> Sample {
    let t = ThreadSample {
        tid: TID,
        pid: TID,
        comm: "worker".into(),
        process_comm: "worker".into(),
        start_time_ns: 1,
        voluntary: if second { 50 } else { 10 },
        oncpu_ns: if second { 1_500_000_000 } else { 0 },
        migrations: Some(0),
        counters: counters(second),
        ..Default::default()
    };
    let at = if second { 3_000_000_000 } else { 1_000_000_000 };
    Sample {
        time_ns: 1_795_000_000_000_000_000 + at,
        mono_ns: at,
        threads: vec![t].into(),
        ..Default::default()
    }
}

/// The descriptor's interval total and (label, value) pairs.
fn expected(d: &CounterDesc) -> (u64, Vec<(&'static str, u64)>) {
    let by: Vec<(&'static str, u64)> = match d.family {
        Some(f) => f.values.iter().copied().zip(d.slots().map(grow)).collect(),
        None => vec![(d.key, grow(d.first_slot))],
    };
    (by.iter().map(|p| p.1).sum(), by)
}

fn recording(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("counters.schedtop");
    let host = synthetic_host(&SynthOptions::default());
    let mut w = Writer::open(&path, &host, Default::default()).unwrap();
    for s in [sample(false), sample(true)] {
        w.write_sample(&s).unwrap();
    }
    w.finish().unwrap();
    path
}

fn dumped(path: &std::path::Path, format: Format) -> String {
    let opts = DumpOptions {
        format,
        from: None,
        to: None,
        pids: vec![],
    };
    let mut out = Vec::new();
    dump(&mut Reader::open(path).unwrap(), &opts, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_codec_carries_every_slot() {
    let (a, b) = (sample(false), sample(true));
    for (cur, prev) in [(&a, None), (&b, Some(&a)), (&b, None)] {
        let back = codec::decode(&codec::encode(cur, prev), prev).unwrap();
        assert_eq!(back.threads[0].counters, cur.threads[0].counters);
        for d in COUNTERS {
            for s in d.slots() {
                assert_eq!(
                    back.threads[0].counters.get(s),
                    cur.threads[0].counters.get(s)
                );
            }
        }
    }
}

#[test]
fn json_and_csv_through_a_recording() {
    let dir = tempfile::tempdir().unwrap();
    let path = recording(dir.path());
    let text = dumped(&path, Format::Json);
    let v: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
    let t = &v["threads"][0];
    assert_eq!(t["tid"], TID);
    let csv = dumped(&path, Format::Csv);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], csv_header());
    let header: Vec<&str> = lines[0].split(',').collect();
    let row: Vec<&str> = lines[1].split(',').collect();
    let cell = |name: &str| {
        let i = header.iter().position(|h| *h == name);
        row[i.unwrap_or_else(|| panic!("CSV has no {name} column: {}", lines[0]))]
    };
    for d in COUNTERS {
        let (total, by) = expected(d);
        assert_eq!(t[d.key], total, "JSON {}: {t}", d.key);
        assert_eq!(cell(d.key), total.to_string(), "CSV {}", d.key);
        if let Some(f) = d.family {
            let want: BTreeMap<String, u64> = by.iter().map(|&(k, n)| (k.to_string(), n)).collect();
            let got: BTreeMap<String, u64> =
                serde_json::from_value(t[f.by_label_key].clone()).unwrap_or_default();
            assert_eq!(got, want, "JSON {}: {t}", f.by_label_key);
            let pairs: Vec<String> = by.iter().map(|(k, n)| format!("{k}:{n}")).collect();
            assert_eq!(
                cell(f.by_label_key),
                pairs.join(" "),
                "CSV {}",
                f.by_label_key
            );
        }
    }
}

#[test]
fn every_column_shows_its_counter() {
    let (a, b) = (sample(false), sample(true));
    let d = derive(Some(&a), &b, 1.0);
    let row = &d.threads[0];
    let proc_row = &d.processes[0];
    for desc in COUNTERS {
        let (total, _) = expected(desc);
        assert_eq!(row.counter(desc), Some(total), "{}", desc.key);
        assert_eq!(proc_row.counter(desc), Some(total), "process {}", desc.key);
        let Some(c) = desc.column else { continue };
        let m = metrics::by_key(c.key).unwrap_or_else(|| panic!("no column {}", c.key));
        assert_eq!(m.column.map(|s| s.title), Some(c.title), "{}", c.key);
        assert_eq!(m.help, c.help, "{}: help line", c.key);
        for view in [View::Threads, View::Processes] {
            assert!(
                columns_of(view).contains(&Column(c.key)),
                "{view:?} lacks {}",
                c.title
            );
        }
        let want = match c.display {
            Display::PerSecond => total as f64 / DT_S,
            Display::ShareOfInterval => total as f64 / 1e9 / DT_S * 100.0,
        };
        let got = m.value(row).number().unwrap();
        assert!(
            (got - want).abs() < 1e-9 * want.max(1.0),
            "{}: {got} vs {want}",
            c.key
        );
        assert!(!Column(c.key).cell(row).is_empty());
    }
}

#[test]
fn openmetrics_has_every_counter_at_every_level() {
    let mut t = Totals::new(synthetic_host(&SynthOptions::default()));
    t.update(sample(false));
    t.update(sample(true));
    let o = ExportOptions {
        top: 100,
        per_thread: true,
        max_series: 100_000,
    };
    let om = render(&t, &o, 0);
    let parsed = parse_openmetrics(&om).unwrap_or_else(|e| panic!("{e:?}\n{om}"));
    for d in COUNTERS {
        // the running total since start: the thread was first seen with
        // no baseline, so all it had counted (the first Sample's too)
        let by: Vec<(&str, u64)> = match d.family {
            Some(f) => f
                .values
                .iter()
                .copied()
                .zip(d.slots().map(|s| base(s) + grow(s)))
                .collect(),
            None => vec![("", base(d.first_slot) + grow(d.first_slot))],
        };
        let scale = if d.unit == CounterUnit::Ns { 1e-9 } else { 1.0 };
        for level in Level::ALL {
            let mut name = format!("{}{}", level.prefix(), d.om_stem);
            if d.unit == CounterUnit::Ns {
                name.push_str("_seconds");
            }
            let fam = parsed
                .families
                .get(&name)
                .unwrap_or_else(|| panic!("{name} ({}) missing\n{om}", d.key));
            let help = format!(
                "# HELP {name} {}",
                d.om_help.replace("{whose}", level.whose())
            );
            assert!(om.lines().any(|l| l == help), "{name}: help\n{om}");
            for (label, n) in &by {
                let s = fam
                    .iter_samples()
                    .find(|s| match d.family {
                        Some(f) => {
                            s.get_labelset().unwrap().get_label_value(f.label) == Some(label)
                        }
                        None => true,
                    })
                    .unwrap_or_else(|| panic!("{name} {label} missing\n{om}"));
                let v = match &s.value {
                    OpenMetricsValue::Counter(c) => c.value.as_f64(),
                    other => panic!("{name}: {other:?}"),
                };
                let want = *n as f64 * scale;
                assert!(
                    (v - want).abs() <= 1e-9 * want.max(1.0),
                    "{name} {label}: {v} vs {want}"
                );
            }
        }
    }
}

/// A recording from before the counters (format 2, BPF source) carried
/// cross-node migrations in a field of their own: they read into the slot.
#[test]
fn an_older_recording_reads_cross_node_into_its_slot() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v2.schedtop");
    let mut r = Reader::open(&path).unwrap();
    let mut seen = 0;
    for i in 0..r.len() {
        let s = r.sample(i).unwrap();
        for t in s.threads.iter() {
            let c = t
                .counters
                .known()
                .expect("a BPF recording's threads have counters");
            for (slot, &v) in c.iter().enumerate() {
                if slot != CTR_CROSS_NODE_MIGRATIONS {
                    assert_eq!(v, 0, "slot {slot} was not in format 2");
                }
            }
            seen += 1;
        }
    }
    assert!(seen > 0);
}
