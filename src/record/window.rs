//! A window of a recording (or a directory of them) as one interval: its
//! first Sample and the Sample that spans the window from it
//! (model/finding_window.rs), folded as the Samples are read so a long
//! window holds three Samples at a time. A window stays within one
//! segment: a restart resets the counters.
use std::path::Path;

use anyhow::{anyhow, bail, Result};

use crate::model::finding_window::window_end;
use crate::model::{HostInfo, Sample};
use crate::record::timeexpr::{parse_time, TimeExpr};

/// A recording's window.
pub struct RecordedWindow {
    pub host: HostInfo,
    pub first: Sample,
    pub end: Sample,
    /// said on stderr by the caller: damage skipped, a window cut at a
    /// segment start
    pub notes: Vec<String>,
}

/// Where a window starts and ends, resolved against each recording.
#[derive(Clone, Copy, Debug, Default)]
pub struct Span {
    /// default: the first Sample
    pub from: Option<TimeExpr>,
    /// default: the last Sample
    pub to: Option<TimeExpr>,
    /// the window is this long, ending at `to` (`from` is then unused)
    pub len_ns: Option<u64>,
}

impl Span {
    /// From the command line's time expressions (errors name the option).
    pub fn parse(from: Option<&str>, to: Option<&str>, len_ns: Option<u64>) -> Result<Span> {
        let parse = |what: &str, t: Option<&str>| {
            t.map(parse_time)
                .transpose()
                .map_err(|e| anyhow!("{what}: {e}"))
        };
        Ok(Span {
            from: parse("--from", from)?,
            to: parse(if len_ns.is_some() { "--at" } else { "--to" }, to)?,
            len_ns,
        })
    }
}

/// The window `span` of the recording at `path`.
pub fn read_window(path: &Path, span: Span) -> Result<RecordedWindow> {
    let Span { from, to, len_ns } = span;
    let timeline = crate::record::dir::open_timeline(path)?;
    let mut notes = timeline.notes.clone();
    notes.extend(timeline.unreadable.iter().cloned());
    let mut r = timeline.source;
    let times = (0..r.len()).filter_map(|i| r.time_of(i));
    let (Some(first_t), Some(last_t)) = (times.clone().min(), times.max()) else {
        bail!("{}: the recording has no Samples", path.display());
    };
    let end = to.map_or(last_t, |e| e.resolve(first_t, last_t));
    let start = match len_ns {
        Some(len) => end.saturating_sub(len),
        None => from.map_or(first_t, |e| e.resolve(first_t, last_t)),
    };
    if start >= end {
        bail!(
            "{}: the window is empty (--from is not before --to)",
            path.display()
        );
    }
    let bad_window = || {
        anyhow!(
            "{}: the window holds fewer than two Samples of one segment: no interval to compare",
            path.display()
        )
    };
    let i = r.index_at_time(end).ok_or_else(bad_window)?;
    if r.time_of(i).is_none_or(|t| t < start) {
        return Err(bad_window());
    }
    // back through the segment to the window's start
    let mut chain = vec![i];
    while let Some(p) = chain.last().and_then(|&j| r.prev_of(j)) {
        if r.time_of(p).is_none_or(|tp| tp < start) {
            break;
        }
        chain.push(p);
    }
    chain.reverse();
    if let Some(&j) = chain.first() {
        let t = r.time_of(j).unwrap_or(start);
        if r.prev_of(j).is_none() && t > start.saturating_add(r.host_of(j).interval_ns) {
            notes.push(format!(
                "{}: the window starts at {} where the recording restarted (a window stays in one segment)",
                path.display(),
                crate::util::clock::rfc3339(t)
            ));
        }
    }
    let mut first: Option<Sample> = None;
    let mut acc: Option<Sample> = None;
    for &j in &chain {
        let s = match r.sample(j) {
            Ok(s) => s,
            Err(e) => {
                notes.push(format!("{}: skipping a Sample: {e:#}", path.display()));
                continue;
            }
        };
        match (&first, acc.take()) {
            (None, _) => first = Some(s),
            (Some(f), None) => acc = window_end(&[f.clone(), s]),
            (Some(f), Some(e)) => acc = window_end(&[f.clone(), e, s]),
        }
    }
    let (Some(first), Some(end)) = (first, acc) else {
        return Err(bad_window());
    };
    Ok(RecordedWindow {
        host: r.host_of(i),
        first,
        end,
        notes,
    })
}
