//! Messages to stderr and lines to stdout that survive a closed descriptor.
//! `eprintln!`/`println!` panic when the write fails (exit 101): a daemon's
//! stderr goes away when journald restarts or a pipe closes, and
//! `schedtop record --dir D 2>&1 | head -1` must go on recording. A message
//! that cannot be written is dropped; a command whose stdout is gone ends
//! (0 for a closed pipe, as `cat | head` does; 2 with a line otherwise).

/// One line to stderr; a failed write is ignored (never panics).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr().lock(), $($arg)*);
    }};
}

/// One line to stdout; when stdout is gone the process ends (see
/// `stdout_gone`), never with a panic.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        if let Err(e) = ::std::writeln!(::std::io::stdout().lock(), $($arg)*) {
            $crate::util::stdio::stdout_gone(&e);
        }
    }};
}

/// End the process because stdout cannot be written: quietly with 0 when
/// its reader went away (EPIPE), else with a line on stderr and 2.
pub fn stdout_gone(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    crate::say!("schedtop: cannot write to stdout: {e}");
    std::process::exit(2);
}

/// Put /dev/null on any of descriptors 0, 1 and 2 that is closed at start
/// (`schedtop record 2>&-`). Otherwise the first file opened takes the free
/// number, and a message meant for stderr lands inside a recording.
pub fn fill_closed_std_fds() {
    for fd in 0..=2 {
        // SAFETY: F_GETFD only asks whether `fd` is open.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1 {
            continue;
        }
        let flags = if fd == 0 {
            libc::O_RDONLY
        } else {
            libc::O_WRONLY
        };
        // SAFETY: a NUL-terminated path; open returns the lowest free
        // number, which is `fd` since every lower one is open by now.
        let got = unsafe { libc::open(c"/dev/null".as_ptr(), flags) };
        if got >= 0 && got != fd {
            // SAFETY: both descriptors are ours.
            unsafe {
                libc::dup2(got, fd);
                libc::close(got);
            }
        }
    }
}
