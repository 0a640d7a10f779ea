//! `render(&AppState, &mut Frame)`: the whole screen from the state, and
//! nothing else (no state changes, no I/O).
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::Frame;
use ratatui::Terminal;

use super::app::{AppState, View};
use super::layout;
use super::views;

pub fn render(app: &AppState, f: &mut Frame) {
    let area = f.area();
    if layout::too_small(area) {
        views::too_small::render(f, area);
    } else {
        render_screen(app, f, area);
    }
    // the colour theme (palette.rs) over whatever was drawn
    super::palette::apply(app.view_model.settings.theme, f.buffer_mut());
}

fn render_screen(app: &AppState, f: &mut Frame, area: ratatui::layout::Rect) {
    let a = layout::areas(area, app);
    if app.compare.is_some() {
        // `schedtop diff`: the whole screen in comparison mode
        return views::compare::render(app, f, &a);
    }
    views::header::render(app, f, a.header);
    views::info::render(app, f, a.info);
    match app.view {
        View::Threads => views::threads::render(app, f, a.table),
        View::Processes => views::processes::render(app, f, a.table),
        View::Cpus => views::cpus::render(app, f, a.table),
        View::Numa => views::numa::render(app, f, a.table),
        View::Cgroups => views::cgroups::render(app, f, a.table),
        View::Findings => views::findings::render(app, f, a.table),
    }
    if let Some(d) = a.detail {
        views::detail::render(app, f, d);
    }
    views::footer::render(app, f, a.footer);
    if app.help {
        views::help::render(app, f, area);
    }
    if app.view_model.setup.is_some() {
        views::setup::render(app, f, area);
    }
}

/// The screen as it would be drawn on a `width` x `height` terminal (tests,
/// screenshots).
pub fn render_to_buffer(app: &AppState, width: u16, height: u16) -> Buffer {
    let backend = TestBackend::new(width, height);
    // TestBackend cannot fail (its error type is Infallible)
    let Ok(mut terminal) = Terminal::new(backend);
    let Ok(_) = terminal.draw(|f| render(app, f));
    terminal.backend().buffer().clone()
}

/// A buffer as plain text, one line per row, trailing spaces kept.
pub fn buffer_text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut skip = 0usize;
        for x in area.left()..area.right() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            out.push_str(sym);
            let w = ratatui::text::Span::raw(sym).width();
            skip = w.saturating_sub(1);
        }
        out.push('\n');
    }
    out
}
