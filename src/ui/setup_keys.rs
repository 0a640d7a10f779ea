//! Keys while the setup screen is open (setup.rs) or while quit asks
//! whether to keep settings changed there: they take every key.
use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::action::{Action, Prefs, SetupKey};
use super::app::AppState;

/// Some(the action, if any) when the setup screen or the question has the
/// key; None otherwise.
pub fn map_key(k: &KeyEvent, app: &AppState) -> Option<Option<Action>> {
    let vm = &app.view_model;
    if vm.asking {
        let answer = match k.code {
            KeyCode::Char('s') | KeyCode::Char('y') => Some(true),
            KeyCode::Char('q') | KeyCode::Char('n') | KeyCode::F(10) => Some(false),
            _ => None, // Esc and the rest: stay
        };
        return Some(Some(Action::Prefs(Prefs::QuitAnswer(answer))));
    }
    vm.setup.as_ref()?;
    let key = match k.code {
        KeyCode::Up => SetupKey::Up,
        KeyCode::Down => SetupKey::Down,
        KeyCode::PageUp => SetupKey::PageUp,
        KeyCode::PageDown => SetupKey::PageDown,
        KeyCode::Home => SetupKey::Home,
        KeyCode::End => SetupKey::End,
        KeyCode::Left => SetupKey::Left,
        KeyCode::Right => SetupKey::Right,
        KeyCode::Char(' ') => SetupKey::Toggle,
        KeyCode::Char('[') | KeyCode::F(7) => SetupKey::MoveUp,
        KeyCode::Char(']') | KeyCode::F(8) => SetupKey::MoveDown,
        KeyCode::Enter | KeyCode::F(10) => SetupKey::Save,
        KeyCode::Esc | KeyCode::F(2) | KeyCode::Char('S') | KeyCode::Char('q') => SetupKey::Use,
        KeyCode::Char('x') => SetupKey::Discard,
        _ => return Some(None),
    };
    Some(Some(Action::Prefs(Prefs::Setup(key))))
}
