//! Ending the process when its terminal goes away.
//!
//! crossterm 0.29's reader (event/source/unix/mio.rs) loops forever when
//! the terminal reads EOF or fails with EIO, as after an SSH drop or a
//! closed terminal window: the UI thread would spin at 100% CPU inside
//! `event::poll` and never look at the SIGHUP flag (nor is a SIGHUP always
//! sent). A watchdog thread polls the terminal for a hangup and ends the
//! process when it sees one.
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use super::terminal;

/// Exit status after a hangup, as if SIGHUP had ended us.
const HANGUP_STATUS: i32 = 128 + libc::SIGHUP;

/// Start the watchdog for the terminal crossterm reads from: stdin when it
/// is one, else /dev/tty.
pub fn exit_on_hangup() {
    // SAFETY: isatty only inspects the descriptor.
    let (file, fd): (Option<File>, RawFd) = if unsafe { libc::isatty(0) } == 1 {
        (None, 0)
    } else {
        match File::open("/dev/tty") {
            Ok(f) => {
                let fd = f.as_raw_fd();
                (Some(f), fd)
            }
            Err(_) => return,
        }
    };
    let _ = std::thread::Builder::new()
        .name("schedtop-tty".into())
        .spawn(move || {
            let _keep_open = file;
            while !hung_up(fd, Duration::from_secs(1)) {}
            terminal::restore(); // best effort: the terminal is gone
            std::process::exit(HANGUP_STATUS);
        });
}

/// Whether `fd` reports a hangup or error within `timeout`.
fn hung_up(fd: RawFd, timeout: Duration) -> bool {
    // events 0: only POLLHUP, POLLERR and POLLNVAL, which are always reported
    let mut p = libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd for the duration of the call.
    let n = unsafe { libc::poll(&mut p, 1, ms) };
    n > 0 && p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}
