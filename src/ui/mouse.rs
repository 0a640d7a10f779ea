//! The mouse (crossterm's mouse capture, on unless `--no-mouse` or the
//! setup screen turns it off): a click on a column title sorts by it (again:
//! inverts), on a row selects it, twice on the same row opens the detail
//! pane, on a cgroup's fold mark folds or unfolds it, on a key hint does
//! what its key does (the view hints are the tabs); the wheel scrolls.
//!
//! What a click hits comes from the last frame: after each draw
//! `remember` stores where the renderer's own layout functions put the
//! titles, rows and hints (hit_map.rs). While the terminal reports the
//! mouse it no longer selects text on a plain drag; xterm, VTE terminals,
//! kitty, iTerm2 and tmux (with `mouse on`) still select with Shift held,
//! as in htop.
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use super::action::{Action, Prefs, SetupKey};
use super::app::{AppState, View};
use super::hit_map::{HitMap, Target};
use super::{columns, layout, views};

/// Two clicks on the same row within this are a double click.
pub const DOUBLE_CLICK_NS: u64 = 400_000_000;
/// Lines the wheel moves per notch.
pub const WHEEL_LINES: i32 = 3;

/// Store where the frame just drawn on `area` put what a click can hit.
pub fn remember(app: &mut AppState, area: Rect) {
    app.view_model.hits = hits(app, area);
}

/// What a click can hit on a frame of `area` drawn from `app`.
pub fn hits(app: &AppState, area: Rect) -> HitMap {
    let mut m = HitMap::default();
    if layout::too_small(area) || app.help {
        return m; // the help overlay closes on any click
    }
    if let Some(d) = &app.view_model.setup {
        let (inner, skip) = views::setup::frame(area, d);
        for (k, (item, _)) in views::setup::lines(d).iter().enumerate().skip(skip) {
            let y = inner.y + (k - skip) as u16;
            if let (Some(i), true) = (item, y < inner.bottom()) {
                m.push(Rect::new(inner.x, y, inner.width, 1), Target::Row(*i));
            }
        }
        return m;
    }
    let a = layout::areas(area, app);
    match app.view {
        View::Threads | View::Processes => {
            table(app, a.table, &mut m);
            // the view's name on the line above: threads <-> processes
            let name = views::info::view_name(app.view).len() as u16;
            let r = Rect::new(a.info.x, a.info.y, name.min(a.info.width), a.info.height);
            m.push(r, Target::Act(Action::ToggleProcesses));
        }
        View::Cgroups => cgroup_tree(app, a.table, &mut m),
        View::Cpus | View::Numa | View::Findings => {}
    }
    for (x, w, key) in views::footer::hint_cells(app, a.footer.width) {
        if let Some(act) = hint_action(key, app) {
            let r = Rect::new(a.footer.x + x, a.footer.y, w, a.footer.height);
            m.push(r.intersection(a.footer), Target::Act(act));
        }
    }
    m
}

/// The table's column titles and rows (views/table.rs lays them out).
fn table(app: &AppState, area: Rect, m: &mut HitMap) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let mut x = area.x;
    let mut name_x = None;
    for (c, w) in columns::fit_cols(app.view_model.columns(app.table_view), area.width) {
        if c == columns::Column::COMM {
            name_x = Some((x, w));
        }
        m.push(
            Rect::new(x, area.y, w, 1).intersection(area),
            Target::SortBy(c),
        );
        x = x.saturating_add(w + columns::GAP);
    }
    let height = usize::from(area.height - 1);
    let off = views::table::visible_offset(app, height);
    let n = app.rows().len().saturating_sub(off).min(height);
    for k in 0..n {
        let r = Rect::new(area.x, area.y + 1 + k as u16, area.width, 1);
        m.push(r, Target::Row(off + k));
        // the process tree's fold mark: `─` or `+`, the cell before the name
        let line = app.listing.tree.lines.get(off + k);
        if let (Some(t), Some((nx, w)), Some(row)) = (line, name_x, app.rows().get(off + k)) {
            let name = columns::Column::COMM.cell(row).chars().count();
            let drawn = super::process_tree::shown_prefix(&t.prefix, name, usize::from(w));
            if t.fold != super::process_tree::Fold::Leaf && !drawn.is_empty() {
                let at = nx.saturating_add(drawn.chars().count() as u16 - 2);
                m.push(
                    Rect::new(at, r.y, 2, 1).intersection(r),
                    Target::Fold(off + k),
                );
            }
        }
    }
}

/// The cgroup tree's rows and fold marks (views/cgroups.rs lays them out).
fn cgroup_tree(app: &AppState, area: Rect, m: &mut HitMap) {
    let all = &app.derived.cgroups;
    if area.height == 0 || area.width == 0 || all.is_empty() {
        return;
    }
    let (tree, _) = views::cgroups::tree_area(app, area);
    let first = views::cgroups::first_row(app, tree);
    let body = usize::from(tree.height.saturating_sub(1));
    let rows = app.cgroups.rows(all, &app.filter);
    for (k, (pos, &i)) in rows.iter().enumerate().skip(first).take(body).enumerate() {
        let y = tree.y + 1 + k as u16;
        m.push(Rect::new(tree.x, y, tree.width, 1), Target::Row(pos));
        if super::cgroup_tree::CgroupsUi::has_children(all, i) {
            let x = tree.x + views::cgroups::mark_x(all[i].depth);
            m.push(Rect::new(x, y, 2, 1).intersection(tree), Target::Fold(pos));
        }
    }
}

/// What a click on a footer hint does: what its key does now.
fn hint_action(key: &str, app: &AppState) -> Option<Action> {
    let code = match key {
        "Enter" => KeyCode::Enter,
        "Esc" => KeyCode::Esc,
        "Spc" => KeyCode::Char(' '),
        "Up/Dn" => KeyCode::Down,
        "+-" => KeyCode::Char('+'),
        "<>" => KeyCode::Char('>'),
        "Lt/Rt" => {
            let folded = app.cgroups.selected_path.as_ref()?;
            let fold = !app.cgroups.collapsed.contains(folded);
            return Some(Action::CgroupFold(fold));
        }
        k if k.len() > 1 && k.starts_with('F') => KeyCode::F(k[1..].parse().ok()?),
        k => KeyCode::Char(k.chars().next()?),
    };
    super::keys::map_key(&KeyEvent::new(code, KeyModifiers::NONE), app)
}

/// The last click, for telling a double click.
#[derive(Clone, Copy, Debug, Default)]
pub struct Clicks {
    last: Option<(Target, u64)>,
}

impl Clicks {
    /// The action of a mouse event at `now_ns` (None for other events,
    /// and for every event while the mouse is off).
    pub fn map(&mut self, ev: &Event, app: &AppState, now_ns: u64) -> Option<Action> {
        let Event::Mouse(MouseEvent {
            kind, column, row, ..
        }) = *ev
        else {
            return None;
        };
        if !app.view_model.settings.mouse || app.view_model.asking {
            return None;
        }
        let setup = app.view_model.setup.is_some();
        let wheel = |down: bool| {
            let n = if down { WHEEL_LINES } else { -WHEEL_LINES };
            Some(if app.help {
                Action::HelpScroll(n)
            } else if setup {
                Action::Prefs(Prefs::Setup(if down {
                    SetupKey::Down
                } else {
                    SetupKey::Up
                }))
            } else {
                Action::Prefs(Prefs::Scroll(n))
            })
        };
        match kind {
            MouseEventKind::ScrollDown => return wheel(true),
            MouseEventKind::ScrollUp => return wheel(false),
            MouseEventKind::Down(MouseButton::Left) => {}
            _ => return None,
        }
        if app.help {
            return Some(Action::CloseHelp);
        }
        let target = app.view_model.hits.at(column, row)?;
        let double = self
            .last
            .is_some_and(|(t, at)| t == target && now_ns.saturating_sub(at) <= DOUBLE_CLICK_NS);
        // a third click starts again
        self.last = if double { None } else { Some((target, now_ns)) };
        Some(match target {
            Target::Row(i) if setup => Action::Prefs(Prefs::Setup(SetupKey::Point(i))),
            Target::Row(_) if double => Action::ToggleDetail,
            Target::Row(i) => Action::Prefs(Prefs::Pick(i)),
            Target::Fold(i) => Action::Prefs(Prefs::PickFold(i)),
            Target::SortBy(c) if c == app.sort => Action::SortInvert,
            Target::SortBy(c) => Action::SortBy(c),
            Target::Act(a) => a,
        })
    }
}
