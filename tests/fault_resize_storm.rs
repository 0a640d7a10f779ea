//! Resize storms down to 1x1 in every view: the real binary in tmux must
//! survive them, keep drawing, and restore the terminal on q.
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_schedtop");

struct Tmux(String);

impl Tmux {
    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.0)
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("tmux")
    }
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }
    fn wait_for(&self, what: &str, f: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if f(&s) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "waiting for {what}:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

#[test]
fn resize_storms_down_to_1x1_in_every_view() {
    let have = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        if std::env::var("SCHEDTOP_REQUIRE_ALL").as_deref() == Ok("1") {
            panic!("tmux is not installed and SCHEDTOP_REQUIRE_ALL=1");
        }
        eprintln!("SKIPPED: tmux is not installed");
        return;
    }
    let t = Tmux(format!("schedtop-storm-{}", std::process::id()));
    let cmd = format!("{BIN} -i 0.2; echo SCHEDTOP_EXIT=$?; sleep 30");
    assert!(t
        .run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "120",
            "-y",
            "40",
            "sh",
            "-c",
            &cmd
        ])
        .status
        .success());
    t.wait_for("the threads view", |s| s.contains("NVCSW/s"));
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
            t.run(&["send-keys", "-t", "t", k]);
        }
        for round in 0..20 {
            let (x, y) = sizes[round % sizes.len()];
            t.run(&[
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
    t.run(&["send-keys", "-t", "t", "Escape"]);
    t.run(&["send-keys", "-t", "t", "Escape"]);
    t.run(&["resize-window", "-t", "t", "-x", "120", "-y", "40"]);
    // still alive and drawing
    t.wait_for("schedtop drawing again after the storm", |s| {
        s.contains("schedtop") && s.contains("switches/s")
    });
    t.run(&["send-keys", "-t", "t", "q"]);
    let s = t.wait_for("exit status", |s| s.contains("SCHEDTOP_EXIT="));
    assert!(s.contains("SCHEDTOP_EXIT=0"), "{s}");
    let alt = t.run(&["display", "-p", "-t", "t", "#{alternate_on}"]);
    assert_eq!(
        String::from_utf8_lossy(&alt.stdout).trim(),
        "0",
        "alternate screen left on"
    );
}
