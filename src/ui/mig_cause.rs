//! `M` in the CPU and NUMA views: count only the migrations of one cause
//! (all → wakeup → load balance → NUMA → affinity → other → all). The CPU
//! view's moves in/out, the node flows, the arrows and the matrix follow.
use crate::model::why::MigCause;

/// The cause after `c` in the cycle.
pub fn next(c: Option<MigCause>) -> Option<MigCause> {
    match c {
        None => Some(MigCause::ALL[0]),
        Some(c) => MigCause::ALL.get(c as usize + 1).copied(),
    }
}

/// The views' label for the filter: "" for all causes.
pub fn label(c: Option<MigCause>) -> String {
    c.map_or(String::new(), |c| format!(" ({} only, M: next)", c.key()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycle_visits_every_cause_once_and_comes_back() {
        let mut c = None;
        let mut seen = Vec::new();
        for _ in 0..=MigCause::ALL.len() {
            c = next(c);
            seen.push(c);
        }
        assert_eq!(seen.last(), Some(&None));
        assert_eq!(
            seen.iter().filter(|c| c.is_some()).count(),
            MigCause::ALL.len()
        );
    }
}
