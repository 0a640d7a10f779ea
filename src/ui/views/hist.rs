//! A log2 histogram drawn like bpftrace's `hist()`:
//! `[4, 8)        12 |@@@@@@@@@@@@          |`
use ratatui::text::{Line, Span};

use crate::model::hist::{slot_high_us, slot_low_us};
use crate::model::Log2Hist;
use crate::ui::theme;

/// bpftrace's bar width: wider bars only add noise.
const BAR_MAX: usize = 52;

/// bpftrace's number suffixes (powers of 1024).
fn short(v: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "T"),
        (1 << 30, "G"),
        (1 << 20, "M"),
        (1 << 10, "K"),
    ];
    for (div, suffix) in UNITS {
        if v >= div && v.is_multiple_of(div) {
            return format!("{}{suffix}", v / div);
        }
    }
    v.to_string()
}

/// The bucket's label: `[0]`, `[1]`, `[2, 4)`, `[1K, 2K)`, `[64M, ...)`.
pub fn label(slot: usize) -> String {
    match (slot, slot_high_us(slot)) {
        (0, _) => "[0]".into(),
        (1, _) => "[1]".into(),
        (_, Some(high)) => format!("[{}, {})", short(slot_low_us(slot)), short(high)),
        (_, None) => format!("[{}, ...)", short(slot_low_us(slot))),
    }
}

/// The slots to draw: from the first to the last non-empty one; if that is
/// more than `max_rows`, the window of `max_rows` holding the most counts.
/// Returns (first slot, one past the last) and how many non-empty slots
/// were left out.
fn window(h: &Log2Hist, max_rows: usize) -> Option<(usize, usize, usize)> {
    let c = &h.counts;
    let first = c.iter().position(|&n| n > 0)?;
    let last = c.iter().rposition(|&n| n > 0)?;
    let len = last + 1 - first;
    if len <= max_rows {
        return Some((first, last + 1, 0));
    }
    let rows = max_rows.max(1);
    let (mut best, mut best_sum) = (first, 0u64);
    for start in first..=last + 1 - rows {
        let sum: u64 = c[start..start + rows].iter().sum();
        if sum > best_sum {
            best = start;
            best_sum = sum;
        }
    }
    let hidden = c[first..=last]
        .iter()
        .enumerate()
        .filter(|&(i, &n)| n > 0 && !(best..best + rows).contains(&(i + first)))
        .count();
    Some((best, best + rows, hidden))
}

/// Lines needed to draw `h` whole (first to last non-empty bucket).
pub fn rows_needed(h: &Log2Hist) -> usize {
    window(h, usize::MAX).map_or(1, |(from, to, _)| to - from)
}

/// Lines of the histogram in `width` cells and at most `max_rows` lines;
/// a last line says how many buckets did not fit.
pub fn lines(h: &Log2Hist, width: u16, max_rows: usize) -> Vec<Line<'static>> {
    if max_rows == 0 {
        return Vec::new();
    }
    if h.is_empty() {
        return vec![Line::styled("(no events)", theme::exited())];
    }
    let Some((mut from, mut to, mut hidden)) = window(h, max_rows) else {
        return Vec::new();
    };
    if hidden > 0 && max_rows > 1 {
        // keep a line to say so
        (from, to, hidden) = window(h, max_rows - 1).unwrap_or((from, to, hidden));
    }
    let counts = &h.counts[from..to];
    let label_w = (from..to).map(|s| label(s).len()).max().unwrap_or(3);
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    let count_w = max.to_string().len();
    let fixed = label_w + 1 + count_w + 3; // "label count |...|"
    let bar_w = usize::from(width).saturating_sub(fixed + 1).min(BAR_MAX);
    let mut out: Vec<Line> = (from..to)
        .zip(counts)
        .map(|(slot, &n)| {
            let mut spans = vec![Span::raw(format!(
                "{:<label_w$} {n:>count_w$}",
                label(slot)
            ))];
            if bar_w > 0 {
                let filled = ((n as f64 / max as f64) * bar_w as f64).round() as usize;
                let filled = if n > 0 { filled.max(1) } else { 0 }.min(bar_w);
                spans.push(Span::raw(" |"));
                spans.push(Span::styled("@".repeat(filled), theme::bar()));
                spans.push(Span::raw(format!("{}|", " ".repeat(bar_w - filled))));
            }
            Line::from(spans)
        })
        .collect();
    if hidden > 0 && max_rows > 1 {
        out.push(Line::styled(
            format!("({hidden} more buckets)"),
            theme::exited(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(l: &Line) -> String {
        l.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn labels_like_bpftrace() {
        assert_eq!(label(0), "[0]");
        assert_eq!(label(1), "[1]");
        assert_eq!(label(3), "[4, 8)");
        assert_eq!(label(11), "[1K, 2K)");
        assert_eq!(label(21), "[1M, 2M)");
        assert_eq!(label(crate::model::hist::HIST_SLOTS - 1), "[64M, ...)");
    }

    #[test]
    fn bars_scale_and_windows_fit() {
        let h = Log2Hist::from_counts([0, 0, 10, 5, 0, 1]);
        let l = lines(&h, 40, 10);
        assert_eq!(l.len(), 4);
        let first = text(&l[0]);
        assert!(first.starts_with("[2, 4)   10 |@@@@"), "{first}");
        assert!(first.ends_with('|') && first.chars().count() <= 40);
        assert_eq!(text(&l[2]).matches('@').count(), 0);
        // 25-cell bars: 10 -> 25, 5 -> 13 (12.5 rounded), 1 -> 3 (2.5 rounded)
        assert_eq!(text(&l[0]).matches('@').count(), 25);
        assert_eq!(text(&l[1]).matches('@').count(), 13);
        assert_eq!(text(&l[3]).matches('@').count(), 3);
        // two rows: the densest bucket and a note about the rest
        let l = lines(&h, 40, 2);
        assert_eq!(l.len(), 2);
        assert!(text(&l[0]).starts_with("[2, 4)"));
        assert_eq!(text(&l[1]), "(2 more buckets)");
        assert!(lines(&h, 0, 3).iter().all(|l| !text(l).contains('|')));
    }
}
