//! Suspend and resume as htop does. Ctrl-Z reaches us as a key (raw mode
//! turns off the terminal's own ISIG handling), and a SIGTSTP from outside
//! (`kill -TSTP`) as a signal: either way the terminal is restored first
//! (main screen, cursor, line mode), then the process stops with the
//! default action. On SIGCONT (`fg`) it re-enters raw mode and the
//! alternate screen and the whole screen is redrawn. A SIGSTOP cannot be
//! caught: after its SIGCONT the screen is only redrawn.
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers};

use super::terminal;

static SUSPEND: AtomicBool = AtomicBool::new(false);
static CONTINUED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_tstp(_: libc::c_int) {
    // only an atomic store: async-signal-safe
    SUSPEND.store(true, Ordering::SeqCst);
}

extern "C" fn on_cont(_: libc::c_int) {
    CONTINUED.store(true, Ordering::SeqCst);
}

fn handle(sig: libc::c_int, f: extern "C" fn(libc::c_int)) {
    // SAFETY: a zeroed sigaction with a handler that only stores to an
    // atomic; sigemptyset initialises the mask.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = f as *const () as libc::sighandler_t;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

/// Catch SIGTSTP (to restore the terminal before stopping) and SIGCONT
/// (to redraw after any stop).
pub fn catch() {
    handle(libc::SIGTSTP, on_tstp);
    handle(libc::SIGCONT, on_cont);
}

/// Whether `ev` is Ctrl-Z; if so, a suspend is due.
pub fn note_key(ev: &Event) -> bool {
    let ctrl_z = matches!(ev, Event::Key(k)
        if k.kind != KeyEventKind::Release
            && k.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(k.code, KeyCode::Char('z') | KeyCode::Char('Z')));
    if ctrl_z {
        SUSPEND.store(true, Ordering::SeqCst);
    }
    ctrl_z
}

/// If a suspend is due: restore the terminal, stop until SIGCONT, take the
/// terminal back. True when the screen must be redrawn from scratch (after
/// a suspend, or after a SIGSTOP someone else sent).
pub fn service() -> io::Result<bool> {
    if SUSPEND.swap(false, Ordering::SeqCst) {
        terminal::restore();
        // SAFETY: the default action for SIGTSTP stops the process; our
        // handler is put back once it runs again.
        unsafe {
            libc::signal(libc::SIGTSTP, libc::SIG_DFL);
            libc::raise(libc::SIGTSTP);
        }
        // here after SIGCONT
        handle(libc::SIGTSTP, on_tstp);
        terminal::reenter()?;
        CONTINUED.store(false, Ordering::SeqCst);
        return Ok(true);
    }
    Ok(CONTINUED.swap(false, Ordering::SeqCst))
}
