//! A directory of recordings (`record --dir`) in the replay view: `t`/`T`
//! step across file boundaries, `j` jumps into another file, and the first
//! Sample of a file has rates (from the last Sample of the file before).
use crate::common;

use common::ui_kit::press;
use ratatui::crossterm::event::KeyCode;

use schedtop::record::dir::DirSource;
use schedtop::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
use schedtop::record::{WriteOptions, Writer};
use schedtop::ui::replay::Replay;
use schedtop::ui::Session;
use schedtop::util::clock::rfc3339;

#[test]
fn steps_and_jumps_cross_file_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let o = SynthOptions {
        threads: 5,
        samples: 9,
        ..Default::default()
    };
    let all = synthetic_samples(&o);
    for (k, part) in all.chunks(3).enumerate() {
        let path = dir.path().join(format!("part{k}.schedtop"));
        let mut w = Writer::open(&path, &synthetic_host(&o), WriteOptions::default()).unwrap();
        for s in part {
            w.write_sample(s).unwrap();
        }
        w.finish().unwrap();
    }
    let src = DirSource::open(dir.path()).unwrap();
    let rec = Replay::from_source(Box::new(src), "dir".into()).unwrap();
    let mut app = schedtop::ui::Session::replay_at(rec, 1, false);
    app.apply(schedtop::ui::action::Action::Resize(120, 40));
    let index = |app: &Session| app.replay.as_ref().unwrap().index.unwrap();
    // t from the last Sample of file 0 to the first of file 1
    press(&mut app, KeyCode::Char('t'));
    press(&mut app, KeyCode::Char('t'));
    assert_eq!(index(&app), 3);
    assert_eq!(app.current(), Some(&all[3]));
    // rates at the boundary: some thread switched in that interval
    // rates at the boundary come from the pair (Sample 2, Sample 3)
    let dt = (all[3].mono_ns - all[2].mono_ns) as f64 / 1e9;
    let mut checked = 0;
    for t in &all[3].threads {
        let Some(p) = all[2]
            .threads
            .iter()
            .find(|p| p.tid == t.tid && p.start_time_ns == t.start_time_ns)
        else {
            continue;
        };
        let want = (t.voluntary - p.voluntary) as f64 / dt;
        let row = app.rows().iter().find(|r| r.id == t.tid);
        if let Some(r) = row {
            let got = r.vcsw_s.get().expect("a rate across the file boundary");
            assert!((got - want).abs() < 1e-6, "tid {}: {got} vs {want}", t.tid);
            checked += 1;
        }
    }
    assert!(checked > 0, "no thread to check");
    // T back into file 0
    press(&mut app, KeyCode::Char('T'));
    assert_eq!(index(&app), 2);
    assert_eq!(app.current(), Some(&all[2]));
    // j to a moment inside file 2
    press(&mut app, KeyCode::Char('j'));
    for c in rfc3339(all[7].time_ns).chars() {
        press(&mut app, KeyCode::Char(c));
    }
    press(&mut app, KeyCode::Enter);
    assert_eq!(index(&app), 7);
    assert_eq!(app.current(), Some(&all[7]));
}
