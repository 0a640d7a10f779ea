//! The processes view (`H`): threads summed per process, with a thread count.
use ratatui::layout::Rect;
use ratatui::Frame;

use crate::ui::app::AppState;

pub fn render(app: &AppState, f: &mut Frame, area: Rect) {
    super::table::render(app, f, area);
}
