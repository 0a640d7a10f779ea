//! `schedtop why` as scripts use it: a recording's window gives the same
//! findings as the same Samples judged in-process, errors exit 2 with one
//! line, and the JSON has the contract's shape.
use std::process::Command;

use schedtop::model::finding_window::window_end;
use schedtop::model::findings::{of_samples, Scope};
use schedtop::record::Reader;

fn why(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .arg("why")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn fixture() -> String {
    format!("{}/tests/fixtures/v2.schedtop", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_recordings_window_is_judged_as_its_samples_are() {
    let (code, out, err) = why(&["--from", &fixture(), "-d", "2s", "--json"]);
    assert!(code == 0 || code == 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // the same window by hand: the last Sample and those of the 2 s before it
    let mut r = Reader::open(std::path::Path::new(&fixture())).unwrap();
    let last = r.len() - 1;
    let end_t = r.time_of(last).unwrap();
    let mut i = last;
    while let Some(p) = r.prev_of(i) {
        i = p;
        if r.time_of(p).unwrap() <= end_t - 2_000_000_000 {
            break;
        }
    }
    let samples: Vec<_> = (i..=last).map(|j| r.sample(j).unwrap()).collect();
    let expect = of_samples(
        &r.host().topology,
        &samples[0],
        &window_end(&samples).unwrap(),
        &Scope::default(),
    );
    assert_eq!(v["findings"], serde_json::to_value(&expect).unwrap());
    let span = (samples.last().unwrap().mono_ns - samples[0].mono_ns) as f64 / 1e9;
    assert!(
        (v["window_s"].as_f64().unwrap() - span).abs() < 0.001,
        "{v}"
    );
    assert!(span >= 2.0, "the window covers -d: {span}");
    assert_eq!(
        code,
        i32::from(expect.iter().any(|f| f.severity.key() == "warning"))
    );
}

#[test]
fn errors_exit_2_with_one_line() {
    for args in [
        vec!["--from", "/nonexistent.schedtop"],
        vec!["--from", &fixture(), "--at", "1999-01-01T00:00:00Z"],
        vec!["--from", &fixture(), "--cgroup", "/no/such/group"],
        vec!["--from", &fixture(), "-d", "1ms"],
    ] {
        let (code, out, err) = why(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        // ours are one line; clap's usage errors add a hint after theirs
        let one = err.trim().lines().count() == 1;
        assert!(
            one || err.starts_with("error: invalid value"),
            "{args:?}: {err}"
        );
        assert!(out.is_empty());
    }
}
