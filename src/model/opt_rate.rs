//! A per-second figure or share that may be unknown, in 8 bytes: an
//! `Option<f64>` takes 16, and a row keeps five of them (two row sets
//! alive at 100,000 threads: 8 MB for the tags and their padding).
//! Unknown is stored as NaN, which no rate of a row can be (a count over
//! an interval longer than zero).

#[derive(Clone, Copy)]
pub struct OptRate(f64);

impl OptRate {
    pub const NONE: OptRate = OptRate(f64::NAN);

    /// The figure, None while unknown.
    pub fn get(self) -> Option<f64> {
        (!self.0.is_nan()).then_some(self.0)
    }
}

impl Default for OptRate {
    fn default() -> OptRate {
        OptRate::NONE
    }
}

impl From<Option<f64>> for OptRate {
    fn from(v: Option<f64>) -> OptRate {
        v.map_or(OptRate::NONE, OptRate)
    }
}

impl PartialEq for OptRate {
    fn eq(&self, other: &OptRate) -> bool {
        self.get() == other.get()
    }
}

impl std::fmt::Debug for OptRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_was_stored() {
        for v in [None, Some(0.0), Some(-0.0), Some(12.5), Some(f64::INFINITY)] {
            assert_eq!(
                OptRate::from(v).get().map(f64::to_bits),
                v.map(f64::to_bits)
            );
        }
        assert_eq!(OptRate::default().get(), None);
        assert_eq!(
            OptRate::from(Some(f64::NAN)).get(),
            None,
            "NaN reads as unknown"
        );
        assert_eq!(std::mem::size_of::<OptRate>(), 8);
    }
}
