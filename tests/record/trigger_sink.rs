//! Triggers as a sink of the descriptor tables: the condition each
//! conformance test writes for a figure whose `trigger` flag is set.
use schedtop::model::metrics::Unit;

/// A trigger on the figure at (just under) its expected value, and what
/// it fires with (times as the trigger compares them, in ns).
pub fn threshold(key: &str, unit: Unit, want: f64) -> (String, f64) {
    match unit {
        Unit::Microseconds | Unit::Nanoseconds => {
            let ns = if unit == Unit::Microseconds {
                want * 1e3
            } else {
                want
            };
            (format!("{key}>={}ns", (ns * 0.999).floor()), ns)
        }
        _ => (
            format!("{key}>={}", want - 1e-6 * want.abs().max(1.0)),
            want,
        ),
    }
}
