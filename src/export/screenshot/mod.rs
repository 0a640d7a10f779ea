//! Screenshots: what is on screen (a rendered `ratatui::buffer::Buffer`)
//! converted to plain text, ANSI, HTML or SVG.
//!
//! Every cell's text goes through [`visible`] first: thread names are chosen
//! by the threads themselves, so a control character never reaches any
//! output raw (it becomes a visible picture such as `␛`), and HTML/SVG
//! additionally escape markup, so `<script>` comes out as text.
mod ansi;
mod html;
mod svg;
mod txt;

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::SystemTime;

use anyhow::{Context, Result};
use ratatui::buffer::{Buffer, Cell, CellDiffOption};
use ratatui::style::{Color, Modifier};
use unicode_width::UnicodeWidthStr;

use crate::util::invisible_chars::is_invisible;

/// A screenshot file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Txt,
    Ansi,
    Html,
    Svg,
}

impl Format {
    pub const ALL: [Format; 4] = [Format::Txt, Format::Ansi, Format::Html, Format::Svg];

    /// File name extension (also the name `FromStr` accepts).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Txt => "txt",
            Format::Ansi => "ansi",
            Format::Html => "html",
            Format::Svg => "svg",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.extension())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "txt" | "text" => Ok(Format::Txt),
            "ansi" => Ok(Format::Ansi),
            "html" | "htm" => Ok(Format::Html),
            "svg" => Ok(Format::Svg),
            _ => Err(format!(
                "unknown screenshot format {:?} (expected txt, ansi, html or svg)",
                visible(s)
            )),
        }
    }
}

/// Convert what the buffer holds into `format`.
pub fn render(buf: &Buffer, format: Format) -> String {
    let rows = rows(buf);
    match format {
        Format::Txt => txt::render(&rows),
        Format::Ansi => ansi::render(&rows),
        Format::Html => html::render(&rows),
        Format::Svg => svg::render(&rows, buf.area.width, buf.area.height),
    }
}

/// Render and write a new file in `dir`, named after `host` and `time`
/// (see [`file_name`]). The file is created with O_CREAT|O_EXCL|O_NOFOLLOW
/// and mode 0644 (less the umask): an existing file or a symlink planted at
/// that path is never followed or overwritten; the next free name
/// (`…-2.svg`, `…-3.svg`, …) is taken instead.
pub fn save(
    buf: &Buffer,
    format: Format,
    dir: &Path,
    host: &str,
    time: SystemTime,
) -> Result<PathBuf> {
    let text = render(buf, format);
    let (path, mut f) = create_unique(dir, host, time, format.extension(), 0o644, "screenshot")?;
    f.write_all(text.as_bytes())
        .and_then(|_| f.flush())
        .with_context(|| format!("writing screenshot {}", path.display()))?;
    Ok(path)
}

pub use crate::util::files::{create_new, create_new_mode, create_unique};
pub use crate::util::names::file_name_ext;

/// `schedtop-HOST-YYYYMMDD-HHMMSS.EXT` (UTC); the host name is reduced to
/// `[A-Za-z0-9._-]` so it can never name another directory or a hidden file.
pub fn file_name(host: &str, time: SystemTime, format: Format) -> String {
    file_name_ext(host, time, format.extension())
}

/// `s` with every character that could act instead of showing replaced by a
/// visible stand-in: C0 controls and DEL by their Unicode control pictures
/// (ESC → `␛`); C1 controls, the format characters that redraw the text
/// around them (bidi overrides, zero-width ones, line/paragraph separators:
/// util/invisible_chars.rs) and XML non-characters by U+FFFD.
pub fn visible(s: &str) -> String {
    s.chars().map(visible_char).collect()
}

fn visible_char(c: char) -> char {
    match c as u32 {
        n @ 0x00..=0x1f => char::from_u32(0x2400 + n).unwrap_or('\u{FFFD}'),
        0x7f => '\u{2421}',
        n if (0x80..=0x9f).contains(&n) || is_invisible(n) => '\u{FFFD}',
        0xfffe | 0xffff => '\u{FFFD}',
        _ => c,
    }
}

/// One glyph of a row: the text shown at `col`, `width` cells wide.
#[derive(Clone, Debug)]
pub(crate) struct Glyph {
    pub col: u16,
    pub width: u16,
    /// already passed through [`visible`]
    pub text: String,
    pub style: CellStyle,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CellStyle {
    pub fg: Color,
    pub bg: Color,
    pub modifier: Modifier,
}

impl CellStyle {
    pub const PLAIN: CellStyle = CellStyle {
        fg: Color::Reset,
        bg: Color::Reset,
        modifier: Modifier::empty(),
    };

    fn of(cell: &Cell) -> CellStyle {
        CellStyle {
            fg: cell.fg,
            bg: cell.bg,
            modifier: cell.modifier,
        }
    }

    /// Would a space in this style look like nothing at all?
    pub fn blank_space(&self) -> bool {
        self.bg == Color::Reset
            && !self
                .modifier
                .intersects(Modifier::REVERSED | Modifier::UNDERLINED | Modifier::CROSSED_OUT)
    }
}

impl Glyph {
    /// A space that shows nothing (trimmed at line ends).
    pub fn is_blank(&self) -> bool {
        self.text == " " && self.style.blank_space()
    }
}

/// The glyphs of every row, the way a terminal shows them: a wide character
/// covers the cells after it, a cell marked skip shows as a blank.
pub(crate) fn rows(buf: &Buffer) -> Vec<Vec<Glyph>> {
    let area = buf.area;
    let mut out = Vec::with_capacity(area.height as usize);
    for y in 0..area.height {
        let mut row = Vec::with_capacity(area.width as usize);
        let mut x = 0u16;
        while x < area.width {
            let Some(cell) = buf.cell((area.x + x, area.y + y)) else {
                break;
            };
            let (text, width) = match cell.diff_option {
                CellDiffOption::Skip => (" ".to_string(), 1),
                CellDiffOption::ForcedWidth(w) => (visible(cell.symbol()), w.get()),
                _ => {
                    let sym = cell.symbol();
                    let w = sym.width().min(u16::MAX as usize) as u16;
                    if w == 0 || sym.contains(|c: char| c.is_control()) {
                        // zero-width or containing controls: show the visible
                        // form in the one cell the terminal would give it
                        let v = visible(sym);
                        let vw = v.width().clamp(1, 2) as u16;
                        (if v.is_empty() { " ".into() } else { v }, vw)
                    } else {
                        (visible(sym), w)
                    }
                }
            };
            let style = if cell.diff_option == CellDiffOption::Skip {
                CellStyle::PLAIN
            } else {
                CellStyle::of(cell)
            };
            let width = width.clamp(1, area.width - x);
            row.push(Glyph {
                col: x,
                width,
                text,
                style,
            });
            x += width;
        }
        out.push(row);
    }
    out
}

/// Index after the last glyph that shows something.
pub(crate) fn visible_len(row: &[Glyph]) -> usize {
    row.iter().rposition(|g| !g.is_blank()).map_or(0, |i| i + 1)
}

/// Colours for HTML and SVG: a dark terminal theme.
pub(crate) mod palette {
    use ratatui::style::{Color, Modifier};

    use super::CellStyle;

    pub const DEFAULT_FG: (u8, u8, u8) = (0xd4, 0xd4, 0xd4);
    pub const DEFAULT_BG: (u8, u8, u8) = (0x1e, 0x1e, 0x1e);

    const ANSI16: [(u8, u8, u8); 16] = [
        (0x00, 0x00, 0x00),
        (0xcd, 0x31, 0x31),
        (0x0d, 0xbc, 0x79),
        (0xe5, 0xe5, 0x10),
        (0x24, 0x72, 0xc8),
        (0xbc, 0x3f, 0xbc),
        (0x11, 0xa8, 0xcd),
        (0xe5, 0xe5, 0xe5),
        (0x66, 0x66, 0x66),
        (0xf1, 0x4c, 0x4c),
        (0x23, 0xd1, 0x8b),
        (0xf5, 0xf5, 0x43),
        (0x3b, 0x8e, 0xea),
        (0xd6, 0x70, 0xd6),
        (0x29, 0xb8, 0xdb),
        (0xff, 0xff, 0xff),
    ];

    /// The xterm 256-colour table.
    pub fn indexed(i: u8) -> (u8, u8, u8) {
        match i {
            0..=15 => ANSI16[i as usize],
            16..=231 => {
                let n = i - 16;
                let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
                (level(n / 36), level(n / 6 % 6), level(n % 6))
            }
            _ => {
                let g = 8 + 10 * (i - 232);
                (g, g, g)
            }
        }
    }

    /// None for the terminal's default.
    pub fn rgb(c: Color) -> Option<(u8, u8, u8)> {
        Some(match c {
            Color::Reset => return None,
            Color::Black => ANSI16[0],
            Color::Red => ANSI16[1],
            Color::Green => ANSI16[2],
            Color::Yellow => ANSI16[3],
            Color::Blue => ANSI16[4],
            Color::Magenta => ANSI16[5],
            Color::Cyan => ANSI16[6],
            Color::Gray => ANSI16[7],
            Color::DarkGray => ANSI16[8],
            Color::LightRed => ANSI16[9],
            Color::LightGreen => ANSI16[10],
            Color::LightYellow => ANSI16[11],
            Color::LightBlue => ANSI16[12],
            Color::LightMagenta => ANSI16[13],
            Color::LightCyan => ANSI16[14],
            Color::White => ANSI16[15],
            Color::Rgb(r, g, b) => (r, g, b),
            Color::Indexed(i) => indexed(i),
        })
    }

    /// What a cell looks like once reverse, dim and hidden are applied.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Look {
        pub fg: (u8, u8, u8),
        /// None: the page background shows through
        pub bg: Option<(u8, u8, u8)>,
        pub bold: bool,
        pub italic: bool,
        pub underline: bool,
        pub strike: bool,
    }

    impl Look {
        pub fn of(s: &CellStyle) -> Look {
            let m = s.modifier;
            let mut fg = rgb(s.fg).unwrap_or(DEFAULT_FG);
            let mut bg = rgb(s.bg);
            if m.contains(Modifier::REVERSED) {
                let new_fg = bg.unwrap_or(DEFAULT_BG);
                bg = Some(fg);
                fg = new_fg;
            }
            if m.contains(Modifier::DIM) {
                fg = mix(fg, bg.unwrap_or(DEFAULT_BG));
            }
            if m.contains(Modifier::HIDDEN) {
                fg = bg.unwrap_or(DEFAULT_BG);
            }
            Look {
                fg,
                bg,
                bold: m.contains(Modifier::BOLD),
                italic: m.contains(Modifier::ITALIC),
                underline: m.contains(Modifier::UNDERLINED),
                strike: m.contains(Modifier::CROSSED_OUT),
            }
        }

        pub fn is_default(&self) -> bool {
            *self == Look::of(&CellStyle::PLAIN)
        }
    }

    /// 60 % foreground, 40 % background
    fn mix(a: (u8, u8, u8), b: (u8, u8, u8)) -> (u8, u8, u8) {
        let m = |x: u8, y: u8| ((x as u16 * 6 + y as u16 * 4) / 10) as u8;
        (m(a.0, b.0), m(a.1, b.1), m(a.2, b.2))
    }

    pub fn hex(c: (u8, u8, u8)) -> String {
        format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
    }
}

/// Escape text for XML/HTML content and attribute values.
pub(crate) fn xml_escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(visible_char(c)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;

    #[test]
    fn format_parses_and_names() {
        for f in Format::ALL {
            assert_eq!(f.extension().parse::<Format>(), Ok(f));
            assert_eq!(f.to_string().to_uppercase().parse::<Format>(), Ok(f));
        }
        assert_eq!("text".parse::<Format>(), Ok(Format::Txt));
        let err = "png\x1b".parse::<Format>().unwrap_err();
        assert!(err.contains("expected txt, ansi, html or svg"), "{err}");
        assert!(!err.contains('\x1b'), "{err:?}");
    }

    #[test]
    fn file_name_is_dated_and_sanitised() {
        // 2026-11-21 23:15:00 UTC
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_302_900);
        assert_eq!(
            file_name("db-1.example", t, Format::Svg),
            "schedtop-db-1.example-20261121-231500.svg"
        );
        assert_eq!(
            file_name("../etc/pass wd", t, Format::Txt),
            "schedtop-_._etc_pass_wd-20261121-231500.txt"
        );
        assert_eq!(
            file_name("", t, Format::Html),
            "schedtop-unknown-20261121-231500.html"
        );
        let long = "h".repeat(300);
        assert!(file_name(&long, t, Format::Ansi).len() < 100);
    }

    #[test]
    fn controls_become_visible() {
        assert_eq!(visible("a\x1b[31mb\n\t\x7f"), "a␛[31mb␊␉␡");
        assert_eq!(visible("\u{9b}x\u{202e}y"), "\u{FFFD}x\u{FFFD}y");
        assert_eq!(visible("plain ⣿ │ 漢"), "plain ⣿ │ 漢");
    }

    #[test]
    fn wide_glyph_covers_the_next_cell() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 5, 1));
        buf.set_string(0, 0, "漢x", ratatui::style::Style::default());
        let r = rows(&buf);
        let cols: Vec<(u16, u16, &str)> = r[0]
            .iter()
            .map(|g| (g.col, g.width, g.text.as_str()))
            .collect();
        assert_eq!(
            cols,
            vec![(0, 2, "漢"), (2, 1, "x"), (3, 1, " "), (4, 1, " ")]
        );
    }

    #[test]
    fn raw_control_symbol_is_one_visible_cell() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 3, 1));
        buf[(1, 0)].set_symbol("\x1b");
        let r = rows(&buf);
        assert_eq!(r[0].len(), 3);
        assert_eq!(r[0][1].text, "␛");
    }
}
