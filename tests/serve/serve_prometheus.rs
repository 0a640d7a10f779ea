//! `schedtop serve` scraped by a real Prometheus (Debian's package, started
//! here on 127.0.0.1 with a temporary data directory and a 1 s scrape),
//! queried through its HTTP API, and compared with `schedtop --batch`
//! watching the same workload over the same window: a thread that sleeps
//! 1 ms at a time sharing CPU 0 with a spinner (steady voluntary switches,
//! run-queue waits behind the spinner). The live exposition is also read
//! by the OpenMetrics reference parser (Python's prometheus_client).
use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use schedtop::model::hist::{octave_high_us, octave_low_us, octave_of_us, HIST_OCTAVES};

/// A process group killed however the test ends.
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

fn spawn(cmd: &mut Command) -> Group {
    Group(cmd.process_group(0).spawn().unwrap())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn missing(what: &str) -> bool {
    if std::env::var("SCHEDTOP_REQUIRE_ALL").as_deref() == Ok("1") {
        panic!("{what} is missing and SCHEDTOP_REQUIRE_ALL=1 (scripts/deps.sh --test installs it)");
    }
    eprintln!("SKIPPED: {what} is missing (scripts/deps.sh --test installs it)");
    true
}

fn http_get(port: u16, path_and_query: &str) -> Option<String> {
    http_get_as(port, path_and_query, "*/*")
}

fn http_get_as(port: u16, path_and_query: &str, accept: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET {path_and_query} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).ok()?;
    let text = String::from_utf8_lossy(&out).to_string();
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_string())
}

fn encode_query(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// An instant query's single value, if there is one.
fn query(port: u16, q: &str, at: f64) -> Option<f64> {
    let body = http_get(
        port,
        &format!("/api/v1/query?query={}&time={at:.3}", encode_query(q)),
    )?;
    let v: serde_json::Value = serde_json::from_str(&body).ok()?;
    let r = v["data"]["result"].as_array()?;
    if r.len() != 1 {
        return None;
    }
    r[0]["value"][1].as_str()?.parse().ok()
}

/// Prometheus's histogram_quantile over the probes' slots: linear inside
/// the bucket the rank falls in, from 0 for the first bucket (the slot
/// bounds come from model::hist, the buckets' `le` values).
fn quantile(q: f64, per_slot: &[u64]) -> f64 {
    let total: u64 = per_slot.iter().sum();
    let rank = q * total as f64;
    let mut cum = 0u64;
    for (slot, &c) in per_slot.iter().enumerate() {
        if (cum + c) as f64 >= rank && c > 0 {
            let Some(upper_us) = octave_high_us(slot) else {
                // the open last bucket: Prometheus answers its lower bound
                return octave_low_us(slot) as f64 / 1e6;
            };
            let upper = upper_us as f64 / 1e6;
            let lower = if slot == 0 {
                0.0
            } else {
                octave_low_us(slot) as f64 / 1e6
            };
            return lower + (upper - lower) * (rank - cum as f64) / c as f64;
        }
        cum += c;
    }
    f64::NAN
}

/// Not a test: the workload process (started by the test below). One
/// thread sleeps 1 ms at a time, two spin; all three share CPU 0, so the
/// process has steady voluntary switches and run-queue waits from
/// microseconds (wakeups) to milliseconds (spinners taking turns). A
/// fourth keeps starting threads that sleep 20 times and exit: the
/// process's counters must not go down when they do.
#[test]
#[ignore]
fn workload() {
    if std::env::var_os("SCHEDTOP_SERVE_WORKLOAD").is_none() {
        return;
    }
    for _ in 0..2 {
        std::thread::spawn(|| {
            common::pin_to(0);
            let mut x = 0u64;
            loop {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        });
    }
    std::thread::spawn(|| {
        common::pin_to(0);
        loop {
            std::thread::spawn(|| {
                for _ in 0..20 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
            .join()
            .unwrap();
        }
    });
    common::pin_to(0);
    loop {
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn prometheus_scrapes_and_agrees_with_batch() {
    let prometheus = Path::new("/usr/bin/prometheus");
    if !prometheus.exists() && missing("Debian's prometheus package") {
        return;
    }
    let python_ok = Command::new("/usr/bin/python3")
        .args(["-c", "import prometheus_client.openmetrics.parser"])
        .status()
        .is_ok_and(|s| s.success());
    if !python_ok && missing("python3-prometheus-client") {
        return;
    }
    let _serial = common::serial();
    // BPF: the histograms come from the probes
    if common::bpf_source(vec![]).is_none() {
        return;
    }
    let t_start = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_schedtop");

    // the workload: this test binary again, running `workload` below
    let sleeper = spawn(
        Command::new(std::env::current_exe().unwrap())
            .args([
                &self_test("workload"),
                "--exact",
                "--ignored",
                "--nocapture",
            ])
            .env("SCHEDTOP_SERVE_WORKLOAD", "1")
            .stdout(Stdio::null()),
    );
    let pid = sleeper.0.id().to_string();

    let port = free_port();
    let _serve = spawn(
        Command::new(bin)
            .args(["serve", "-i", "1", "--require-bpf", "-p", &pid])
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .stderr(Stdio::null()),
    );
    let batch_out = dir.path().join("batch.jsonl");
    let _batch = spawn(
        Command::new(bin)
            .args(["--batch", "-i", "1", "--require-bpf", "-p", &pid])
            .stdout(std::fs::File::create(&batch_out).unwrap())
            .stderr(Stdio::null()),
    );
    let prom_port = free_port();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: schedtop\n    scrape_interval: 1s\n    scrape_timeout: 1s\n\
             \x20   static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
        ),
    )
    .unwrap();
    let _prom = spawn(
        Command::new(prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("prometheus.log")).unwrap()),
    );

    // wait for Prometheus to be up and scraping schedtop
    let t0 = Instant::now();
    loop {
        let now = unix_now();
        if query(prom_port, "up{job=\"schedtop\"}", now) == Some(1.0) {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "Prometheus never scraped schedtop: {}",
            std::fs::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(500));
    }

    // the live exposition, through the reference parser
    let om = http_get(port, "/metrics").expect("a scrape");
    let mut py = Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import sys\nfrom prometheus_client.openmetrics.parser import text_string_to_metric_families as p\n\
             f = list(p(sys.stdin.read()))\nprint(len(f), sum(len(x.samples) for x in f))",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    py.stdin.take().unwrap().write_all(om.as_bytes()).unwrap();
    let parsed = py.wait_with_output().unwrap();
    assert!(
        parsed.status.success(),
        "the reference parser refused the exposition: {}",
        String::from_utf8_lossy(&parsed.stderr)
    );

    // the Prometheus text form, through promtool's parser and linter
    let text = http_get_as(port, "/metrics", "text/plain;version=0.0.4").expect("a text scrape");
    let mut lint = Command::new("/usr/bin/promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    lint.stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let linted = lint.wait_with_output().unwrap();
    assert!(
        linted.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&linted.stdout),
        String::from_utf8_lossy(&linted.stderr)
    );

    // the window: as soon as Prometheus holds a scrape of the workload
    // for each of its seconds (it slept 32 s for a 25 s window before)
    let window = 25.0;
    let up_at = Instant::now();
    let full = format!(
        "count_over_time(schedtop_process_switches_total{{pid=\"{pid}\",kind=\"voluntary\"}}[{window}s])"
    );
    let t0 = Instant::now();
    let at = loop {
        let at = unix_now() - 2.0;
        if query(prom_port, &full, at).is_some_and(|n| n >= window - 1.0) {
            break at;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "Prometheus never held {window} s of scrapes"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    eprintln!(
        "up after {:.1} s, a full window {:.1} s later",
        (up_at - t_start).as_secs_f64(),
        up_at.elapsed().as_secs_f64()
    );
    assert_eq!(
        query(
            prom_port,
            "scrape_samples_scraped{job=\"schedtop\"} > 0",
            at
        )
        .map(|v| v > 0.0),
        Some(true)
    );
    let prom_rate = query(
        prom_port,
        &format!(
            "rate(schedtop_process_switches_total{{pid=\"{pid}\",kind=\"voluntary\"}}[{window}s])"
        ),
        at,
    )
    .expect("a voluntary switch rate from Prometheus");
    let prom_p99 = query(
        prom_port,
        &format!(
            "histogram_quantile(0.99, rate(schedtop_process_runqueue_latency_seconds_bucket{{pid=\"{pid}\"}}[{window}s]))"
        ),
        at,
    )
    .expect("a p99 from Prometheus");

    // threads kept exiting: Prometheus saw no counter of the process reset
    for counter in [
        "schedtop_process_switches_total",
        "schedtop_process_oncpu_seconds_total",
        "schedtop_process_runqueue_wait_seconds_total",
        "schedtop_process_runqueue_latency_seconds_count",
    ] {
        let resets = query(
            prom_port,
            &format!("sum(resets({counter}{{pid=\"{pid}\"}}[{window}s]))"),
            at,
        );
        assert_eq!(resets, Some(0.0), "{counter} went down");
    }

    // the same window from --batch
    let text = std::fs::read_to_string(&batch_out).unwrap();
    let (mut vol, mut secs) = (0.0, 0.0);
    let mut slots = vec![0u64; HIST_OCTAVES];
    for line in text.lines() {
        let Ok(r) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let end = r["time_ns"].as_u64().unwrap() as f64 / 1e9;
        let dt = r["interval_s"].as_f64().unwrap();
        if end - dt < at - window || end > at {
            continue;
        }
        secs += dt;
        for t in r["threads"].as_array().unwrap() {
            vol += t["voluntary_per_s"].as_f64().unwrap_or(0.0) * dt;
            for pair in t["wait_hist_us"].as_array().into_iter().flatten() {
                // sub-bucket lower bounds (fractions below 4 us) fold
                // into the exporter's octaves
                let low = pair[0].as_f64().unwrap();
                let slot = octave_of_us(low as u64);
                slots[slot] += pair[1].as_u64().unwrap();
            }
        }
    }
    assert!(secs > window * 0.8, "batch covered {secs} s of {window}");
    let batch_rate = vol / secs;
    let batch_p99 = quantile(0.99, &slots);
    eprintln!(
        "voluntary/s: prometheus {prom_rate:.1}, batch {batch_rate:.1}; run-queue p99: prometheus {:.1} us, batch {:.1} us ({} waits)",
        prom_p99 * 1e6,
        batch_p99 * 1e6,
        slots.iter().sum::<u64>()
    );
    assert!(
        batch_rate > 100.0,
        "the sleeper did not run: {batch_rate}/s"
    );
    let close = |a: f64, b: f64| (a - b).abs() <= 0.10 * b.abs();
    assert!(close(prom_rate, batch_rate), "{prom_rate} vs {batch_rate}");
    assert!(close(prom_p99, batch_p99), "{prom_p99} vs {batch_p99}");
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// The full name of test `name` of this file in the test binary it is part
/// of: the module path without the binary's own name.
fn self_test(name: &str) -> String {
    match module_path!().split_once("::") {
        Some((_, m)) => format!("{m}::{name}"),
        None => name.to_string(),
    }
}
