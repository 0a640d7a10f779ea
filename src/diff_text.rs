//! `schedtop diff` without --batch/--csv: a summary line, then the
//! entities that changed, largest change first, each with the figures that
//! moved most. Names are escaped for the terminal.
use crate::export::diff_records::{key_text, live_side, HIGHLIGHTS};
use crate::model::compare::{
    highlights, Better, Compared, Figure, Figures, Match, Window, FIGURES,
};
use crate::ui::format::escape_name;
use crate::util::clock::rfc3339;

/// Figures named per line at most.
const PER_LINE: usize = 3;

fn value(v: f64) -> String {
    if v.abs() >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn get(f: &Figure, s: &Option<Figures>) -> Option<f64> {
    s.as_ref().and_then(|x| (f.get)(x))
}

/// "wait_p99_us 9500 → 4100 (-5400, -57%)"
fn moved(c: &Compared, f: &Figure) -> String {
    let show = |v: Option<f64>| v.map_or("-".to_string(), value);
    let (b, a) = (get(f, &c.before), get(f, &c.after));
    let mut s = format!("{} {} → {}", f.name, show(b), show(a));
    if let Some(d) = c.change(f) {
        let sign = if d > 0.0 { "+" } else { "" };
        let rel = b
            .filter(|b| *b != 0.0)
            .map(|b| format!(", {sign}{:.0}%", d / b * 100.0))
            .unwrap_or_default();
        let verdict = match (f.better, d < 0.0) {
            (Better::Lower, true) => " better",
            (Better::Lower, false) => " worse",
            (Better::Neither, _) => "",
        };
        s.push_str(&format!(" ({sign}{}{rel}{verdict})", value(d)));
    }
    s
}

fn side(w: &Window) -> String {
    let what = if w.live {
        "live".to_string()
    } else {
        escape_name(&w.label)
    };
    format!(
        "{what} ({:.1} s from {} to {})",
        w.seconds(),
        rfc3339(w.first.time_ns),
        rfc3339(w.end.time_ns)
    )
}

/// The whole report, line by line.
pub fn text(before: &Window, after: &Window, all: &[Compared]) -> Vec<String> {
    let count = |m: Match| all.iter().filter(|c| c.matched == m).count();
    let mut out = vec![format!(
        "schedtop diff: BEFORE {} vs AFTER {}{}",
        side(before),
        side(after),
        live_side(before, after).map_or(String::new(), |s| format!("; live side: {s}"))
    )];
    let (better, worse) = highlights(all, HIGHLIGHTS);
    let list = |hs: &[crate::model::compare::Highlight<'_>]| -> String {
        if hs.is_empty() {
            return "none".into();
        }
        hs.iter()
            .map(|h| {
                format!(
                    "{} {}",
                    escape_name(&key_text(&h.entity.key)),
                    moved(h.entity, h.figure)
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    out.push(format!(
        "{} matched, {} only before, {} only after. Improvements: {}. Regressions: {}.",
        count(Match::Both),
        count(Match::OnlyBefore),
        count(Match::OnlyAfter),
        list(&better),
        list(&worse)
    ));
    let mut changed: Vec<(f64, &Compared)> = all
        .iter()
        .map(|c| (c.weight(), c))
        .filter(|(w, _)| *w > 0.0)
        .collect();
    changed.sort_by(|x, y| y.0.total_cmp(&x.0));
    out.push(String::new());
    out.push(format!(
        "{:<8} {:<11} {:<32} CHANGES",
        "LEVEL", "MATCH", "KEY"
    ));
    for (_, c) in &changed {
        let mut figs: Vec<(f64, &Figure)> = FIGURES
            .iter()
            .map(|f| (c.relative(f), f))
            .filter(|(r, _)| *r > 0.0)
            .collect();
        figs.sort_by(|x, y| y.0.total_cmp(&x.0));
        let moves: Vec<String> = figs
            .iter()
            .take(PER_LINE)
            .map(|(_, f)| moved(c, f))
            .collect();
        out.push(format!(
            "{:<8} {:<11} {:<32} {}",
            c.level.key(),
            c.matched.key(),
            escape_name(&key_text(&c.key)),
            moves.join("; ")
        ));
    }
    let quiet = all.len() - changed.len();
    if quiet > 0 {
        out.push(format!(
            "({quiet} more entities with no change above noise, or idle on the side they are on: --batch or --csv lists every one)"
        ));
    }
    out
}
