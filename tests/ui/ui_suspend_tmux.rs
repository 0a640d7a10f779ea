//! Ctrl-Z and an external SIGTSTP suspend the live view as htop does: the
//! terminal is handed back to the shell (main screen, cursor, line mode),
//! and after `fg` schedtop is in raw mode again (a key works without
//! Enter) and redraws the whole screen. Driven through a real shell in tmux.
use crate::common;

use common::tmux::{have_tmux, Tmux, BIN};

#[test]
fn ctrl_z_and_sigtstp_suspend_and_resume_like_htop() {
    if !have_tmux() {
        return;
    }
    // bash, for job control (`fg`, "Stopped")
    let shell = ["env", "PS1=SHELL$ ", "bash", "--norc", "--noprofile", "-i"];
    let t = Tmux::start_cmd("suspend", 120, 40, None, &shell);
    t.wait_for("the shell", 20, |s| s.contains("SHELL$"));
    t.send(&[&format!("{BIN} -i 0.2"), "Enter"]);
    let drawing = |t: &Tmux, s: &str| s.contains("switches/s") && t.alternate_on();
    t.wait_until("the live view", 20, drawing);
    let pid = t.schedtop_pid();
    for (round, how) in ["Ctrl-Z", "kill -TSTP"].iter().enumerate() {
        if round == 0 {
            t.send(&["C-z"]);
        } else {
            // SAFETY: a signal to the process found above.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGTSTP) }, 0);
        }
        // the shell has the terminal: main screen, cursor shown, job stopped
        t.wait_until(&format!("the shell after {how}"), 20, |t, s| {
            s.matches("Stopped").count() > round && !t.alternate_on()
        });
        assert_eq!(t.display("#{cursor_flag}"), "1", "{how}: cursor hidden");
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        assert!(state.contains(") T "), "{how}: not stopped: {state}");
        t.send(&["fg", "Enter"]);
        t.wait_until(&format!("the live view after fg ({how})"), 20, drawing);
    }
    // raw mode again: q quits without Enter
    t.send(&["q"]);
    t.wait_until("the shell after q", 20, |t, _| !t.alternate_on());
    t.send(&["echo SCHEDTOP_EXIT=$?", "Enter"]);
    t.wait_for("exit status", 20, |s| s.contains("SCHEDTOP_EXIT=0"));
}
