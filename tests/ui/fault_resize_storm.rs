//! Resize storms down to 1x1 in every view: the real binary in tmux must
//! survive them, keep drawing, and restore the terminal on q.

use crate::common;
use common::tmux::{have_tmux, Tmux, BIN};

#[test]
fn resize_storms_down_to_1x1_in_every_view() {
    if !have_tmux() {
        return;
    }
    let cmd = format!("{BIN} -i 0.2; echo SCHEDTOP_EXIT=$?; sleep 30");
    let t = Tmux::start_cmd("storm", 120, 40, None, &["sh", "-c", &cmd]);
    t.wait_for("the threads view", 20, |s| s.contains("NVCSW/s"));
    let sizes = [
        (1, 1),
        (2, 1),
        (1, 3),
        (10, 3),
        (200, 60),
        (20, 5),
        (3, 2),
        (80, 24),
        (1, 1),
        (45, 12),
    ];
    // threads, detail, CPU view, NUMA view, help
    for keys in [&[][..], &["Enter"], &["Escape", "c"], &["n"], &["?"]] {
        for k in keys {
            t.tmux(&["send-keys", "-t", "t", k]);
        }
        for round in 0..20 {
            let (x, y) = sizes[round % sizes.len()];
            t.tmux(&[
                "resize-window",
                "-t",
                "t",
                "-x",
                &x.to_string(),
                "-y",
                &y.to_string(),
            ]);
        }
    }
    t.tmux(&["send-keys", "-t", "t", "Escape"]);
    t.tmux(&["send-keys", "-t", "t", "Escape"]);
    t.tmux(&["resize-window", "-t", "t", "-x", "120", "-y", "40"]);
    // still alive and drawing
    t.wait_for("schedtop drawing again after the storm", 20, |s| {
        s.contains("schedtop") && s.contains("switches/s")
    });
    t.tmux(&["send-keys", "-t", "t", "q"]);
    let s = t.wait_for("exit status", 20, |s| s.contains("SCHEDTOP_EXIT="));
    assert!(s.contains("SCHEDTOP_EXIT=0"), "{s}");
    let alt = t.tmux(&["display", "-p", "-t", "t", "#{alternate_on}"]);
    assert_eq!(
        String::from_utf8_lossy(&alt.stdout).trim(),
        "0",
        "alternate screen left on"
    );
}
