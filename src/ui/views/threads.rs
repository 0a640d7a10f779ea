//! The threads view (default): one row per thread.
use ratatui::layout::Rect;
use ratatui::Frame;

use crate::ui::app::AppState;

pub fn render(app: &AppState, f: &mut Frame, area: Rect) {
    super::table::render(app, f, area);
}
