//! HTML: a self-contained page, one `<pre>` with inline styles. Well-formed
//! XML too (XHTML), so any XML parser can check it.
use super::palette::{hex, Look, DEFAULT_BG, DEFAULT_FG};
use super::{visible_len, xml_escape, Glyph};

pub(crate) const FONT_FAMILY: &str =
    "'DejaVu Sans Mono', 'Cascadia Mono', Menlo, Consolas, 'Liberation Mono', monospace";

pub(crate) fn render(rows: &[Vec<Glyph>]) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n");
    out.push_str("<head>\n<meta charset=\"utf-8\"/>\n<title>schedtop</title>\n</head>\n");
    out.push_str(&format!(
        "<body style=\"margin:0;background:{bg}\">\n<pre style=\"margin:0;padding:8px;\
background:{bg};color:{fg};font-family:{font};font-size:14px;line-height:1.15\">",
        bg = hex(DEFAULT_BG),
        fg = hex(DEFAULT_FG),
        font = FONT_FAMILY.replace('"', "&quot;"),
    ));
    for row in rows {
        let row = &row[..visible_len(row)];
        let mut i = 0;
        while i < row.len() {
            let look = Look::of(&row[i].style);
            let mut j = i;
            let mut text = String::new();
            while j < row.len() && Look::of(&row[j].style) == look {
                text.push_str(&row[j].text);
                j += 1;
            }
            if look.is_default() {
                xml_escape(&text, &mut out);
            } else {
                out.push_str("<span style=\"");
                out.push_str(&css(&look));
                out.push_str("\">");
                xml_escape(&text, &mut out);
                out.push_str("</span>");
            }
            i = j;
        }
        out.push('\n');
    }
    out.push_str("</pre>\n</body>\n</html>\n");
    out
}

fn css(l: &Look) -> String {
    let mut s = format!("color:{}", hex(l.fg));
    if let Some(bg) = l.bg {
        s.push_str(&format!(";background:{}", hex(bg)));
    }
    if l.bold {
        s.push_str(";font-weight:bold");
    }
    if l.italic {
        s.push_str(";font-style:italic");
    }
    match (l.underline, l.strike) {
        (true, true) => s.push_str(";text-decoration:underline line-through"),
        (true, false) => s.push_str(";text-decoration:underline"),
        (false, true) => s.push_str(";text-decoration:line-through"),
        (false, false) => {}
    }
    s
}
