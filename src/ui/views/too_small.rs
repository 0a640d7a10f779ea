//! What a terminal below the minimum size gets instead of the views.
use ratatui::layout::Rect;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use crate::ui::layout::{MIN_HEIGHT, MIN_WIDTH};
use crate::ui::theme;

pub fn render(f: &mut Frame, area: Rect) {
    let text = format!(
        "terminal too small ({}x{}); schedtop needs {MIN_WIDTH}x{MIN_HEIGHT}. q quits",
        area.width, area.height
    );
    f.render_widget(
        Paragraph::new(text)
            .style(theme::warning())
            .wrap(Wrap { trim: true }),
        area,
    );
}
