//! `schedtop diff BEFORE AFTER`: two windows (recordings, directories of
//! recordings, or `-` for this machine now) compared entity by entity
//! (model/compare.rs), printed as JSON Lines, CSV or a text table, or on
//! a terminal shown in the UI's comparison mode (ui/compare_ui.rs).
use std::path::Path;

use anyhow::{anyhow, bail, Result};

use crate::cli::DiffArgs;
use crate::collect::LiveOptions;
use crate::export::diff_records::{csv_header, csv_row, entity_json, summary_json};
use crate::live_window::watch_live;
use crate::model::compare::{compare, Window};
use crate::record::window::{read_window, Span};

pub fn run(a: &DiffArgs) -> Result<()> {
    crate::sigpipe::end_quietly_on_closed_stdout();
    if a.before == "-" && a.after == "-" {
        bail!("only one side can be - (this machine now)");
    }
    let before = side(
        a,
        &a.before,
        a.before_from.as_deref(),
        a.before_to.as_deref(),
    )?;
    let after = side(a, &a.after, a.after_from.as_deref(), a.after_to.as_deref())?;
    let all = compare(&before, &after, &a.pins).map_err(|e| anyhow!(e))?;
    if a.batch {
        crate::outln!("{}", summary_json(&before, &after, &all));
        for c in &all {
            crate::outln!("{}", entity_json(c));
        }
    } else if a.csv {
        crate::outln!("{}", csv_header());
        for c in &all {
            crate::outln!("{}", csv_row(c));
        }
    } else if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        // the comparison screens: the UI's views in comparison mode
        let app = crate::ui::compare_ui::comparing(&before, &after, all);
        let feed = crate::ui::feed::NoFeed::new(app.host.clone());
        let shots = crate::ui::screenshot_key::ScreenshotConfig::default();
        crate::ui::run::run_with(crate::ui::Session::live(app), feed, &shots)?;
    } else {
        for line in crate::diff_text::text(&before, &after, &all) {
            crate::outln!("{line}");
        }
    }
    Ok(())
}

/// One side's window: `-` watched live, else read from the recording.
fn side(a: &DiffArgs, what: &str, from: Option<&str>, to: Option<&str>) -> Result<Window> {
    if what == "-" {
        return live(a);
    }
    let span = match &a.at {
        Some(at) => Span::parse(None, Some(at), Some(a.duration))?,
        None => Span::parse(from.or(a.from.as_deref()), to.or(a.to.as_deref()), None)?,
    };
    let w = read_window(Path::new(what), span)?;
    for n in &w.notes {
        crate::say!("schedtop: {n}");
    }
    Ok(Window {
        host: w.host,
        first: w.first,
        end: w.end,
        live: false,
        label: what.to_string(),
    })
}

/// This machine for -d: the first Sample and the one spanning the watch.
fn live(a: &DiffArgs) -> Result<Window> {
    let interval_ns = ((a.live.interval * 1e9) as u64).clamp(1, a.duration.max(1));
    let opts = LiveOptions {
        interval_ns,
        pid_filter: a.live.pids.clone(),
        force_procfs: a.live.procfs,
        require_bpf: a.live.require_bpf,
        run_delay_waits: a.live.run_delay_waits,
        threads: Default::default(),
    };
    // Ctrl-C ends the watch early: the comparison of what was seen so far
    let (host, first, end) = watch_live(&opts, a.duration, "compare")?;
    Ok(Window {
        host,
        first,
        end,
        live: true,
        label: "-".into(),
    })
}
