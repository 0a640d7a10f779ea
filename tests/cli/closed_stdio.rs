//! A closed stdout or stderr never panics a mode (Rust's println!/eprintln!
//! panic on a failed write: exit 101). `record --dir D 2>&1 | head -1` goes
//! on recording after `head` exits and ends with 0 on SIGTERM; every mode
//! with stdout closed (`>&-`) and with stderr closed (`2>&-`) exits 0 or its
//! documented status 1 (replay without a terminal refuses), never 101 or
//! by a signal; a recording written with stderr closed holds no stray text
//! and dumps.
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use schedtop::collect::Seekable;
use schedtop::record::dir::DirSource;
use schedtop::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
use schedtop::record::{Reader, WriteOptions, Writer};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_schedtop")
}

/// Kills a process group we started when the test ends, however it ends.
struct Group(i32);
impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: signalling a process group we started.
        unsafe { libc::kill(-self.0, libc::SIGKILL) };
    }
}

fn wait_timeout(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// A recording the file modes read.
fn fixture(dir: &Path) -> std::path::PathBuf {
    let o = SynthOptions {
        threads: 5,
        samples: 4,
        ..Default::default()
    };
    let path = dir.join("fixture.schedtop");
    let mut w = Writer::open(&path, &synthetic_host(&o), WriteOptions::default()).unwrap();
    for s in synthetic_samples(&o) {
        w.write_sample(&s).unwrap();
    }
    w.finish().unwrap();
    path
}

fn samples_in(dir: &Path) -> usize {
    DirSource::open(dir).map_or(0, |d| d.len())
}

#[test]
fn record_dir_into_a_pipe_closed_after_one_line_goes_on() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("box");
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills two descriptors we then own.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // stdout and stderr both to the pipe (2>&1), as `| head -1` sees them
    let mut child = Command::new(bin())
        .args(["record", "--dir", d.to_str().unwrap(), "-i", "0.2"])
        // rotation and retention every second: lines on stderr keep coming
        .args(["--rotate", "1s", "--retain", "2s", "--procfs"])
        .stdin(Stdio::null())
        .stdout(Stdio::from(w.try_clone().unwrap()))
        .stderr(Stdio::from(w))
        .process_group(0)
        .spawn()
        .unwrap();
    let _g = Group(child.id() as i32);
    let mut line = String::new();
    let mut reader = BufReader::new(std::fs::File::from(r));
    reader.read_line(&mut line).unwrap();
    assert!(!line.is_empty(), "a first line");
    drop(reader); // head -1 exits
    let closed_at = samples_in(&d);
    // it goes on: more Samples after the pipe closed, and lines written to
    // it (each rotation and removal) cost nothing
    let t0 = Instant::now();
    while samples_in(&d) < closed_at + 10 && t0.elapsed() < Duration::from_secs(20) {
        assert!(child.try_wait().unwrap().is_none(), "the recorder ended");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(child.try_wait().unwrap().is_none(), "the recorder ended");
    let now = samples_in(&d);
    assert!(now >= closed_at + 10, "{closed_at} then {now} Samples");
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let st = wait_timeout(&mut child, Duration::from_secs(10)).expect("ends on SIGTERM");
    assert_eq!(st.code(), Some(0), "{st:?}");
}

/// One mode with fd `which` (1 or 2) closed, through a shell that closes
/// it and execs schedtop (same pid, same process group).
fn closed(which: u8, args: &str, stdin_null: bool) -> Child {
    let redir = if which == 1 { ">&-" } else { "2>&-" };
    let mut cmd = Command::new("bash");
    cmd.args(["-c", &format!("exec {} {args} {redir}", bin())])
        .stdin(if stdin_null {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(if which == 1 {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .stderr(if which == 2 {
            Stdio::inherit()
        } else {
            Stdio::piped()
        })
        .process_group(0);
    cmd.spawn().unwrap()
}

/// Exit 0 or the documented 1; never 101 (a panic) or a signal.
fn clear(st: ExitStatus, what: &str) {
    assert!(st.signal().is_none(), "{what}: killed by {:?}", st.signal());
    assert!(
        matches!(st.code(), Some(0) | Some(1)),
        "{what}: exit {:?}",
        st.code()
    );
}

fn run_closed(which: u8, args: &str, limit: Duration) -> ExitStatus {
    let mut c = closed(which, args, true);
    let _g = Group(c.id() as i32);
    let st = wait_timeout(&mut c, limit).unwrap_or_else(|| panic!("{args}: still running"));
    clear(st, &format!("{args} with fd {which} closed"));
    st
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn scrape(port: u16) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).ok()?;
    Some(body)
}

#[test]
fn every_mode_with_stdout_or_stderr_closed_exits_clearly() {
    let t = tempfile::tempdir().unwrap();
    let fx = fixture(t.path());
    let fx = fx.to_str().unwrap();
    let long = Duration::from_secs(60);
    for which in [1u8, 2] {
        let dir = t.path().join(format!("fd{which}"));
        std::fs::create_dir(&dir).unwrap();
        let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
        for args in [
            "doctor".to_string(),
            format!("dump {fx}"),
            format!("dump --format csv {fx}"),
            format!("snapshot --from {fx} --format txt"),
            "--batch -n 1 --procfs".to_string(),
            "completions bash".to_string(),
            "man".to_string(),
            format!("trace -d 0.5 -o {}", p("t.pftrace")),
            format!("record -o {} --duration 2s -i 0.5", p("r.schedtop")),
        ] {
            run_closed(which, &args, long);
        }
        // replay has no terminal here: it refuses, one line, status 1
        let st = run_closed(which, &format!("replay {fx}"), long);
        assert_eq!(st.code(), Some(1), "replay without a terminal");
        // the recording made with the descriptor closed is a recording,
        // nothing else written into it
        let rec = dir.join("r.schedtop");
        let r = Reader::open(&rec).unwrap();
        assert!(r.len() >= 3, "{} Samples", r.len());
        assert!(r.damage().is_empty(), "{:?}", r.damage());
        let out = Command::new(bin())
            .args(["dump", rec.to_str().unwrap()])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).lines().count(),
            r.len() - 1
        );
        // serve: start, one scrape answered, SIGTERM ends it with 0
        let port = free_port();
        let mut c = closed(
            which,
            &format!("serve --listen 127.0.0.1:{port} -i 0.5 --procfs"),
            true,
        );
        let _g = Group(c.id() as i32);
        let t0 = Instant::now();
        let mut body = None;
        while body.is_none() && t0.elapsed() < Duration::from_secs(30) {
            assert!(c.try_wait().unwrap().is_none(), "serve ended");
            body = scrape(port).filter(|b| b.starts_with("HTTP/1.1 200"));
            std::thread::sleep(Duration::from_millis(200));
        }
        let body = body.expect("a scrape answered");
        assert!(body.contains("schedtop_"), "{body}");
        // SAFETY: signalling the child we started.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        let st = wait_timeout(&mut c, Duration::from_secs(10)).expect("serve ends on SIGTERM");
        clear(st, "serve");
        assert_eq!(st.code(), Some(0), "serve on SIGTERM");
    }
}
