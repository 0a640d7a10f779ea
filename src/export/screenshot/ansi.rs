//! ANSI: the text with SGR escape codes, only where the style changes; every
//! styled line ends with a reset, so lines can be cut and pasted alone.
use ratatui::style::{Color, Modifier};

use super::{visible_len, CellStyle, Glyph};

const MODIFIER_CODES: [(Modifier, u8); 9] = [
    (Modifier::BOLD, 1),
    (Modifier::DIM, 2),
    (Modifier::ITALIC, 3),
    (Modifier::UNDERLINED, 4),
    (Modifier::SLOW_BLINK, 5),
    (Modifier::RAPID_BLINK, 6),
    (Modifier::REVERSED, 7),
    (Modifier::HIDDEN, 8),
    (Modifier::CROSSED_OUT, 9),
];

pub(crate) fn render(rows: &[Vec<Glyph>]) -> String {
    let mut out = String::new();
    for row in rows {
        let mut cur = CellStyle::PLAIN;
        for g in &row[..visible_len(row)] {
            if g.style != cur {
                transition(&cur, &g.style, &mut out);
                cur = g.style;
            }
            out.push_str(&g.text);
        }
        if cur != CellStyle::PLAIN {
            out.push_str("\x1b[0m");
        }
        out.push('\n');
    }
    out
}

/// The shortest simple SGR sequence from `from` to `to`: a reset only when
/// an attribute has to be switched off.
fn transition(from: &CellStyle, to: &CellStyle, out: &mut String) {
    let mut params: Vec<String> = Vec::new();
    let mut from = *from;
    if !(from.modifier - to.modifier).is_empty() {
        params.push("0".into());
        from = CellStyle::PLAIN;
    }
    for (m, code) in MODIFIER_CODES {
        if to.modifier.contains(m) && !from.modifier.contains(m) {
            params.push(code.to_string());
        }
    }
    if to.fg != from.fg {
        params.push(color(to.fg, false));
    }
    if to.bg != from.bg {
        params.push(color(to.bg, true));
    }
    if !params.is_empty() {
        out.push_str("\x1b[");
        out.push_str(&params.join(";"));
        out.push('m');
    }
}

fn color(c: Color, bg: bool) -> String {
    let base = if bg { 40 } else { 30 };
    let basic = |n: u8| (base + n).to_string();
    let bright = |n: u8| (base + 60 + n).to_string();
    match c {
        Color::Reset => (base + 9).to_string(),
        Color::Black => basic(0),
        Color::Red => basic(1),
        Color::Green => basic(2),
        Color::Yellow => basic(3),
        Color::Blue => basic(4),
        Color::Magenta => basic(5),
        Color::Cyan => basic(6),
        Color::Gray => basic(7),
        Color::DarkGray => bright(0),
        Color::LightRed => bright(1),
        Color::LightGreen => bright(2),
        Color::LightYellow => bright(3),
        Color::LightBlue => bright(4),
        Color::LightMagenta => bright(5),
        Color::LightCyan => bright(6),
        Color::White => bright(7),
        Color::Indexed(i) => format!("{};5;{i}", base + 8),
        Color::Rgb(r, g, b) => format!("{};2;{r};{g};{b}", base + 8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn style(fg: Color, bg: Color, m: Modifier) -> CellStyle {
        CellStyle {
            fg,
            bg,
            modifier: m,
        }
    }

    #[test]
    fn minimal_transitions() {
        let mut s = String::new();
        let bold_red = style(Color::Red, Color::Reset, Modifier::BOLD);
        transition(&CellStyle::PLAIN, &bold_red, &mut s);
        assert_eq!(s, "\x1b[1;31m");
        s.clear();
        // only the colour changes: no reset, no bold again
        transition(
            &bold_red,
            &style(Color::Rgb(1, 2, 3), Color::Reset, Modifier::BOLD),
            &mut s,
        );
        assert_eq!(s, "\x1b[38;2;1;2;3m");
        s.clear();
        // bold goes away: reset, then what remains
        transition(
            &bold_red,
            &style(Color::Red, Color::Indexed(200), Modifier::REVERSED),
            &mut s,
        );
        assert_eq!(s, "\x1b[0;7;31;48;5;200m");
        s.clear();
        transition(&bold_red, &bold_red, &mut s);
        assert_eq!(s, "");
    }
}
