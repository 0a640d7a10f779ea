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

pub fn bar() -> Style {
    Style::new().fg(Color::Cyan)
}

pub fn sparkline() -> Style {
    Style::new().fg(Color::Yellow)
}

pub fn border() -> Style {
    Style::new().fg(Color::Blue)
}
