//! `schedtop snapshot --diff BEFORE AFTER`: a comparison screen (the UI's
//! comparison mode, ui/compare_ui.rs) of two whole recordings, rendered to
//! a file as any snapshot is, for an incident write-up.
use std::io::{self, Write};
use std::path::Path;

use anyhow::{anyhow, bail, Result};

use crate::cli::SnapshotArgs;
use crate::model::compare::{compare, Window};
use crate::record::window::{read_window, Span};
use crate::snapshot::{output_format, parse_size, render, ui_view, write_output, Plan};
use crate::ui::action::Action;
use crate::ui::app::{AppState, View};
use crate::ui::compare_ui::{self, comparing};
use crate::ui::layout;

fn side(path: &Path) -> Result<Window> {
    if path == Path::new("-") {
        bail!("snapshot --diff compares two recordings; for this machine now use schedtop diff");
    }
    let w = read_window(path, Span::default())?;
    for n in &w.notes {
        crate::say!("schedtop: {n}");
    }
    Ok(Window {
        host: w.host,
        first: w.first,
        end: w.end,
        live: false,
        label: path.display().to_string(),
    })
}

/// The comparison state in `plan`'s view and size, the row `--select`
/// names (the first whose name contains the text) selected.
pub fn state(before: &Window, after: &Window, plan: &Plan) -> Result<AppState> {
    let all = compare(before, after, &[]).map_err(|e| anyhow!(e))?;
    let mut app = comparing(before, after, all);
    layout::apply(&mut app, Action::Resize(plan.size.0, plan.size.1));
    let (view, detail) = ui_view(plan.view);
    let action = match view {
        View::Threads => Some(Action::ToggleProcesses),
        View::Cpus => Some(Action::ShowCpus),
        View::Numa => Some(Action::ShowNuma),
        View::Cgroups => Some(Action::ShowCgroups),
        View::Processes | View::Findings => None,
    };
    if let Some(a) = action {
        layout::apply(&mut app, a);
    }
    if let Some(what) = &plan.select {
        let lw = what.trim().to_lowercase();
        let names: Vec<String> = app
            .compare
            .as_deref()
            .map(|c| {
                compare_ui::rows(&app, c)
                    .iter()
                    .map(|e| compare_ui::name(e))
                    .collect()
            })
            .unwrap_or_default();
        let i = names
            .iter()
            .position(|n| n.to_lowercase().contains(&lw))
            .ok_or_else(|| anyhow!("--select {what:?}: no such row on the screen"))?;
        for _ in 0..i {
            layout::apply(&mut app, Action::Down);
        }
    }
    if detail {
        layout::apply(&mut app, Action::ToggleDetail);
    }
    Ok(app)
}

/// `snapshot --diff BEFORE AFTER` with the other options as `snapshot`
/// reads them (view, size, format, output, select).
pub fn run(a: &SnapshotArgs) -> Result<()> {
    let Some([b, after]) = a.diff.as_deref() else {
        bail!("--diff takes two recordings: BEFORE AFTER");
    };
    let plan = &Plan {
        view: a.view.parse().map_err(anyhow::Error::msg)?,
        size: parse_size(&a.size).map_err(anyhow::Error::msg)?,
        format: output_format(a.format.as_deref(), a.output.as_deref())
            .map_err(anyhow::Error::msg)?,
        select: a.select.clone(),
    };
    let app = state(&side(b)?, &side(after)?, plan)?;
    let text = render(&app, plan);
    match a.output.as_deref().filter(|p| *p != Path::new("-")) {
        Some(p) => write_output(p, text.as_bytes(), a.force),
        None => {
            let mut o = io::stdout().lock();
            match o.write_all(text.as_bytes()).and_then(|_| o.flush()) {
                Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.into()),
                _ => Ok(()),
            }
        }
    }
}
