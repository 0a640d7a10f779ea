//! One Interval per Sample: the live view (the whole event loop, keys
//! pressed), a trigger that fires and writes its bundle, the exporter and
//! the recorder all fed by one sampler, and the process's derivation
//! counter says each Sample was derived exactly once. (Alone in its test
//! binary: the counter is process-wide.)
use crate::common;

use std::sync::{Arc, Mutex};

use anyhow::Result;
use ratatui::crossterm::event::KeyCode;

use common::ui_kit::{frames, run_script, ScriptedFeed, Step};
use schedtop::cli::TriggerArgs;
use schedtop::collect::sampler::{Flow, Limits, Wake};
use schedtop::collect::sink::{Fanout, Sink};
use schedtop::collect::MemorySource;
use schedtop::export::openmetrics::{render, ExportOptions};
use schedtop::export::openmetrics_totals::Totals;
use schedtop::incident_cli::Headless;
use schedtop::model::shared_interval::{derivations, Interval};
use schedtop::model::{HostInfo, SourceKind};
use schedtop::record::reader::Reader;
use schedtop::record::recorder::FileRecorder;
use schedtop::record::OpenMode;
use schedtop::ui::feed::FeedEvent;
use schedtop::ui::{fixtures, AppState, Mode, Session};

/// The exporter's totals, as `serve` keeps them.
struct Exporter(Arc<Mutex<Totals>>);

impl Sink for Exporter {
    fn take(&mut self, _: &HostInfo, iv: &Arc<Interval>) -> Result<Flow> {
        self.0.lock().unwrap().take(iv);
        Ok(Flow::Continue)
    }
}

/// What the live view's feed hands to the UI thread.
struct ToView(Arc<Mutex<Vec<Arc<Interval>>>>);

impl Sink for ToView {
    fn take(&mut self, _: &HostInfo, iv: &Arc<Interval>) -> Result<Flow> {
        self.0.lock().unwrap().push(iv.clone());
        Ok(Flow::Continue)
    }
}

fn value(scrape: &str, name: &str) -> f64 {
    scrape
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {name} in\n{scrape}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn every_sink_shares_one_derivation_per_sample() {
    let host = fixtures::host(SourceKind::Bpf);
    let samples = fixtures::samples(SourceKind::Bpf);
    let n = samples.len() as u64;
    assert!(n >= 4, "{n} fixture Samples");
    let d = tempfile::tempdir().unwrap();
    let rec = d.path().join("all.schedtop");
    let inc = d.path().join("inc");
    std::fs::create_dir(&inc).unwrap();

    let before = derivations();
    let totals = Arc::new(Mutex::new(Totals::new(host.clone())));
    let shown = Arc::new(Mutex::new(Vec::new()));
    let mut fan = Fanout::new(host.clone());
    fan.add(Box::new(
        FileRecorder::open(&rec, &host, OpenMode::CreateNew, None).unwrap(),
    ));
    // holds from the first interval on: it fires and writes a bundle
    let trigger = Headless::from_args(&TriggerArgs {
        triggers: vec![schedtop::model::trigger::parse("system:invol_per_s >= 0").unwrap()],
        incident_dir: Some(inc.clone()),
        after: Some(0),
        ..Default::default()
    })
    .unwrap()
    .expect("a trigger asks for a watch");
    fan.add(Box::new(trigger));
    fan.add(Box::new(Exporter(totals.clone())));
    fan.add(Box::new(ToView(shown.clone())));
    let mut source = MemorySource::new(host.clone(), samples);
    let why = fan
        .run(
            &mut source,
            1,
            Limits {
                count: Some(n),
                ..Default::default()
            },
            |_| Wake::Deadline,
        )
        .unwrap();
    assert_eq!(why, "count reached");

    // the live view: the whole event loop, fed the shared Intervals one per
    // turn, with keys pressed between them (sort, processes, CPUs, back)
    let ivs: Vec<Arc<Interval>> = shown.lock().unwrap().clone();
    assert_eq!(ivs.len() as u64, n);
    let groups = ivs
        .iter()
        .map(|iv| vec![FeedEvent::Interval(iv.clone())])
        .collect();
    let mut feed = ScriptedFeed::events_per_turn(host.clone(), groups);
    let mut session = Session::live(AppState::new(host.clone(), Mode::Live));
    let mut steps = frames(2);
    steps.push(Step::Key(KeyCode::Char('>')));
    steps.extend(frames(1));
    steps.push(Step::Key(KeyCode::Char('H')));
    steps.extend(frames(1));
    steps.push(Step::Key(KeyCode::Char('c')));
    steps.extend(frames(1));
    steps.push(Step::Key(KeyCode::Esc));
    steps.extend(frames(n as usize));
    let screen = run_script(&mut session, &mut feed, steps, 120, 30);
    // the screen shows the newest interval's rows: the very Interval the
    // other sinks had (not a copy derived again)
    let last = ivs.last().unwrap();
    assert!(
        Arc::ptr_eq(&session.app.derived, last),
        "the view's interval"
    );
    let busiest = last
        .processes
        .iter()
        .max_by(|a, b| a.cpu_pct.get().partial_cmp(&b.cpu_pct.get()).unwrap())
        .unwrap();
    assert!(screen.contains(&*busiest.comm), "{screen}");

    // the bundle's screens were drawn from the firing Interval
    let bundles = common::incident_bundles(&inc);
    assert_eq!(bundles.len(), 1, "{bundles:?}");
    for f in ["threads.txt", "cpus.txt", "cgroups.txt", "summary.json"] {
        assert!(bundles[0].join(f).exists(), "{f} in {:?}", bundles[0]);
    }
    // the recorder wrote every Sample
    assert_eq!(Reader::open(&rec).unwrap().len() as u64, n);
    // the exporter summed the Intervals' increments: its system total of
    // involuntary switches is every thread's own counter as last seen (its
    // whole history when first seen, then its deltas), counted by hand
    let mut last_seen = std::collections::BTreeMap::new();
    for s in fixtures::samples(SourceKind::Bpf) {
        for t in s.threads.iter() {
            last_seen.insert((t.tid, t.start_time_ns), t.involuntary);
        }
    }
    let by_hand: u64 = last_seen.values().sum();
    let t = totals.lock().unwrap();
    assert_eq!(t.samples, n);
    assert_eq!(t.system.involuntary, by_hand);
    let scrape = render(&t, &ExportOptions::default(), 0);
    drop(t);

    // exactly one derivation per Sample, whatever read it
    let derived = derivations() - before;
    assert_eq!(derived, n, "derivations for {n} Samples");
    assert_eq!(
        value(&scrape, "schedtop_interval_derivations_total"),
        (before + n) as f64
    );
    assert_eq!(value(&scrape, "schedtop_samples_total"), n as f64);
}
