//! Where things go on the screen, as a pure function of the terminal size
//! and the state: the renderer draws into these areas and the app uses the
//! same numbers for paging and scrolling.
use ratatui::layout::Rect;

use super::action::{Action, Effect};
use super::app::AppState;

/// Below this the screen only says it is too small.
pub const MIN_WIDTH: u16 = 40;
pub const MIN_HEIGHT: u16 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Areas {
    pub header: Rect,
    /// the line above the table: view name, counts, sort, filter
    pub info: Rect,
    /// the table including its title row
    pub table: Rect,
    pub detail: Option<Rect>,
    pub footer: Rect,
}

pub fn too_small(area: Rect) -> bool {
    area.width < MIN_WIDTH || area.height < MIN_HEIGHT
}

/// Lines of the header at `width` (it wraps rather than cuts).
pub fn header_height(app: &AppState, width: u16) -> u16 {
    super::views::header::lines(app, width).len() as u16
}

pub fn areas(area: Rect, app: &AppState) -> Areas {
    let line = |y: u16, h: u16| Rect::new(area.x, y, area.width, h);
    let bottom = area.y.saturating_add(area.height);
    // the footer line stays visible however much the header wraps
    let header_h = header_height(app, area.width).min(area.height.saturating_sub(1));
    let footer_y = bottom.saturating_sub(1).max(area.y);
    let body_y = area.y + header_h;
    let body_h = footer_y.saturating_sub(body_y);
    let info = line(body_y, body_h.min(1));
    let rest_y = body_y + info.height;
    let rest = body_h - info.height;
    let (table_h, detail) = if app.detail && app.view.is_table() {
        let room = if rest < 8 {
            rest.saturating_sub(2)
        } else {
            (rest / 2).max(rest.saturating_sub(4).min(14))
        };
        let d = room.min(super::views::detail::wanted_height(app));
        (rest - d, Some(line(rest_y + rest - d, d)))
    } else {
        (rest, None)
    };
    Areas {
        header: line(area.y, header_h),
        info,
        table: line(rest_y, table_h),
        detail,
        footer: line(footer_y, area.height.min(1)),
    }
}

/// Data rows the table shows at the app's terminal size.
pub fn table_rows(app: &AppState) -> usize {
    let area = Rect::new(0, 0, app.size.0, app.size.1);
    if too_small(area) {
        return 1;
    }
    usize::from(areas(area, app).table.height.saturating_sub(1))
}

/// Apply `a` to the state with the page size the screen has: before the
/// action (paging keys) and after it (a resize or a pane that moves the
/// table). The one way actions reach the state.
pub fn apply(app: &mut AppState, a: Action) -> Effect {
    refresh(app);
    let effect = match app.compare_apply(a) {
        Some(e) => e,
        None => app.apply(a),
    };
    refresh(app);
    effect
}

/// Tell the state its page size after something other than an action
/// changed the layout (new samples: more rows, a wider header).
pub fn refresh(app: &mut AppState) {
    let rows = table_rows(app);
    app.set_table_rows(rows);
}
