//! One CSV field, made safe for spreadsheets and terminals (the thread
//! CSV and the cgroup CSV both write through it).
use crate::util::invisible_chars::is_invisible;

/// A CSV field that is safe to open in a spreadsheet and to print in a
/// terminal: control characters escaped as \xNN, bidi overrides and
/// zero-width characters as \u{NNNN}, a leading = + - @ defused
/// with a quote, quoted when it holds a comma, quote or space at an edge.
pub fn csv_field(s: &str) -> String {
    let mut v = String::with_capacity(s.len() + 2);
    if s.starts_with(['=', '+', '-', '@']) {
        v.push('\'');
    }
    for c in s.chars() {
        if c.is_control() {
            v.push_str(&format!("\\x{:02x}", c as u32));
        } else if is_invisible(c as u32) {
            v.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            v.push(c);
        }
    }
    if v.contains([',', '"']) || v.starts_with(' ') || v.ends_with(' ') {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn csv_fields_are_defused() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("\u{1b}[31mred"), "\\x1b[31mred");
        assert_eq!(csv_field("=cmd()"), "'=cmd()");
        assert_eq!(csv_field("line\nbreak"), "line\\x0abreak");
        // a bidi override reverses what follows it in a spreadsheet (and in
        // a terminal that does bidi): "rtl<U+202E>gnp.exe" shows as an .exe
        assert_eq!(csv_field("rtl\u{202e}gnp.exe"), "rtl\\u{202e}gnp.exe");
        assert_eq!(csv_field("a\u{200b}b\u{2066}c"), "a\\u{200b}b\\u{2066}c");
    }
}
