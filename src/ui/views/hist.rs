//! A log2 histogram drawn like bpftrace's `hist()`:
//! `[4, 8)        12 |@@@@@@@@@@@@          |`
use ratatui::text::{Line, Span};

use crate::model::hist::{
    octave_high_us, octave_low_us, slot_high_ns, slot_low_ns, HIST_OCTAVES, HIST_SLOTS,
};
use crate::model::Log2Hist;
use crate::ui::theme;

/// bpftrace's bar width: wider bars only add noise.
const BAR_MAX: usize = 52;

/// bpftrace's number suffixes (powers of 1024), with up to two decimals
/// for the sub-bucket bounds (0.25, 1.5, 1.25K).
fn short(ns: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "T"),
        (1 << 30, "G"),
        (1 << 20, "M"),
        (1 << 10, "K"),
    ];
    let us = ns as f64 / 1000.0;
    let (v, suffix) = UNITS
        .iter()
        .find(|(div, _)| us >= *div as f64)
        .map_or((us, ""), |&(div, s)| (us / div as f64, s));
    let text = format!("{v:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}{suffix}")
}

/// An octave's label, as bpftrace's `hist()` writes it: `[0]`, `[1]`,
/// `[2, 4)`, `[1K, 2K)`, `[64M, ...)`.
pub fn label(octave: usize) -> String {
    match (octave, octave_high_us(octave)) {
        (0, _) => "[0]".into(),
        (1, _) => "[1]".into(),
        (_, Some(high)) => format!(
            "[{}, {})",
            short(octave_low_us(octave) * 1000),
            short(high * 1000)
        ),
        (_, None) => format!("[{}, ...)", short(octave_low_us(octave) * 1000)),
    }
}

/// A sub-bucket's label: `[0, 0.25)`, `[1.25, 1.5)`, `[1.25K, 1.5K)`, `[112M, ...)`.
pub fn fine_label(slot: usize) -> String {
    match slot_high_ns(slot) {
        Some(high) => format!("[{}, {})", short(slot_low_ns(slot)), short(high)),
        None => format!("[{}, ...)", short(slot_low_ns(slot))),
    }
}

/// The rows to draw: sub-buckets, or octaves when `fold` is asked or the
/// histogram only knows octaves.
pub fn rows(h: &Log2Hist, fold: bool) -> Vec<(String, u64)> {
    if fold || h.octaves_only {
        (0..HIST_OCTAVES).map(|o| (label(o), h.octave(o))).collect()
    } else {
        (0..HIST_SLOTS).map(|s| (fine_label(s), h.get(s))).collect()
    }
}

/// The rows to draw: from the first to the last non-empty one; if that is
/// more than `max_rows`, the window of `max_rows` holding the most counts.
/// Returns (first row, one past the last) and how many non-empty rows
/// were left out.
pub fn window(c: &[u64], max_rows: usize) -> Option<(usize, usize, usize)> {
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

fn counts(rows: &[(String, u64)]) -> Vec<u64> {
    rows.iter().map(|r| r.1).collect()
}

/// Lines needed to draw `h` whole (first to last non-empty bucket).
pub fn rows_needed(h: &Log2Hist, fold: bool) -> usize {
    window(&counts(&rows(h, fold)), usize::MAX).map_or(1, |(from, to, _)| to - from)
}

/// Lines of the histogram in `width` cells and at most `max_rows` lines;
/// a last line says how many buckets did not fit.
pub fn lines(h: &Log2Hist, fold: bool, width: u16, max_rows: usize) -> Vec<Line<'static>> {
    if max_rows == 0 {
        return Vec::new();
    }
    if h.is_empty() {
        return vec![Line::styled("(no events)", theme::exited())];
    }
    let rows = rows(h, fold);
    let all = counts(&rows);
    let Some((mut from, mut to, mut hidden)) = window(&all, max_rows) else {
        return Vec::new();
    };
    if hidden > 0 && max_rows > 1 {
        // keep a line to say so
        (from, to, hidden) = window(&all, max_rows - 1).unwrap_or((from, to, hidden));
    }
    let rows = &rows[from..to];
    let counts = &all[from..to];
    let label_w = rows.iter().map(|r| r.0.len()).max().unwrap_or(3);
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    let count_w = max.to_string().len();
    let fixed = label_w + 1 + count_w + 3; // "label count |...|"
    let bar_w = usize::from(width).saturating_sub(fixed + 1).min(BAR_MAX);
    let mut out: Vec<Line> = rows
        .iter()
        .map(|(label, n)| {
            let n = *n;
            let mut spans = vec![Span::raw(format!("{label:<label_w$} {n:>count_w$}"))];
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
        assert_eq!(label(HIST_OCTAVES - 1), "[64M, ...)");
        assert_eq!(fine_label(0), "[0, 0.25)");
        assert_eq!(fine_label(5), "[1.25, 1.5)");
        assert_eq!(fine_label(9), "[2.5, 3)");
        assert_eq!(fine_label(4 * 11 + 1), "[1.25K, 1.5K)");
        assert_eq!(fine_label(HIST_SLOTS - 1), "[112M, ...)");
    }

    #[test]
    fn bars_scale_and_windows_fit() {
        let h = Log2Hist::from_octaves([0, 0, 10, 5, 0, 1]);
        let l = lines(&h, false, 40, 10);
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
        let l = lines(&h, false, 40, 2);
        assert_eq!(l.len(), 2);
        assert!(text(&l[0]).starts_with("[2, 4)"));
        assert_eq!(text(&l[1]), "(2 more buckets)");
        assert!(lines(&h, false, 0, 3)
            .iter()
            .all(|l| !text(l).contains('|')));
    }
}
