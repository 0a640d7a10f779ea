//! The why figures through a recording and `dump --format csv`: per thread
//! and interval, each cause and reason column against the Samples' own
//! cumulative counters, "other" holding what was not attributed, so the
//! causes sum to the migrations and the reasons to the voluntary switches.
use schedtop::export::dump::{dump, DumpOptions, Format};
use schedtop::model::why::{BlockReason, MigCause};
use schedtop::model::SourceKind;
use schedtop::record::{Reader, WriteOptions, Writer};
use schedtop::ui::fixtures;

#[test]
fn csv_why_columns_match_the_samples_counters() {
    let host = fixtures::host(SourceKind::Bpf);
    let samples = fixtures::samples(SourceKind::Bpf);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.schedtop");
    let mut w = Writer::open(&path, &host, WriteOptions::default()).unwrap();
    for s in &samples {
        w.write_sample(s).unwrap();
    }
    w.finish().unwrap();
    let opts = DumpOptions {
        format: Format::Csv,
        from: None,
        to: None,
        pids: vec![],
    };
    let mut out = Vec::new();
    dump(&mut Reader::open(&path).unwrap(), &opts, &mut out).unwrap();
    let csv = String::from_utf8(out).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (last_prev, last) = (&samples[samples.len() - 2], &samples[samples.len() - 1]);
    let last_ns = last.time_ns.to_string();
    let mut checked = 0;
    let mut attributed_somewhere = false;
    for line in lines.filter(|l| l.split(',').nth(1) == Some(last_ns.as_str())) {
        // the fixture's names hold no commas (a quoted field would shift a
        // plain split)
        let f: Vec<&str> = line.split(',').collect();
        let tid: u32 = f[col("tid")].parse().unwrap();
        let cur = last.threads.iter().find(|t| t.tid == tid).unwrap();
        let Some(prev) = last_prev.threads.iter().find(|t| t.tid == tid) else {
            continue;
        };
        let (Some(wn), Some(wb)) = (&cur.why, &prev.why) else {
            assert_eq!(f[col("mig_wakeup")], "", "no whys: empty fields");
            continue;
        };
        let n = |name: &str| f[col(name)].parse::<u64>().unwrap();
        let migrations = cur.migrations.unwrap() - prev.migrations.unwrap();
        let voluntary = cur.voluntary - prev.voluntary;
        let mut causes = 0;
        for c in MigCause::ALL {
            let v = n(&format!("mig_{}", c.key()));
            let own = wn.migrations_by_cause[c as usize] - wb.migrations_by_cause[c as usize];
            if c != MigCause::Other {
                assert_eq!(v, own, "tid {tid} {}", c.key());
                attributed_somewhere |= v > 0;
            }
            causes += v;
        }
        assert_eq!(causes, migrations, "tid {tid}: causes sum to migrations");
        let mut reasons = 0;
        for r in BlockReason::ALL {
            let v = n(&format!("blocked_{}", r.key()));
            if r != BlockReason::Other {
                assert_eq!(
                    v,
                    wn.blocked_on[r as usize] - wb.blocked_on[r as usize],
                    "tid {tid} {}",
                    r.key()
                );
                attributed_somewhere |= v > 0;
            }
            reasons += v;
        }
        assert_eq!(reasons, voluntary, "tid {tid}: reasons sum to voluntary");
        checked += 1;
    }
    assert!(checked >= 5, "{checked} threads checked");
    assert!(attributed_somewhere, "the fixture attributes something");
}
