//! `schedtop serve` against clients that cost it time or memory on
//! purpose: ones that send their headers a byte a second (each byte would
//! restart a timeout that counts from the last byte), and ones that send a
//! megabyte of header lines, each line short. Meanwhile a normal scraper
//! must be answered as fast as before, and the exporter's memory must not
//! grow with what it is sent. (serve_http.rs covers one half-sent header,
//! one long header line, idle connections past the cap and floods.)
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::serve_http::{get, metrics_ok, proc_status, start, status_and_body};

/// Scrape every 100 ms until `end`: (asked, answered 200, the answers'
/// times sorted).
fn scrape_until(addr: SocketAddr, end: Instant) -> (u32, u32, Vec<Duration>) {
    let (mut asked, mut answered, mut took) = (0u32, 0u32, Vec::new());
    while Instant::now() < end {
        let next = Instant::now() + Duration::from_millis(100);
        let t0 = Instant::now();
        asked += 1;
        if get(addr, "/metrics", "*/*").0 == 200 {
            answered += 1;
            took.push(t0.elapsed());
        }
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    took.sort();
    (asked, answered, took)
}

fn median(t: &[Duration]) -> Duration {
    t.get(t.len() / 2).copied().unwrap_or_default()
}

/// The usual time of a scrape here, from 20 scrapes with nothing else going
/// on: (median, slowest).
fn usual(addr: SocketAddr) -> (Duration, Duration) {
    metrics_ok(addr);
    let (_, _, took) = scrape_until(addr, Instant::now() + Duration::from_secs(2));
    (median(&took), took.last().copied().unwrap_or_default())
}

/// The scrapes while a bad client ran kept to their usual time: all
/// answered, the median within 3x the usual one (and 50 ms, for a machine
/// shared with compilers), none over 2 s.
fn assert_usual(what: &str, usual: Duration, asked: u32, answered: u32, took: &[Duration]) {
    let slowest = took.last().copied().unwrap_or_default();
    assert!(asked >= 30, "{what}: only {asked} scrapes");
    assert_eq!(answered, asked, "{what}: {answered}/{asked} answered");
    assert!(
        median(took) <= usual * 3 + Duration::from_millis(50),
        "{what}: median {:?}, usually {usual:?}",
        median(took)
    );
    assert!(
        slowest < Duration::from_secs(2),
        "{what}: slowest {slowest:?}"
    );
}

/// 40 connections (below the 64-connection cap, so that only the header
/// timeout can close them) send `GET /metrics` and then one byte of a
/// header that never ends every second, reopening when closed: each must
/// be cut at the 5 s header timeout counted from its start, not from its
/// last byte.
#[test]
fn a_header_sent_a_byte_a_second_is_cut_at_the_timeout() {
    let s = start(&[]);
    let pid = s.child.id();
    let (usual_median, usual_slowest) = usual(s.addr);
    let rss_before = proc_status(pid, "VmRSS:");
    let end = Instant::now() + Duration::from_secs(10);
    let addr = s.addr;
    let trickle = std::thread::spawn(move || {
        // (connection, opened, last byte sent)
        let mut held: Vec<Option<(TcpStream, Instant, Instant)>> = (0..40).map(|_| None).collect();
        let (mut lifetimes, mut bytes) = (Vec::new(), 0u32);
        while Instant::now() < end {
            let now = Instant::now();
            for slot in held.iter_mut() {
                let Some((c, opened, last)) = slot else {
                    if let Ok(mut c) = TcpStream::connect(addr) {
                        c.set_nonblocking(true).unwrap();
                        let _ = c.write_all(b"GET /metrics HTTP/1.1\r\nX-Slow: ");
                        *slot = Some((c, now, now));
                    }
                    continue;
                };
                let closed = match c.read(&mut [0u8; 512]) {
                    Ok(_) => true,
                    Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
                };
                if closed {
                    lifetimes.push(now - *opened);
                    *slot = None;
                } else if now - *last >= Duration::from_secs(1) {
                    if c.write_all(b"a").is_ok() {
                        bytes += 1;
                    }
                    *last = now;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // still open at the end: how long they had been
        let open: Vec<Duration> = held.iter().flatten().map(|h| h.1.elapsed()).collect();
        (lifetimes, open, bytes)
    });
    std::thread::sleep(Duration::from_millis(500));
    let (asked, answered, took) = scrape_until(s.addr, end);
    let (mut lifetimes, open, bytes) = trickle.join().unwrap();
    let rss_after = proc_status(pid, "VmRSS:");
    lifetimes.sort();
    eprintln!(
        "trickle: {} connections cut after {:?}..{:?} ({bytes} bytes trickled), {} open at the end (oldest {:?}); scrapes {answered}/{asked}, median {:?} (usually {usual_median:?}, slowest {:?} / usually {usual_slowest:?}); RSS {rss_before} -> {rss_after} KiB",
        lifetimes.len(),
        lifetimes.first(),
        lifetimes.last(),
        open.len(),
        open.iter().max(),
        median(&took),
        took.last(),
    );
    // the first 40 were cut at 5 s (their bytes kept none alive) and
    // reopened; 0.05 s polling and a loaded machine as slack
    assert!(lifetimes.len() >= 40, "{} cut", lifetimes.len());
    for l in lifetimes.iter().chain(&open) {
        assert!(*l < Duration::from_millis(6500), "one lived {l:?}");
    }
    assert!(
        lifetimes[0] >= Duration::from_millis(4500),
        "cut after {:?}: before the timeout",
        lifetimes[0]
    );
    assert_usual("trickle", usual_median, asked, answered, &took);
    assert!(
        rss_after < rss_before + 8 * 1024,
        "RSS {rss_before} -> {rss_after} KiB"
    );
}

/// One request with 1 MiB of header lines of `line` bytes each: 100-byte
/// lines (10,486 of them, past any count of headers) or 16 KiB ones (64,
/// each within a line limit of 16 KiB, which is the bound of the head).
fn huge_head(line: usize) -> Vec<u8> {
    let mut h = b"GET /metrics HTTP/1.1\r\nHost: x\r\n".to_vec();
    let mut i = 0u32;
    while h.len() < 1 << 20 {
        let pad = "a".repeat(line - 16);
        h.extend_from_slice(format!("X-Pad-{i:06}: {pad}\r\n").as_bytes());
        i += 1;
    }
    h.extend_from_slice(b"\r\n");
    h
}

/// 4 clients send 1 MiB heads over and over for 4 s, two of short lines
/// and two of long ones: each is refused (431, or the connection cut), the
/// exporter's peak memory (VmHWM) does not grow with them, and scrapes
/// keep their time.
#[test]
fn a_megabyte_of_header_lines_is_refused_and_costs_no_memory() {
    let s = start(&[]);
    let pid = s.child.id();
    let (usual_median, usual_slowest) = usual(s.addr);
    let rss_before = proc_status(pid, "VmRSS:");
    // the peak from here on, not the start's (5: reset VmHWM to VmRSS)
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").unwrap();
    let peak_before = proc_status(pid, "VmHWM:");
    let end = Instant::now() + Duration::from_secs(4);
    let heads = [huge_head(100), huge_head(16 << 10)].map(std::sync::Arc::new);
    let senders: Vec<_> = (0..4)
        .map(|i| {
            let (addr, head) = (s.addr, heads[i % 2].clone());
            std::thread::spawn(move || {
                // (requests, refused with 431, cut without an answer,
                // answered otherwise, most bytes the exporter took)
                let mut tally = (0u32, 0u32, 0u32, Vec::new(), 0usize);
                while Instant::now() < end {
                    let Ok(mut c) = TcpStream::connect(addr) else {
                        continue;
                    };
                    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    c.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
                    tally.0 += 1;
                    let mut sent = 0;
                    for chunk in head.chunks(16 << 10) {
                        if c.write_all(chunk).is_err() {
                            break;
                        }
                        sent += chunk.len();
                    }
                    tally.4 = tally.4.max(sent);
                    let mut out = Vec::new();
                    let _ = c.read_to_end(&mut out);
                    match status_and_body(&String::from_utf8_lossy(&out)).0 {
                        431 => tally.1 += 1,
                        0 => tally.2 += 1,
                        code => tally.3.push(code),
                    }
                }
                tally
            })
        })
        .collect();
    let (asked, answered, took) = scrape_until(s.addr, end);
    let rss_during = proc_status(pid, "VmRSS:");
    let (mut sent, mut refused, mut cut, mut other, mut took_most) = (0, 0, 0, Vec::new(), 0);
    for t in senders {
        let t = t.join().unwrap();
        sent += t.0;
        refused += t.1;
        cut += t.2;
        other.extend(t.3);
        took_most = took_most.max(t.4);
    }
    let rss_after = proc_status(pid, "VmRSS:");
    let peak_after = proc_status(pid, "VmHWM:");
    eprintln!(
        "1 MiB heads: {sent} sent, {refused} refused 431, {cut} cut, other {other:?}, at most {took_most} bytes of one written; scrapes {answered}/{asked}, median {:?} (usually {usual_median:?}, slowest {:?} / usually {usual_slowest:?}); RSS {rss_before} -> {rss_during} -> {rss_after} KiB, peak {peak_before} -> {peak_after} KiB",
        median(&took),
        took.last(),
    );
    assert!(sent >= 8, "only {sent} heads sent");
    assert!(other.is_empty(), "answered {other:?}");
    assert_eq!(refused + cut, sent);
    assert!(refused > 0, "none refused with 431");
    assert_usual("1 MiB heads", usual_median, asked, answered, &took);
    // 4 MiB went out at a time: at most the 16 KiB bound of each may be
    // held (1 MiB of slack for the allocator)
    let grew = peak_after.saturating_sub(peak_before.max(rss_before));
    assert!(grew < 1024, "peak RSS {peak_before} -> {peak_after} KiB");
    assert!(
        rss_after < rss_before + 1024,
        "RSS {rss_before} -> {rss_after} KiB"
    );
}
