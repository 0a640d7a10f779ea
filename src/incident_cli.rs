//! The shell's side of `--trigger` in the headless modes (`record`,
//! `record --dir`, `serve`): the options from the command line, a kept
//! history of `--before`, and an incident watch fed by the one sampler's
//! tap; what it does goes to stderr, one line each. SIGUSR1 fires a
//! bundle by hand.
use anyhow::Result;

use crate::cli::TriggerArgs;
use crate::export::incident::{self, IncidentOptions, Watch};
use std::sync::Arc;

use crate::collect::sampler::Flow;
use crate::collect::sink::Sink;
use crate::model::shared_interval::Interval;
use crate::model::HostInfo;
use crate::ui::history::{History, DEFAULT_BYTE_CAP};
use crate::util::signals;

/// `--before` default: two minutes.
pub const DEFAULT_BEFORE_NS: u64 = 120_000_000_000;

/// The bundle options the arguments ask for, the directory checked.
pub fn options(a: &TriggerArgs) -> Result<IncidentOptions> {
    let dir = a
        .incident_dir
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("."));
    incident::check_dir(&dir)?;
    let mut o = IncidentOptions::in_dir(dir);
    if let Some(v) = a.after {
        o.after_ns = v;
    }
    if let Some(v) = a.cooldown {
        o.cooldown_ns = v;
    }
    if let Some(v) = a.max_incidents {
        o.max_bundles = v;
    }
    if let Some(v) = a.incident_max_size {
        o.max_bytes = v;
    }
    Ok(o)
}

/// The live view's watch: always there for SIGUSR1 and the `i` key
/// (bundles in the current directory) unless the directory is unusable and
/// nothing asked for it; asked for (`--trigger`, `--incident-dir`), an
/// unusable directory is an error. None with `--history 0`, unless asked.
pub fn live_watch(a: &TriggerArgs, history_ns: u64) -> Result<Option<Watch>> {
    if a.before.is_some() {
        anyhow::bail!("--before is for record and serve; the live view keeps --history");
    }
    if !a.wanted() {
        if history_ns == 0 {
            return Ok(None);
        }
        return Ok(options(a).ok().map(|o| Watch::new(Vec::new(), o)));
    }
    Ok(Some(Watch::new(a.triggers.clone(), options(a)?)))
}

pub struct Headless {
    watch: Watch,
    before_ns: u64,
    kept: Option<History>,
}

impl Headless {
    /// None when nothing asks for bundles; an unusable directory is an error.
    pub fn from_args(a: &TriggerArgs) -> Result<Option<Headless>> {
        if !a.wanted() {
            let bundle_opts = a.before.is_some()
                || a.after.is_some()
                || a.cooldown.is_some()
                || a.max_incidents.is_some()
                || a.incident_max_size.is_some();
            if bundle_opts {
                anyhow::bail!(
                    "--before, --after, --cooldown, --max-incidents and --incident-max-size are for --trigger or --incident-dir"
                );
            }
            return Ok(None);
        }
        let opts = options(a)?;
        signals::catch_usr1();
        Ok(Some(Headless {
            watch: Watch::new(a.triggers.clone(), opts),
            before_ns: a.before.unwrap_or(DEFAULT_BEFORE_NS),
            kept: None,
        }))
    }
}

impl Sink for Headless {
    /// Keep the Sample, watch its interval, say what happened.
    fn take(&mut self, host: &HostInfo, iv: &Arc<Interval>) -> Result<Flow> {
        if signals::take_usr1() {
            self.watch.request("SIGUSR1");
        }
        let before = self.before_ns;
        let kept = self
            .kept
            .get_or_insert_with(|| History::new(host.clone(), before, DEFAULT_BYTE_CAP));
        kept.push_shared(&iv.sample);
        for e in self
            .watch
            .on_interval(iv, host, kept, crate::ui::incident_screens::render)
        {
            crate::say!("schedtop: {}", incident::describe(&e));
        }
        Ok(Flow::Continue)
    }

    /// The watch carries on: the next Sample is watched as usual.
    fn missed(&mut self, _e: &anyhow::Error) -> bool {
        true
    }
}

impl Drop for Headless {
    fn drop(&mut self) {
        if let Some(e) = self.watch.finish() {
            crate::say!("schedtop: {}", incident::describe(&e));
        }
    }
}
