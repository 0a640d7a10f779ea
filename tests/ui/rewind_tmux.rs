//! Rewind while live in a real terminal: the live view runs, a burst of
//! pinned spinners comes and goes, and after it is gone from the live
//! screen `T` steps back until the burst is on screen again with the
//! `REWIND −Ns` mark, while the live clock next to it keeps moving; `End`
//! returns to live, where the burst is gone.
//!
//! Needs tmux. Without it the test skips, unless SCHEDTOP_REQUIRE_ALL=1
//! (CI), where it fails.
use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use common::tmux::{have_tmux, Tmux};

/// Two spinners sharing one CPU until dropped (joined on drop).
struct Burst {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Burst {
    fn start() -> Burst {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..2)
            .map(|i| {
                let stop = stop.clone();
                std::thread::Builder::new()
                    .name(format!("rwspin{i}"))
                    .spawn(move || {
                        pin_to_first_cpu();
                        let mut x = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            x = std::hint::black_box(x.wrapping_add(1));
                        }
                    })
                    .unwrap()
            })
            .collect();
        Burst { stop, threads }
    }
}

impl Drop for Burst {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn pin_to_first_cpu() {
    // SAFETY: cpu_set_t is plain data; get/setaffinity on the calling
    // thread (0) with its size.
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        assert_eq!(libc::sched_getaffinity(0, size, &mut allowed), 0);
        let first = (0..libc::CPU_SETSIZE as usize)
            .find(|&c| libc::CPU_ISSET(c, &allowed))
            .expect("an allowed CPU");
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(first, &mut set);
        assert_eq!(libc::sched_setaffinity(0, size, &set), 0);
    }
}

/// `HH:MM:SS` after `label ` on the screen.
fn clock_after(s: &str, label: &str) -> Option<String> {
    s.split(label).skip(1).find_map(|rest| {
        let t: String = rest.chars().take(8).collect();
        let b = t.as_bytes();
        (b.len() == 8 && b[2] == b':' && b[5] == b':' && b[0].is_ascii_digit()).then_some(t)
    })
}

#[test]
fn t_rewinds_to_a_burst_gone_from_live_and_end_returns() {
    if !have_tmux() {
        return;
    }
    let tmux = Tmux::start("rewind", 160, 40, None);
    tmux.run_schedtop("-i 0.5 --history 5m");
    // only the burst's threads
    tmux.send(&["/"]);
    tmux.type_text("rwspin");
    tmux.send(&["Enter"]);
    tmux.wait_for("the filter", 10, |s| s.contains("filter \"rwspin\""));
    std::thread::sleep(Duration::from_secs(2));

    let burst = Burst::start();
    tmux.wait_for("the burst live", 30, |s| {
        s.contains("rwspin0") && s.contains("rwspin1")
    });
    std::thread::sleep(Duration::from_secs(2));
    drop(burst);
    tmux.wait_for("the burst gone from live", 30, |s| {
        !s.contains("rwspin0") && !s.contains("rwspin1")
    });
    std::thread::sleep(Duration::from_secs(1));

    // T until the burst is on screen again
    let mut found = None;
    for _ in 0..60 {
        tmux.send(&["T"]);
        std::thread::sleep(Duration::from_millis(200));
        let s = tmux.screen();
        if s.contains("rwspin0") && s.contains("REWIND") {
            found = Some(s);
            break;
        }
    }
    let s = found.unwrap_or_else(|| panic!("T never reached the burst:\n{}", tmux.screen()));
    eprintln!("rewound screen:\n{s}");
    assert!(s.contains("REWIND \u{2212}"), "{s}");
    let shown = clock_after(&s, "at ").expect("the moment shown");
    let live = clock_after(&s, "live ").expect("the live clock");
    assert_ne!(shown, live, "{s}");

    // collection goes on: the live clock moves, the moment shown does not
    let later = tmux.wait_for("the live clock moving", 10, |x| {
        clock_after(x, "live ").is_some_and(|l| l != live)
    });
    assert_eq!(clock_after(&later, "at ").as_deref(), Some(shown.as_str()));
    assert!(
        later.contains("rwspin0") && later.contains("REWIND"),
        "{later}"
    );

    // End: live again, the burst is gone
    tmux.send(&["End"]);
    // (one condition: a capture can fall between the header's redraw and
    // the rows')
    tmux.wait_for("live again, without the burst", 10, |s| {
        !s.contains("REWIND") && !s.contains("rwspin0") && s.contains("filter \"rwspin\"")
    });

    tmux.send(&["q"]);
    tmux.assert_restored("0");
}
