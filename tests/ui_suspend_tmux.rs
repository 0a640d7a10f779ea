//! Ctrl-Z and an external SIGTSTP suspend the live view as htop does: the
//! terminal is handed back to the shell (main screen, cursor, line mode),
//! and after `fg` schedtop is in raw mode again (a key works without
//! Enter) and redraws the whole screen. Driven through a real shell in tmux.
use std::process::{Command, Output};
use std::time::{Duration, Instant};

#[path = "common/skip.rs"]
mod skip;

const BIN: &str = env!("CARGO_BIN_EXE_schedtop");

struct Tmux(String);

impl Tmux {
    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.0])
            .args(args)
            .output()
            .unwrap()
    }
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }
    fn format(&self, f: &str) -> String {
        let o = self.run(&["display", "-p", "-t", "t", f]);
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }
    fn wait_for(&self, what: &str, f: impl Fn(&Tmux, &str) -> bool) {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if f(self, &s) {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "waiting for {what}:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    fn keys(&self, k: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(k);
        self.run(&args);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// The schedtop process the pane's shell started.
fn schedtop_pid(shell: i32) -> i32 {
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let Some((comm, rest)) = stat.split_once(") ") else {
            continue;
        };
        let ppid: i32 = rest
            .split(' ')
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        if ppid == shell && comm.ends_with("(schedtop") {
            return pid;
        }
    }
    panic!("no schedtop under the shell {shell}");
}

#[test]
fn ctrl_z_and_sigtstp_suspend_and_resume_like_htop() {
    if !Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        skip::skip("tmux is not installed");
        return;
    }
    let t = Tmux(format!("schedtop-suspend-{}", std::process::id()));
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
            "env",
            "PS1=SHELL$ ",
            "bash",
            "--norc",
            "--noprofile",
            "-i",
        ])
        .status
        .success());
    t.wait_for("the shell", |_, s| s.contains("SHELL$"));
    let shell: i32 = t.format("#{pane_pid}").parse().unwrap();
    t.keys(&[&format!("{BIN} -i 0.2"), "Enter"]);
    let drawing =
        |t: &Tmux, s: &str| s.contains("switches/s") && t.format("#{alternate_on}") == "1";
    t.wait_for("the live view", drawing);
    let pid = schedtop_pid(shell);
    for (round, how) in ["Ctrl-Z", "kill -TSTP"].iter().enumerate() {
        if round == 0 {
            t.keys(&["C-z"]);
        } else {
            // SAFETY: a signal to the process found above.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGTSTP) }, 0);
        }
        // the shell has the terminal: main screen, cursor shown, job stopped
        t.wait_for(&format!("the shell after {how}"), |t, s| {
            s.matches("Stopped").count() > round && t.format("#{alternate_on}") == "0"
        });
        assert_eq!(t.format("#{cursor_flag}"), "1", "{how}: cursor hidden");
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        assert!(state.contains(") T "), "{how}: not stopped: {state}");
        t.keys(&["fg", "Enter"]);
        t.wait_for(&format!("the live view after fg ({how})"), drawing);
    }
    // raw mode again: q quits without Enter
    t.keys(&["q"]);
    t.wait_for("the shell after q", |t, _| {
        t.format("#{alternate_on}") == "0"
    });
    t.keys(&["echo SCHEDTOP_EXIT=$?", "Enter"]);
    t.wait_for("exit status", |_, s| s.contains("SCHEDTOP_EXIT=0"));
}
