//! `schedtop diff --batch` (JSON Lines: a summary object, then one object
//! per compared entity) and `--csv` (the same figures, one row per
//! entity). Figure names are the batch JSON's (model/compare.rs FIGURES);
//! histograms are the batch JSON's `[[low µs, count], ...]`, or `low:count`
//! pairs in CSV as `dump --format csv` writes them.
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::export::csv_field::csv_field;
use crate::model::compare::{
    highlights, Compared, Figure, Figures, Key, Level, Match, Window, FIGURES,
};
use crate::model::Log2Hist;
use crate::util::clock::rfc3339;

/// How many improvements and regressions the summary names.
pub const HIGHLIGHTS: usize = 5;

/// What the key says, as JSON.
pub fn key_json(k: &Key) -> Value {
    match k {
        Key::Process { comm, ordinal } => json!({"comm": comm, "ordinal": ordinal}),
        Key::Pinned {
            comm,
            before_pid,
            after_pid,
        } => json!({"comm": comm, "pinned": format!("pid:{before_pid}=pid:{after_pid}")}),
        Key::Thread {
            process,
            comm,
            ordinal,
        } => json!({"process": key_json(process), "comm": comm, "ordinal": ordinal}),
        Key::Cgroup { path } => json!({"path": path}),
        Key::Cpu { cpu } => json!({"cpu": cpu}),
    }
}

/// The key as one short string (CSV, text): `web#0`, `web#0/worker#2`,
/// `web[pid:1=pid:2]`, a cgroup's path, `cpu3`. Hostile names: escape
/// before a terminal.
pub fn key_text(k: &Key) -> String {
    match k {
        Key::Process { comm, ordinal } => format!("{comm}#{ordinal}"),
        Key::Pinned {
            comm,
            before_pid,
            after_pid,
        } => format!("{comm}[pid:{before_pid}=pid:{after_pid}]"),
        Key::Thread {
            process,
            comm,
            ordinal,
        } => format!("{}/{comm}#{ordinal}", key_text(process)),
        Key::Cgroup { path } => path.clone(),
        Key::Cpu { cpu } => format!("cpu{cpu}"),
    }
}

fn id_name(level: Level) -> Option<&'static str> {
    match level {
        Level::Process => Some("pid"),
        Level::Thread => Some("tid"),
        Level::Cpu => Some("cpu"),
        Level::Cgroup => None,
    }
}

fn hist_json(h: &Option<Log2Hist>) -> Value {
    h.as_ref().map_or(Value::Null, |h| json!(h.nonzero_pairs()))
}

fn num(v: Option<f64>) -> Value {
    v.filter(|v| v.is_finite())
        .map_or(Value::Null, |v| json!(v))
}

/// A figure's value: µs figures (whole numbers from the histograms) as
/// integers, rates as they are.
fn figure_value(f: &Figure, v: Option<f64>) -> Value {
    match v {
        Some(v) if f.name.ends_with("_us") && v.is_finite() => json!(v.round() as i64),
        v => num(v),
    }
}

/// One line of the JSON Lines output, fields in this order.
#[derive(Serialize)]
struct EntityLine {
    level: &'static str,
    key: Value,
    #[serde(rename = "match")]
    matched: &'static str,
    before: Value,
    after: Value,
    change: Value,
}

fn side_json(level: Level, f: &Option<Figures>) -> Value {
    let Some(f) = f else { return Value::Null };
    let mut m = Map::new();
    if let Some(id) = id_name(level) {
        m.insert(id.into(), json!(f.id));
    }
    if let Some(c) = &f.comm {
        m.insert("comm".into(), json!(c));
    }
    m.insert("threads".into(), json!(f.threads));
    for fig in &FIGURES {
        m.insert(fig.name.into(), figure_value(fig, (fig.get)(f)));
    }
    m.insert("wait_hist_us".into(), hist_json(&f.wait_hist));
    m.insert("slice_hist_us".into(), hist_json(&f.slice_hist));
    Value::Object(m)
}

/// One entity's line.
pub fn entity_json(c: &Compared) -> String {
    let change: Map<String, Value> = FIGURES
        .iter()
        .map(|f| (f.name.to_string(), figure_value(f, c.change(f))))
        .collect();
    let line = EntityLine {
        level: c.level.key(),
        key: key_json(&c.key),
        matched: c.matched.key(),
        before: side_json(c.level, &c.before),
        after: side_json(c.level, &c.after),
        change: if c.matched == Match::Both {
            Value::Object(change)
        } else {
            Value::Null
        },
    };
    serde_json::to_string(&line).unwrap_or_default()
}

fn window_json(w: &Window) -> Value {
    json!({
        "source": if w.live { "live" } else { "recording" },
        "path": if w.live { Value::Null } else { json!(w.label) },
        "host": w.host.hostname,
        "probes": w.host.source.as_str(),
        "from": rfc3339(w.first.time_ns),
        "to": rfc3339(w.end.time_ns),
        "window_s": (w.seconds() * 1000.0).round() / 1000.0,
    })
}

/// Which side was taken live ("before", "after", or null).
pub fn live_side(before: &Window, after: &Window) -> Option<&'static str> {
    match (before.live, after.live) {
        (true, true) => Some("both"),
        (true, false) => Some("before"),
        (false, true) => Some("after"),
        (false, false) => None,
    }
}

/// The first line: both windows, counts, the largest improvements and
/// regressions (figures where lower is better).
pub fn summary_json(before: &Window, after: &Window, all: &[Compared]) -> String {
    let count = |m: Match| all.iter().filter(|c| c.matched == m).count();
    let (better, worse) = highlights(all, HIGHLIGHTS);
    let list = |hs: &[crate::model::compare::Highlight<'_>]| -> Value {
        hs.iter()
            .map(|h| {
                let get = |s: &Option<Figures>| {
                    figure_value(h.figure, s.as_ref().and_then(|f| (h.figure.get)(f)))
                };
                json!({
                    "level": h.entity.level.key(),
                    "key": key_json(&h.entity.key),
                    "figure": h.figure.name,
                    "before": get(&h.entity.before),
                    "after": get(&h.entity.after),
                    "change": figure_value(h.figure, Some(h.change)),
                })
            })
            .collect()
    };
    let line = SummaryLine {
        level: "summary",
        live: live_side(before, after),
        before: window_json(before),
        after: window_json(after),
        entities: json!({
            "both": count(Match::Both),
            "only_before": count(Match::OnlyBefore),
            "only_after": count(Match::OnlyAfter),
        }),
        improvements: list(&better),
        regressions: list(&worse),
    };
    serde_json::to_string(&line).unwrap_or_default()
}

/// The first line, fields in this order.
#[derive(Serialize)]
struct SummaryLine {
    level: &'static str,
    live: Option<&'static str>,
    before: Value,
    after: Value,
    entities: Value,
    improvements: Value,
    regressions: Value,
}

/// The CSV header line.
pub fn csv_header() -> String {
    let mut h = vec!["level", "match", "key"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    h.extend(["before_id", "after_id"].map(String::from));
    for f in &FIGURES {
        for side in ["before", "after", "change"] {
            h.push(format!("{side}_{}", f.name));
        }
    }
    for n in ["wait_hist_us", "slice_hist_us"] {
        h.push(format!("before_{n}"));
        h.push(format!("after_{n}"));
    }
    h.join(",")
}

fn hist_csv(h: Option<&Log2Hist>) -> String {
    h.map(|h| {
        h.nonzero_pairs()
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    })
    .unwrap_or_default()
}

/// One entity's CSV row (empty fields: unknown, or not on that side).
pub fn csv_row(c: &Compared) -> String {
    let opt = |v: Option<f64>| {
        v.filter(|v| v.is_finite())
            .map_or(String::new(), |v| v.to_string())
    };
    let id = |s: &Option<Figures>| s.as_ref().map_or(String::new(), |f| f.id.to_string());
    let mut row = vec![
        c.level.key().to_string(),
        c.matched.key().to_string(),
        csv_field(&key_text(&c.key)),
        id(&c.before),
        id(&c.after),
    ];
    for f in &FIGURES {
        let side = |s: &Option<Figures>| s.as_ref().and_then(|x| (f.get)(x));
        row.push(opt(side(&c.before)));
        row.push(opt(side(&c.after)));
        row.push(opt(c.change(f)));
    }
    for h in [
        |f: &Figures| f.wait_hist.clone(),
        |f: &Figures| f.slice_hist.clone(),
    ] {
        row.push(hist_csv(c.before.as_ref().and_then(h).as_ref()));
        row.push(hist_csv(c.after.as_ref().and_then(h).as_ref()));
    }
    row.join(",")
}
