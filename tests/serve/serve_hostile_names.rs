//! `schedtop serve --per-thread` scraping threads that name themselves
//! with quotes, backslashes, a newline, a terminal escape, a bidi override
//! and bytes that are not UTF-8 (prctl PR_SET_NAME takes any 15 bytes):
//! the exposition must stay valid for Prometheus's own parser (promtool)
//! and a strict OpenMetrics parser, draw nothing in a terminal, and each
//! thread's series must still carry its name, escaped.
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::common;
use common::om_parser::for_crate_parser;
use openmetrics_parser::{openmetrics::parse_openmetrics, prometheus::parse_prometheus};

/// (name the thread gives itself, the comm label a parser reads back):
/// the encoder escapes `"` and `\`; characters that would act on a
/// terminal become `?`; bytes that are not UTF-8 become U+FFFD as the
/// kernel's name is read.
const NAMES: [(&[u8], &str); 6] = [
    (b"sq\"uo\\te", "sq\"uo\\te"),
    (b"snl\nx", "snl?x"),
    (b"sesc\x1b[2J", "sesc?[2J"),
    // shown raw, "srtl<U+202E>fdp.exe" reads as "srtlexe.pdf"
    ("srtl\u{202e}fdp.exe".as_bytes(), "srtl?fdp.exe"),
    (b"sbad\xff\xfe", "sbad\u{fffd}\u{fffd}"),
    (b"s\xc3", "s\u{fffd}"),
];

/// Threads of this process named by NAMES, idle until dropped.
struct Named {
    stop: Option<mpsc::Sender<()>>,
    handles: Vec<JoinHandle<()>>,
    /// (tid, the comm label expected for it)
    tids: Vec<(u32, &'static str)>,
}

impl Named {
    fn spawn() -> Named {
        let (stop, stopped) = mpsc::channel::<()>();
        let stopped = std::sync::Arc::new(std::sync::Mutex::new(stopped));
        let (tx, rx) = mpsc::channel();
        let mut handles = Vec::new();
        for (raw, want) in NAMES {
            let (tx, stopped) = (tx.clone(), stopped.clone());
            handles.push(std::thread::spawn(move || {
                let mut name = [0u8; 16];
                name[..raw.len()].copy_from_slice(raw);
                // SAFETY: a NUL-terminated buffer of 16 bytes
                let r = unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr()) };
                assert_eq!(r, 0);
                tx.send((common::gettid(), want)).unwrap();
                // wait for the end (an error once the sender is dropped)
                let _ = stopped.lock().unwrap().recv();
            }));
        }
        let tids = (0..NAMES.len()).map(|_| rx.recv().unwrap()).collect();
        Named {
            stop: Some(stop),
            handles,
            tids,
        }
    }
}

impl Drop for Named {
    fn drop(&mut self) {
        self.stop.take();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

struct Serve {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Serve {
    fn drop(&mut self) {
        // the whole process group, however the test ends
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// `schedtop serve` on this process's threads; Err(stderr) when it exits
/// before serving.
fn start(source: &str) -> Result<Serve, String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .args(["serve", source, "-i", "0.5", "--listen", "127.0.0.1:0"])
        .args(["--per-thread", "--top", "1000", "-p"])
        .arg(common::getpid().to_string())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut serve = Serve {
        child,
        addr: "0.0.0.0:0".parse().unwrap(),
    };
    let mut said = String::new();
    loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            return Err(said);
        }
        if let Some(rest) = line.split("serving http://").nth(1) {
            serve.addr = rest.split('/').next().unwrap().parse().unwrap();
            std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
            return Ok(serve);
        }
        said.push_str(&line);
    }
}

/// The body of a 200 answer to GET /metrics, which must be UTF-8.
fn scrape(addr: SocketAddr, accept: &str) -> Option<String> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).ok()?;
    let at = out.windows(4).position(|w| w == b"\r\n\r\n")?;
    if !out.starts_with(b"HTTP/1.1 200") {
        return None;
    }
    let body = out[at + 4..].to_vec();
    Some(String::from_utf8(body).expect("the exposition is not UTF-8"))
}

/// tid -> comm label of the series given as (tid, comm) pairs.
fn comms(labels: impl Iterator<Item = Option<(u32, String)>>) -> BTreeMap<u32, String> {
    labels.flatten().collect()
}

fn label_pair(l: &openmetrics_parser::LabelSet<'_>) -> Option<(u32, String)> {
    let tid = l.get_label_value("tid")?.parse().ok()?;
    Some((tid, l.get_label_value("comm")?.to_string()))
}

fn promtool_check(text: &str) -> Result<(), String> {
    let mut p = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    p.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = p.wait_with_output().unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    // the linter's advice (names, help) is not a parse error
    if out.status.success() || !said.contains("parsing error") {
        Ok(())
    } else {
        Err(said)
    }
}

fn check(source: &str, named: &Named) {
    let serve = match start(source) {
        Ok(s) => s,
        Err(said) if source == "--require-bpf" => {
            return common::skip::bpf_unavailable(&format!("serve --require-bpf: {said}"));
        }
        Err(said) => panic!("serve {source} did not start: {said}"),
    };
    let want: BTreeMap<u32, String> = named
        .tids
        .iter()
        .map(|&(t, w)| (t, w.to_string()))
        .collect();
    let family = "schedtop_thread_switches";
    // the threads appear from the second Sample on (a rate needs two)
    let t0 = Instant::now();
    let (om, got) = loop {
        let om = scrape(serve.addr, "application/openmetrics-text;version=1.0.0");
        let got = om.as_ref().map(|om| {
            let parsed = parse_openmetrics(&for_crate_parser(om)).unwrap_or_else(|e| {
                panic!("{source}: the OpenMetrics parser refused: {e:?}\n{om}")
            });
            parsed.families.get(family).map_or_else(BTreeMap::new, |f| {
                comms(f.iter_samples().map(|s| {
                    let l = s.get_labelset().unwrap();
                    label_pair(&l)
                }))
            })
        });
        if let (Some(om), Some(got)) = (&om, &got) {
            if want.keys().all(|t| got.contains_key(t)) {
                break (om.clone(), got.clone());
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(15),
            "{source}: our threads not in {family} after 15 s: {got:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    for (tid, w) in &want {
        assert_eq!(got.get(tid), Some(w), "{source}: tid {tid}");
    }
    // nothing a terminal would act on or draw the other way round
    for bad in ['\x1b', '\u{202e}', '\u{9b}'] {
        assert!(!om.contains(bad), "{source}: {bad:?} reached the text raw");
    }

    // the Prometheus text form: Prometheus's own parser, and the labels
    // read back by the crate's
    let text = scrape(serve.addr, "text/plain;version=0.0.4").expect("a text scrape");
    if let Err(said) = promtool_check(&text) {
        panic!("{source}: promtool refused the text form: {said}");
    }
    let parsed = parse_prometheus(&text).unwrap_or_else(|e| panic!("{source}: {e:?}"));
    let f = &parsed.families[&format!("{family}_total")];
    let got = comms(f.iter_samples().map(|s| {
        let l = s.get_labelset().unwrap();
        label_pair(&l)
    }));
    for (tid, w) in &want {
        assert_eq!(got.get(tid), Some(w), "{source}, text form: tid {tid}");
    }
}

#[test]
fn hostile_thread_names_stay_valid_exposition_and_name_their_thread() {
    if Command::new("promtool").arg("--version").output().is_err() {
        return common::skip::skip("promtool missing (apt-get install prometheus)");
    }
    let named = Named::spawn();
    check("--procfs", &named);
    check("--require-bpf", &named);
}
