//! The one place signal handlers are installed. Every caught signal goes to
//! one handler that only stores to atomics (async-signal-safe): a latch per
//! signal number, the last signal seen, and a stop flag for the signals a
//! headless command (`record`, `trace`, `serve`) stops on. The terminal UI
//! reads the same latches to restore the screen before it re-raises, and to
//! suspend on SIGTSTP.
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

/// Linux signal numbers are 1..=64.
const NSIG: usize = 65;

static RECEIVED: [AtomicBool; NSIG] = [const { AtomicBool::new(false) }; NSIG];
static LAST: AtomicI32 = AtomicI32::new(0);
/// Bit n set: signal n sets STOP.
static STOP_MASK: AtomicU64 = AtomicU64::new(0);
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    if let Some(latch) = usize::try_from(sig).ok().and_then(|s| RECEIVED.get(s)) {
        latch.store(true, Ordering::SeqCst);
        LAST.store(sig, Ordering::SeqCst);
        if STOP_MASK.load(Ordering::SeqCst) & (1u64 << (sig as u32 % 64)) != 0 {
            STOP.store(true, Ordering::SeqCst);
        }
    }
}

/// Catch each of `signals` with the latching handler. With `restart`,
/// interrupted reads and writes resume (as signal(2) does); without it they
/// fail with EINTR, which is what wakes a blocking terminal read.
pub fn catch(signals: &[libc::c_int], restart: bool) {
    for &sig in signals {
        // SAFETY: the handler only stores to atomics; the sigaction struct is
        // zeroed plain data and sigemptyset initialises its mask.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            if restart {
                sa.sa_flags = libc::SA_RESTART;
            }
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Whether `sig` arrived since the last `take(sig)`; clears the latch.
pub fn take(sig: libc::c_int) -> bool {
    latch(sig).is_some_and(|l| l.swap(false, Ordering::SeqCst))
}

/// Whether `sig` arrived (the latch stays set).
pub fn received(sig: libc::c_int) -> bool {
    latch(sig).is_some_and(|l| l.load(Ordering::SeqCst))
}

/// The last caught signal among `of`, if any of them arrived.
pub fn last_of(of: &[libc::c_int]) -> Option<libc::c_int> {
    let last = LAST.load(Ordering::SeqCst);
    if of.contains(&last) {
        return Some(last);
    }
    of.iter().copied().find(|&s| received(s))
}

fn latch(sig: libc::c_int) -> Option<&'static AtomicBool> {
    usize::try_from(sig).ok().and_then(|s| RECEIVED.get(s))
}

/// Set the stop flag on each of `signals`.
pub fn stop_on(signals: &[libc::c_int]) {
    for &sig in signals {
        STOP_MASK.fetch_or(1u64 << (sig as u32 % 64), Ordering::SeqCst);
    }
    catch(signals, true);
}

/// Whether a stop signal arrived.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The flag itself (for code that polls an `&AtomicBool`).
pub fn stop_flag() -> &'static AtomicBool {
    &STOP
}

/// End the process the way `sig` would have (exit status 128+sig), once
/// whatever had to be restored is.
pub fn die_by(sig: libc::c_int) -> ! {
    // SAFETY: restoring the default action and raising a signal we caught.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
    std::process::exit(128 + sig)
}

/// SIGUSR1 asks for an incident bundle (`--trigger`): note it, do not die.
pub fn catch_usr1() {
    catch(&[libc::SIGUSR1], true);
}

/// Whether SIGUSR1 arrived since the last call (clears it).
pub fn take_usr1() -> bool {
    take(libc::SIGUSR1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raised_signal_latches_once_and_names_itself_last() {
        catch(&[libc::SIGUSR2], true);
        assert!(!take(libc::SIGUSR2));
        // SAFETY: raising a signal whose handler is installed above.
        unsafe { libc::raise(libc::SIGUSR2) };
        assert!(received(libc::SIGUSR2));
        assert_eq!(
            last_of(&[libc::SIGUSR2, libc::SIGTERM]),
            Some(libc::SIGUSR2)
        );
        assert!(take(libc::SIGUSR2));
        assert!(!take(libc::SIGUSR2));
        assert!(!stop_requested(), "SIGUSR2 is not a stop signal");
    }
}
