//! assets/demo.schedtop (assets/make-demo.sh): a real BPF recording of 16,
//! 64, 256 and 1,024 busy threads pinned to CPU 1. It must keep reading,
//! and show what the experiment is about: the queue grows with the thread
//! count, the switch rate does not.
use std::path::Path;

use schedtop::export::json::interval_record;
use schedtop::model::SourceKind;
use schedtop::record::Reader;

#[test]
fn demo_recording_shows_the_steps() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo.schedtop");
    assert!(std::fs::metadata(&path).unwrap().len() < 5 << 20);
    let mut r = Reader::open(&path).unwrap();
    assert_eq!(r.host().source, SourceKind::Bpf);
    assert!(r.damage().is_empty(), "{:?}", r.damage());
    assert!(r.len() >= 20, "{} Samples", r.len());
    let samples: Vec<_> = (0..r.len()).map(|i| r.sample(i).unwrap()).collect();
    let spinners = |s: &schedtop::model::Sample, n: usize| {
        let prefix = format!("spin{n}-");
        s.threads
            .iter()
            .filter(|t| t.comm.starts_with(&prefix) && !t.exited)
            .count()
    };
    for n in [16, 64, 256, 1024] {
        let full: Vec<bool> = samples.iter().map(|s| spinners(s, n) == n).collect();
        assert!(full.iter().any(|&f| f), "never {n} spinners at once");
        // intervals well inside the step: all n spinners before and after
        let mut checked = 0;
        for i in 1..samples.len() - 1 {
            if !(full[i - 1] && full[i] && full[i + 1]) {
                continue;
            }
            let rec = interval_record(r.host(), Some(&samples[i - 1]), &samples[i]);
            let cpu1 = &rec.cpus.iter().find(|c| c.0.cpu == 1).unwrap().0;
            let avg = cpu1.rq_avg.unwrap();
            assert!(avg >= n as f64 * 0.9, "{n} spinners, queue {avg}");
            let busy = cpu1.busy_pct.unwrap();
            assert!(busy > 90.0, "{n}: busy {busy}");
            // the switch rate stays in the hundreds, whatever n
            let sw = cpu1.switches_s.unwrap();
            assert!(sw < 1000.0, "{n}: {sw}");
            checked += 1;
        }
        assert!(checked >= 2, "{n}: {checked} steady intervals");
    }
}
