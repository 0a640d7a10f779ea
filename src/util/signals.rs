//! A stop flag set by SIGINT/SIGTERM (and SIGHUP where asked), for the
//! headless commands (`record`, `trace`). The terminal UI has its own
//! handlers (ui/terminal.rs): it must restore the screen and re-raise.
use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Set the stop flag on each of `signals`.
pub fn stop_on(signals: &[libc::c_int]) {
    for &sig in signals {
        // SAFETY: the handler only stores to an atomic (async-signal-safe);
        // the sigaction struct is zeroed plain data.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            // interrupted reads and writes resume (as signal(2) does)
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Whether a stop signal arrived.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The flag itself (for code that polls an `&AtomicBool`).
pub fn stop_flag() -> &'static AtomicBool {
    &STOP
}

static USR1: AtomicBool = AtomicBool::new(false);

extern "C" fn on_usr1(_: libc::c_int) {
    USR1.store(true, Ordering::SeqCst);
}

/// SIGUSR1 asks for an incident bundle (`--trigger`): note it, do not die.
pub fn catch_usr1() {
    // SAFETY: as in `stop_on`: the handler only stores to an atomic.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_usr1 as *const () as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut());
    }
}

/// Whether SIGUSR1 arrived since the last call (clears it).
pub fn take_usr1() -> bool {
    USR1.swap(false, Ordering::SeqCst)
}
