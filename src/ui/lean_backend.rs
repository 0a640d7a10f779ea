//! Fewer bytes per frame on a slow link. ratatui sends only the cells that
//! changed, but each run of them starts with an absolute cursor move
//! (`ESC[row;colH`, 6 to 8 bytes), and a table of rates changes one or two
//! digits in every column: measured at 80x24, moves were most of the
//! steady bytes. This backend keeps a copy of the screen and, where the gap
//! between two changed cells on a line is shorter than the move, writes the
//! unchanged cells of the gap again instead (same style, plain ASCII only,
//! so the terminal's cursor lands where it would have).
use ratatui::backend::{Backend, ClearType, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

pub struct LeanBackend<B: Backend> {
    inner: B,
    /// what the terminal shows, row by row (`width` cells a row; None:
    /// not known)
    shadow: Vec<Option<Cell>>,
    width: u16,
}

impl<B: Backend> LeanBackend<B> {
    pub fn new(inner: B) -> LeanBackend<B> {
        LeanBackend {
            inner,
            shadow: Vec::new(),
            width: 0,
        }
    }

    pub fn inner(&self) -> &B {
        &self.inner
    }

    pub fn inner_mut(&mut self) -> &mut B {
        &mut self.inner
    }

    /// A copy of a `size` screen: blank after a clear, else unknown.
    fn reset(&mut self, size: Size, blank: bool) {
        self.width = size.width;
        self.shadow.clear();
        self.shadow.resize(
            usize::from(size.width) * usize::from(size.height),
            blank.then(Cell::default),
        );
    }

    fn at(&self, x: u16, y: u16) -> Option<&Cell> {
        let i = usize::from(y) * usize::from(self.width) + usize::from(x);
        (x < self.width).then(|| self.shadow.get(i)?.as_ref())?
    }
}

/// Bytes of the absolute move to (x, y): ESC [ row ; col H.
fn move_len(x: u16, y: u16) -> usize {
    let digits = |n: u32| n.to_string().len();
    4 + digits(u32::from(y) + 1) + digits(u32::from(x) + 1)
}

fn plain(c: &Cell) -> bool {
    let s = c.symbol();
    s == " " || s.len() == 1 && s.as_bytes()[0].is_ascii_graphic()
}

fn same_style(a: &Cell, b: &Cell) -> bool {
    a.fg == b.fg && a.bg == b.bg && a.modifier == b.modifier
}

/// The updates of one frame with short unchanged gaps filled from `shadow`
/// (the screen before the frame), and the shadow brought up to date.
fn with_gaps<B: Backend>(
    lean: &mut LeanBackend<B>,
    updates: Vec<(u16, u16, Cell)>,
) -> Vec<(u16, u16, Cell)> {
    let mut out: Vec<(u16, u16, Cell)> = Vec::with_capacity(updates.len() * 2);
    // where the cursor stands after the last cell written, if that cell was
    // plain (one column), and that cell
    let mut last: Option<(u16, u16, Cell)> = None;
    for (x, y, cell) in updates {
        if let Some((lx, ly, prev)) = &last {
            let gap = x.saturating_sub(*lx);
            if *ly == y && x > *lx && usize::from(gap) < move_len(x, y) {
                let fill: Option<Vec<Cell>> = (*lx..x)
                    .map(|gx| {
                        lean.at(gx, y)
                            .filter(|c| plain(c) && same_style(c, prev))
                            .cloned()
                    })
                    .collect();
                if let Some(fill) = fill {
                    out.extend(fill.into_iter().zip(*lx..x).map(|(c, gx)| (gx, y, c)));
                }
            }
        }
        let w = usize::from(lean.width);
        if let Some(slot) = lean
            .shadow
            .get_mut(usize::from(y) * w + usize::from(x))
            .filter(|_| x < lean.width)
        {
            *slot = Some(cell.clone());
        }
        last = plain(&cell).then(|| (x + 1, y, cell.clone()));
        out.push((x, y, cell));
    }
    out
}

impl<B: Backend> Backend for LeanBackend<B> {
    type Error = B::Error;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        let size = self.inner.size()?;
        if size.width != self.width
            || self.shadow.len() != usize::from(size.width) * usize::from(size.height)
        {
            self.reset(size, false);
        }
        let updates: Vec<(u16, u16, Cell)> = content.map(|(x, y, c)| (x, y, c.clone())).collect();
        let out = with_gaps(self, updates);
        self.inner.draw(out.iter().map(|(x, y, c)| (*x, *y, c)))
    }

    fn append_lines(&mut self, n: u16) -> Result<(), Self::Error> {
        self.inner.append_lines(n)
    }

    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.inner.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> Result<(), Self::Error> {
        let size = self.inner.size()?;
        self.reset(size, true);
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        // the copy no longer knows the screen: the next frame's gaps are
        // left as moves
        self.shadow.iter_mut().for_each(|c| *c = None);
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }

    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()
    }
}
