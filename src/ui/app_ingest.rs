//! How Samples and Intervals reach the `AppState`: the live view gets the
//! Interval its collector derived (shared with the history and the
//! incident watch); a replay, a rewind and tests push Samples, derived
//! here against the Sample before. While paused they wait (the screen
//! stays as it was).
use std::sync::Arc;

use super::app::{AppState, PENDING_CAP};
use crate::model::cpus;
use crate::model::shared_interval::{self, Interval};
use crate::model::Sample;

impl AppState {
    /// A new Sample from the feed, derived against the one before it.
    pub fn push_sample(&mut self, s: impl Into<Arc<Sample>>) {
        let prev = match self.pending.back() {
            Some(iv) => Some(iv.sample.clone()),
            None => self.history.back().cloned(),
        };
        // the current interval's rows are the new one's storage where
        // nothing else holds them (not while paused: they are on screen)
        let spare = if self.paused || !self.pending.is_empty() {
            Default::default()
        } else {
            Arc::try_unwrap(std::mem::take(&mut self.derived))
                .map(|mut iv| std::mem::take(&mut iv.derived))
                .unwrap_or_default()
        };
        let iv = shared_interval::of(&self.host, prev, s.into(), spare);
        self.push_interval(Arc::new(iv));
    }

    /// The Interval the sampler derived for its newest Sample.
    pub fn push_interval(&mut self, iv: Arc<Interval>) {
        if self.paused {
            if self.pending.len() >= PENDING_CAP {
                self.pending.pop_front();
            }
            self.pending.push_back(iv);
            return;
        }
        self.ingest(iv);
        self.refresh(self.follow);
        self.hold_figures();
    }

    /// The live table's figures that moved little keep their drawn value
    /// (steady.rs); a replay, and the setting `exact_figures`, draw them
    /// exactly.
    pub(super) fn hold_figures(&mut self) {
        if self.mode != super::Mode::Live
            || self.rewound()
            || self.view_model.settings.exact_figures
        {
            self.steady.clear();
            return;
        }
        let (from, page) = (self.offset, self.page().max(1));
        let cols = self.view_model.columns(self.table_view).to_vec();
        let mut steady = std::mem::take(&mut self.steady);
        steady.update(self.rows().range(from, from + page), &cols);
        self.steady = steady;
    }

    pub(super) fn ingest(&mut self, iv: Arc<Interval>) {
        let s = iv.sample.clone();
        if self.first.is_none() {
            self.first = Some(super::first_sample::FirstSample::keep(&s));
        }
        self.derived = iv;
        self.listing.rebuild(&self.derived);
        self.cgroups.refresh(&self.derived.cgroups, &self.filter);
        super::cgroup_series::record(
            &mut self.cgroup_throttle,
            &self.derived.cgroups,
            self.derived.prev.is_some(),
        );
        let d = &self.derived;
        let row = |r: &crate::model::interval::Row| (r.key, r.id, r.switches_s());
        super::switch_series::record(
            &mut self.series,
            &mut self.series_rows,
            &d.quiet,
            |j| row(&d.threads[j]),
            d.processes.iter().map(|r| row(r)),
        );
        let prev = self.derived.prev.as_deref();
        self.cpu = match self.mig_cause {
            None => self.derived.cpus.clone(),
            Some(_) => cpus::derive_by(&self.host.topology, prev, &s, self.mig_cause),
        };
        if let Some(v) = &self.cpu {
            self.cpu_history.push(v);
        }
        self.findings.update(&self.derived.findings);
        let numa = self.host.topology.nodes().len() > 1;
        super::recent::push(&mut self.history, &mut self.prev_places, s, numa);
        self.error = None;
    }
}
