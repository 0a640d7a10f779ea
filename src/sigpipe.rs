//! Commands that write to stdout end quietly when its reader goes away
//! (`schedtop doctor | head -1`), as cat and grep do: Rust ignores SIGPIPE,
//! so a write to a closed pipe returns EPIPE, which println! turns into a
//! panic and other writers into "Broken pipe" errors, each command its own
//! way. With the default action the kernel ends the process at the first
//! such write, silently, whatever wrote. Not for the commands that must
//! finish their files (record, trace) or that own the terminal.
pub fn end_quietly_on_closed_stdout() {
    // SAFETY: setting a signal's disposition to SIG_DFL has no
    // preconditions; nothing else in the process handles SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
