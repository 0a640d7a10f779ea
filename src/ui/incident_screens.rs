//! The screenshots in an incident bundle: the threads, CPU and cgroups
//! views as the live view would draw them at the firing moment, in txt
//! and svg, from the newest kept Samples (so every mode, headless or not,
//! draws them the same way). Rendered off any terminal (TestBackend).
use super::action::Action;
use super::app::{AppState, Mode};
use super::render::render_to_buffer;
use crate::collect::Seekable;
use crate::export::screenshot::{self, Format};
use std::sync::Arc;

use crate::model::cpus;
use crate::model::shared_interval::Interval;
use crate::model::HostInfo;

/// Screen size of the bundle's screenshots.
pub const SIZE: (u16, u16) = (160, 50);
/// Samples fed before drawing (rates need two; sparklines like a few more).
const LEAD: usize = 5;

/// (file name, contents) for each view and format, of the interval
/// `firing` (the watch's, not derived again); the kept Samples before it
/// give the CPU sparklines their earlier points.
pub fn render(
    host: &HostInfo,
    kept: &mut dyn Seekable,
    firing: &Arc<Interval>,
) -> Vec<(String, String)> {
    let mut app = AppState::new(host.clone(), Mode::Live);
    app.apply(Action::Resize(SIZE.0, SIZE.1));
    let n = kept.len();
    let mut prev = None;
    // `kept` ends with the firing Sample
    for i in n.saturating_sub(LEAD)..n.saturating_sub(1) {
        if let Ok(s) = kept.sample(i) {
            if let Some(v) = cpus::derive(&host.topology, prev.as_ref(), &s) {
                app.cpu_history.push(&v);
            }
            prev = Some(s);
        }
    }
    app.push_interval(firing.clone());
    let mut out = Vec::new();
    let mut shoot = |app: &AppState, name: &str| {
        let buf = render_to_buffer(app, SIZE.0, SIZE.1);
        for f in [Format::Txt, Format::Svg] {
            out.push((
                format!("{name}.{}", f.extension()),
                screenshot::render(&buf, f),
            ));
        }
    };
    shoot(&app, "threads");
    app.apply(Action::ShowCpus);
    shoot(&app, "cpus");
    app.apply(Action::ShowCgroups);
    shoot(&app, "cgroups");
    out
}
