//! Incident bundles from the live view's session: the `i` key makes one
//! from the kept history at the next Sample and the status line says where;
//! its recording holds the whole history and the next `--after`; a
//! trigger on the synthetic threads' waits fires by itself, once per
//! episode, and the cooldown holds a second one back; the bundle cap holds
//! (the oldest bundles go; incident_rotation.rs has more).
use crate::common;
use common::incident_bundles as bundles;
use std::path::Path;
use std::sync::Arc;

use schedtop::collect::Seekable;
use schedtop::export::incident::{IncidentOptions, Watch};
use schedtop::export::incident_writer::Render;
use schedtop::model::shared_interval::{Deriver, Interval};
use schedtop::model::trigger::parse;
use schedtop::model::{HostInfo, Sample};
use schedtop::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
use schedtop::record::Reader;
use schedtop::ui::action::Action;
use schedtop::ui::history::{History, DEFAULT_BYTE_CAP, DEFAULT_WINDOW_NS};
use schedtop::ui::{AppState, Mode, Session};

fn synth(n: usize) -> (HostInfo, Vec<Sample>) {
    let o = SynthOptions {
        threads: 20,
        samples: n,
        ..Default::default()
    };
    (synthetic_host(&o), synthetic_samples(&o))
}

fn session(host: &HostInfo, w: Watch) -> Session {
    let h = History::new(host.clone(), DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP);
    Session::live_with_history(AppState::new(host.clone(), Mode::Live), h).with_incidents(w)
}

fn opts(dir: &Path, after_s: u64) -> IncidentOptions {
    let mut o = IncidentOptions::in_dir(dir.to_path_buf());
    o.after_ns = after_s * 1_000_000_000;
    o
}

#[test]
fn the_i_key_writes_a_bundle_of_the_history_and_the_next_seconds() {
    let d = tempfile::tempdir().unwrap();
    let (host, samples) = synth(20);
    let mut s = session(&host, Watch::new(Vec::new(), opts(d.path(), 3)));
    for x in &samples[..10] {
        s.push_sample(x.clone());
    }
    s.apply(Action::FireIncident);
    assert!(s.status.as_ref().unwrap().text.contains("next Sample"));
    assert!(bundles(d.path()).is_empty());
    s.push_sample(samples[10].clone());
    let b = bundles(d.path());
    assert_eq!(b.len(), 1);
    let status = &s.status.as_ref().unwrap().text;
    assert!(status.contains("bundle written to"), "{status}");
    assert!(status.contains("the i key"), "{status}");
    for x in &samples[11..20] {
        s.push_sample(x.clone());
    }
    // the bundle is written on its own thread: the session's end waits for it
    drop(s);
    // 11 kept Samples, then 3 s more at 1 s each
    let r = Reader::open(&b[0].join("recording.schedtop")).unwrap();
    let times: Vec<u64> = (0..r.len()).filter_map(|i| r.time_of(i)).collect();
    let want: Vec<u64> = samples[..14].iter().map(|x| x.time_ns).collect();
    assert_eq!(times, want);
    let sum = std::fs::read_to_string(b[0].join("summary.txt")).unwrap();
    assert!(sum.contains("fired by:   the i key"), "{sum}");
    assert!(sum.contains("11 Samples kept"), "{sum}");
    // by hand: the offenders of the interval, ranked by the p99 wait
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b[0].join("summary.json")).unwrap()).unwrap();
    assert_eq!(j["ranked_by"], "wait_p99");
    let top = j["top_threads"].as_array().unwrap();
    assert_eq!(top.len(), 10, "{j}");
    let v: Vec<f64> = top.iter().map(|t| t["value"].as_f64().unwrap()).collect();
    assert!(v.windows(2).all(|w| w[0] >= w[1]) && v[0] > 0.0, "{v:?}");
    let shot = std::fs::read_to_string(b[0].join("cpus.txt")).unwrap();
    assert!(shot.contains("CPUs"), "{shot}");
}

#[test]
fn a_trigger_that_keeps_holding_fires_once() {
    let d = tempfile::tempdir().unwrap();
    let (host, samples) = synth(40);
    // synthetic threads wait: their p99 is above 1 ns whenever they ran
    let t = parse("thread:wait_p99>1ns").unwrap();
    let mut w = Watch::new(vec![t], opts(d.path(), 2));
    let mut kept = History::new(host.clone(), DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP);
    let mut events = Vec::new();
    let screens: Render = |_: &HostInfo, _: &mut dyn Seekable, _: &Arc<Interval>| {
        vec![("x.txt".to_string(), "x".to_string())]
    };
    for x in &samples {
        kept.push(x);
        events.extend(w.on_sample(x, &host, &mut kept, screens));
    }
    let written = events
        .iter()
        .filter(|e| matches!(e, schedtop::export::incident::Event::Written { .. }))
        .count();
    assert_eq!(written, 1, "{events:?}");
    assert_eq!(bundles(d.path()).len(), 1);
    w.finish();
    // the screens the renderer gave, written 0600 by the bundle's writer
    let x = bundles(d.path())[0].join("x.txt");
    assert_eq!(std::fs::read_to_string(&x).unwrap(), "x");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&x).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // the condition held throughout: one episode, no second firing
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, schedtop::export::incident::Event::Suppressed { .. })),
        "{events:?}"
    );
}

#[test]
fn cooldown_and_the_bundle_cap_hold_against_a_flapping_trigger() {
    let d = tempfile::tempdir().unwrap();
    let (host, samples) = synth(12);
    let mut o = opts(d.path(), 0);
    o.cooldown_ns = 0;
    o.max_bundles = 2;
    let mut w = Watch::new(Vec::new(), o);
    let mut kept = History::new(host.clone(), DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP);
    let screens: Render = |_: &HostInfo, _: &mut dyn Seekable, _: &Arc<Interval>| Vec::new();
    let mut said = Vec::new();
    for x in &samples {
        w.request("flap");
        kept.push(x);
        said.extend(
            w.on_sample(x, &host, &mut kept, screens)
                .iter()
                .map(schedtop::export::incident::describe),
        );
        // time passes between Samples: the bundle's writer is done
        said.extend(w.finish().iter().map(schedtop::export::incident::describe));
    }
    // the cap holds by rotation: the newest two are kept, the oldest went
    let b = bundles(d.path());
    assert_eq!(b.len(), 2, "{said:#?}");
    let fired: Vec<u64> = b
        .iter()
        .map(|p| {
            let j: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(p.join("summary.json")).unwrap())
                    .unwrap();
            j["time_ns"].as_u64().unwrap()
        })
        .collect();
    let mut fired = fired;
    fired.sort();
    assert_eq!(fired, [samples[10].time_ns, samples[11].time_ns]);
    assert_eq!(
        said.iter().filter(|l| l.contains("removed")).count(),
        10,
        "{said:#?}"
    );
    // a cooldown: one bundle, the rest held back
    let d2 = tempfile::tempdir().unwrap();
    let mut w = Watch::new(Vec::new(), opts(d2.path(), 0));
    let mut kept = History::new(host.clone(), DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP);
    let mut said = Vec::new();
    for x in &samples {
        w.request("flap");
        kept.push(x);
        said.extend(
            w.on_sample(x, &host, &mut kept, screens)
                .iter()
                .map(schedtop::export::incident::describe),
        );
        // time passes between Samples: the bundle's writer is done
        said.extend(w.finish().iter().map(schedtop::export::incident::describe));
    }
    assert_eq!(bundles(d2.path()).len(), 1);
    assert_eq!(said.iter().filter(|l| l.contains("cooldown")).count(), 11);
}

#[test]
fn an_unusable_directory_is_one_line_and_a_symlink_is_never_followed() {
    use schedtop::export::incident::check_dir;
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("file");
    std::fs::write(&f, "").unwrap();
    let e = check_dir(&f).unwrap_err().to_string();
    assert!(e.contains("not a directory") && !e.contains('\n'), "{e}");
    let e = format!("{:#}", check_dir(&d.path().join("missing")).unwrap_err());
    assert!(e.contains("No such file") && !e.contains('\n'), "{e}");
    // a symlink where the bundle would go: mkdir refuses, the next name is used
    let (host, samples) = synth(3);
    let target = d.path().join("elsewhere");
    std::fs::create_dir(&target).unwrap();
    let stamp = schedtop::util::names::file_name_ext(
        &host.hostname,
        std::time::UNIX_EPOCH + std::time::Duration::from_nanos(samples[1].time_ns),
        "d",
    );
    let name = format!(
        "schedtop-incident-{}",
        stamp.trim_start_matches("schedtop-").trim_end_matches(".d")
    );
    std::os::unix::fs::symlink(&target, d.path().join(&name)).unwrap();
    let mut w = Watch::new(Vec::new(), opts(d.path(), 0));
    let mut kept = History::new(host.clone(), DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP);
    let screens: Render = |_: &HostInfo, _: &mut dyn Seekable, _: &Arc<Interval>| Vec::new();
    kept.push(&samples[0]);
    w.on_sample(&samples[0], &host, &mut kept, screens);
    w.request("test");
    kept.push(&samples[1]);
    w.on_sample(&samples[1], &host, &mut kept, screens);
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "nothing through the link"
    );
    assert!(d
        .path()
        .join(format!("{name}-2"))
        .join("summary.txt")
        .exists());
}

#[test]
fn with_flight_the_bundle_asks_the_recorder_for_its_trace_inside_it() {
    use schedtop::export::flight_ring::{DumpRequest, DumpSummary};
    use schedtop::export::incident::Event;
    let d = tempfile::tempdir().unwrap();
    let (host, samples) = synth(4);
    let (tx, rx) = std::sync::mpsc::channel::<DumpRequest>();
    let mut w = Watch::new(Vec::new(), opts(d.path(), 0)).with_flight(tx);
    let mut kept = History::new(host.clone(), DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP);
    let screens: Render = |_: &HostInfo, _: &mut dyn Seekable, _: &Arc<Interval>| Vec::new();
    kept.push(&samples[0]);
    w.on_sample(&samples[0], &host, &mut kept, screens);
    assert!(rx.try_recv().is_err(), "no request before a firing");
    w.request("the i key");
    kept.push(&samples[1]);
    w.on_sample(&samples[1], &host, &mut kept, screens);
    let b = bundles(d.path());
    let req = rx.try_recv().expect("a trace request");
    assert_eq!(req.dir, b[0], "the trace goes into the bundle");
    let sum = std::fs::read_to_string(b[0].join("summary.txt")).unwrap();
    assert!(sum.contains("flight recorder's trace"), "{sum}");
    // the recorder thread answers; the next Sample reports it
    let done = DumpSummary {
        path: b[0].join("t.pftrace"),
        events: 7,
        span: std::time::Duration::from_secs(5),
        dropped: 0,
    };
    req.reply.send(Ok(done.clone())).unwrap();
    // the bundle's writer waits for it (it counts in the byte cap) and
    // passes it on; the next Sample reports it
    w.finish();
    kept.push(&samples[2]);
    let ev = w.on_sample(&samples[2], &host, &mut kept, screens);
    assert!(ev.contains(&Event::Trace(Ok(done))), "{ev:?}");
}

/// The live view's history kept by the collector thread (keeper.rs): the
/// history can hold a Sample the session has not received yet; `End`
/// shows it, and when it arrives it is not taken twice.
#[test]
fn a_history_kept_by_the_collector_rewinds_and_takes_no_sample_twice() {
    use schedtop::ui::keeper::Keeper;
    use schedtop::ui::replay::ReplayAction;
    let (host, samples) = synth(12);
    let mut k = Keeper::new(
        History::new(host.clone(), DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP),
        None,
    );
    let mut s = Session::live_with_shared_history(
        AppState::new(host.clone(), Mode::Live),
        k.history.clone(),
    );
    let mut d = Deriver::new(host.clone());
    for x in &samples[..10] {
        assert!(k.keep(&host, &d.next(x.clone())).is_empty());
    }
    for x in &samples[..9] {
        s.push_sample(x.clone());
    }
    assert_eq!(s.current().map(|c| c.time_ns), Some(samples[8].time_ns));
    s.apply(Action::Replay(ReplayAction::StepBack));
    assert!(schedtop::ui::rewind::rewound(&s));
    s.apply(Action::Replay(ReplayAction::Last));
    assert!(!schedtop::ui::rewind::rewound(&s));
    // the newest kept, which the session had not received
    assert_eq!(s.current().map(|c| c.time_ns), Some(samples[9].time_ns));
    let before = s.current().cloned();
    s.push_sample(samples[9].clone());
    assert_eq!(s.current().cloned(), before, "not twice");
    // taken twice, the interval would span 0 s
    assert!(s.derived.system.interval_s > 0.5, "{:?}", s.derived.system);
    k.keep(&host, &d.next(samples[10].clone()));
    s.push_sample(samples[10].clone());
    assert_eq!(s.current().map(|c| c.time_ns), Some(samples[10].time_ns));
    assert_eq!(s.history().map(|h| h.len()), Some(11));
    // the i key without a watch in the session goes to the feed
    assert_eq!(
        s.apply(Action::FireIncident),
        schedtop::ui::action::Effect::FireIncident
    );
}
