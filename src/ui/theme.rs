//! Colours and text styles, in one place (htop's palette where it has one).
use ratatui::style::{Color, Modifier, Style};

pub fn label() -> Style {
    Style::new().fg(Color::Cyan)
}

pub fn value() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

pub fn title() -> Style {
    Style::new().fg(Color::Green).add_modifier(Modifier::BOLD)
}

pub fn table_header() -> Style {
    Style::new().fg(Color::Black).bg(Color::Green)
}

pub fn sort_header() -> Style {
    Style::new()
        .fg(Color::Black)
        .bg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}

pub fn selected() -> Style {
    Style::new().add_modifier(Modifier::REVERSED)
}

pub fn exited() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

pub fn paused() -> Style {
    Style::new()
        .fg(Color::Black)
        .bg(Color::Yellow)
        .add_modifier(Modifier::BOLD)
}

pub fn warning() -> Style {
    Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD)
}

pub fn error() -> Style {
    Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
}

pub fn footer_key() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

pub fn footer_label() -> Style {
    Style::new().fg(Color::Black).bg(Color::Cyan)
}

/// A comparison's change for the better / for the worse.
pub fn better() -> Style {
    Style::new().fg(Color::Green)
}

pub fn worse() -> Style {
    Style::new().fg(Color::Red)
}

pub fn bar() -> Style {
    Style::new().fg(Color::Cyan)
}

pub fn sparkline() -> Style {
    Style::new().fg(Color::Yellow)
}

pub fn border() -> Style {
    Style::new().fg(Color::Blue)
}

/// Run-queue heat, level 0 (empty) to 5 (4 or more waiting).
pub fn heat(level: usize) -> Style {
    match level {
        0 => Style::new().fg(Color::DarkGray),
        1 | 2 => Style::new().fg(Color::Green),
        3 => Style::new().fg(Color::Yellow),
        4 => Style::new().fg(Color::Red),
        _ => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
    }
}

/// A migration flow by its share of the biggest one: 0 small, 1 middle,
/// 2 big.
pub fn flow_color(tier: usize) -> Color {
    match tier {
        0 => Color::Cyan,
        1 => Color::Yellow,
        _ => Color::Red,
    }
}

/// The selected thread's flows in the NUMA view.
pub const FLOW_HIGHLIGHT: Color = Color::Magenta;

pub fn flow_highlight() -> Style {
    Style::new()
        .fg(Color::Black)
        .bg(FLOW_HIGHLIGHT)
        .add_modifier(Modifier::BOLD)
}

/// A NUMA node's box.
pub fn node_box() -> Style {
    Style::new().fg(Color::Green)
}
