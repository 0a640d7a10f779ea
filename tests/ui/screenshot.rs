//! Screenshot converters on a fixture screen built with ratatui widgets:
//! a bordered table (bold header, reversed selection, colours, hostile
//! thread names, wide characters), a sparkline, a braille canvas and styled
//! text.
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::{Duration, UNIX_EPOCH};

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::canvas::{self, Canvas};
use ratatui::widgets::{
    Block, Cell, Paragraph, Row, Sparkline, StatefulWidget, Table, TableState, Widget,
};

use schedtop::export::screenshot::{self, Format};

const W: u16 = 64;
const H: u16 = 16;

fn fixture() -> Buffer {
    let area = Rect::new(0, 0, W, H);
    let mut buf = Buffer::empty(area);
    let [top, mid, bottom] = Layout::vertical([
        Constraint::Length(8),
        Constraint::Length(5),
        Constraint::Length(3),
    ])
    .areas(area);

    let header = Row::new(["TID", "COMM", "CPU", "VCSW/s"]).style(Style::new().bold());
    let rows = vec![
        Row::new(vec![
            Cell::from("1201"),
            Cell::from("<script>alert(1)</script>"),
            Cell::from("0"),
            Cell::from("12"),
        ]),
        Row::new(vec![
            Cell::from("1202"),
            Cell::from("evil\x1b[31mred"),
            Cell::from("1"),
            Cell::from("3400"),
        ]),
        Row::new(vec![
            Cell::from("1203"),
            Cell::from("漢字スレッド"),
            Cell::from(Span::styled("1", Style::new().fg(Color::Rgb(255, 135, 0)))),
            Cell::from("7"),
        ]),
        Row::new(vec![
            Cell::from("1204"),
            Cell::from(Span::styled("kworker/0:1", Style::new().fg(Color::Red))),
            Cell::from("0"),
            Cell::from(Span::styled("88", Style::new().fg(Color::Indexed(208)))),
        ]),
    ];
    let table = Table::new(
        rows,
        [
            Constraint::Length(6),
            Constraint::Length(27),
            Constraint::Length(4),
            Constraint::Length(8),
        ],
    )
    .header(header)
    .block(
        Block::bordered()
            .title(" threads ")
            .border_style(Color::Cyan),
    )
    .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED));
    let mut state = TableState::default().with_selected(Some(1));
    StatefulWidget::render(table, top, &mut buf, &mut state);

    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(mid);
    Sparkline::default()
        .block(Block::bordered().title(" switches "))
        .data([
            0u64, 1, 2, 3, 4, 5, 6, 7, 8, 7, 6, 5, 4, 3, 2, 1, 0, 8, 0, 4, 2, 6, 1, 8, 3, 3, 5, 7,
            8, 0,
        ])
        .style(Style::new().fg(Color::Green))
        .render(left, &mut buf);
    Canvas::default()
        .block(Block::bordered().title(" wait "))
        .marker(Marker::Braille)
        .x_bounds([0.0, 30.0])
        .y_bounds([0.0, 10.0])
        .paint(|ctx| {
            ctx.draw(&canvas::Line::new(0.0, 0.0, 30.0, 10.0, Color::Yellow));
            ctx.draw(&canvas::Line::new(0.0, 10.0, 30.0, 5.0, Color::Magenta));
        })
        .render(right, &mut buf);

    Paragraph::new(vec![
        Line::from(vec![
            Span::styled("red", Style::new().fg(Color::Red)),
            Span::raw(" "),
            Span::styled("bold green", Style::new().fg(Color::Green).bold()),
            Span::raw(" "),
            Span::styled(
                "under",
                Style::new().fg(Color::Rgb(0x87, 0xaf, 0xff)).underlined(),
            ),
            Span::raw(" "),
            Span::styled("dim", Style::new().dim()),
            Span::raw(" "),
            Span::styled("italic", Style::new().italic()),
            Span::raw(" "),
            Span::styled("on blue", Style::new().fg(Color::White).bg(Color::Blue)),
        ]),
        Line::from("a & b \"quoted\" 'single' ]]> <!-- -->"),
        Line::from("raw: [ ] [ ]"),
    ])
    .render(bottom, &mut buf);
    // What set_string would filter out, put into cells directly: an escape
    // character and a right-to-left override must still come out inert.
    buf[(6, H - 1)].set_symbol("\x1b");
    buf[(10, H - 1)].set_symbol("\u{202e}");
    buf
}

/// A strict XML parse; the HTML page's `<!DOCTYPE html>` is the only DTD.
fn parse_xml(s: &str) -> Result<roxmltree::Document<'_>, roxmltree::Error> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(s, opts)
}

fn ansi_readable(s: &str) -> String {
    s.replace('\x1b', "\\e")
}

#[test]
fn txt_snapshot() {
    insta::assert_snapshot!("fixture_txt", screenshot::render(&fixture(), Format::Txt));
}

#[test]
fn ansi_snapshot() {
    let ansi = screenshot::render(&fixture(), Format::Ansi);
    insta::assert_snapshot!("fixture_ansi", ansi_readable(&ansi));
}

#[test]
fn html_snapshot() {
    insta::assert_snapshot!("fixture_html", screenshot::render(&fixture(), Format::Html));
}

#[test]
fn svg_snapshot() {
    insta::assert_snapshot!("fixture_svg", screenshot::render(&fixture(), Format::Svg));
}

/// Strips our own SGR sequences; whatever control character is left is a leak.
fn strip_sgr(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\x1b' {
            assert_eq!(it.next(), Some('['), "ESC not starting an SGR in {s:?}");
            loop {
                match it.next() {
                    Some('m') => break,
                    Some(d) if d.is_ascii_digit() || d == ';' => {}
                    other => panic!("not an SGR parameter: {other:?}"),
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn hostile_text_comes_out_inert() {
    let buf = fixture();
    for f in Format::ALL {
        let mut out = screenshot::render(&buf, f);
        if f == Format::Ansi {
            out = strip_sgr(&out);
        }
        for c in out.chars() {
            assert!(
                c == '\n' || !(c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
                "{f}: raw control {c:?} in output"
            );
        }
        assert!(out.contains('␛'), "{f}: the escape character is shown");
        if matches!(f, Format::Html | Format::Svg) {
            assert!(!out.contains("<script"), "{f}: markup leaked");
            assert!(out.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{f}");
            assert!(!out.contains("]]>"), "{f}: CDATA end leaked");
            assert!(!out.contains("<!--"), "{f}: comment leaked");
        } else {
            assert!(out.contains("<script>alert(1)</script>"), "{f}");
        }
    }
}

#[test]
fn html_and_svg_parse_as_xml() {
    let buf = fixture();
    let html = screenshot::render(&buf, Format::Html);
    let doc = parse_xml(&html).expect("HTML is well-formed XML");
    let pre = doc
        .descendants()
        .find(|n| n.has_tag_name("pre"))
        .expect("a <pre>");
    let text: String = pre
        .descendants()
        .filter(|n| n.is_text())
        .map(|n| n.text().unwrap_or(""))
        .collect();
    // the page shows exactly the text screenshot
    assert_eq!(text, screenshot::render(&buf, Format::Txt));
    assert!(pre.descendants().any(|n| n
        .attribute("style")
        .is_some_and(|s| s.contains("font-weight:bold"))));

    let svg = screenshot::render(&buf, Format::Svg);
    parse_xml(&svg).expect("SVG is well-formed XML");
}

/// Rebuild the screen from the SVG: every character at the column its x
/// says. It must be the text screenshot, cell for cell.
#[test]
fn svg_places_every_glyph_on_its_cell() {
    let buf = fixture();
    let svg = screenshot::render(&buf, Format::Svg);
    let doc = parse_xml(&svg).unwrap();
    let mut grid = vec![vec![String::from(" "); W as usize]; H as usize];
    let mut texts = 0;
    for text in doc.descendants().filter(|n| n.has_tag_name("text")) {
        texts += 1;
        let y: f32 = text.attribute("y").unwrap().parse().unwrap();
        let row = (y / 16.0).floor() as usize;
        for span in text.children().filter(|n| n.has_tag_name("tspan")) {
            let xs: Vec<f32> = span
                .attribute("x")
                .unwrap()
                .split(' ')
                .map(|v| v.parse().unwrap())
                .collect();
            let s = span.text().unwrap_or("");
            let chars: Vec<char> = s.chars().collect();
            if xs.len() == 1 && chars.len() > 1 && !s.contains(' ') && xs.len() != chars.len() {
                // one glyph of several characters
                let col = (xs[0] / 8.4).round() as usize;
                grid[row][col] = s.to_string();
                continue;
            }
            assert_eq!(xs.len(), chars.len(), "one x per character in {s:?}");
            for (x, c) in xs.iter().zip(chars) {
                let col = x / 8.4;
                assert!((col - col.round()).abs() < 1e-3, "x {x} is not on a cell");
                grid[row][col.round() as usize] = c.to_string();
            }
        }
    }
    assert!(texts >= 10, "rows with text: {texts}");
    let txt = screenshot::render(&buf, Format::Txt);
    for (r, line) in txt.lines().enumerate() {
        // wide characters take two cells: the cell after one stays empty
        let mut expect = String::new();
        let mut skip = 0;
        for cell in &grid[r] {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            expect.push_str(cell);
            skip = unicode_width::UnicodeWidthStr::width(cell.as_str()).saturating_sub(1);
        }
        assert_eq!(expect.trim_end(), line, "row {r}");
    }
}

#[test]
fn svg_converts_to_png() {
    let svg = screenshot::render(&fixture(), Format::Svg);
    let dir = tempfile::tempdir().unwrap();
    let svg_path = dir.path().join("fixture.svg");
    std::fs::write(&svg_path, &svg).unwrap();
    let png_path =
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("screenshot-fixture.png");
    let status = Command::new("rsvg-convert")
        .arg("-o")
        .arg(&png_path)
        .arg(&svg_path)
        .status();
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            if std::env::var_os("SCHEDTOP_REQUIRE_ALL").is_some_and(|v| v == "1") {
                panic!("rsvg-convert is required (SCHEDTOP_REQUIRE_ALL=1): {e}; apt-get install librsvg2-bin");
            }
            eprintln!("SKIP svg_converts_to_png: rsvg-convert not found ({e}); apt-get install librsvg2-bin");
            return;
        }
    };
    assert!(status.success(), "rsvg-convert failed: {status}");
    let png = std::fs::read(&png_path).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let w = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((w, h), (538, 256), "PNG size (64 x 8.4 px, 16 x 16 px)");
    eprintln!("PNG written to {}", png_path.display());
}

#[test]
fn save_creates_a_new_file_and_never_follows_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let t = UNIX_EPOCH + Duration::from_secs(1_795_302_900);
    let buf = fixture();

    // a symlink planted where the screenshot would go
    let planted = dir.path().join("schedtop-host_1-20261121-231500.svg");
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    // and a dangling one where the next name would go
    let dangling_target = elsewhere.path().join("created-through-link");
    std::os::unix::fs::symlink(
        &dangling_target,
        dir.path().join("schedtop-host_1-20261121-231500-2.svg"),
    )
    .unwrap();

    let path = screenshot::save(&buf, Format::Svg, dir.path(), "host/1", t).unwrap();
    assert_eq!(
        path.file_name().unwrap(),
        "schedtop-host_1-20261121-231500-3.svg"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(
        !dangling_target.exists(),
        "wrote through a dangling symlink"
    );
    assert!(std::fs::symlink_metadata(&planted)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        screenshot::render(&buf, Format::Svg)
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode & !0o644, 0, "mode {mode:o} is at most 0644");
    assert_eq!(mode & 0o600, 0o600, "mode {mode:o} is owner read-write");

    // the same second again: a new name, the first file untouched
    let again = screenshot::save(&buf, Format::Txt, dir.path(), "host/1", t).unwrap();
    let again2 = screenshot::save(&buf, Format::Txt, dir.path(), "host/1", t).unwrap();
    assert_ne!(again, again2);

    let missing = dir.path().join("no-such-dir");
    let err = screenshot::save(&buf, Format::Txt, &missing, "h", t).unwrap_err();
    assert!(
        format!("{err:#}").contains("creating screenshot"),
        "{err:#}"
    );
}

#[test]
fn tiny_and_empty_buffers_do_not_panic() {
    for (w, h) in [(0, 0), (1, 1), (0, 3), (3, 0), (2, 1)] {
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        if w >= 1 && h >= 1 {
            // a wide character in the last column
            buf[(w - 1, 0)].set_symbol("漢");
        }
        for f in Format::ALL {
            let out = screenshot::render(&buf, f);
            if matches!(f, Format::Html | Format::Svg) {
                parse_xml(&out).unwrap();
            }
        }
    }
}
