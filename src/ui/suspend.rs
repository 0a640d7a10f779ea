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
use crate::util::signals;

/// Catch SIGTSTP (to restore the terminal before stopping) and SIGCONT
/// (to redraw after any stop).
/// Ctrl-Z read as a key (raw mode turns off the terminal's own SIGTSTP).
static CTRL_Z: AtomicBool = AtomicBool::new(false);

pub fn catch() {
    signals::catch(&[libc::SIGTSTP, libc::SIGCONT], true);
}

/// Whether `ev` is Ctrl-Z; if so, a suspend is due.
pub fn note_key(ev: &Event) -> bool {
    let ctrl_z = matches!(ev, Event::Key(k)
        if k.kind != KeyEventKind::Release
            && k.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(k.code, KeyCode::Char('z') | KeyCode::Char('Z')));
    if ctrl_z {
        CTRL_Z.store(true, Ordering::SeqCst);
    }
    ctrl_z
}

/// If a suspend is due: restore the terminal, stop until SIGCONT, take the
/// terminal back. True when the screen must be redrawn from scratch (after
/// a suspend, or after a SIGSTOP someone else sent).
pub fn service() -> io::Result<bool> {
    if CTRL_Z.swap(false, Ordering::SeqCst) | signals::take(libc::SIGTSTP) {
        terminal::restore();
        // SAFETY: the default action for SIGTSTP stops the process; our
        // handler is put back once it runs again.
        unsafe {
            libc::signal(libc::SIGTSTP, libc::SIG_DFL);
            libc::raise(libc::SIGTSTP);
        }
        // here after SIGCONT
        signals::catch(&[libc::SIGTSTP], true);
        terminal::reenter()?;
        signals::take(libc::SIGCONT);
        return Ok(true);
    }
    Ok(signals::take(libc::SIGCONT))
}
