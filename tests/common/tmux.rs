//! One harness for the tests that need a real terminal: a private tmux
//! server (its own socket) with one pane running sh, killed on drop.
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_schedtop");

/// tmux present? If not: a visible skip (false), or a failure when CI
/// requires everything (SCHEDTOP_REQUIRE_ALL=1).
pub fn have_tmux() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        super::skip::skip("tmux is not installed");
    }
    ok
}

/// tmux on the server at `socket`.
pub fn tmux(socket: &str, args: &[&str]) -> Output {
    Command::new("tmux")
        .arg("-L")
        .arg(socket)
        .args(args)
        .env_remove("TMUX")
        .output()
        .expect("running tmux")
}

static NEXT_SOCKET: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub struct Tmux {
    pub socket: String,
}

impl Tmux {
    /// A `w` x `h` pane running `sh` (in `cwd` when given).
    pub fn start(name: &str, w: u16, h: u16, cwd: Option<&Path>) -> Tmux {
        Tmux::start_cmd(name, w, h, cwd, &["env", "PS1=$ ", "sh"])
    }

    /// A `w` x `h` pane running `cmd`.
    pub fn start_cmd(name: &str, w: u16, h: u16, cwd: Option<&Path>, cmd: &[&str]) -> Tmux {
        let t = Tmux {
            // tests of several files share one test binary (one pid): a
            // counter keeps two servers from ever sharing a socket
            socket: format!(
                "schedtop-{name}-{}-{}",
                std::process::id(),
                NEXT_SOCKET.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ),
        };
        let (w, h) = (w.to_string(), h.to_string());
        let mut args = vec![
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            &w,
            "-y",
            &h,
        ];
        if let Some(c) = cwd {
            args.extend(["-c", c.to_str().unwrap()]);
        }
        args.extend_from_slice(cmd);
        let o = t.tmux(&args);
        assert!(
            o.status.success(),
            "tmux: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        t
    }

    pub fn tmux(&self, args: &[&str]) -> Output {
        tmux(&self.socket, args)
    }

    /// Keys by tmux name ("Enter", "C-c", "q").
    pub fn send(&self, keys: &[&str]) {
        let mut a = vec!["send-keys", "-t", "t"];
        a.extend_from_slice(keys);
        assert!(self.tmux(&a).status.success());
    }

    /// Type text literally (no key-name lookup).
    pub fn type_text(&self, text: &str) {
        assert!(self
            .tmux(&["send-keys", "-t", "t", "-l", text])
            .status
            .success());
    }

    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }

    pub fn display(&self, format: &str) -> String {
        let o = self.tmux(&["display-message", "-p", "-t", "t", format]);
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    pub fn alternate_on(&self) -> bool {
        self.display("#{alternate_on}") == "1"
    }

    /// Wait until `pred(screen)` holds; panics with the last screen if not.
    pub fn wait_for(&self, what: &str, secs: u64, pred: impl Fn(&str) -> bool) -> String {
        self.wait_until(what, secs, |_, s| pred(s))
    }

    /// Like `wait_for`, for conditions that also ask tmux about the pane
    /// (alternate screen, cursor).
    pub fn wait_until(&self, what: &str, secs: u64, pred: impl Fn(&Tmux, &str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let s = self.screen();
            if pred(self, &s) {
                return s;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Is the terminal back to normal after schedtop printed
    /// `SCHEDTOP_EXIT=<code>`: main screen, cooked mode, cursor shown?
    pub fn assert_restored(&self, exit_code: &str) {
        self.wait_for(&format!("exit status {exit_code}"), 20, |s| {
            s.contains(&format!("SCHEDTOP_EXIT={exit_code}"))
        });
        assert!(!self.alternate_on(), "still on the alternate screen");
        self.type_text(
            r#"case "$(stty -a)" in *-icanon*) echo TTY_RAW;; *) echo TTY_COOKED;; esac"#,
        );
        self.send(&["Enter"]);
        let s = self.wait_for("stty check", 10, |s| {
            s.contains("TTY_COOKED\n") || s.contains("TTY_RAW\n")
        });
        assert!(
            s.contains("TTY_COOKED\n"),
            "terminal left in raw mode:\n{s}"
        );
        assert_eq!(self.display("#{cursor_flag}"), "1", "cursor left hidden");
    }

    /// Start schedtop with `args` in the pane's shell and wait for the
    /// live view on the alternate screen.
    pub fn run_schedtop(&self, args: &str) {
        self.type_text(&format!("{BIN} {args}; echo SCHEDTOP_EXIT=$?"));
        self.send(&["Enter"]);
        self.wait_for("the live view", 30, |s| {
            s.contains("NVCSW/s") && s.contains("schedtop")
        });
        assert!(
            self.alternate_on(),
            "the live view is not on the alternate screen"
        );
    }

    /// schedtop's pid: the child of the pane's shell.
    pub fn schedtop_pid(&self) -> i32 {
        let shell: i32 = self.display("#{pane_pid}").parse().unwrap();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // pid (comm) state ppid ...
            let Some(rest) = stat.rsplit_once(") ").map(|x| x.1) else {
                continue;
            };
            let ppid: i32 = rest
                .split(' ')
                .nth(1)
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            if ppid == shell && stat.contains("(schedtop)") {
                return pid;
            }
        }
        panic!("schedtop is not running under the pane's shell");
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}
