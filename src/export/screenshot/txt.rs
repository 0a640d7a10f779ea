//! Plain text: the characters only, trailing blanks trimmed.
use super::{visible_len, Glyph};

pub(crate) fn render(rows: &[Vec<Glyph>]) -> String {
    let mut out = String::new();
    for row in rows {
        for g in &row[..visible_len(row)] {
            out.push_str(&g.text);
        }
        out.push('\n');
    }
    out
}
