//! Terminal hygiene: raw mode and the alternate screen are undone when the
//! guard drops (normal exit, error), in the panic hook, and after SIGTERM,
//! SIGHUP, SIGINT or SIGQUIT (an SSH drop must not leave a broken terminal).
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

use crate::util::signals;

use ratatui::crossterm::cursor::{Hide, Show};
use ratatui::crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};

/// The terminal is in raw mode / on the alternate screen.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// The terminal reports the mouse (mouse.rs) while the screen is ours.
static MOUSE: AtomicBool = AtomicBool::new(false);

const SIGNALS: [libc::c_int; 4] = [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT];

/// Owns the terminal's raw mode and alternate screen while alive.
pub struct TerminalGuard(());

impl TerminalGuard {
    pub fn enter() -> io::Result<TerminalGuard> {
        install_panic_hook();
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let guard = TerminalGuard(());
        execute!(io::stdout(), EnterAlternateScreen, Hide)?;
        capture_mouse()?;
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Take the terminal back after a suspend (`suspend`): raw mode, the
/// alternate screen, no cursor.
pub fn reenter() -> io::Result<()> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    execute!(io::stdout(), EnterAlternateScreen, Hide)?;
    capture_mouse()
}

/// Mouse capture on or off (`--no-mouse`, the setup screen): at once when
/// the screen is ours, else when it is taken.
pub fn set_mouse(on: bool) {
    let was = MOUSE.swap(on, Ordering::SeqCst);
    if ACTIVE.load(Ordering::SeqCst) && was != on {
        let _ = if on {
            execute!(io::stdout(), EnableMouseCapture)
        } else {
            execute!(io::stdout(), DisableMouseCapture)
        };
    }
}

fn capture_mouse() -> io::Result<()> {
    if MOUSE.load(Ordering::SeqCst) {
        execute!(io::stdout(), EnableMouseCapture)?;
    }
    Ok(())
}

/// Leave the alternate screen, show the cursor, leave raw mode; once, and
/// only if we entered them. Errors are ignored (the terminal may be gone).
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let mut out = io::stdout();
        if MOUSE.load(Ordering::SeqCst) {
            let _ = execute!(out, DisableMouseCapture);
        }
        let _ = execute!(out, LeaveAlternateScreen, Show);
        let _ = out.flush();
        let _ = disable_raw_mode();
    }
}

/// On a panic in the UI thread, restore the terminal before the message is
/// printed. A panic in another thread while the screen is ours prints
/// nothing here: it would scribble over the screen, and its thread reports
/// it (the collector sends it as a feed error).
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let ui = std::thread::current().id();
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().id() == ui {
                restore();
                previous(info);
            } else if !ACTIVE.load(Ordering::SeqCst) {
                previous(info);
            }
        }));
    });
}

/// Note SIGTERM, SIGHUP, SIGINT and SIGQUIT instead of dying at once, so the
/// event loop can restore the terminal first (then `die_by` re-raises).
/// No SA_RESTART: the signal must interrupt a blocking terminal read.
pub fn catch_signals() {
    signals::catch(&SIGNALS, false);
}

/// The signal that asked us to stop, if one did.
pub fn pending_signal() -> Option<i32> {
    signals::last_of(&SIGNALS)
}

pub use crate::util::signals::die_by;
