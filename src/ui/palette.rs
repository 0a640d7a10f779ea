//! The colour themes, applied to the drawn screen as a last pass (the views
//! draw with theme.rs's htop colours and know nothing of themes):
//! monochrome drops every colour and keeps emphasis (a coloured bar becomes
//! reverse video), as NO_COLOR asks; high contrast turns colours to their
//! bright kind, text bold, and bars to black on white.
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

use super::settings::Theme;

/// Recolour every cell of `buf` for `theme`.
pub fn apply(theme: Theme, buf: &mut Buffer) {
    if theme == Theme::Default {
        return;
    }
    for cell in buf.content.iter_mut() {
        let (fg, bg) = (cell.fg, cell.bg);
        let bar = bg != Color::Reset;
        match theme {
            Theme::Default => {}
            Theme::Monochrome => {
                cell.set_fg(Color::Reset);
                cell.set_bg(Color::Reset);
                if bar {
                    cell.modifier.insert(Modifier::REVERSED);
                }
                // dim grey text stays told apart without its colour
                if fg == Color::DarkGray {
                    cell.modifier.insert(Modifier::DIM);
                }
            }
            Theme::HighContrast => {
                if bar {
                    cell.set_fg(Color::Black);
                    cell.set_bg(Color::White);
                    cell.modifier.insert(Modifier::BOLD);
                } else if fg != Color::Reset {
                    cell.set_fg(bright(fg));
                    cell.modifier.insert(Modifier::BOLD);
                    cell.modifier.remove(Modifier::DIM);
                }
            }
        }
    }
}

/// The bright kind of a colour (grey goes white: dim text is the first to
/// vanish on a washed-out screen).
fn bright(c: Color) -> Color {
    match c {
        Color::Red => Color::LightRed,
        Color::Green => Color::LightGreen,
        Color::Yellow => Color::LightYellow,
        Color::Blue => Color::LightBlue,
        Color::Magenta => Color::LightMagenta,
        Color::Cyan => Color::LightCyan,
        Color::Gray | Color::DarkGray => Color::White,
        other => other,
    }
}

/// The theme at start: the file's choice, else monochrome when NO_COLOR is
/// set to anything (no-color.org), else the default.
pub fn start_theme(chosen: Option<Theme>, no_color: Option<&std::ffi::OsStr>) -> Theme {
    match (chosen, no_color) {
        (Some(t), _) => t,
        (None, Some(v)) if !v.is_empty() => Theme::Monochrome,
        _ => Theme::Default,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    fn painted() -> Buffer {
        let mut b = Buffer::empty(Rect::new(0, 0, 3, 1));
        b.set_string(0, 0, "a", Style::new().fg(Color::Cyan));
        b.set_string(1, 0, "b", Style::new().fg(Color::Black).bg(Color::Green));
        b.set_string(2, 0, "c", Style::new().fg(Color::DarkGray));
        b
    }

    #[test]
    fn monochrome_has_no_colour_left_and_bars_stay_visible() {
        let mut b = painted();
        apply(Theme::Monochrome, &mut b);
        for c in &b.content {
            assert_eq!((c.fg, c.bg), (Color::Reset, Color::Reset));
        }
        assert!(b.content[1].modifier.contains(Modifier::REVERSED));
        assert!(!b.content[0].modifier.contains(Modifier::REVERSED));
        assert!(b.content[2].modifier.contains(Modifier::DIM));
        assert_eq!(b.content[1].symbol(), "b");
    }

    #[test]
    fn high_contrast_brightens() {
        let mut b = painted();
        apply(Theme::HighContrast, &mut b);
        assert_eq!(b.content[0].fg, Color::LightCyan);
        assert_eq!(
            (b.content[1].fg, b.content[1].bg),
            (Color::Black, Color::White)
        );
        assert_eq!(b.content[2].fg, Color::White);
        let mut d = painted();
        apply(Theme::Default, &mut d);
        assert_eq!(d, painted());
    }

    #[test]
    fn no_color_means_monochrome_unless_the_file_chose() {
        let set = Some(std::ffi::OsStr::new("1"));
        assert_eq!(start_theme(None, set), Theme::Monochrome);
        assert_eq!(
            start_theme(None, Some(std::ffi::OsStr::new(""))),
            Theme::Default
        );
        assert_eq!(start_theme(None, None), Theme::Default);
        assert_eq!(
            start_theme(Some(Theme::HighContrast), set),
            Theme::HighContrast
        );
    }
}
