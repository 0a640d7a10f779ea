//! `schedtop snapshot` through the real binary: a recording's screen as
//! text (insta) and as SVG (parsed as XML), hostile names inert, every view
//! at every size without a panic, and one-line errors for bad input.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use schedtop::model::Sample;
use schedtop::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
use schedtop::record::{WriteOptions, Writer};

use crate::svg_grid;
use svg_grid::svg_screen;

const BIN: &str = env!("CARGO_BIN_EXE_schedtop");

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1.schedtop")
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("TZ", "UTC")
        .output()
        .expect("running schedtop")
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "schedtop failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("UTF-8")
}

#[test]
fn recording_threads_view_as_text() {
    let f = fixture();
    let out = stdout(&run(&[
        "snapshot",
        "--from",
        f.to_str().unwrap(),
        "--at",
        "2026-11-21T23:00:05Z",
        "--format",
        "txt",
        "--size",
        "120x30",
    ]));
    // the Sample whose interval holds 23:00:05 (the one at 23:00:05.004),
    // rates against the one before (schedtop dump gives worker-5 15.97
    // vol/s and 6.99 invol/s there)
    assert!(out.contains("at 23:00:05 UTC"), "{out}");
    let row = out.lines().find(|l| l.contains("worker-5 ")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..6], ["1005", "1000", "worker-5", "1", "16", "7.0"]);
    assert_eq!(out.lines().count(), 30);
    assert!(out.lines().all(|l| l.chars().count() <= 120));
    insta::assert_snapshot!("snapshot_v1_threads_120x30", out);
}

#[test]
fn output_file_matches_stdout_and_is_not_replaced() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shot.txt");
    let args = |o: &str| -> Vec<String> {
        [
            "snapshot",
            "--from",
            f.to_str().unwrap(),
            "--at",
            "+3s",
            "--view",
            "processes",
            "-o",
            o,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let a = args(file.to_str().unwrap());
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = run(&a);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty());
    let written = std::fs::read_to_string(&file).unwrap();
    // the format came from the extension
    assert!(written.starts_with("schedtop  host synth"), "{written}");
    assert!(written.contains("Processes"), "{written}");
    let b = args("-");
    let mut b: Vec<&str> = b.iter().map(String::as_str).collect();
    b.extend(["--format", "txt"]);
    assert_eq!(stdout(&run(&b)), written);
    // a second run refuses, --force replaces
    std::fs::write(&file, "mine").unwrap();
    let o = run(&a);
    assert!(!o.status.success());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    let mut forced = a.clone();
    forced.push("--force");
    assert!(run(&forced).status.success());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), written);
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&file).unwrap().permissions());
    assert_eq!(mode & 0o022, 0, "{mode:o}");
}

#[test]
fn recording_as_svg_parses_and_shows_the_screen() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shot.svg");
    let o = run(&[
        "snapshot",
        "--from",
        f.to_str().unwrap(),
        "--at",
        "2026-11-21T23:00:05Z",
        "--size",
        "120x30",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(&file).unwrap();
    let screen = svg_screen(&svg);
    assert_eq!(screen.len(), 30);
    // the same screen as the text snapshot, character for character
    let txt = stdout(&run(&[
        "snapshot",
        "--from",
        f.to_str().unwrap(),
        "--at",
        "2026-11-21T23:00:05Z",
        "--size",
        "120x30",
        "--format",
        "txt",
    ]));
    let txt: Vec<&str> = txt.lines().map(str::trim_end).collect();
    assert_eq!(screen, txt);
    assert!(screen.iter().any(|l| l.contains("1004    1000 worker-4")));
}

/// A recording whose threads are named to break things.
fn hostile_recording(dir: &Path) -> PathBuf {
    let o = SynthOptions {
        threads: 6,
        samples: 3,
        ..Default::default()
    };
    let mut samples: Vec<Sample> = synthetic_samples(&o);
    for s in &mut samples {
        s.threads[0].comm = "<b>&\"x'\x1b[2J".into();
        s.threads[1].comm = "</text><script>".into();
    }
    let path = dir.join("hostile.schedtop");
    let mut w = Writer::open(&path, &synthetic_host(&o), WriteOptions::default()).unwrap();
    for s in &samples {
        w.write_sample(s).unwrap();
    }
    w.finish().unwrap();
    path
}

#[test]
fn hostile_names_stay_text_in_svg_html_and_ansi() {
    let dir = tempfile::tempdir().unwrap();
    let rec = hostile_recording(dir.path());
    let rec = rec.to_str().unwrap();
    let svg = stdout(&run(&[
        "snapshot", "--from", rec, "--format", "svg", "--size", "110x20",
    ]));
    assert!(svg.contains("&lt;b&gt;&amp;&quot;x&#39;^[[2J"), "{svg}");
    assert!(!svg.contains("<script>") && !svg.contains('\x1b'));
    let screen = svg_screen(&svg);
    assert!(
        screen.iter().any(|l| l.contains("<b>&\"x'^[[2J")),
        "{screen:#?}"
    );
    assert!(
        screen.iter().any(|l| l.contains("</text><script>")),
        "{screen:#?}"
    );
    let html = stdout(&run(&[
        "snapshot", "--from", rec, "--format", "html", "--size", "110x20",
    ]));
    assert!(html.contains("&lt;/text&gt;&lt;script&gt;"));
    assert!(!html.contains("<script>") && !html.contains('\x1b'));
    let ansi = stdout(&run(&[
        "snapshot", "--from", rec, "--format", "ansi", "--size", "110x20",
    ]));
    // escape sequences are ours only: the name's ESC arrives as ^[
    assert!(ansi.contains("^[[2J"));
    assert!(!ansi.contains("\x1b[2J"));
}

#[test]
fn every_view_renders_at_every_size() {
    let f = fixture();
    let f = f.to_str().unwrap();
    for view in ["threads", "processes", "cpus", "numa", "detail"] {
        let mut shown = Vec::new();
        for size in ["1x1", "20x5", "40x8", "80x24", "200x60"] {
            let out = stdout(&run(&[
                "snapshot", "--from", f, "--at", "+6s", "--view", view, "--size", size, "--format",
                "txt",
            ]));
            let (w, h) = size.split_once('x').unwrap();
            assert_eq!(
                out.lines().count(),
                h.parse::<usize>().unwrap(),
                "{view} {size}"
            );
            assert!(
                out.lines().all(|l| l.chars().count() <= w.parse().unwrap()),
                "{view} {size}:\n{out}"
            );
            shown.push(out);
        }
        let big = &shown[4];
        let expect = match view {
            "threads" => "Threads 22",
            "processes" => "Processes",
            "cpus" => "CPU",
            "numa" => "NUMA",
            _ => "on-CPU slice",
        };
        assert!(big.contains(expect), "{view}:\n{big}");
    }
    // --select picks the row the detail pane shows
    let out = stdout(&run(&[
        "snapshot", "--from", f, "--at", "+6s", "--view", "detail", "--select", "1004", "--format",
        "txt", "--size", "120x40",
    ]));
    assert!(out.contains("thread 1004 worker-4"), "{out}");
    let out = stdout(&run(&[
        "snapshot", "--from", f, "--at", "+6s", "--view", "detail", "--select", "WORKER-2",
        "--format", "txt", "--size", "120x40",
    ]));
    assert!(out.contains("thread 1023 worker-23"), "{out}");
}

/// Fails with exactly one line on stderr, saying `what`, and writes nothing.
fn fails(args: &[&str], what: &str) {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{args:?} succeeded");
    // the fixture's torn tail is reported too (a "skipped" line) when read
    let lines: Vec<&str> = err.lines().filter(|l| !l.contains("skipped")).collect();
    assert_eq!(lines.len(), 1, "{args:?}: {err}");
    assert!(lines[0].starts_with("schedtop: "), "{args:?}: {err}");
    assert!(
        lines[0].contains(what),
        "{args:?}: expected {what:?} in {err}"
    );
    assert!(o.stdout.is_empty(), "{args:?}");
}

#[test]
fn bad_input_is_one_line_and_non_zero() {
    let f = fixture();
    let f = f.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let base = ["snapshot", "--from", f];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let check = |extra: &[&str], what: &str| {
        let a = with(extra);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        fails(&a, what);
    };
    for size in ["0x10", "160", "160x", "axb", "5000x50", "80x-1"] {
        check(&["--size", size], "bad --size");
    }
    check(
        &["--view", "graphs"],
        "bad --view \"graphs\": expected threads, processes, cpus, numa, detail or cgroups",
    );
    check(&["--format", "png"], "unknown screenshot format");
    check(&["-o", "shot.png"], "use --format");
    check(&["--at", "yesterday"], "--at: bad time");
    check(
        &["--at", "2026-11-22T00:00:00Z"],
        "--at: 2026-11-22T00:00:00.000Z is after the end of the recording",
    );
    check(&["--at", "-2h"], "is before the start of the recording");
    check(&["--duration", "5s"], "--duration is for live snapshots");
    check(
        &["--select", "nosuchthread"],
        "--select \"nosuchthread\": no such row",
    );
    fails(
        &["snapshot", "--from", "/nonexistent/rec.schedtop"],
        "/nonexistent/rec.schedtop",
    );
    let notrec = dir.path().join("not-a-recording");
    std::fs::write(&notrec, b"hello, world, not a recording at all").unwrap();
    fails(
        &["snapshot", "--from", notrec.to_str().unwrap()],
        "not a schedtop recording",
    );
    fails(
        &["snapshot", "--duration", "0s"],
        "--duration must be from 10ms to 1h",
    );

    // the output: never through a symlink, never a directory, no clobber
    let target = dir.path().join("target");
    std::fs::write(&target, "keep").unwrap();
    let link = dir.path().join("link.svg");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    check(&["-o", link.to_str().unwrap()], "symbolic link");
    check(&["-o", link.to_str().unwrap(), "--force"], "symbolic link");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    check(
        &[
            "-o",
            dir.path().to_str().unwrap(),
            "--format",
            "svg",
            "--force",
        ],
        "not a regular file",
    );
    check(
        &["-o", target.to_str().unwrap(), "--format", "txt"],
        "exists (use --force",
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
}
