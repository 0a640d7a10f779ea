//! The Samples the live view keeps once an interval is derived: the newest
//! whole (the next interval's base, the detail pane, recordings), the one
//! before it without its threads (the CPU view's `M` and the cgroups'
//! throttling history need only its CPUs, migrations and cgroups) plus
//! where its threads ran (a selected thread's flows). At 50,000 threads a
//! second whole Sample was 20+ MB.
use std::collections::VecDeque;
use std::sync::Arc;

use super::state_types::HISTORY_CAP;
use crate::model::cpus::ThreadPlaces;
use crate::model::Sample;

/// `s` in; the one before it loses its threads. `numa`: the host has more
/// than one node, so where threads ran is kept for their flows (on one
/// node no thread crosses: a pass over every thread for nothing, 3 % of
/// the live view at 50,000 threads).
pub fn push(
    history: &mut VecDeque<Arc<Sample>>,
    places: &mut ThreadPlaces,
    s: Arc<Sample>,
    numa: bool,
) {
    while history.len() >= HISTORY_CAP {
        history.pop_front();
    }
    if let Some(last) = history.back_mut() {
        if numa {
            places.refill(last);
        } else {
            *places = ThreadPlaces::default();
        }
        *last = Arc::new(Sample {
            time_ns: last.time_ns,
            mono_ns: last.mono_ns,
            threads: Default::default(),
            cpus: last.cpus.clone(),
            migrations: last.migrations.clone(),
            system: last.system.clone(),
            cgroups: last.cgroups.clone(),
            outside: Vec::new(),
            ancestors: Vec::new(),
        });
    }
    history.push_back(s);
}
