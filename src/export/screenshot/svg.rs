//! SVG: every glyph placed at its cell's column (an explicit x per
//! character), so box-drawing, block and braille characters line up whatever
//! the font's advance; backgrounds are rectangles under the text.
use super::html::FONT_FAMILY;
use super::palette::{hex, Look, DEFAULT_BG};
use super::{xml_escape, Glyph};

/// Cell size in px for a 14 px font: 0.6 em is the advance of DejaVu Sans
/// Mono and most monospace fonts; 16 px rows let its box-drawing glyphs
/// (ascent + descent = 1.164 em = 16.3 px) touch the next row.
const FONT_PX: f32 = 14.0;
const CELL_W: f32 = 8.4;
const CELL_H: f32 = 16.0;
/// baseline below the top of the row
const BASELINE: f32 = 12.5;

fn num(v: f32) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub(crate) fn render(rows: &[Vec<Glyph>], width: u16, height: u16) -> String {
    let w = num(width as f32 * CELL_W);
    let h = num(height as f32 * CELL_H);
    let mut out = String::new();
    out.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
viewBox=\"0 0 {w} {h}\" font-family=\"{font}\" font-size=\"{fs}\">\n",
        font = FONT_FAMILY,
        fs = num(FONT_PX),
    ));
    out.push_str(&format!(
        "<rect width=\"{w}\" height=\"{h}\" fill=\"{}\"/>\n",
        hex(DEFAULT_BG)
    ));

    // backgrounds: one rect per horizontal run of the same colour
    out.push_str("<g shape-rendering=\"crispEdges\">\n");
    for (y, row) in rows.iter().enumerate() {
        let mut i = 0;
        while i < row.len() {
            let bg = Look::of(&row[i].style).bg;
            let mut j = i + 1;
            while j < row.len() && Look::of(&row[j].style).bg == bg {
                j += 1;
            }
            if let Some(bg) = bg {
                let last = &row[j - 1];
                let cols = (last.col + last.width - row[i].col) as f32;
                out.push_str(&format!(
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n",
                    num(row[i].col as f32 * CELL_W),
                    num(y as f32 * CELL_H),
                    num(cols * CELL_W),
                    num(CELL_H),
                    hex(bg)
                ));
            }
            i = j;
        }
    }
    out.push_str("</g>\n");

    // text: one <text> per row, one <tspan> per run of the same look
    for (y, row) in rows.iter().enumerate() {
        let mut spans = String::new();
        let mut i = 0;
        while i < row.len() {
            let look = Look::of(&row[i].style);
            let mut j = i + 1;
            while j < row.len() && Look::of(&row[j].style) == look {
                j += 1;
            }
            run(&row[i..j], &look, &mut spans);
            i = j;
        }
        if !spans.is_empty() {
            // preserve: spaces inside a run keep their place in the x list
            out.push_str(&format!(
                "<text y=\"{}\" xml:space=\"preserve\">{spans}</text>\n",
                num(y as f32 * CELL_H + BASELINE)
            ));
        }
    }
    out.push_str("</svg>\n");
    out
}

/// One run of glyphs in one look. Single-character glyphs share a tspan with
/// one x per character; a glyph of several characters (a base with combining
/// marks) gets its own tspan with one x, so its marks stay on it.
fn run(glyphs: &[Glyph], look: &Look, out: &mut String) {
    let shows_blank = look.underline || look.strike;
    // trim blanks at both ends unless a decoration makes them visible
    let mut a = 0;
    let mut b = glyphs.len();
    if !shows_blank {
        while a < b && glyphs[a].text.trim().is_empty() {
            a += 1;
        }
        while b > a && glyphs[b - 1].text.trim().is_empty() {
            b -= 1;
        }
    }
    let glyphs = &glyphs[a..b];
    let mut k = 0;
    while k < glyphs.len() {
        let single = glyphs[k].text.chars().count() == 1;
        let mut m = k + 1;
        if single {
            while m < glyphs.len() && glyphs[m].text.chars().count() == 1 {
                m += 1;
            }
        }
        let xs: Vec<String> = if single {
            glyphs[k..m]
                .iter()
                .map(|g| num(g.col as f32 * CELL_W))
                .collect()
        } else {
            vec![num(glyphs[k].col as f32 * CELL_W)]
        };
        out.push_str(&format!("<tspan x=\"{}\"", xs.join(" ")));
        out.push_str(&format!(" fill=\"{}\"", hex(look.fg)));
        if look.bold {
            out.push_str(" font-weight=\"bold\"");
        }
        if look.italic {
            out.push_str(" font-style=\"italic\"");
        }
        match (look.underline, look.strike) {
            (true, true) => out.push_str(" text-decoration=\"underline line-through\""),
            (true, false) => out.push_str(" text-decoration=\"underline\""),
            (false, true) => out.push_str(" text-decoration=\"line-through\""),
            (false, false) => {}
        }
        out.push('>');
        for g in &glyphs[k..m] {
            xml_escape(&g.text, out);
        }
        out.push_str("</tspan>");
        k = m;
    }
}
