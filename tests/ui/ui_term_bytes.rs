//! Bytes on the wire (ui/lean_backend.rs): the live view's terminal
//! output counted through crossterm's own backend, with and without the
//! lean layer, and played back on a small terminal emulator to check that
//! the screen it paints is the frame ratatui drew.
use crate::common;

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Rect, Size};
use ratatui::{Terminal, TerminalOptions, Viewport};
use schedtop::model::SourceKind;
use schedtop::ui::app::AppState;
use schedtop::ui::fixtures;
use schedtop::ui::lean_backend::LeanBackend;

/// Bytes written, shared with the test.
#[derive(Clone, Default)]
struct Wire(Rc<RefCell<Vec<u8>>>);

impl Write for Wire {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Wire {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

/// crossterm's backend on a pipe, at a fixed size (no terminal to ask).
struct Fixed(CrosstermBackend<Wire>, Size);

impl Backend for Fixed {
    type Error = std::io::Error;
    fn draw<'a, I: Iterator<Item = (u16, u16, &'a Cell)>>(&mut self, c: I) -> std::io::Result<()> {
        self.0.draw(c)
    }
    fn hide_cursor(&mut self) -> std::io::Result<()> {
        self.0.hide_cursor()
    }
    fn show_cursor(&mut self) -> std::io::Result<()> {
        self.0.show_cursor()
    }
    fn get_cursor_position(&mut self) -> std::io::Result<Position> {
        Ok(Position::ORIGIN)
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, p: P) -> std::io::Result<()> {
        self.0.set_cursor_position(p)
    }
    fn clear(&mut self) -> std::io::Result<()> {
        self.0.clear()
    }
    fn clear_region(&mut self, t: ClearType) -> std::io::Result<()> {
        self.0.clear_region(t)
    }
    fn size(&self) -> std::io::Result<Size> {
        Ok(self.1)
    }
    fn window_size(&mut self) -> std::io::Result<WindowSize> {
        Ok(WindowSize {
            columns_rows: self.1,
            pixels: Size::default(),
        })
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Backend::flush(&mut self.0)
    }
}

fn terminal<B: Backend>(b: B, w: u16, h: u16) -> Terminal<B> {
    let viewport = Viewport::Fixed(Rect::new(0, 0, w, h));
    Terminal::with_options(b, TerminalOptions { viewport }).unwrap()
}

/// A terminal emulator for what these backends send: cursor moves
/// (ESC[row;colH), attributes (ignored) and one-column characters.
struct Screen {
    w: usize,
    cells: Vec<char>,
    at: usize,
}

impl Screen {
    fn new(w: u16, h: u16) -> Screen {
        Screen {
            w: usize::from(w),
            cells: vec![' '; usize::from(w) * usize::from(h)],
            at: 0,
        }
    }

    fn play(&mut self, bytes: &[u8]) {
        let text = std::str::from_utf8(bytes).unwrap();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\x1b' {
                if let Some(cell) = self.cells.get_mut(self.at) {
                    *cell = c;
                }
                self.at += 1;
                continue;
            }
            assert_eq!(chars.next(), Some('['), "only CSI sequences are sent");
            let mut params = String::new();
            let end = loop {
                let c = chars.next().unwrap();
                if c.is_ascii_alphabetic() {
                    break c;
                }
                params.push(c);
            };
            match end {
                'H' => {
                    let mut p = params.split(';').map(|n| n.parse::<usize>().unwrap_or(1));
                    let (row, col) = (p.next().unwrap_or(1), p.next().unwrap_or(1));
                    self.at = (row - 1) * self.w + col - 1;
                }
                'J' => self.cells.iter_mut().for_each(|c| *c = ' '),
                _ => {}
            }
        }
    }

    fn text(&self) -> String {
        self.cells
            .chunks(self.w)
            .map(|l| l.iter().collect::<String>().trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn trimmed(s: &str) -> String {
    s.lines().map(str::trim_end).collect::<Vec<_>>().join("\n")
}

/// The fixture before and after its last Sample.
fn before_after(w: u16, h: u16) -> (AppState, AppState) {
    let samples = fixtures::samples(SourceKind::Bpf);
    let host = fixtures::host(SourceKind::Bpf);
    let before = fixtures::app_with(host.clone(), samples[..samples.len() - 1].to_vec(), w, h);
    let after = fixtures::app_with(host, samples, w, h);
    (before, after)
}

/// Bytes of the first paint and of the frame after it, through `lean` or
/// crossterm's backend alone; and the screen the emulator ends with.
fn frames(lean: bool, w: u16, h: u16) -> (usize, usize, String) {
    let (before, after) = before_after(w, h);
    let wire = Wire::default();
    let fixed = Fixed(CrosstermBackend::new(wire.clone()), Size::new(w, h));
    let mut screen = Screen::new(w, h);
    let mut sizes = Vec::new();
    let mut step = |draw: &mut dyn FnMut()| {
        draw();
        let b = wire.take();
        screen.play(&b);
        sizes.push(b.len());
    };
    if lean {
        let mut t = terminal(LeanBackend::new(fixed), w, h);
        for app in [&before, &after, &after] {
            step(&mut || {
                t.draw(|f| schedtop::ui::render::render(app, f)).unwrap();
            });
        }
    } else {
        let mut t = terminal(fixed, w, h);
        for app in [&before, &after, &after] {
            step(&mut || {
                t.draw(|f| schedtop::ui::render::render(app, f)).unwrap();
            });
        }
    }
    // the third frame repeats the second: nothing changed on screen
    assert!(
        sizes[2] <= 32,
        "an unchanged frame wrote {} bytes",
        sizes[2]
    );
    (sizes[0], sizes[1], screen.text())
}

#[test]
fn the_lean_layer_paints_the_same_screen_with_fewer_bytes() {
    for (w, h) in [(80u16, 24u16), (200, 50)] {
        let (_, after) = before_after(w, h);
        let want = trimmed(&common::ui_kit::screen(&after, w, h));
        let (paint, plain, plain_screen) = frames(false, w, h);
        let (lean_paint, lean, lean_screen) = frames(true, w, h);
        assert_eq!(trimmed(&plain_screen), want, "crossterm's own output");
        assert_eq!(trimmed(&lean_screen), want, "the lean layer's output");
        assert_eq!(paint, lean_paint, "a first paint has no gaps to fill");
        eprintln!("{w}x{h}: first paint {paint} B, next frame {plain} B -> {lean} B");
        assert!(
            lean < plain,
            "{w}x{h}: the lean frame is {lean} B, crossterm's alone {plain} B"
        );
    }
}

#[test]
fn one_changed_digit_writes_one_move_and_that_digit() {
    use ratatui::widgets::Paragraph;
    let wire = Wire::default();
    let fixed = Fixed(CrosstermBackend::new(wire.clone()), Size::new(40, 3));
    let mut t = terminal(LeanBackend::new(fixed), 40, 3);
    let mut line = |s: &'static str| {
        t.draw(|f| f.render_widget(Paragraph::new(s), f.area()))
            .unwrap();
        wire.take()
    };
    line("switches/s 1234  cpu 56.7%");
    let b = line("switches/s 1235  cpu 56.7%");
    let text = String::from_utf8(b).unwrap();
    // ESC[1;15H, the digit, then the colour and attribute resets
    assert!(text.contains("\x1b[1;15H5"), "{text:?}");
    assert_eq!(text.matches('H').count(), 1, "{text:?}");
    // two digits four cells apart: one move, the gap written again (4
    // bytes, where a move is 6)
    line("a 10 b 20");
    let text = String::from_utf8(line("a 11 b 21")).unwrap();
    assert!(text.contains("\x1b[1;4H1 b 21"), "{text:?}");
    assert_eq!(text.matches('H').count(), 1, "{text:?}");
    // a gap as long as a move is moved over
    line("a 10 b 20 c 30 d 40");
    let text = String::from_utf8(line("a 10 b 20 c 30 d 41")).unwrap();
    assert!(text.contains("\x1b[1;19H1"), "{text:?}");
    let text = String::from_utf8(line("a 11 b 20 c 30 d 42")).unwrap();
    assert!(
        text.contains("\x1b[1;4H1") && text.contains("\x1b[1;19H2"),
        "{text:?}"
    );
}
